"""Remarks detection makes about the machine, in both languages, kept in the JSON report.

A note is plain data (``{"code", "level", "en", "zh"}``) so a saved report replays with the same
words on another machine, in either language, without the code that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LEVELS = ("info", "warning", "problem")


def note(code: str, en: str, zh: str, level: str = "info") -> dict[str, str]:
    """``level``: ``info`` (context), ``warning`` (likely matters for an OOM), ``problem`` (detection failed)."""
    if level not in LEVELS:
        raise ValueError(f"unknown note level {level!r}")
    return {"code": code, "level": level, "en": en, "zh": zh}


def note_text(n: Mapping[str, Any], lang: str) -> str:
    return str(n.get("zh" if lang == "zh" else "en") or n.get("en") or "")
