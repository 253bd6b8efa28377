"""How vLLM spends GPU memory: the start-up timeline and the budget bar, drawn with blocks.

The bar uses this session's numbers (the log read, or this machine) when they pin the budget down,
else it shows the equation alone; the step a scenario fails at is marked on the timeline.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, Static

from ...onboard.budget import Budget, budget_from_facts
from ...onboard.data import get_onboarding
from ...onboard.texts import t as ot
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen

COLORS = {"weights": "#4c78a8", "other": "#f58518", "graphs": "#e45756", "kv": "#54a24b", "outside": "#8c8c8c"}
BAR_WIDTH = 60


def budget_bar(b: Budget, lang: str, width: int = BAR_WIDTH) -> Content:
    """One row of blocks, one colour per part, proportional to GiB; a legend with the numbers below."""
    cells = [max(1, round(p.gib / b.total_gib * width)) if p.gib > 0 else 0 for p in b.parts]
    parts: list[object] = []
    for p, n in zip(b.parts, cells, strict=True):
        parts.append(("█" * n, COLORS[p.key]))
    parts.append("\n")
    for p in b.parts:
        tag = f" ({ot('onboard.derived', lang)})" if p.derived else ""
        where = "" if p.inside or p.key == "outside" else f" · {ot('onboard.outside_budget', lang)}"
        parts += [("█ ", COLORS[p.key]), f"{p.label(lang)} {p.gib:.2f} GiB{tag}{where}\n"]
    parts.append((f"{b.total_gib:.2f} GiB x {b.util:g} = {b.budget_gib:.2f} GiB", "bold"))
    return Content.assemble(*parts)  # type: ignore[arg-type]


def timeline(lang: str, mark: str | None) -> list[Static]:
    """Two widgets per step (its title, then its text indented); the marked step is the one that failed."""
    ob = get_onboarding()
    gpu = [s for s in ob.steps.values() if s.lane == "gpu"]
    rest = [s for s in ob.steps.values() if s.lane != "gpu"]
    out = []
    for n, step in enumerate([*gpu, *rest], 1):
        here = step.id == mark
        label = f"{n}. {step.title(lang)}" if step.lane == "gpu" else step.title(lang)
        out.append(Static(Content.assemble(("▶ " if here else "  ", "bold red"), (label, "bold red" if here else "bold"))))
        out.append(Static(Content(step.text(lang)), classes="memory-step-text"))
    return out


class MemoryScreen(WizardScreen):
    DEFAULT_CSS = ".memory-step-text { padding: 0 0 0 5; color: $text-muted; }"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,b", "back", "tui.back", id="memory.back")]

    def __init__(self, step: str | None = None) -> None:
        super().__init__()
        self.step = step

    def compose(self) -> ComposeResult:
        w = self.wizard
        lang = w.lang
        mark = self.step or w.facts.value("failure_phase")
        budget = budget_from_facts(w.facts)
        yield TitleBar(ot("onboard.memory", lang))
        with VerticalScroll(id="memory-scroll"):
            yield Static(Content.assemble((ot("onboard.timeline", lang), "bold underline")), id="memory-timeline-title")
            yield from timeline(lang, mark if isinstance(mark, str) else None)
            yield Static(Content.assemble((ot("onboard.budget", lang), "bold underline")), id="memory-budget-title")
            if budget is not None:
                yield Static(budget_bar(budget, lang), id="memory-budget")
            else:
                yield Static(Content(ot("onboard.budget_none", lang)), id="memory-budget")
            body = get_onboarding().guides.get(("memory", lang)) or get_onboarding().guides.get(("memory", "en"), "")
            yield Markdown(_strip_front(body), id="memory-article", open_links=False)
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self.query_one("#memory-scroll").focus()

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """``term:<id>`` links of the article open that term in the glossary."""
        if event.href.startswith("term:"):
            event.prevent_default()
            from .browse import GlossaryScreen

            term = get_onboarding().terms.get(event.href[len("term:"):])
            if term is not None:
                self.app.push_screen(GlossaryScreen([term]))

    def action_back(self) -> None:
        self.app.pop_screen()


def _strip_front(md: str) -> str:
    if md.startswith("---"):
        end = md.find("\n---", 3)
        if end != -1:
            return md[end + 4:].lstrip()
    return md
