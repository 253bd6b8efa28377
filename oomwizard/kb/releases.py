"""Which ``vllm serve`` flags and ``VLLM_*`` variables each vLLM release accepts.

The data (``oomwizard/data/vllm_releases.json``) was read from every release's own argument parser
and ``vllm/envs.py``; ``oomwizard lint`` holds every command in the knowledge base against it, so a
fix never tells an operator to pass a flag their vLLM rejects. Value rules that the JSON does not
carry (the ``--kv-cache-dtype`` choices, which value forms a release parses) are written down here,
next to the data they extend, from the same sources (see ``notes`` in the JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .. import safejson
from ..versions import Version, VersionSpec

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "vllm_releases.json"

ENV_RE = re.compile(r"(?<![A-Za-z0-9_])VLLM_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_])")
"""A ``VLLM_*`` variable name in free text (shell commands, articles); ASCII bounds, as Chinese text
runs straight into identifiers and ``\\b`` would not separate them."""
FLAG_RE = re.compile(r"(?<![A-Za-z0-9_-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
"""A vLLM flag as prose and guides write it (``--max-model-len``), to be found in some release."""

NEVER_EXISTED = {
    "VLLM_ALLOW_WORKSPACE_GROWTH": "it exists in no vLLM release (only VLLM_DEBUG_WORKSPACE, 0.13.0+, which only logs); "
    "run with --enforce-eager instead",
}
"""Variables that circulate in guides but that no release reads: always an error, with the reason."""

PREFIX_ONLY_FLAGS = {
    "--kv-cache-memory": "--kv-cache-memory-bytes",
}
"""Spellings vLLM's own messages print that work only through argparse prefix matching."""


@dataclass(frozen=True)
class Release:
    version: Version
    flags: frozenset[str]
    hidden_flags: frozenset[str]
    env_vars: frozenset[str]

    def has_flag(self, flag: str) -> bool:
        """``flag`` exactly as registered (or as a hidden alias); ``-O`` is rewritten, never refused."""
        if flag in self.flags or flag in self.hidden_flags:
            return True
        # 0.12.0+ no longer registers -O but FlexibleArgumentParser rewrites it to --optimization-level.
        return flag == "-O" and "--optimization-level" in self.flags

    def has_env(self, name: str) -> bool:
        return name in self.env_vars

    def __str__(self) -> str:
        return self.version.base


@lru_cache(maxsize=2)
def load_releases(path: str | None = None) -> tuple[Release, ...]:
    """Every release in the bundled data, oldest first."""
    with open(path or DATA_FILE, encoding="utf-8") as fh:
        data = json.load(fh)
    out = []
    for key, value in data.items():
        if not isinstance(value, dict) or "flags" not in value:
            continue
        out.append(
            Release(
                Version.parse(key),
                frozenset(value.get("flags", ())),
                frozenset(value.get("hidden_flag_aliases", ())),
                frozenset(value.get("env_vars", ())),
            )
        )
    return tuple(sorted(out, key=lambda r: r.version.release))


def releases_in(spec: VersionSpec | str, releases: tuple[Release, ...] | None = None) -> list[Release]:
    """The known releases a range covers (a range reaching past the data covers only what we know)."""
    spec = VersionSpec.parse(spec)
    return [r for r in (releases or load_releases()) if spec.contains(r.version)]


def span(releases: list[Release]) -> str:
    """``0.8.0-0.10.2`` for a run of releases, for messages."""
    if not releases:
        return "none"
    if len(releases) == 1:
        return str(releases[0])
    return f"{releases[0]}-{releases[-1]}"


def group_spans(missing: list[Release], within: list[Release]) -> str:
    """Contiguous runs of ``missing`` inside ``within``: ``0.6.6-0.8.4, 0.33.0``."""
    names = {r.version for r in missing}
    runs: list[list[Release]] = []
    current: list[Release] = []
    for r in within:
        if r.version in names:
            current.append(r)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return ", ".join(span(run) for run in runs)


# --- flag values ------------------------------------------------------------------------------

_KV_DTYPES: list[tuple[str, tuple[str, ...]]] = [
    ("0.6.6", ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")),
    ("0.10.0", ("fp8_inc",)),
    ("0.11.0", ("bfloat16",)),
    ("0.11.1", ("fp8_ds_mla",)),
    ("0.18.0", ("float16",)),
    ("0.20.0", ("fp8_per_token_head", "int8_per_token_head", "nvfp4", "turboquant_*")),
    ("0.25.0", ("int4_per_token_head",)),
    ("0.28.0", ("nvfp4_4over6",)),
    ("0.30.0", ("nvfp4_ds_mla",)),
]
_KV_DTYPE_FREE_FROM = Version.parse("0.33.0")


def kv_cache_dtype_choices(release: Release) -> tuple[str, ...] | None:
    """``--kv-cache-dtype`` choices of ``release``; None where the parser takes any string."""
    if release.version >= _KV_DTYPE_FREE_FROM:
        return None
    out: list[str] = []
    for since, values in _KV_DTYPES:
        if release.version >= Version.parse(since):
            out.extend(values)
    return tuple(out)


def _check_kv_cache_dtype(release: Release, value: str) -> str | None:
    choices = kv_cache_dtype_choices(release)
    if choices is None:
        return None
    for c in choices:
        if value == c or (c.endswith("*") and value.startswith(c[:-1]) and len(value) > len(c) - 1):
            return None
    return f"--kv-cache-dtype {value!r} is not a choice in vLLM {release} ({', '.join(choices)})"


def _check_json(flag: str) -> Callable[[Release, str], str | None]:
    def check(release: Release, value: str) -> str | None:
        try:
            parsed = safejson.loads(value)
        except ValueError as e:
            return f"{flag} value is not valid JSON ({e}): {value!r}"
        if not isinstance(parsed, dict):
            return f"{flag} value must be a JSON object: {value!r}"
        return None

    return check


def _check_limit_mm(release: Release, value: str) -> str | None:
    is_json = value.lstrip().startswith("{")
    if is_json:
        if release.version < Version.parse("0.8.5"):
            return f"--limit-mm-per-prompt takes JSON only from 0.8.5 (vLLM {release} wants image=N,video=M)"
        return _check_json("--limit-mm-per-prompt")(release, value)
    if release.version >= Version.parse("0.10.0"):
        return f"--limit-mm-per-prompt {value!r}: the key=value form is rejected from 0.10.0 (vLLM {release}); use JSON"
    return None


def _check_fraction(release: Release, value: str) -> str | None:
    try:
        f = float(value)
    except ValueError:
        return f"--gpu-memory-utilization {value!r} is not a number"
    if not 0 < f <= 1:
        return f"--gpu-memory-utilization {value} is outside (0, 1]"
    return None


def _check_optimization_level(release: Release, value: str) -> str | None:
    if release.version >= Version.parse("0.12.0") and value not in ("0", "1", "2", "3"):
        return f"-O/--optimization-level takes 0-3 in vLLM {release}, not {value!r}"
    return None


VALUE_CHECKS: dict[str, Callable[[Release, str], str | None]] = {
    "--kv-cache-dtype": _check_kv_cache_dtype,
    "--speculative-config": _check_json("--speculative-config"),
    "-sc": _check_json("--speculative-config"),
    "--compilation-config": _check_json("--compilation-config"),
    "-cc": _check_json("--compilation-config"),
    "--attention-config": _check_json("--attention-config"),
    "--kv-transfer-config": _check_json("--kv-transfer-config"),
    "--additional-config": _check_json("--additional-config"),
    "--limit-mm-per-prompt": _check_limit_mm,
    "--gpu-memory-utilization": _check_fraction,
    "--optimization-level": _check_optimization_level,
}


def check_value(release: Release, flag: str, value: str) -> str | None:
    """What is wrong with ``flag value`` for ``release``, or None (unknown flags pass here)."""
    check = VALUE_CHECKS.get(flag)
    if flag == "-O" and release.version < Version.parse("0.12.0"):
        return None  # -O was --compilation-config then: a level or JSON
    if flag == "-O":
        check = _check_optimization_level
    return check(release, value) if check else None


DOTTED_FROM = Version.parse("0.9.0")
"""``--compilation-config.cudagraph_mode PIECEWISE`` style arguments are parsed from 0.9.0."""
