"""What the log says: the scenarios it matches, best first, with the lines that prove it.

Every piece of log text passes through :func:`~oomwizard.text.output.clean_text` and is shown
as plain content (never markup), so a log cannot move the cursor, set the clipboard or restyle the
screen. Enter continues with the highlighted scenario, so the operator can overrule the ranking.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import LoadingIndicator, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from ...frontend.inputs import colon, fact_title, fact_where, format_value
from ...logs.model import Diagnosis, Match
from ...text.output import clean_text
from ...text.units import mib
from ..messages import LogRead
from ..widgets.choices import ContinueList
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen

MAX_EVIDENCE = 6
NO_SCENARIO = "__questions__"


def one_line(text: str) -> str:
    """Log text made safe and flat: escapes removed, controls visible, newlines as spaces."""
    return " ".join(clean_text(text).split("\n")).strip()


def short_names(inputs: list[str]) -> dict[str, str]:
    """Each input by its file name alone, unless two inputs share one (then as given)."""
    names = {p: Path(p).name or p for p in inputs}
    counts = Counter(names.values())
    return {p: n if counts[n] == 1 else p for p, n in names.items()}


def hanging_grid(lead: int) -> Table:
    """Rows of ``lead text``: the first column (``lead`` cells: an indent, a bullet) stays clear, so
    wrapped lines continue under the text instead of running back under the bullet."""
    grid = Table.grid(padding=0, expand=True)
    grid.add_column(width=lead, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    return grid


def bullet(text: str) -> Table:
    """``• text`` with the wrapped lines under the text, not under the bullet."""
    grid = hanging_grid(2)
    grid.add_row("• ", Text(text))
    return grid


class DiagnosisScreen(WizardScreen):
    STYLES = "diagnosis.tcss"
    KIND = "diagnosis"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b,escape", "back", "tui.back", id="diagnosis.back"),
        Binding("w", "watch", "tui.watch", id="diagnosis.watch"),
        Binding("r", "app.report", "tui.report", show=False, id="diagnosis.report"),
        # The list keeps the focus (Enter continues, ↑↓ pick a match and go on scrolling past its
        # ends); PgUp/PgDn, Home and End scroll the page.
        Binding("pagedown", "page_body(1)", show=False, priority=True, id="diagnosis.page_down"),
        Binding("pageup", "page_body(-1)", show=False, priority=True, id="diagnosis.page_up"),
        Binding("end", "page_body(2)", show=False, priority=True, id="diagnosis.end"),
        Binding("home", "page_body(-2)", show=False, priority=True, id="diagnosis.home"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._shown: Diagnosis | None = None
        self._detailed: Match | None = None
        self._progress_shown = False

    def compose(self) -> ComposeResult:
        yield TitleBar(self.t("tui.diag.title"), id="diag-title")
        # Neither scroll area takes the focus: the list keeps it (Tab would leave Enter with nothing
        # to continue), and PgUp/PgDn or the mouse scroll the page.
        with VerticalScroll(id="diag-loading", can_focus=False):
            yield LoadingIndicator()
            yield Static(id="loading-text")
            yield ProgressBar(id="loading-bar", show_eta=True)
            yield Static(id="loading-note")
        with VerticalScroll(id="diag-body", can_focus=False):
            yield Static(id="diag-inputs")
            yield Static(Content(self.t("tui.diag.scenarios")), classes="section")
            yield ContinueList(id="scenarios")
            yield Vertical(id="diag-detail")
            yield Static(id="diag-facts-head")
            yield Static(id="diag-facts")
            yield Static(id="diag-warnings")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self.facts_changed()

    @property
    def diagnosis(self) -> Diagnosis | None:
        return self.wizard.log_state.diagnosis

    def on_log_read(self, _: LogRead) -> None:
        self.facts_changed()

    def facts_changed(self) -> None:
        """Show the reading, or the diagnosis once it is there (each diagnosis drawn once)."""
        if not self.ready:
            return
        log = self.wizard.log_state
        loading = log.status == "reading"
        self.query_one("#diag-loading").display = loading
        self.query_one("#diag-body").display = not loading
        if loading:
            self.query_one("#loading-text", Static).update(Content(self.t("tui.reading", what=one_line(log.what))))
            if not self._progress_shown:
                self.query_one("#loading-bar", ProgressBar).display = False
                self.query_one("#loading-note", Static).update(
                    Content("\n".join(one_line(n) for n in log.note.splitlines())))
            return
        self._progress_shown = False
        diag = self.diagnosis
        if diag is None or diag is self._shown:
            return
        self._shown = diag
        self._show(diag)

    def show_progress(self, done: int | None = None, total: int | None = None, note: str | None = None) -> None:
        """How far the reading has got (bytes, with the time left when the size is known), or what
        following a log is waiting for."""
        if not self.ready:
            return
        if done is not None:
            bar = self.query_one("#loading-bar", ProgressBar)
            bar.display = True
            self._progress_shown = True
            bar.update(total=total if total else None, progress=done)
            read = mib(done, unit=False, grouped=True) + (f" / {mib(total, unit=False, grouped=True)}" if total else "")
            self.query_one("#loading-note", Static).update(Content(self.t("tui.read_mib", mib=read)))
        if note is not None:
            self.query_one("#loading-note", Static).update(Content("\n".join(one_line(n) for n in note.splitlines())))

    def _show(self, diag: Diagnosis) -> None:
        self.query_one("#diag-title", TitleBar).set_title(
            f"{self.t('tui.diag.title')} · {one_line(self.wizard.log_state.what)}"
        )
        inputs = ", ".join(one_line(i) for i in diag.inputs)
        self.query_one("#diag-inputs", Static).update(
            Content(self.t("tui.diag.inputs", inputs=inputs) if inputs else "")
        )
        options = self.query_one("#scenarios", OptionList)
        keep = options.highlighted if options.option_count and options.highlighted is not None else 0
        opts: list[Option] = []
        for m in diag.matches:
            sc = self.wizard.scenario_text(m.scenario)
            title = sc[0](self.wizard.lang) if sc else m.scenario
            opts.append(Option(Content.assemble((f"{round(m.score * 100):>3}%  ", "bold"), title), id=m.scenario))
        if not opts:
            opts.append(Option(Content(self.t("tui.diag.none")), id=NO_SCENARIO))
        options.set_options(opts)
        options.highlighted = min(keep, len(opts) - 1)
        # The list sits below the inputs line: focusing it must not scroll the top of the diagnosis away.
        options.focus(scroll_visible=False)
        self._detail(diag.matches[options.highlighted or 0] if diag.matches else None)
        head, body = self._facts_content(diag)
        self.query_one("#diag-facts-head", Static).update(head)
        self.query_one("#diag-facts", Static).update(body)
        warnings = hanging_grid(4)
        for w in diag.warnings:
            warnings.add_row("  ! ", Text(one_line(w(self.wizard.lang))))
        self.query_one("#diag-warnings", Static).update(
            Group(Text(self.t("tui.diag.warnings"), style="bold"), warnings) if diag.warnings else Content("")
        )

    def _detail(self, match: Match | None) -> None:
        """The highlighted scenario: its summary, the reasons, and the log lines (indented, wrapped).
        Drawn once per match: setting the highlight when the list is filled announces it again."""
        if match is not None and match is self._detailed:
            return
        self._detailed = match
        lang = self.wizard.lang
        widgets: list[Static] = []
        if match is not None:
            sc = self.wizard.scenario_text(match.scenario)
            summary = sc[1](lang) if sc is not None else ""
            widgets.append(Static(Content.assemble((match.scenario, "bold"), " — ", (summary, "italic"))))
            if match.reasons:
                widgets.append(Static(Content(self.t("tui.diag.reasons")), classes="section"))
                widgets += [Static(bullet(one_line(r(lang))), classes="reason") for r in match.reasons]
            if match.evidence:
                widgets.append(Static(Content(self.t("tui.diag.evidence")), classes="section"))
                names = short_names(self.diagnosis.inputs if self.diagnosis else [])
                for ev in match.evidence[:MAX_EVIDENCE]:
                    where = f"{one_line(names.get(ev.file, ev.file))}:{ev.line}"
                    widgets.append(Static(Content.assemble((where, "bold")), classes="where"))
                    widgets.append(Static(Content(one_line(ev.text)), classes="evidence"))
                if len(match.evidence) > MAX_EVIDENCE:
                    widgets.append(Static(Content(f"… +{len(match.evidence) - MAX_EVIDENCE}"), classes="where"))
        detail = self.query_one("#diag-detail", Vertical)
        with self.app.batch_update():
            detail.remove_children()
            detail.mount(*widgets)

    def _facts_content(self, diag: Diagnosis) -> tuple[Content, Content]:
        """The heading and one line per fact (``Title: value  where``); the body's left padding
        keeps a wrapped line under its text. Plain text wrapped by Textual, not a table: a table
        is measured and rendered again for every layout pass, the largest cost of drawing the
        diagnosis."""
        lang = self.wizard.lang
        rows = [f for f in diag.facts if f.name not in ("diagnosis",)]
        if not rows:
            return Content(""), Content("")
        lines = [
            Content.assemble(
                f"{fact_title(f.name, lang)}{colon(lang)}",
                (one_line(format_value(f.name, f.value, lang)), "bold"),
                (f"  {one_line(fact_where(f))}", "dim"),
            )
            for f in rows
        ]
        return Content.styled(self.t("tui.diag.log_facts"), "bold"), Content("\n").join(lines)

    @on(OptionList.OptionHighlighted, "#scenarios")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        diag = self.diagnosis
        if diag is not None and diag.matches and event.option_index < len(diag.matches):
            self._detail(diag.matches[event.option_index])

    @on(OptionList.OptionSelected, "#scenarios")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        scenario = event.option.id
        self.wizard.choose_scenario(None if scenario == NO_SCENARIO else scenario)
        self.wizard.open_questions()

    def action_back(self) -> None:
        self.wizard.leave_diagnosis()

    def action_page_body(self, direction: int) -> None:
        """A page down (1) or up (-1); the end (2) or the top (-2)."""
        body = self.query_one("#diag-body", VerticalScroll)
        {1: body.scroll_page_down, -1: body.scroll_page_up, 2: body.scroll_end, -2: body.scroll_home}[direction](
            animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.wizard.can_watch() if action == "watch" else True

    def action_watch(self) -> None:
        """Read the log again and keep reading it as it grows: the diagnosis comes when the engine dies."""
        self.wizard.watch_log()
        self.refresh_bindings()
