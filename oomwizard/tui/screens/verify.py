"""Ask for the log of the next start: a path (checked before anything is read) or a pasted log."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static, TextArea

from ...frontend.inputs import check_log_path
from ..widgets.footer import WizardFooter
from ..widgets.path_suggester import PathInput
from .base import WizardModal

PATH, PASTE = "path", "paste"
OnLog = Callable[[str, str], None]
"""Called with ``("path", path)`` or ``("paste", text)`` once the operator gave a usable log."""


class VerifyScreen(WizardModal):
    STYLES = "verify.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "check", "tui.verify.go", priority=True, id="verify.check"),
        Binding("escape", "cancel", "tui.cancel", id="verify.cancel"),
    ]

    def __init__(self, on_log: OnLog) -> None:
        super().__init__()
        self.on_log = on_log

    def compose(self) -> ComposeResult:
        with Vertical(id="verify-box"):
            yield Static(Content.assemble((self.t("tui.verify.title"), "bold")), id="verify-title")
            yield Static(Content(self.t("tui.verify.lead")), id="verify-lead")
            yield PathInput(placeholder=self.t("tui.verify.path_placeholder"), id="verify-path")
            yield Static(Content(self.t("tui.verify.path_help")), id="verify-message")
            yield Static(Content(self.t("tui.verify.paste_help")), id="verify-paste-help")
            yield TextArea(id="verify-paste", soft_wrap=True, show_line_numbers=False)
        yield WizardFooter()

    def on_mount(self) -> None:
        self.query_one("#verify-path", Input).focus()

    def _problem(self, text: str) -> None:
        message = self.query_one("#verify-message", Static)
        message.update(Content(text))
        message.add_class("error")

    @on(Input.Submitted, "#verify-path")
    def _path_submitted(self) -> None:
        self.action_check()

    def action_check(self) -> None:
        """The pasted log if there is one, else the path; a bad path is explained, nothing is lost."""
        pasted = self.query_one("#verify-paste", TextArea).text
        raw = self.query_one("#verify-path", Input).value
        if pasted.strip() and not (raw.strip() and self.query_one("#verify-path", Input).has_focus):
            self._done(PASTE, pasted)
            return
        if not raw.strip():
            self._problem(self.t("tui.verify.empty"))
            return
        path, problem = check_log_path(raw, self.wizard.lang)
        if problem is not None or path is None:
            self._problem(problem or "")
            return
        self._done(PATH, path)

    def _done(self, kind: str, value: str) -> None:
        self.dismiss(None)
        self.on_log(kind, value)

    def action_cancel(self) -> None:
        self.dismiss(None)
