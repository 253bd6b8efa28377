"""Option lists whose Enter shows in the footer: an operator should never have to guess how to go on.

Textual's OptionList binds Enter without showing it, and the footer lists only shown bindings of the
focused widget, so a screen-level binding for Enter would never appear.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import OptionList


class ChoiceList(OptionList):
    """Enter chooses the highlighted option (footer: ``⏎ Choose``); j and k move as ↓ and ↑."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "tui.choose", key_display="⏎", id="list.choose"),
        Binding("j", "cursor_down", show=False, id="list.down"),
        Binding("k", "cursor_up", show=False, id="list.up"),
    ]


class ContinueList(ChoiceList):
    """Enter continues with the highlighted option (footer: ``⏎ Continue with this``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "tui.diag.continue", key_display="⏎", id="list.continue"),
    ]
