"""Completion for typed file paths: the rest of the first matching name is shown greyed, → takes it.

Typing a long log path exactly, over SSH, at night, is where a wizard loses people; a shell's Tab
completion is what their fingers expect, and Textual inputs offer the same idea as a suggestion.
"""

from __future__ import annotations

import os

from textual.suggester import Suggester


class PathSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value)


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
