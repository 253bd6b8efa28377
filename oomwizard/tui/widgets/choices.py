"""Option lists whose Enter shows in the footer: an operator should never have to guess how to go on.

Textual's OptionList binds Enter without showing it, and the footer lists only shown bindings of the
focused widget, so a screen-level binding for Enter would never appear.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer
from textual.widgets import OptionList


class ChoiceList(OptionList):
    """Enter chooses the highlighted option (footer: ``⏎ Choose``); j and k move as ↓ and ↑."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "tui.choose", key_display="⏎", id="list.choose"),
        Binding("j", "cursor_down", show=False, id="list.down"),
        Binding("k", "cursor_up", show=False, id="list.up"),
    ]


class ContinueList(ChoiceList):
    """Enter continues with the highlighted option (footer: ``⏎ Continue with this``). Past its
    first or last option ↑ and ↓ (k and j) scroll the page it is on, so the arrows read the whole
    screen while the list keeps the focus."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "tui.diag.continue", key_display="⏎", id="list.continue"),
    ]

    def _page(self) -> ScrollableContainer | None:
        return next((n for n in self.ancestors if isinstance(n, ScrollableContainer)), None)

    def action_cursor_down(self) -> None:
        page = self._page()
        if page is not None and self.highlighted is not None and self.highlighted >= self.option_count - 1:
            page.scroll_down(animate=False)
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        page = self._page()
        if page is not None and (self.highlighted or 0) == 0 and page.scroll_y > 0:
            page.scroll_up(animate=False)
        else:
            super().action_cursor_up()
