"""Checklist items that wrap with a hanging indent, and show what a check of the new log found.

Textual's Checkbox shows only the first line of its label. Here the box is its own column, so a
long item and the verdict under it line up after the box instead of running back under it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from ...frontend.verdicts import Verdict
from ...verify import FAIL, PASS, UNKNOWN, UNPROVEN


def box_mark(checked: bool, verdict: Verdict | None) -> str:
    """``[x]`` ticked, ``[!]`` failed, ``[?]`` not proven either way, ``[ ]`` open."""
    if checked:
        return "[x]"
    if verdict is not None and verdict.status == FAIL:
        return "[!]"
    if verdict is not None and verdict.status in (UNPROVEN, UNKNOWN):
        return "[?]"
    return "[ ]"


class ChecklistItem(Widget, can_focus=True):
    """``[x] text``; space or Enter toggles. ``auto`` marks items a tool can check from the next log."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space,enter", "toggle_check", "Toggle", show=False, id="checklist.toggle_check"),
        Binding("down,j", "app.focus_next", show=False, id="checklist.next"),
        Binding("up,k", "app.focus_previous", show=False, id="checklist.previous"),
    ]

    DEFAULT_CSS = """
    ChecklistItem {
        height: auto;
        layout: horizontal;
        padding: 0 1;
    }
    ChecklistItem:focus {
        background: $boost;
    }
    ChecklistItem:focus > .check-text {
        text-style: bold;
    }
    ChecklistItem > .check-box {
        width: 4;
    }
    ChecklistItem > Vertical {
        width: 1fr;
        height: auto;
    }
    ChecklistItem .check-verdict, ChecklistItem .check-evidence {
        color: $text-muted;
    }
    ChecklistItem.-pass .check-verdict {
        color: $text-success;
    }
    ChecklistItem.-fail .check-box, ChecklistItem.-fail .check-verdict {
        color: $text-error;
        text-style: bold;
    }
    ChecklistItem.-unproven .check-box, ChecklistItem.-unproven .check-verdict {
        color: $text-warning;
    }
    """

    checked: reactive[bool] = reactive(False)

    class Toggled(Message):
        def __init__(self, item: ChecklistItem) -> None:
            super().__init__()
            self.item = item

    def __init__(
        self,
        text: str,
        auto_label: str | None = None,
        checked: bool = False,
        verdict: Verdict | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.text = text
        self.auto_label = auto_label
        self.verdict = verdict
        self.set_reactive(ChecklistItem.checked, checked)
        self._restyle()

    def compose(self) -> ComposeResult:
        yield Static(self._box(), classes="check-box")
        with Vertical():
            parts: list[str | tuple[str, str]] = [self.text]
            if self.auto_label:
                parts.append((f"  ({self.auto_label})", "italic dim"))
            yield Static(Content.assemble(*parts), classes="check-text")
            verdict = Static(self._verdict(), classes="check-verdict")
            verdict.display = self.verdict is not None
            yield verdict
            evidence = Static(self._evidence(), classes="check-evidence")
            evidence.display = bool(self.verdict is not None and self.verdict.where)
            yield evidence

    def _box(self) -> Content:
        mark = box_mark(self.checked, self.verdict)
        return Content.assemble((mark, "bold") if mark != "[ ]" else mark)

    def _verdict(self) -> Content:
        return Content(self.verdict.note if self.verdict is not None else "")

    def _evidence(self) -> Content:
        """The log line that decided the item, after its ``file:line``."""
        v = self.verdict
        if v is None or not v.where:
            return Content("")
        return Content.assemble((v.where, "bold"), "  ", v.line)

    def _restyle(self) -> None:
        self.set_class(self.checked, "-checked")
        status = self.verdict.status if self.verdict is not None else None
        self.set_class(status == PASS, "-pass")
        self.set_class(status == FAIL, "-fail")
        self.set_class(status in (UNPROVEN, UNKNOWN), "-unproven")

    def set_verdict(self, verdict: Verdict | None, checked: bool | None = None) -> None:
        self.verdict = verdict
        if checked is not None:
            self.set_reactive(ChecklistItem.checked, checked)
        self._restyle()
        if self.is_mounted:
            self.query_one(".check-box", Static).update(self._box())
            note = self.query_one(".check-verdict", Static)
            note.update(self._verdict())
            note.display = verdict is not None
            evidence = self.query_one(".check-evidence", Static)
            evidence.update(self._evidence())
            evidence.display = bool(verdict is not None and verdict.where)

    def watch_checked(self, checked: bool) -> None:
        self._restyle()
        if self.is_mounted:
            self.query_one(".check-box", Static).update(self._box())

    def action_toggle_check(self) -> None:
        self.checked = not self.checked
        self.post_message(self.Toggled(self))

    def on_click(self) -> None:
        self.action_toggle_check()
