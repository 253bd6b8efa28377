"""One question at a time, with the answer the facts suggest already selected so Enter accepts it.

The screen shows whatever :meth:`Session.current` returns and redraws when facts arrive, keeping
the operator's own highlight if they moved it. The suggestion's source is spelled out ("from
vllm.log:214", "NVML") because a pre-filled answer is only useful if it can be checked; it sits
between the question and the choices, so a long list scrolls in its own region below it and never
pushes the source off a small terminal.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from ...engine import UNKNOWN, Ask, Done, Suggestion, walk
from ...facts.catalog import CATALOG
from ...frontend.inputs import colon, fact_title, suggestion_source
from ...kb.model import Question
from ...text.output import clean_text
from ...versions import Version
from ..messages import FactsChanged
from ..widgets.breadcrumbs import Breadcrumbs
from ..widgets.choices import ChoiceList
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen


def choice_prompt(label: str, suggested: bool) -> Table:
    """A choice with the star in its own column, so a label that wraps keeps a hanging indent."""
    grid = Table.grid(padding=0, expand=True)
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    if suggested:
        grid.add_row(Text("★ ", style="bold"), Text(label, style="bold"))
    else:
        grid.add_row("  ", Text(label))
    return grid


class VersionInput(Input):
    """The version box: ``b`` goes back (no version starts with b) and ``?`` opens the help, as
    everywhere else, while the box is empty or its whole answer is selected (as it is when Back
    brings you to it), where typing would start the answer again; after a character they are typed."""

    def _replaces_everything(self) -> bool:
        start, end = sorted(self.selection)
        return not self.value or (start == 0 and end >= len(self.value))

    async def on_key(self, event: events.Key) -> None:
        # Runs before Input's own key handling; prevent_default() keeps the b from being typed.
        action = {"b": "back", "?": "help"}.get(event.character or "")
        if action is not None and self._replaces_everything():
            event.stop()
            event.prevent_default()
            await self.screen.run_action(action)


class QuestionScreen(WizardScreen):
    STYLES = "question.tcss"
    KIND = "question"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b,escape", "back", "tui.back", id="question.back"),
        Binding("question_mark", "help", "tui.help", key_display="?", id="question.help"),
        # Where ? types into the version box, the footer shows F1 instead (first visible binding wins).
        Binding("f1", "help", "tui.help", key_display="F1", id="question.help_f1"),
        Binding("a", "accept_all", "tui.accept_all", id="question.accept_all"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.step: Ask | Done | None = None
        self._question_id: str | None = None
        self._default_index: int | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar("", id="q-title")
        yield Breadcrumbs(id="crumbs")
        yield ProgressBar(id="q-progress", show_eta=False, show_percentage=False)
        with Vertical(id="q-body"):
            yield Static(id="q-text")
            yield Static(id="q-suggestion")
            with Vertical(id="q-answer"):
                yield ChoiceList(id="choices")
                with VerticalScroll(id="version-box"):
                    yield VersionInput(placeholder=self.t("tui.q.version_placeholder"), id="version-input")
                    with Horizontal(id="version-buttons"):
                        yield Button(self.t("tui.q.dont_know"), id="dont-know", compact=True)
                    yield Static(Content(self.t("tui.q.version_help")), id="version-help")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self.show(self.wizard.step())

    def on_screen_resume(self) -> None:
        if self.ready:
            self.show(self.wizard.step())

    def on_facts_changed(self, _: FactsChanged) -> None:
        if self.ready and self.app.screen is self:
            self.show(self.wizard.step(), keep_highlight=True)

    # --- drawing -----------------------------------------------------------------------------

    def show(self, step: Ask | Done, keep_highlight: bool = False) -> None:
        self.step = step
        self.refresh_bindings()
        if isinstance(step, Done):
            # Facts arrived that answer everything left (or the operator came back from a leaf).
            self.wizard.show_step(step)
            return
        w = self.wizard
        lang = w.lang
        q = step.question
        same = keep_highlight and q.id == self._question_id
        self._question_id = q.id
        self._draw_header(step)
        self.query_one("#q-text", Static).update(Content.assemble((q.text(lang), "bold")))
        sug = step.suggestion
        if sug is not None:
            answer = self._label(q, sug.answer)
            line = Content.assemble(
                ("★ ", "bold"), self.t("tui.q.suggestion", answer=answer, source=suggestion_source(sug, step, lang))
            )
        else:
            line = Content(self.t("tui.q.no_suggestion"))
        self.query_one("#q-suggestion", Static).update(line)
        if q.kind == "version":
            self._show_version(q, sug, same)
        else:
            self._show_choices(q, sug, same)

    def _label(self, q: Question, answer: str) -> str:
        c = q.choice(answer)
        return c.label(self.wizard.lang) if c is not None else answer

    def _draw_header(self, step: Ask) -> None:
        w = self.wizard
        n = len(step.path) + 1
        full = walk(w.kb, w.facts, w.answers, auto_accept=True, use_unknown=True, lang=w.lang)
        total = max(n, len(full.path) + (1 if isinstance(full, Ask) else 0))
        self.query_one("#q-title", TitleBar).set_title(self.t("tui.q.progress", n=n, total=total))
        bar = self.query_one("#q-progress", ProgressBar)
        bar.update(total=total, progress=n - 1)
        crumbs = [self.t("tui.q.start")]
        for s in step.path:
            q = w.kb.questions.get(s.question)
            name = fact_title(q.fact, w.lang) if q is not None and q.fact in CATALOG else s.question
            crumbs.append(f"{name}{colon(w.lang)}{clean_text(s.label)}")
        self.query_one("#crumbs", Breadcrumbs).set_crumbs(crumbs)

    def _show_choices(self, q: Question, sug: Suggestion | None, same: bool) -> None:
        self.query_one("#version-box").display = False
        options = self.query_one("#choices", OptionList)
        options.display = True
        previous = options.highlighted
        kept_id = None
        if same and previous is not None and previous != self._default_index and previous < options.option_count:
            kept_id = options.get_option_at_index(previous).id
        lang = self.wizard.lang
        opts = []
        default = None
        for i, c in enumerate(q.choices):
            suggested = sug is not None and c.id == sug.answer
            if suggested:
                default = i
            opts.append(Option(choice_prompt(c.label(lang), suggested), id=c.id))
        if default is None:
            # Nothing suggests an answer: put the cursor on "not sure", which asserts nothing.
            default = next((i for i, c in enumerate(q.choices) if c.id == q.unknown), 0)
        options.set_options(opts)
        self._default_index = default
        index = default
        mine = self.wizard.previous(q.id)
        if kept_id is None and mine is not None:
            kept_id = mine  # Back brought the user here: their own pick, not the suggestion, is lit
        if kept_id is not None:
            index = next((i for i, c in enumerate(q.choices) if c.id == kept_id), default)
        options.highlighted = index
        options.focus()

    def _show_version(self, q: Question, sug: Suggestion | None, same: bool) -> None:
        self.query_one("#choices").display = False
        self.query_one("#version-box").display = True
        box = self.query_one("#version-input", Input)
        if not (same and box.value):
            mine = self.wizard.previous(q.id)
            if mine is not None and mine != UNKNOWN:
                box.value = mine  # what the user typed before stepping back
            else:
                box.value = sug.answer if sug is not None else ""
        box.focus()

    # --- answering ---------------------------------------------------------------------------

    def _answer(self, value: str) -> None:
        step = self.step
        if not isinstance(step, Ask):
            return
        if step.suggestion is not None and value == step.suggestion.answer:
            nxt = self.wizard.accept()
        else:
            nxt = self.wizard.answer(step.question.id, value)
        self.show(nxt)

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self._answer(event.option.id)

    @on(Input.Submitted, "#version-input")
    def _version(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value.lower() in ("", "?", "unknown", "don't know", "dont know"):
            if not value:
                self.notify(self.t("tui.q.bad_version", value=value), severity="warning", markup=False)
                return
            self._answer(UNKNOWN)
            return
        value = value.removeprefix("v") if value[:1] == "v" and value[1:2].isdigit() else value
        if Version.try_parse(value) is None:
            self.notify(self.t("tui.q.bad_version", value=clean_text(value)), severity="error", markup=False)
            return
        self._answer(value)

    @on(Button.Pressed, "#dont-know")
    def _dont_know(self) -> None:
        self._answer(UNKNOWN)

    # --- actions -----------------------------------------------------------------------------

    def action_back(self) -> None:
        if not self.wizard.answered():
            self.app.pop_screen()
            return
        self.show(self.wizard.step_back())

    def action_help(self) -> None:
        from .help import HelpScreen

        if isinstance(self.step, Ask):
            self.app.push_screen(HelpScreen(self.step.question, self))

    def action_accept_all(self) -> None:
        """Take every suggestion from here on, stopping at the first question nothing answers."""
        step = self.wizard.step()
        accepted = 0
        while isinstance(step, Ask) and step.suggestion is not None:
            step = self.wizard.accept()
            accepted += 1
        if isinstance(step, Ask):  # say where and why it stopped; Done shows the fix instead
            question = step.question.text(self.wizard.lang)
            key = "tui.accept_all.done" if accepted else "tui.accept_all.none"
            self.notify(self.t(key, n=accepted, question=question), severity="warning" if not accepted else "information",
                        timeout=8, markup=False)
        self.show(step)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Accept all is greyed out where nothing is suggested (it would do nothing)."""
        if action == "accept_all":
            return True if isinstance(self.step, Ask) and self.step.suggestion is not None else None
        return True
