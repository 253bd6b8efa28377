"""Save every fix's commands and the checklist to a file; an existing file is never overwritten silently."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Static

from ...engine import Done
from ...report.save import default_filename, leaf_file_text, write_new
from ..widgets.footer import WizardFooter
from ..widgets.path_suggester import PathInput
from .base import WizardModal

__all__ = ["SaveScreen", "default_filename", "leaf_file_text", "write_new"]


class SaveScreen(WizardModal):
    STYLES = "save.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "tui.cancel", id="save.cancel")]

    def __init__(self, done: Done) -> None:
        super().__init__()
        self.done = done
        self._confirmed: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="save-box"):
            yield Static(Content.assemble((self.t("tui.save.title"), "bold")), id="save-title")
            yield PathInput(value=default_filename(self.done), id="save-input")  # Tab completes, as in a shell
            yield Static(Content(self.t("tui.save.help")), id="save-help")
            yield Static(id="save-message")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.query_one("#save-input", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if self._confirmed is not None and event.value != self._confirmed:
            self._confirmed = None
            self.query_one("#save-message", Static).update("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        raw = event.value.strip()
        message = self.query_one("#save-message", Static)
        if not raw:
            return
        path = Path(raw).expanduser()
        overwrite = self._confirmed == raw
        if path.exists() and not overwrite:
            self._confirmed = raw
            message.update(Content(self.t("tui.save.exists", path=raw)))
            message.add_class("warning")
            return
        w = self.wizard
        try:
            if path.is_dir():
                raise IsADirectoryError(21, "is a folder")
            write_new(path, leaf_file_text(raw, self.done, w.kb, w.lang), overwrite)
        except OSError as e:
            message.update(Content(self.t("tui.save.failed", path=raw, error=e.strerror or e)))
            message.add_class("error")
            self._confirmed = None
            return
        shown = str(path.resolve())
        w.saved(shown)
        self.notify(self.t("tui.save.done", path=shown), markup=False)
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
