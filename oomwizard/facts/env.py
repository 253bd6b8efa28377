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


def _split_top(text: str) -> list[str]:
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
    for item in _split_top(text):
        key, colon, raw = item.partition(":")
        key, raw = key.strip(), raw.strip()
        if not colon:
            out.problems.append(
                note(
                    "alloc_no_value",
                    f"{var}: '{item}' has no ':value'; torch stops with an error at the first GPU allocation",
                    f"{var}：'{item}' 缺少 ':值'；torch 会在第一次分配显存时报错退出",
                    "warning",
                )
            )
            continue
        if key not in KNOWN_ALLOC_KEYS:
            out.fields[key] = raw
            out.problems.append(
                note(
                    "alloc_unknown_key",
                    f"{var}: torch does not know the key '{key}' (check the spelling); torch rejects unknown keys with an error",
                    f"{var}：torch 不认识键 '{key}'（请检查拼写）；torch 遇到未知键会报错",
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
                        f"{var}: {key}:{raw} — torch documents the values as True/False; write it that way to be safe on every release",
                        f"{var}：{key}:{raw} —— torch 文档中的取值是 True/False；按此拼写在所有版本上都安全",
                    )
                )
            return low == "true"
        problems.append(
            note(
                "alloc_bad_bool",
                f"{var}: {key} must be True or False, not '{raw}'; torch stops with an error",
                f"{var}：{key} 只能是 True 或 False，而不是 '{raw}'；torch 会报错退出",
                "warning",
            )
        )
        return raw
    if key in ("max_split_size_mb", "max_non_split_rounding_mb", "pinned_num_register_threads", "pinned_reserve_segment_size_mb"):
        try:
            value = int(raw)
        except ValueError:
            problems.append(note("alloc_bad_int", f"{var}: {key} must be a whole number, not '{raw}'", f"{var}：{key} 必须是整数，而不是 '{raw}'", "warning"))
            return raw
        if key == "max_split_size_mb" and value <= 20:
            problems.append(
                note(
                    "alloc_split_too_small",
                    f"{var}: max_split_size_mb must be more than 20; torch stops with an error",
                    f"{var}：max_split_size_mb 必须大于 20；否则 torch 报错退出",
                    "warning",
                )
            )
        return value
    if key in ("garbage_collection_threshold", "per_process_memory_fraction"):
        try:
            value_f = float(raw)
        except ValueError:
            problems.append(note("alloc_bad_float", f"{var}: {key} must be a number, not '{raw}'", f"{var}：{key} 必须是数字，而不是 '{raw}'", "warning"))
            return raw
        if key == "garbage_collection_threshold" and not 0.0 < value_f < 1.0:
            problems.append(
                note(
                    "alloc_gc_range",
                    f"{var}: garbage_collection_threshold must be between 0 and 1 (exclusive)",
                    f"{var}：garbage_collection_threshold 必须在 0 与 1 之间（不含端点）",
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
    hip_ignored = (HIP_VAR, "only ROCm builds of torch read it", "只有 ROCm 版 torch 读取它")
    if platform == "rocm":
        if tv is not None and tv < _V("2.9"):
            return TorchAllocRule(
                (CUDA_VAR, HIP_VAR),
                "source",
                f"torch {tv} on ROCm reads PYTORCH_CUDA_ALLOC_CONF, and PYTORCH_HIP_ALLOC_CONF only when that is unset",
                f"ROCm 上的 torch {tv} 读取 PYTORCH_CUDA_ALLOC_CONF，未设置时才读 PYTORCH_HIP_ALLOC_CONF",
                ((ALLOC_VAR, "torch before 2.9 does not know it", "torch 2.9 之前不认识该变量"),),
            )
        return TorchAllocRule(
            (CUDA_VAR, HIP_VAR, ALLOC_VAR),
            "assumed",
            "torch 2.9+ on ROCm: assumed to prefer the device variables over PYTORCH_ALLOC_CONF, as measured for CUDA on 2.11 (not measured on ROCm)",
            "ROCm 上的 torch 2.9+：按 CUDA 上 2.11 的实测推断设备专用变量优先于 PYTORCH_ALLOC_CONF（未在 ROCm 上实测）",
        )
    if tv is None:
        return TorchAllocRule(
            (CUDA_VAR, ALLOC_VAR),
            "unknown",
            "torch version unknown: every release reads PYTORCH_CUDA_ALLOC_CONF; PYTORCH_ALLOC_CONF works only on newer ones (ignored for CUDA on 2.9.x, unknown before 2.9)",
            "torch 版本未知：所有版本都读取 PYTORCH_CUDA_ALLOC_CONF；PYTORCH_ALLOC_CONF 只在较新版本生效（2.9.x 的 CUDA 会忽略它，2.9 之前不认识）",
            (hip_ignored,),
        )
    if tv < _V("2.9"):
        return TorchAllocRule(
            (CUDA_VAR,),
            "source",
            f"torch {tv} reads only PYTORCH_CUDA_ALLOC_CONF",
            f"torch {tv} 只读取 PYTORCH_CUDA_ALLOC_CONF",
            ((ALLOC_VAR, "torch before 2.9 does not know it", "torch 2.9 之前不认识该变量"), hip_ignored),
        )
    if tv < _V("2.10"):
        return TorchAllocRule(
            (CUDA_VAR,),
            "source",
            f"torch {tv}: the CUDA caching allocator reads only PYTORCH_CUDA_ALLOC_CONF, for every option "
            "(c10/cuda/CUDAAllocatorConfig.h@2.9.0 and @2.9.1); PYTORCH_ALLOC_CONF is ignored for CUDA, and the "
            "new name only makes torch print a deprecation warning for the old one",
            f"torch {tv}：CUDA 缓存分配器的所有选项都只读取 PYTORCH_CUDA_ALLOC_CONF"
            "（c10/cuda/CUDAAllocatorConfig.h@2.9.0 与 @2.9.1）；PYTORCH_ALLOC_CONF 在 CUDA 上被忽略，新变量名只会让 torch 为旧变量名打印一条弃用警告",
            (
                (
                    ALLOC_VAR,
                    "torch 2.9.x reads only PYTORCH_CUDA_ALLOC_CONF for CUDA (CUDAAllocatorConfig.h@2.9.1, pytorch#183387)",
                    "torch 2.9.x 在 CUDA 上只读取 PYTORCH_CUDA_ALLOC_CONF（CUDAAllocatorConfig.h@2.9.1，pytorch#183387）",
                ),
                hip_ignored,
            ),
        )
    if tv.release[:2] == (2, 11):
        return TorchAllocRule(
            (CUDA_VAR, ALLOC_VAR),
            "measured",
            f"torch {tv} reads both; measured on an H200 with torch 2.11: PYTORCH_CUDA_ALLOC_CONF wins when both are set, even when it is empty",
            f"torch {tv} 两个都读取；在 H200 上用 torch 2.11 实测：两者都设置时 PYTORCH_CUDA_ALLOC_CONF 生效，即使它是空的",
            (hip_ignored,),
        )
    return TorchAllocRule(
        (CUDA_VAR, ALLOC_VAR),
        "assumed",
        f"torch {tv}: assumed to behave as measured on 2.11 (both read, PYTORCH_CUDA_ALLOC_CONF wins when both are set, "
        "even when empty); CUDA's own options read PYTORCH_ALLOC_CONF only when PYTORCH_CUDA_ALLOC_CONF is not set at all "
        "(CUDAAllocatorConfig.h@2.10.0)",
        f"torch {tv}：推断与 2.11 的实测一致（两个都读取，都设置时 PYTORCH_CUDA_ALLOC_CONF 生效，即使为空）；"
        "CUDA 自身的选项只在 PYTORCH_CUDA_ALLOC_CONF 完全未设置时才读 PYTORCH_ALLOC_CONF（CUDAAllocatorConfig.h@2.10.0）",
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
            reasons[v] = (
                f"{blank} is set but empty, and torch still counts it as set: it comes first, so this one is ignored",
                f"{blank} 已设置但为空，torch 仍视其为已设置：它优先，因此这个变量被忽略",
            )
        en, zh = reasons.get(v, (f"{var} takes precedence", f"{var} 优先"))
        decision.ignored.append({"var": v, "value": val, "en": en, "zh": zh})
    for v in ALLOC_VARS:
        if v in env and not env[v].strip():
            decision.notes.append(_blank_note(v, decision.shadowed_by_blank if v == blank else None))
    if not certain:
        decision.notes.append(
            note(
                "alloc_torch_unknown",
                f"Only {var} is set and the torch version is unknown: it takes effect only on torch 2.10 or newer (not on 2.9.x, not before 2.9). PYTORCH_CUDA_ALLOC_CONF works on every release.",
                f"只设置了 {var} 且 torch 版本未知：它只在 torch 2.10 及以上生效（2.9.x 与更早版本无效）。PYTORCH_CUDA_ALLOC_CONF 在所有版本上都有效。",
                "warning",
            )
        )
    for ig in decision.ignored:
        if ig["var"] != HIP_VAR or platform == "rocm":
            decision.notes.append(
                note(
                    "alloc_ignored",
                    f"{ig['var']}={ig['value']} is set but torch does not use it: {ig['en']}",
                    f"已设置 {ig['var']}={ig['value']}，但 torch 不会使用：{ig['zh']}",
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
            f"{var} is set but empty, and torch still counts it as set: the setting in {shadowed} is ignored and the "
            f"allocator runs with its defaults. Unset {var} (unset {var}) or put the options into it.",
            f"{var} 已设置但为空，torch 仍视其为已设置：{shadowed} 中的配置被忽略，分配器按默认值运行。"
            f"请取消 {var}（unset {var}），或把选项写进它。",
            "warning",
        )
    return note(
        "alloc_empty",
        f"{var} is set but empty: torch uses its defaults. It still counts as set, so on torch 2.10+ an empty "
        "PYTORCH_CUDA_ALLOC_CONF hides any PYTORCH_ALLOC_CONF added later.",
        f"{var} 已设置但为空：torch 使用默认值。它仍算作已设置，因此在 torch 2.10+ 上，空的 PYTORCH_CUDA_ALLOC_CONF "
        "会让之后再设置的 PYTORCH_ALLOC_CONF 失效。",
    )


def _add_vllm_view(decision: AllocDecision, present: Mapping[str, str], vllm_version: str | Version | None) -> None:
    reads = vllm_alloc_reads(vllm_version)
    if reads is None:
        return
    vvar = next((v for v in reads if v in present), None)
    decision.vllm_var, decision.vllm_value = vvar, present.get(vvar) if vvar else None
    if decision.vllm_value == decision.value:
        return
    torch_side = f"{decision.var}={decision.value}" if decision.var else "no setting (torch defaults)"
    torch_side_zh = f"{decision.var}={decision.value}" if decision.var else "无配置（torch 默认值）"
    vllm_side = f"{vvar}={decision.vllm_value}" if vvar else "nothing"
    vllm_side_zh = f"{vvar}={decision.vllm_value}" if vvar else "无配置"
    decision.notes.append(
        note(
            "alloc_vllm_disagrees",
            f"vLLM {vllm_version} checks {vllm_side} (for sleep mode and KV-connector checks) while torch allocates with {torch_side}",
            f"vLLM {vllm_version} 按 {vllm_side_zh} 做检查（休眠模式、KV connector），而 torch 实际按 {torch_side_zh} 分配显存",
            "warning",
        )
    )
