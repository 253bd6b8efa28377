"""The first screen: open or paste a log, look at this machine, just answer questions, or try the demo.

It shows at once; machine detection reports into it as it progresses. When there is no GPU here
and no log was given, the demo moves to the top and is highlighted: on a laptop that is the only
thing worth doing first.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...frontend.inputs import check_log_path, colon, machine_summary
from ...frontend.options import DEMO_LOG, DEMO_MACHINE
from ...onboard import texts as _onboard_texts  # noqa: F401  (registers the browse/tour labels)
from ..messages import MachineDetected, ResumeOffered
from ..widgets.choices import ChoiceList
from ..widgets.footer import WizardFooter
from ..widgets.path_suggester import PathInput
from .base import TitleBar, WizardScreen

ACTIONS = ("open_log", "paste", "detect", "questions", "demo", "browse", "tour")


class WelcomeBody(VerticalScroll):
    """The welcome screen's body. While the path box has the focus it is kept whole in view (the
    input and the keys under it) whenever the body's height changes: when it first opens below a
    long menu or on a short terminal, and when the machine line or a message under it grows."""

    def watch_virtual_size(self) -> None:
        box = self.query("#log-path")
        if box and box.first().display and box.first().has_focus_within:
            box.first().scroll_visible(animate=False)


class WelcomeScreen(WizardScreen):
    AUTO_FOCUS = "#actions"
    """Focused as the screen is composed: Textual's default (the first focusable widget, the
    scrolling body) would take the focus first and pass it on, redrawing the footer once more."""
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close_path", show=False, id="welcome.close_path")]

    def __init__(self) -> None:
        super().__init__()
        self._order: tuple[str, ...] = ACTIONS
        self._moved = False

    def compose(self) -> ComposeResult:
        yield TitleBar(self.t("tui.title"))
        with WelcomeBody(id="welcome-body"):
            yield Static(Content(self.t("tui.welcome.lead")), id="lead")
            yield Static(id="machine-line")
            yield Static(Content(self.t("tui.welcome.no_gpu")), id="demo-hint")
            yield ChoiceList(*self._options(), id="actions")
            with Vertical(id="log-path"):
                yield PathInput(placeholder=self.t("tui.welcome.path_placeholder"), id="path-input")
                yield Static(Content(self.t("tui.welcome.path_help")), id="path-message")
        yield WizardFooter()

    def _options(self) -> list[Option]:
        out = []
        walk = self.wizard.resumable
        if walk is not None:  # the last unfinished walk comes first
            from ...bundle.resume import describe

            label, hint = self.t("tui.welcome.resume"), describe(walk, self.wizard.lang)
            out.append(Option(Content.assemble((label, "bold"), "  ", (hint, "dim")), id="resume"))
        for action in self._order:
            label = self.t(f"tui.welcome.{action}")
            hint = self.t(f"tui.welcome.{action}_hint")
            out.append(Option(Content.assemble((label, "bold"), "  ", (hint, "dim")), id=action))
        return out

    def on_mount(self) -> None:
        self.ready = True
        self.query_one("#log-path").display = False
        self.query_one("#actions", OptionList).focus()  # already focused (AUTO_FOCUS) unless the terminal had lost it
        self.facts_changed()

    # --- detection status --------------------------------------------------------------------

    def _demo_available(self) -> bool:
        return DEMO_LOG.exists() and DEMO_MACHINE.exists()

    def on_machine_detected(self, _: MachineDetected) -> None:
        self.facts_changed()

    def on_resume_offered(self, _: ResumeOffered) -> None:
        """An unfinished walk was found after the first frame: it comes first, highlighted."""
        if self.ready:
            actions = self.query_one("#actions", OptionList)
            actions.set_options(self._options())
            actions.highlighted = 0

    def facts_changed(self) -> None:
        if not self.ready:
            return
        w = self.wizard
        m = w.machine
        label = (f"{self.t('tui.machine.label')}{colon(w.lang)}", "bold")
        if m.status == "running":
            line = Content.assemble(label, ("… ", "bold"), self.t("tui.machine.detecting"))
        elif m.status == "failed":
            line = Content.assemble(label, self.t("tui.machine.failed", error=m.error or "?"))
        elif m.result is not None:
            line = Content.assemble(label, machine_summary(m.result, w.lang))
        else:
            line = Content("")
        self.query_one("#machine-line", Static).update(line)
        no_gpu = m.status in ("done", "failed") and (m.result is None or not m.result.has_gpu)
        offer_demo = no_gpu and not w.has_logs() and self._demo_available()
        self.query_one("#demo-hint").display = offer_demo
        order = ("demo", *[a for a in ACTIONS if a != "demo"]) if offer_demo else ACTIONS
        if order != self._order:
            self._order = order
            actions = self.query_one("#actions", OptionList)
            actions.set_options(self._options())
            actions.highlighted = 0

    # --- actions -----------------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#actions")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        action = event.option.id
        w = self.wizard
        if action == "resume":
            w.resume_last()
            self.query_one("#actions", OptionList).set_options(self._options())
        elif action == "open_log":
            box = self.query_one("#log-path")
            box.display = True
            # Focus alone would scroll to the input only, hiding the keys under it: the body shows
            # the whole box once it is laid out (WelcomeBody).
            self.query_one("#path-input", Input).focus(scroll_visible=False)
        elif action == "paste":
            from .paste import PasteScreen

            self.app.push_screen(PasteScreen())
        elif action == "detect":
            from .facts import FactsScreen

            if w.machine.status in ("idle", "failed"):
                w.start_machine()
            self.app.push_screen(FactsScreen())
        elif action == "questions":
            w.open_questions()
        elif action == "demo":
            w.start_demo()
        elif action in ("browse", "tour"):
            from ..onboard_app import first_screen

            self.app.push_screen(first_screen(action))

    @on(Input.Submitted, "#path-input")
    def _path_submitted(self, event: Input.Submitted) -> None:
        path, problem = check_log_path(event.value, self.wizard.lang)
        message = self.query_one("#path-message", Static)
        if problem is not None:
            message.update(Content(problem))
            message.add_class("error")
            return
        message.remove_class("error")
        message.update(Content(self.t("tui.welcome.path_help")))
        assert path is not None
        self.wizard.read_logs([path])

    def action_close_path(self) -> None:
        box = self.query_one("#log-path")
        if box.display:
            box.display = False
            self.query_one("#actions", OptionList).focus()
