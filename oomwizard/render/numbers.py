"""Values computed for *this* machine and *this* log, used in command templates as ``{name}``.

A template names either a calculation defined here or a fact from the catalog. Each calculation
returns the value to paste plus a sentence showing the arithmetic, so the operator can see why we
say ``--max-model-len 40960`` rather than just "lower it". When the inputs are unknown the
command keeps a visible placeholder such as ``<MAX_MODEL_LEN>`` and the reason is shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..facts.catalog import CATALOG
from ..facts.model import FactSet
from ..i18n import Text
from ..versions import Version

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class Computed:
    value: str
    why: Text
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Calc:
    name: str
    title: Text
    placeholder: str
    func: Callable[[FactSet], Computed | None]


CALCS: dict[str, Calc] = {}


def calc(name: str, title: Text, placeholder: str) -> Callable[[Callable[[FactSet], Computed | None]], Callable[[FactSet], Computed | None]]:
    def register(func: Callable[[FactSet], Computed | None]) -> Callable[[FactSet], Computed | None]:
        if name in CALCS:
            raise ValueError(f"calculation {name!r} defined twice")
        CALCS[name] = Calc(name, title, placeholder, func)
        return func

    return register


def _src(facts: FactSet, *names: str) -> str:
    parts = []
    for n in names:
        f = facts.get(n)
        if f is not None:
            parts.append(f"{n} = {f.value} ({f.source})")
    return "; ".join(parts)


def _gib(n: float) -> str:
    return f"{n:.2f} GiB"


def floor_to(value: float, step: int) -> int:
    return int(value // step * step)


def pow2_floor(n: float) -> int:
    return 1 if n < 2 else 2 ** int(math.log2(n))


def default_gpu_memory_utilization(facts: FactSet) -> tuple[float, str]:
    """vLLM's default when the flag was not given: 0.9 before 0.20.0, 0.92 from 0.20.0."""
    v = Version.try_parse(facts.value("vllm_version"))
    if v is None:
        return 0.9, "vLLM default 0.9 (0.92 from 0.20.0)"
    if v >= Version.parse("0.20.0"):
        return 0.92, f"vLLM {v} default"
    return 0.9, f"vLLM {v} default"


def default_max_num_seqs(facts: FactSet) -> tuple[int, str]:
    """V1 default when the flag was not given (depends on GPU memory and version)."""
    v = Version.try_parse(facts.value("vllm_version"))
    engine = facts.value("engine")
    if engine == "v0":
        return 256, "V0 default"
    total = facts.value("gpu_mem_total_bytes") or (
        int(facts.value("startup_total_gib") * GIB) if facts.value("startup_total_gib") else None
    )
    name = str(facts.value("gpu_name") or "").upper()
    if v is not None and v < Version.parse("0.8.0") and engine != "v1":
        return 256, f"vLLM {v} runs the V0 engine by default (256)"
    if v is not None and v < Version.parse("0.8.4"):
        return 1024, f"vLLM {v} V1 default"
    if v is not None and v.release == (0, 8, 4):
        # 0.8.4 chose by name: 1024 only on H100/H200.
        if not name:
            return 256, "vLLM 0.8.4 V1 default (1024 on H100/H200)"
        return (1024 if ("H100" in name or "H200" in name) else 256), "vLLM 0.8.4 V1 default for this GPU"
    if total is None:
        return 256, "V1 default on GPUs under 70 GiB (1024 on larger ones)"
    if v is not None and v.release == (0, 8, 5):
        return (1024 if total >= 70 * GIB else 256), "vLLM 0.8.5 V1 default for this GPU"
    big = total >= 70 * GIB and "A100" not in name
    return (1024 if big else 256), "V1 default for this GPU"


# --- the calculations -----------------------------------------------------------------------
# Memory-budget calculations (max_model_len_fit, gpu_util_fit_free, gpu_util_lower,
# kv_cache_memory_bytes, ...) live in calcs/memory.py.


# The sampler warm-up calculations (sampler_max_num_seqs, ...) live in calcs/sampler.py.


# --- resolving placeholders -------------------------------------------------------------------

_loaded = False


def _ensure_loaded() -> None:
    """Import the per-area calculation modules (``render/calcs/``) once."""
    global _loaded
    if not _loaded:
        _loaded = True
        from .calcs import load_all

        load_all()


@dataclass(frozen=True)
class Resolved:
    name: str
    value: str | None
    why: Text | None
    placeholder: str


def resolve(name: str, facts: FactSet) -> Resolved:
    """The value for ``{name}`` in a template: a calculation, else a fact, else a placeholder."""
    _ensure_loaded()
    c = CALCS.get(name)
    if c is not None:
        out = c.func(facts)
        if out is None:
            return Resolved(name, None, None, c.placeholder)
        return Resolved(name, out.value, out.why, c.placeholder)
    if name in CATALOG:
        f = facts.get(name)
        placeholder = f"<{name.upper()}>"
        if f is None:
            return Resolved(name, None, None, placeholder)
        return Resolved(name, str(f.value), Text(f"{name} from {f.source}", f"{name} 来自 {f.source}"), placeholder)
    raise KeyError(name)


def known_placeholder(name: str) -> bool:
    _ensure_loaded()
    return name in CALCS or name in CATALOG
