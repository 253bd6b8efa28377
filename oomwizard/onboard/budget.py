"""The memory budget as numbers: ``total x gpu_memory_utilization = weights + activations and
non-torch + (graphs, when the release counts them) + KV cache``, and what lies outside it.

The TUI draws it with blocks and the site as SVG; both take the parts from here, filled from the
facts of this machine or a log when they are known. Parts the log did not print are derived only
when the rest of the equation pins them down, and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..advice.calcs.readings import current_util
from ..facts.model import FactSet
from ..i18n import msg
from ..text.units import GIB
from ..versions import Version

GRAPHS_COUNTED_FROM = Version.parse("0.20.0")
"""VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1 from the 0.20.0 wheel (vllm/envs.py@0.20.0)."""

LABELS = {
    "weights": msg("onboard.budget.weights"),
    "other": msg("onboard.budget.other"),
    "graphs": msg("onboard.budget.graphs"),
    "kv": msg("onboard.budget.kv"),
    "outside": msg("onboard.budget.outside"),
}


@dataclass(frozen=True)
class Part:
    key: str
    gib: float
    inside: bool
    """Inside ``total x gpu_memory_utilization`` (False: the slice the budget leaves free)."""
    derived: bool = False

    def label(self, lang: str) -> str:
        return LABELS[self.key](lang)


@dataclass(frozen=True)
class Budget:
    total_gib: float
    util: float
    parts: tuple[Part, ...]
    graphs_counted: bool

    @property
    def budget_gib(self) -> float:
        return self.total_gib * self.util

    def part(self, key: str) -> Part | None:
        return next((p for p in self.parts if p.key == key), None)


def _num(facts: FactSet, name: str) -> float | None:
    v = facts.value(name)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def budget_from_facts(facts: FactSet) -> Budget | None:
    """The budget of the facts' GPU, or None without total memory, weights and KV cache size."""
    total_b = _num(facts, "gpu_mem_total_bytes") or _num(facts, "oom_total_bytes")
    weights, kv = _num(facts, "weights_gib"), _num(facts, "kv_cache_gib")
    if not total_b or weights is None or kv is None:
        return None
    total = total_b / GIB
    util, _ = current_util(facts)
    version = Version.try_parse(facts.value("vllm_version"))
    counted = version is not None and version >= GRAPHS_COUNTED_FROM
    graphs = _num(facts, "cudagraph_estimate_gib") if counted else None
    if graphs is None:
        graphs = _num(facts, "cudagraph_actual_gib")
    act, non_torch = _num(facts, "activation_peak_gib"), _num(facts, "non_torch_gib")
    inside_graphs = graphs if counted and graphs is not None else 0.0
    if act is not None and non_torch is not None:
        other, derived = act + non_torch, False
    else:
        other, derived = total * util - weights - kv - inside_graphs, True
    parts = [Part("weights", weights, True), Part("other", max(other, 0.0), True, derived)]
    if graphs is not None and counted:
        parts.append(Part("graphs", graphs, True))
    parts.append(Part("kv", kv, True))
    if graphs is not None and not counted:
        parts.append(Part("graphs", graphs, False))
    outside = total * (1 - util) - (graphs if graphs is not None and not counted else 0.0)
    parts.append(Part("outside", max(outside, 0.0), False))
    return Budget(total, util, tuple(parts), counted)
