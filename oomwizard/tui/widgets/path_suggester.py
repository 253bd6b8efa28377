"""Completion for typed file paths: the rest of the first matching name is shown greyed, Tab or → takes it.

Typing a long log path exactly, over SSH, at night, is where a wizard loses people; a shell's Tab
completion is what their fingers expect, and Textual inputs offer the same idea as a suggestion.
"""

from __future__ import annotations

import os
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.suggester import Suggester
from textual.widgets import Input


class PathSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value)


class PathInput(Input):
    """A path box where Tab completes, as in a shell; with nothing to complete it moves on."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("tab", "complete", show=False, id="path.complete")]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(suggester=PathSuggester(), **kwargs)  # type: ignore[arg-type]

    def action_complete(self) -> None:
        before = self.value
        if self.cursor_at_end:
            self.action_cursor_right()  # takes the greyed completion, if one is shown
        if self.value == before:
            self.screen.focus_next()


def complete_path(value: str) -> str | None:
    """``value`` plus the rest of the first name that starts with its last part (a folder gets ``/``)."""
    if not value.strip():
        return None
    expanded = os.path.expanduser(value)
    folder, prefix = os.path.split(expanded)
    try:
        names = sorted(os.listdir(folder or "."))
    except OSError:
        return None
    hidden_ok = prefix.startswith(".")
    matches = [n for n in names if n.startswith(prefix) and n != prefix and (hidden_ok or not n.startswith("."))]
    if not matches:
        if prefix and os.path.isdir(expanded) and not expanded.endswith(os.sep):
            return value + os.sep
        return None
    rest = matches[0][len(prefix) :]
    if os.path.isdir(os.path.join(folder or ".", matches[0])):
        rest += os.sep
    return value + rest
