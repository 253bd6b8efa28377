"""Checklist items that wrap: Textual's Checkbox shows only the first line of its label."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static


class ChecklistItem(Static, can_focus=True):
    """``[x] text``; space or Enter toggles. ``auto`` marks items a tool can check from the next log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space,enter", "toggle", "Toggle", show=False),
        Binding("down,j", "app.focus_next", show=False),
        Binding("up,k", "app.focus_previous", show=False),
    ]

    DEFAULT_CSS = """
    ChecklistItem {
        height: auto;
        padding: 0 1;
    }
    ChecklistItem:focus {
        background: $boost;
        text-style: bold;
    }
    """

    checked: reactive[bool] = reactive(False)

    class Toggled(Message):
        def __init__(self, item: ChecklistItem) -> None:
            super().__init__()
            self.item = item

    def __init__(self, text: str, auto_label: str | None = None, checked: bool = False, **kwargs: object) -> None:
        self.text = text
        self.auto_label = auto_label
        super().__init__(self._content(checked), **kwargs)  # type: ignore[arg-type]
        self.set_reactive(ChecklistItem.checked, checked)
        self.set_class(checked, "-checked")

    def _content(self, checked: bool) -> Content:
        box = ("[x] ", "bold") if checked else ("[ ] ", "")
        parts: list[str | tuple[str, str]] = [box, self.text]
        if self.auto_label:
            parts.append((f"  ({self.auto_label})", "italic dim"))
        return Content.assemble(*parts)

    def watch_checked(self, checked: bool) -> None:
        self.update(self._content(checked))
        self.set_class(checked, "-checked")

    def action_toggle(self) -> None:
        self.checked = not self.checked
        self.post_message(self.Toggled(self))

    def on_click(self) -> None:
        self.action_toggle()
