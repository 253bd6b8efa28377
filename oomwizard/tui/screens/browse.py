"""Browse every scenario, and the glossary: learning without a failure at hand.

The filter box takes words (every one must match) or a pasted error line, which goes through the
log diagnosis and lands on the scenario a real log would get. Enter opens the scenario's leaf as a
walk would end it, with generic commands (there are no facts); ``w`` starts the wizard from the
scenario instead.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...engine import Done
from ...facts.model import FactSet
from ...onboard.browse import Entry, Result, entries, search
from ...onboard.data import Term, get_onboarding
from ...onboard.texts import t as ot
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen
from .leaf import LeafScreen

PANES_CSS = """
.ob-filter { margin: 0 1; }
.ob-count { height: 1; padding: 0 2; color: $text-muted; }
.ob-panes { height: 1fr; }
.ob-list { width: 38%; min-width: 24; height: 1fr; }
.ob-detail { width: 1fr; height: 1fr; padding: 0 1; }
"""


class BrowsedLeafScreen(LeafScreen):
    """A leaf opened from browse: no walk led here, so new facts do not move it and back just closes it."""

    def facts_changed(self) -> None:
        return

    def action_back(self) -> None:
        self.app.pop_screen()


def scenario_detail(e: Entry, lang: str, position: str, terms: list[Term]) -> Content:
    parts: list[object] = [(e.title, "bold"), "\n", (e.id, "dim"), "\n\n", e.summary, "\n"]
    if e.step is not None:
        pos = f" ({position})" if position else ""
        parts += ["\n", (f"{ot('onboard.step', lang)}: ", "bold"), e.step.title(lang) + pos, "\n"]
    if e.messages:
        parts += ["\n", (ot("onboard.messages", lang), "bold"), "\n"]
        for m in e.messages:
            rel = f"vLLM {m.versions}" if m.versions != "*" else ""
            parts += [(f"[{ot('onboard.kind.' + m.kind, lang)}{', ' + rel if rel else ''}] ", "dim"), m.text,
                      (f"  ({m.file})", "dim"), "\n"]
    if e.leaves:
        parts += ["\n", (ot("onboard.leaves", lang), "bold"), "\n"]
        for n, leaf in enumerate(e.leaves, 1):
            parts += [f"{n}. {leaf.title(lang)} ", (f"[{leaf.id}]", "dim"), "\n"]
    if terms:
        parts += ["\n", (f"{ot('onboard.terms', lang)}: ", "bold"), ", ".join(x.name(lang) for x in terms), "\n"]
    return Content.assemble(*parts)  # type: ignore[arg-type]


class BrowseScreen(WizardScreen):
    DEFAULT_CSS = PANES_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "tui.back", id="browse.back"),
        Binding("w", "wizard", "onboard.start_wizard", id="browse.wizard"),
        Binding("g", "glossary", "onboard.glossary", id="browse.glossary"),
        Binding("m", "memory", "onboard.memory", id="browse.memory"),
        Binding("slash", "focus_filter", show=False, id="browse.focus_filter"),
        Binding("down", "focus_list", show=False, id="browse.focus_list"),
        *[Binding(str(n), f"open_leaf({n})", show=False, id=f"browse.open_leaf_{n}") for n in range(1, 10)],
    ]

    def __init__(self, query: str = "") -> None:
        super().__init__()
        self.ob = get_onboarding()
        self.entries = entries(self.wizard.kb, self.ob, self.wizard.lang)
        self.result: Result = search(self.entries, query, self.ob)
        self._query = query

    def compose(self) -> ComposeResult:
        lang = self.wizard.lang
        yield TitleBar(ot("onboard.browse", lang))
        yield Input(value=self._query, placeholder=ot("onboard.filter", lang), id="browse-filter", classes="ob-filter")
        yield Static(id="browse-count", classes="ob-count")
        with Horizontal(classes="ob-panes"):
            yield OptionList(id="browse-list", classes="ob-list")
            with VerticalScroll(id="browse-detail-scroll", classes="ob-detail"):
                yield Static(id="browse-detail")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self._show(self.result)
        self.query_one("#browse-filter", Input).focus()

    @property
    def current(self) -> Entry | None:
        ol = self.query_one("#browse-list", OptionList)
        if ol.highlighted is None or not self.result.entries:
            return None
        return self.result.entries[ol.highlighted]

    def _show(self, result: Result) -> None:
        lang = self.wizard.lang
        self.result = result
        count = ot("onboard.count", lang, n=len(result.entries), total=len(self.entries))
        if result.how == "diagnosis":
            count += f" · {ot('onboard.by_diagnosis', lang)}"
        self.query_one("#browse-count", Static).update(Content(count))
        ol = self.query_one("#browse-list", OptionList)
        ol.set_options([Option(Content(e.title), id=e.id) for e in result.entries])
        if result.entries:
            ol.highlighted = 0
        self._detail()

    def _detail(self) -> None:
        e = self.current
        lang = self.wizard.lang
        box = self.query_one("#browse-detail", Static)
        if e is None:
            box.update(Content(ot("onboard.none", lang)))
            return
        box.update(scenario_detail(e, lang, self.ob.position(e.step.id) if e.step else "", self._terms(e)))

    def _terms(self, e: Entry) -> list[Term]:
        ids = {leaf.id for leaf in e.leaves}
        return [term for term in self.ob.terms.values() if ids & set(term.leaves)]

    @on(Input.Changed, "#browse-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(search(self.entries, event.value, self.ob))

    @on(Input.Submitted, "#browse-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        self.action_focus_list()

    @on(OptionList.OptionHighlighted, "#browse-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail()

    @on(OptionList.OptionSelected, "#browse-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.action_open_leaf(1)

    def action_focus_list(self) -> None:
        self.query_one("#browse-list", OptionList).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#browse-filter", Input).focus()

    def action_open_leaf(self, n: int) -> None:
        e = self.current
        if e is None or not e.leaves:
            return
        main = self.wizard.kb.resolve(e.id)
        ordered = [main, *[x for x in e.leaves if x is not main]] if main is not None else list(e.leaves)
        if n > len(ordered):
            return
        self.app.push_screen(BrowsedLeafScreen(Done(ordered[n - 1], (), FactSet())))

    def action_wizard(self) -> None:
        e = self.current
        if e is None:
            return
        self.wizard.choose_scenario(e.id)
        self.wizard.open_questions()

    def action_glossary(self) -> None:
        e = self.current
        self.app.push_screen(GlossaryScreen(self._terms(e) if e is not None else None))

    def action_memory(self) -> None:
        from .memory import MemoryScreen

        e = self.current
        self.app.push_screen(MemoryScreen(e.step.id if e is not None and e.step is not None else None))

    def action_back(self) -> None:
        self.app.pop_screen()


def term_detail(term: Term, lang: str) -> Content:
    parts: list[object] = [(term.name(lang), "bold"), "  ", (term.id, "dim"), "\n\n", term.definition(lang), "\n"]
    for key, items in (("onboard.flags", term.flags), ("onboard.env", term.env), ("onboard.used_by", term.leaves),
                       ("onboard.related", term.related)):
        if items:
            parts += ["\n", (f"{ot(key, lang)}: ", "bold"), ", ".join(items)]
    if term.log:
        parts += ["\n\n", (ot("onboard.log", lang), "bold")]
        for line in term.log:
            parts += ["\n  ", line]
    if term.source:
        parts += ["\n\n", (f"{ot('onboard.checked_in', lang)}: {term.source}", "dim")]
    return Content.assemble(*parts)  # type: ignore[arg-type]


class GlossaryScreen(WizardScreen):
    """All terms, or the terms of the screen it was opened from first (``only``)."""

    DEFAULT_CSS = PANES_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "tui.back", id="glossary.back"),
        Binding("slash", "focus_filter", show=False, id="glossary.focus_filter"),
        Binding("down", "focus_list", show=False, id="glossary.focus_list"),
    ]

    def __init__(self, only: list[Term] | None = None, query: str = "") -> None:
        super().__init__()
        self.ob = get_onboarding()
        self.only = only or []
        self._query = query
        self.shown: list[Term] = []

    def compose(self) -> ComposeResult:
        lang = self.wizard.lang
        title = ot("onboard.glossary", lang) + (f" · {ot('onboard.glossary_here', lang)}" if self.only else "")
        yield TitleBar(title)
        yield Input(value=self._query, placeholder=ot("onboard.search_hint", lang), id="glossary-filter", classes="ob-filter")
        with Horizontal(classes="ob-panes"):
            yield OptionList(id="glossary-list", classes="ob-list")
            with VerticalScroll(classes="ob-detail"):
                yield Static(id="glossary-detail")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self._filter_to(self._query)
        self.query_one("#glossary-list", OptionList).focus()

    def _filter_to(self, query: str) -> None:
        lang = self.wizard.lang
        q = query.strip().lower()
        pool = self.only if self.only and not q else sorted(self.ob.terms.values(), key=lambda x: x.name(lang).lower())
        self.shown = [x for x in pool if not q or q in " ".join(
            [x.id, x.name.en, x.name.zh, x.definition(lang), *x.flags, *x.env]).lower()]
        ol = self.query_one("#glossary-list", OptionList)
        ol.set_options([Option(Content(x.name(lang)), id=x.id) for x in self.shown])
        if self.shown:
            ol.highlighted = 0
        self._detail()

    def _detail(self) -> None:
        ol = self.query_one("#glossary-list", OptionList)
        box = self.query_one("#glossary-detail", Static)
        if ol.highlighted is None or not self.shown:
            box.update(Content(ot("onboard.none", self.wizard.lang)))
            return
        box.update(term_detail(self.shown[ol.highlighted], self.wizard.lang))

    @on(Input.Changed, "#glossary-filter")
    def _changed(self, event: Input.Changed) -> None:
        self._filter_to(event.value)

    @on(OptionList.OptionHighlighted, "#glossary-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._detail()

    @on(OptionList.OptionSelected, "#glossary-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        term = self.shown[event.option_index]
        if term.related:
            self.only = [self.ob.terms[i] for i in (term.id, *term.related) if i in self.ob.terms]
            self.query_one("#glossary-filter", Input).value = ""
            self._filter_to("")

    def action_focus_list(self) -> None:
        self.query_one("#glossary-list", OptionList).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#glossary-filter", Input).focus()

    def action_back(self) -> None:
        self.app.pop_screen()


def context_text(screen: object, lang: str) -> str:
    """The words on a question, "why we ask" or leaf screen, to find the terms under discussion."""
    kb = getattr(getattr(screen, "app", None), "kb", None)
    if kb is None:
        return ""
    parts: list[str] = []
    question = getattr(screen, "question", None)
    step = getattr(screen, "step", None)
    done = getattr(screen, "done", None)
    if question is None and step is not None and hasattr(step, "question"):
        question = step.question
    if question is not None:
        parts.append(question.text(lang))
        art = kb.article("questions", question.id, lang)
        parts.append(art.body if art else "")
    if done is not None and hasattr(done, "leaf"):
        leaf = done.leaf
        parts += [leaf.title(lang), leaf.conclusion(lang), leaf.root_cause(lang), leaf.environment(lang)]
        art = kb.article("leaves", leaf.id, lang)
        parts.append(art.body if art else "")
    return "\n".join(parts)


def open_glossary(app: object) -> None:
    """The app's glossary key: the terms of the screen on top first, else the whole glossary."""
    screen = app.screen  # type: ignore[attr-defined]
    if isinstance(screen, GlossaryScreen):
        return
    lang = app.lang  # type: ignore[attr-defined]
    terms = get_onboarding().terms_in(context_text(screen, lang), lang)
    app.push_screen(GlossaryScreen(terms or None))  # type: ignore[attr-defined]
