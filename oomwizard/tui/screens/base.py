"""What every screen shares: a one-line title bar, the footer, and typed access to the app.

Binding descriptions are written as UI keys (``tui.quit``); :func:`localized` turns them into the
operator's language where Textual reads them, the screen's ``active_bindings`` (the footer, the key
map and the command palette all read that), so the bindings themselves stay as declared and a
keymap (:mod:`..keymap`) still finds them by id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual.binding import ActiveBinding
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ...i18n import UI, ui

if TYPE_CHECKING:
    from textual.app import App

    from ..view import Wizard


def localized(active: dict[str, ActiveBinding], lang: str) -> dict[str, ActiveBinding]:
    """The active bindings with each UI-key description in ``lang``."""
    out = {}
    for key, a in active.items():
        d = a.binding.description
        out[key] = ActiveBinding(a.node, replace(a.binding, description=ui(d, lang)), a.enabled, a.tooltip) if d in UI else a
    return out


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


class WizardNode:
    """What :class:`WizardScreen` and :class:`WizardModal` share (mixed in before Textual's class)."""

    STYLES: ClassVar[str] = ""
    """The screen's own stylesheet, a file beside this module, added to the app's the first time a
    screen that names it is shown (see :mod:`..styles`): the first frame parses only the rules it draws."""

    if TYPE_CHECKING:
        app: App[Any]

    @property
    def wizard(self) -> Wizard:
        return cast("Wizard", self.app)

    def t(self, key: str, **fmt: object) -> str:
        return self.wizard.t(key, **fmt)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        return localized(super().active_bindings, self.wizard.lang)  # type: ignore[misc]

    def on_mount(self) -> None:
        # Textual also calls the subclasses' on_mount; this one runs after theirs.
        steady_cursors(self)  # type: ignore[arg-type]


class WizardScreen(WizardNode, Screen[None]):
    KIND: ClassVar[str] = ""
    """``diagnosis``, ``question`` or ``leaf``: where a kept walk resumes (the app reads it without
    importing the screens, which import the report renderers)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ready = False
        """True once the widgets exist (set first thing in ``on_mount``); until then redraws wait."""


class WizardModal(WizardNode, ModalScreen[None]):
    pass
