"""The guided tour: the bundled demo explained step by step, with the demo log's own numbers.

The steps' words are data (``content/tour/steps.yaml``); every number in them comes from the real
diagnosis of the demo log and the fix rendered for it, so the tour cannot drift from what
``oomwizard diagnose --demo`` prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..facts.model import FactSet
from ..frontend.options import DEMO_LOG
from ..i18n import msg
from ..kb.model import KnowledgeBase
from ..logs.model import Diagnosis
from ..text.units import GIB, gib, mib
from .budget import budget_from_facts
from .data import Onboarding, TourStep

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")

GRAPHS_NOTE = {
    False: msg("onboard.tour.this_release_does_not"),
    True: msg("onboard.tour.this_release_counts_cuda"),
}


@dataclass(frozen=True)
class TourPage:
    id: str
    title: str
    body: str
    verify: str
    terms: tuple[str, ...]


def _size(n: object) -> str:
    if not isinstance(n, (int, float)):
        return "?"
    return gib(n) if n >= GIB else mib(n, 2)


def _gib(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f}"


def demo_diagnosis() -> Diagnosis:
    from ..logs.diagnose import diagnose_paths

    return diagnose_paths([str(DEMO_LOG)])


def tour_values(kb: KnowledgeBase, diag: Diagnosis, lang: str) -> dict[str, str]:
    """Every placeholder the tour's steps use, from the diagnosis of the demo log."""
    from ..report.leaf import render_fixes

    f: FactSet = diag.facts
    best = diag.best
    scenario = best.scenario if best else ""
    leaf = kb.resolve(scenario) if scenario else None
    values = {
        "version": str(f.value("vllm_version") or "?"),
        "model": str(f.value("model") or "?"),
        "engine": str(f.value("engine") or "?"),
        "runner": str(f.value("model_runner") or "?"),
        "dummy_requests": str(f.value("sampler_dummy_requests") or "?"),
        "evidence_lines": ", ".join(str(e.line) for e in best.evidence) if best and best.evidence else "?",
        "scenario_title": kb.scenarios[scenario].title(lang) if scenario in kb.scenarios else "?",
        "kv_tokens": f"{f.value('kv_cache_tokens'):,}" if isinstance(f.value("kv_cache_tokens"), int) else "?",
        "requested": _size(f.value("oom_requested_bytes")),
        "free": _size(f.value("oom_free_bytes")),
        "reserved_unallocated": _size(f.value("oom_reserved_unallocated_bytes")),
        "leaf": leaf.id if leaf else "?",
        "leaf_title": leaf.title(lang) if leaf else "?",
        "checks": str(len(leaf.checks)) if leaf else "?",
    }
    budget = budget_from_facts(f)
    if budget is not None:
        graphs = budget.part("graphs")
        outside = budget.part("outside")
        other = budget.part("other")
        values.update(
            total=_gib(budget.total_gib), util=f"{budget.util:g}", budget=_gib(budget.budget_gib),
            weights=_gib(_part_gib(budget, "weights")),
            other=_gib(other.gib if other else None), kv=_gib(_part_gib(budget, "kv")),
            graphs=_gib(graphs.gib if graphs else None), outside=_gib(outside.gib if outside else None),
            unbudgeted=_gib(budget.total_gib - budget.budget_gib),
        )
        values["graphs_note"] = GRAPHS_NOTE[budget.graphs_counted](lang).format(**values)
    if leaf is not None and leaf.fixes:
        rf = render_fixes(leaf, f, lang)[0]
        values["fix_title"] = rf.fix.title(lang)
        values["command"] = rf.variants[0].script.strip().replace("\n", " ") if rf.variants else "?"
    return values


def fill(text: str, values: dict[str, str]) -> str:
    """Placeholders replaced; one without a value stays visible as ``?`` rather than a stale number."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), "?"), text)


def tour_pages(kb: KnowledgeBase, ob: Onboarding, lang: str, diag: Diagnosis | None = None) -> list[TourPage]:
    values = tour_values(kb, diag or demo_diagnosis(), lang)

    def page(step: TourStep) -> TourPage:
        return TourPage(step.id, fill(step.title(lang), values), fill(step.body(lang), values),
                        fill(step.verify(lang), values) if step.verify else "", step.terms)

    return [page(s) for s in ob.tour]


def _part_gib(budget: Any, key: str) -> float | None:
    part = budget.part(key)
    return part.gib if part is not None else None
