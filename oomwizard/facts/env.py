"""Environment variables that shape GPU memory, and which allocator setting torch really uses.

Three variables can carry the PyTorch allocator configuration, and which one wins depends on the
torch release (and differs from what vLLM itself reads). Getting this wrong sends an operator to
set ``expandable_segments`` in a variable their torch ignores, so the whole precedence table lives
in :func:`torch_alloc_rule`, one pure function with a test per row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..i18n import LANGS, both, ui
from ..text.redact import redact_env
from ..versions import Version
from .alloc_reset import lost_after_load, reset_note
from .notes import note

ENV_PREFIXES = ("VLLM_", "CUDA_", "NCCL_", "PYTORCH_", "TORCH_")
ENV_NAMES = ("NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "PYTHONPATH", "VIRTUAL_ENV")

CUDA_VAR = "PYTORCH_CUDA_ALLOC_CONF"
ALLOC_VAR = "PYTORCH_ALLOC_CONF"
HIP_VAR = "PYTORCH_HIP_ALLOC_CONF"
ALLOC_VARS = (CUDA_VAR, ALLOC_VAR, HIP_VAR)

# Keys torch's caching allocator understands (CUDA and the hipified ROCm spellings).
KNOWN_ALLOC_KEYS = frozenset(
    {
        "max_split_size_mb",
        "max_non_split_rounding_mb",
        "garbage_collection_threshold",
        "roundup_power2_divisions",
        "expandable_segments",
        "release_lock_on_cudamalloc",
        "release_lock_on_hipmalloc",
        "pinned_use_cuda_host_register",
        "pinned_use_hip_host_register",
        "pinned_num_register_threads",
        "pinned_use_background_threads",
        "pinned_reserve_segment_size_mb",
        "backend",
        "graph_capture_record_stream_reuse",
        "per_process_memory_fraction",
    }
)

_V = Version.parse


def collect_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that matter for vLLM memory, secrets redacted, sorted by name."""
    picked = {k: v for k, v in environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}
    return dict(sorted(redact_env(picked).items()))


# --- parsing one allocator setting --------------------------------------------------------------


def split_fields(text: str) -> list[str]:
    """Split on commas outside brackets: ``roundup_power2_divisions:[256:1,>:8]`` stays whole."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


@dataclass
class AllocConf:
    fields: dict[str, Any] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)


def parse_alloc_conf(text: str | None, var: str = CUDA_VAR) -> AllocConf:
    """``"expandable_segments:True,max_split_size_mb:512"`` -> typed fields plus what torch would reject."""
    out = AllocConf()
    if not text:
        return out
    for item in split_fields(text):
        key, colon, raw = item.partition(":")
        key, raw = key.strip(), raw.strip()
        if not colon:
            out.problems.append(
                note(
                    "alloc_no_value",
                    *both("facts.env.alloc_no_value", var=var, item=item),
                    "warning",
                )
            )
            continue
        if key not in KNOWN_ALLOC_KEYS:
            out.fields[key] = raw
            out.problems.append(
                note(
                    "alloc_unknown_key",
                    *both("facts.env.alloc_unknown_key", var=var, key=key),
                    "warning",
                )
            )
            continue
        out.fields[key] = _typed(key, raw, var, out.problems)
    return out


def _typed(key: str, raw: str, var: str, problems: list[dict[str, str]]) -> Any:
    if key == "expandable_segments" or key.startswith(("release_lock_on_", "pinned_use_")) or key == "graph_capture_record_stream_reuse":
        low = raw.lower()
        if low in ("true", "false"):
            if raw not in ("True", "False"):
                problems.append(
                    note(
                        "alloc_bool_spelling",
                        *both("facts.env.alloc_bool_spelling", var=var, key=key, raw=raw),
                    )
                )
            return low == "true"
        problems.append(
            note(
                "alloc_bad_bool",
                *both("facts.env.alloc_bad_bool", var=var, key=key, raw=raw),
                "warning",
            )
        )
        return raw
    if key in ("max_split_size_mb", "max_non_split_rounding_mb", "pinned_num_register_threads", "pinned_reserve_segment_size_mb"):
        try:
            value = int(raw)
        except ValueError:
            problems.append(note("alloc_bad_int", *both("facts.env.alloc_bad_int", var=var, key=key, raw=raw), "warning"))
            return raw
        if key == "max_split_size_mb" and value <= 20:
            problems.append(
                note(
                    "alloc_split_too_small",
                    *both("facts.env.alloc_split_too_small", var=var),
                    "warning",
                )
            )
        return value
    if key in ("garbage_collection_threshold", "per_process_memory_fraction"):
        try:
            value_f = float(raw)
        except ValueError:
            problems.append(note("alloc_bad_float", *both("facts.env.alloc_bad_float", var=var, key=key, raw=raw), "warning"))
            return raw
        if key == "garbage_collection_threshold" and not 0.0 < value_f < 1.0:
            problems.append(
                note(
                    "alloc_gc_range",
                    *both("facts.env.alloc_gc_range", var=var),
                    "warning",
                )
            )
        return value_f
    if key == "roundup_power2_divisions" and raw.isdigit():
        return int(raw)
    return raw


# --- which variable torch reads -----------------------------------------------------------------


@dataclass(frozen=True)
class TorchAllocRule:
    """What one torch release does with the allocator variables."""

    reads: tuple[str, ...]
    """Variables this torch reads, the one that wins first."""
    certainty: str
    """``measured`` (on our H200), ``reported`` (upstream issue), ``source`` (torch's code),
    ``assumed`` (by analogy with a neighbouring release) or ``unknown`` (torch version unknown)."""
    basis_en: str
    basis_zh: str
    ignored: tuple[tuple[str, str, str], ...] = ()
    """``(variable, why, why in Chinese)`` for variables this release does not honour."""


def torch_alloc_rule(torch_version: str | Version | None, platform: str | None = "cuda") -> TorchAllocRule:
    """The precedence table. Sources: torch's ``CUDAAllocatorConfig.h`` (< 2.9; 2.9.0 and 2.9.1 read
    only ``PYTORCH_CUDA_ALLOC_CONF``; 2.10.0 falls back to ``PYTORCH_ALLOC_CONF`` only when the CUDA
    variable is not set at all), our H200 measurement on 2.11 (``PYTORCH_CUDA_ALLOC_CONF`` wins when
    both are set)."""
    tv = Version.try_parse(torch_version) if torch_version is not None else None
    hip_ignored = (HIP_VAR, *both("facts.env.hip_only_rocm"))
    if platform == "rocm":
        if tv is not None and tv < _V("2.9"):
            return TorchAllocRule(
                (CUDA_VAR, HIP_VAR),
                "source",
                *both("facts.env.torch_tv_on_rocm", tv=tv),
                ((ALLOC_VAR, *both("facts.env.alloc_var_before_2_9")),),
            )
        return TorchAllocRule(
            (CUDA_VAR, HIP_VAR, ALLOC_VAR),
            "assumed",
            *both("facts.env.torch_2_9_on"),
        )
    if tv is None:
        return TorchAllocRule(
            (CUDA_VAR, ALLOC_VAR),
            "unknown",
            *both("facts.env.torch_version_unknown_every"),
            (hip_ignored,),
        )
    if tv < _V("2.9"):
        return TorchAllocRule(
            (CUDA_VAR,),
            "source",
            *both("facts.env.torch_tv_reads_only", tv=tv),
            ((ALLOC_VAR, *both("facts.env.alloc_var_before_2_9")), hip_ignored),
        )
    if tv < _V("2.10"):
        return TorchAllocRule(
            (CUDA_VAR,),
            "source",
            *both("facts.env.torch_2_9_reads_cuda_only", tv=tv),
            (
                (ALLOC_VAR, *both("facts.env.alloc_var_2_9_cuda_only")),
                hip_ignored,
            ),
        )
    if tv.release[:2] == (2, 11):
        return TorchAllocRule(
            (CUDA_VAR, ALLOC_VAR),
            "measured",
            *both("facts.env.torch_2_11_measured", tv=tv),
            (hip_ignored,),
        )
    return TorchAllocRule(
        (CUDA_VAR, ALLOC_VAR),
        "assumed",
        *both("facts.env.torch_assumed_as_2_11", tv=tv),
        (hip_ignored,),
    )


def vllm_alloc_reads(vllm_version: str | Version | None) -> tuple[str, ...] | None:
    """The variables vLLM's own checks read (sleep mode, KV connectors), first non-empty wins."""
    vv = Version.try_parse(vllm_version) if vllm_version is not None else None
    if vv is None:
        return None
    if vv < _V("0.31.0"):
        return (CUDA_VAR,)
    return (ALLOC_VAR, CUDA_VAR, HIP_VAR)


@dataclass
class AllocDecision:
    """The allocator setting torch will use, how sure we are, and what else is set but ignored."""

    var: str | None
    value: str | None
    fields: dict[str, Any]
    certain: bool
    rule: TorchAllocRule
    ignored: list[dict[str, str]] = field(default_factory=list)
    notes: list[dict[str, str]] = field(default_factory=list)
    vllm_var: str | None = None
    vllm_value: str | None = None
    shadowed_by_blank: str | None = None
    """A variable with a setting that torch ignores because a set but empty one comes first."""
    reset_after_load: tuple[str, ...] = ()
    """Options vLLM 0.21-0.30 drops after loading (:mod:`.alloc_reset`), whatever the vLLM version."""

    @property
    def expandable_segments(self) -> bool:
        return self.fields.get("expandable_segments") is True

    def to_json(self) -> dict[str, Any]:
        return {
            "var": self.var,
            "value": self.value,
            "fields": self.fields,
            "certain": self.certain,
            "certainty": self.rule.certainty,
            "torch_reads": list(self.rule.reads),
            "basis": {"en": self.rule.basis_en, "zh": self.rule.basis_zh},
            "ignored": self.ignored,
            "vllm_reads": {"var": self.vllm_var, "value": self.vllm_value},
            "notes": self.notes,
        }


def decide_alloc_conf(
    env: Mapping[str, str],
    torch_version: str | Version | None,
    platform: str | None = "cuda",
    vllm_version: str | Version | None = None,
) -> AllocDecision:
    """Apply :func:`torch_alloc_rule` to the variables actually set in ``env``."""
    rule = torch_alloc_rule(torch_version, platform)
    present = {v: env[v] for v in ALLOC_VARS if env.get(v, "").strip()}
    # torch asks whether a variable is set, not whether it holds anything (c10::utils::get_env,
    # c10/util/env.h@2.10.0): a blank variable ahead of another one in the order still hides it.
    first_set = next((v for v in rule.reads if v in env), None)
    blank = first_set if first_set is not None and first_set not in present else None
    var = None if blank else next((v for v in rule.reads if v in present), None)
    value = present.get(var) if var else None
    certain = rule.certainty != "unknown" or var in (None, CUDA_VAR)
    parsed = parse_alloc_conf(value, var or CUDA_VAR)
    decision = AllocDecision(var, value, parsed.fields, certain, rule, notes=list(parsed.problems))
    reasons = {v: (en, zh) for v, en, zh in rule.ignored}
    for v, val in present.items():
        if v == var:
            continue
        if blank and v in rule.reads:
            decision.shadowed_by_blank = v
            reasons[v] = both("facts.env.blank_comes_first", blank=blank)
        en, zh = reasons.get(v, both("facts.env.takes_precedence", var=var))
        decision.ignored.append({"var": v, "value": val, "en": en, "zh": zh})
    for v in ALLOC_VARS:
        if v in env and not env[v].strip():
            decision.notes.append(_blank_note(v, decision.shadowed_by_blank if v == blank else None))
    if not certain:
        decision.notes.append(
            note(
                "alloc_torch_unknown",
                *both("facts.env.alloc_torch_unknown", var=var),
                "warning",
            )
        )
    for ig in decision.ignored:
        if ig["var"] != HIP_VAR or platform == "rocm":
            decision.notes.append(
                note(
                    "alloc_ignored",
                    ui("facts.env.alloc_ignored", "en", var=ig["var"], value=ig["value"], reason=ig["en"]),
                    ui("facts.env.alloc_ignored", "zh", var=ig["var"], value=ig["value"], reason=ig["zh"]),
                    "warning",
                )
            )
    _add_vllm_view(decision, present, vllm_version)
    decision.reset_after_load = lost_after_load(decision.fields, env, platform)
    reset = reset_note(decision.reset_after_load, vllm_version)
    if reset is not None:
        decision.notes.append(reset)
    return decision


def _blank_note(var: str, shadowed: str | None) -> dict[str, str]:
    """A set but empty variable: harmless alone, but it still counts as set (an image's ``ENV X=``)."""
    if shadowed:
        return note(
            "alloc_empty",
            *both("facts.env.alloc_empty_hides", var=var, shadowed=shadowed),
            "warning",
        )
    return note(
        "alloc_empty",
        *both("facts.env.alloc_empty_set", var=var),
    )


def _add_vllm_view(decision: AllocDecision, present: Mapping[str, str], vllm_version: str | Version | None) -> None:
    reads = vllm_alloc_reads(vllm_version)
    if reads is None:
        return
    vvar = next((v for v in reads if v in present), None)
    decision.vllm_var, decision.vllm_value = vvar, present.get(vvar) if vvar else None
    if decision.vllm_value == decision.value:
        return
    torch_side = {lang: f"{decision.var}={decision.value}" if decision.var else ui("facts.env.torch_defaults", lang)
                  for lang in LANGS}
    vllm_side = {lang: f"{vvar}={decision.vllm_value}" if vvar else ui("facts.env.vllm_nothing", lang) for lang in LANGS}
    decision.notes.append(
        note(
            "alloc_vllm_disagrees",
            ui("facts.env.alloc_vllm_disagrees", "en", version=vllm_version, vllm_side=vllm_side["en"],
               torch_side=torch_side["en"]),
            ui("facts.env.alloc_vllm_disagrees", "zh", version=vllm_version, vllm_side=vllm_side["zh"],
               torch_side=torch_side["zh"]),
            "warning",
        )
    )
