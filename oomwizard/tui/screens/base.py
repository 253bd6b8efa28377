"""What every screen shares: a one-line title bar, the footer, and typed access to the app."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ...i18n import UI, ui

if TYPE_CHECKING:
    from ..app import WizardApp


def localize_bindings(node: DOMNode, lang: str) -> None:
    """Binding descriptions are written as UI keys (``tui.quit``); show them in the operator's language."""
    table = node._bindings.key_to_bindings
    for key, bindings in list(table.items()):
        table[key] = [replace(b, description=ui(b.description, lang)) if b.description in UI else b for b in bindings]


class TitleBar(Static):
    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        height: 1;
        background: $panel;
        color: $text;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, title: str, **kwargs: object) -> None:
        super().__init__(Content.assemble(("oomwizard", "bold"), " · ", title), **kwargs)  # type: ignore[arg-type]

    def set_title(self, title: str) -> None:
        self.update(Content.assemble(("oomwizard", "bold"), " · ", title))


def steady_cursors(screen: Screen[None] | ModalScreen[None]) -> None:
    """No blinking cursors when headless, so screenshots and snapshots are the same every time."""
    if screen.app.is_headless:
        for widget in screen.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]


class WizardScreen(Screen[None]):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ready = False
        """True once the widgets exist (set first thing in ``on_mount``); until then redraws wait."""
        localize_bindings(self, self.wizard.lang)

    @property
    def wizard(self) -> WizardApp:
        return cast("WizardApp", self.app)

    def t(self, key: str, **fmt: object) -> str:
        return self.wizard.t(key, **fmt)

    def on_mount(self) -> None:
        # Textual also calls the subclasses' on_mount; this one runs after theirs.
        steady_cursors(self)


class WizardModal(ModalScreen[None]):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        localize_bindings(self, self.wizard.lang)

    @property
    def wizard(self) -> WizardApp:
        return cast("WizardApp", self.app)

    def t(self, key: str, **fmt: object) -> str:
        return self.wizard.t(key, **fmt)

    def on_mount(self) -> None:
        # Textual also calls the subclasses' on_mount; this one runs after theirs.
        steady_cursors(self)
