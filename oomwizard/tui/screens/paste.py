"""Paste a log copied from another window (a web console, a chat) and diagnose it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Button, Static, TextArea

from ...text.safe_text import strip_escapes
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen


class LogArea(TextArea):
    """The paste box. A log copied from a colour console or ``tmux paste-buffer`` carries its
    escape sequences; the box shows (and diagnoses) the text without them, as the reader would."""

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if "\x1b" in self.text or "\x9b" in self.text:
            self.text = strip_escapes(self.text)
            self.move_cursor(self.document.end)


class PasteScreen(WizardScreen):
    STYLES = "paste.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "diagnose", "tui.paste.go", priority=True, id="paste.diagnose"),
        Binding("escape", "cancel", "tui.cancel", id="paste.cancel"),
    ]

    def compose(self) -> ComposeResult:
        yield TitleBar(self.t("tui.paste.title"))
        yield Static(Content(self.t("tui.paste.help")), id="paste-help")
        yield LogArea(id="paste-area", soft_wrap=True, show_line_numbers=False)
        with Horizontal(id="paste-buttons"):
            yield Button(self.t("tui.paste.go"), id="paste-go", variant="primary", compact=True)
            yield Button(self.t("tui.cancel"), id="paste-cancel", compact=True)
        yield WizardFooter()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "paste-go":
            self.action_diagnose()
        else:
            self.action_cancel()

    def action_diagnose(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify(self.t("tui.paste.empty"), severity="warning", markup=False)
            return
        self.app.pop_screen()
        self.wizard.read_pasted(text)

    def action_cancel(self) -> None:
        self.app.pop_screen()
