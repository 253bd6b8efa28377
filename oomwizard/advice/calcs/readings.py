"""What the calculations of several subjects read the same way: the failing run's settings and limits.

The utilization and ``max_num_seqs`` of the failing run (given on its command line, else vLLM's
default for that release and GPU), the memory that was free, the size of one GPU, the engine, and
the highest utilization vLLM's start-up check (free >= total x util, 0.9.1+) lets through. Kept in
one place so that two subjects never disagree about the run they explain. No calculation is
registered here.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ...versions import Version
from ..numbers import (
    ceil2,
    default_gpu_memory_utilization,
    default_max_num_seqs,
    floor2,
    num,
    origin,
    said,
    src,
)

UTIL_CEILING = 0.98
"""Never suggest more: the CUDA context, NCCL and cuBLAS workspaces live outside the budget."""

UTIL_FLOOR = 0.05
"""Never suggest less: below this the share is a rounding error of the GPU, not a setting."""

STARTUP_MARGIN_GIB = 0.5
"""Kept free below what the start-up check measured, for the CUDA context of the new process."""

FALLBACK_UTIL_STEP = 0.05
"""When no number in the logs tells how much is missing, lower the utilization by this much and say
so; the next start-up log then prints the measured figure."""

MIN_UTIL = 0.10
"""Below this the model itself no longer fits next to what the step made room for."""


def free_gib(facts: FactSet) -> tuple[float, str] | None:
    """Free memory of the fullest GPU: what vLLM measured at start-up, else what NVML sees now."""
    for name, scale in (("startup_free_gib", 1.0), ("gpu_mem_free_bytes", 1 / GIB)):
        v = num(facts, name)
        if v is not None:
            return v * scale, name
    return None


def total_bytes(facts: FactSet) -> tuple[int, str] | None:
    """Memory of one GPU in bytes: what vLLM read at start-up, then NVML, then the OOM message."""
    gib = num(facts, "startup_total_gib")
    if gib:
        return int(gib * GIB), "startup_total_gib"
    for name in ("gpu_mem_total_bytes", "oom_total_bytes"):
        b = num(facts, name)
        if b:
            return int(b), name
    return None


def current_util(facts: FactSet) -> tuple[float, str]:
    """The failing run's utilization and where it came from (``name = value (source)`` or the default)."""
    v = num(facts, "gpu_memory_utilization")
    if v:
        return v, src(facts, "gpu_memory_utilization")
    return default_gpu_memory_utilization(facts)


def util_clause(facts: FactSet) -> tuple[float, Text, tuple[str, ...]]:
    """The same utilization as a clause of an explanation, with the facts it names."""
    util = num(facts, "gpu_memory_utilization")
    if util:
        basis = origin(facts, "gpu_memory_utilization")
        return util, said("calc.readings.setting", name="gpu_memory_utilization", value=util, source=basis), ("gpu_memory_utilization",)
    util, why = default_gpu_memory_utilization(facts)
    return util, said("calc.readings.setting", name="gpu_memory_utilization", value=util, source=why), ("vllm_version",)


def current_max_num_seqs(facts: FactSet) -> tuple[int, str]:
    """The failing run's max_num_seqs and where it came from (``name = value (source)`` or the default)."""
    v = num(facts, "max_num_seqs")
    if v:
        return int(v), src(facts, "max_num_seqs")
    return default_max_num_seqs(facts)


def seqs_clause(facts: FactSet) -> tuple[int, Text, tuple[str, ...]]:
    """The same max_num_seqs as a clause of an explanation, with the facts it names."""
    n = num(facts, "max_num_seqs")
    if n:
        basis = origin(facts, "max_num_seqs")
        return int(n), said("calc.readings.setting", name="max_num_seqs", value=int(n), source=basis), ("max_num_seqs",)
    n_default, why = default_max_num_seqs(facts)
    return n_default, said("calc.readings.setting", name="max_num_seqs", value=n_default, source=why), ()


def runs_v0(facts: FactSet) -> bool:
    """The V0 engine: said so, or a release before 0.8.0 (V1 is the default from 0.8.0) when unsaid."""
    engine: object = facts.value("engine")
    if engine is not None:
        return engine == "v0"
    v = Version.try_parse(facts.value("vllm_version"))
    return v is not None and v < Version.parse("0.8.0")


def util_cap(facts: FactSet, total: float) -> tuple[float, Text]:
    """The highest utilization that passes vLLM's start-up check, with the reason."""
    free = free_gib(facts)
    if free is None:
        return UTIL_CEILING, said("calc.readings.cap_ceiling", cap=UTIL_CEILING)
    cap = min(UTIL_CEILING, floor2((free[0] - STARTUP_MARGIN_GIB) / total))
    return cap, said("calc.readings.cap_free", free=free[0], source=src(facts, free[1]), cap=cap)


def raised_util(facts: FactSet, cur: float, missing_gib: float, total: float) -> tuple[float, Text] | None:
    """``cur + missing / total`` rounded up to 0.01, with the cap's reason; None above the cap."""
    new = ceil2(cur + missing_gib / total)
    cap, cap_why = util_cap(facts, total)
    if new > cap:
        return None
    return new, cap_why
