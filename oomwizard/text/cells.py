"""Text measured and wrapped by terminal cells, not characters, for everything outside the TUI.

A Chinese character takes two cells, so ``textwrap`` (which counts characters) lets a line of
Chinese run to twice the width, and it cannot break one at all: Chinese has no spaces, so a whole
paragraph is one "word". Here a line may break between any two wide characters (never before a
closing mark such as ，。） or after an opening one such as （《), and between words elsewhere. A
Latin word longer than the line (a URL, a ``file@version``) is kept whole so it can be copied.
Widths follow Unicode's East Asian Width (wide and fullwidth take two cells; combining marks and
zero-width characters none), which is what terminals and Rich's ``cell_len`` count for this text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

NO_LINE_START = set("，。、；：！？）》」』】〉…,.;:!?)]}%、·")
"""Closing marks: a line never starts with one (it stays with the character before it)."""
NO_LINE_END = set("（《「『【〈([{")
"""Opening marks: a line never ends with one (it moves to the next line with what it opens)."""

ELLIPSIS = "…"

JOINED_SCRIPT = "\u3400-\u9fff\u3000-\u303f\uff00-\uffef"
"""For a regex character class: ideographs, CJK punctuation and full-width forms, the characters
Chinese prose is written in. Two of them on either side of a line break are joined without a
space (in articles, YAML texts and the site), since Chinese puts none between words."""


@lru_cache(maxsize=4096)
def char_width(ch: str) -> int:
    if ch in "\u200b\u200c\u200d\u2060\ufeff":
        return 0
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def cell_len(text: str) -> int:
    """The number of terminal cells ``text`` takes on one line."""
    if text.isascii():
        return len(text)
    return sum(char_width(ch) for ch in text)


def ljust(text: str, cells: int) -> str:
    """``text`` padded with spaces to ``cells`` cells (``str.ljust`` counts characters)."""
    return text + " " * max(0, cells - cell_len(text))


def shorten(text: str, cells: int) -> str:
    """``text`` cut to at most ``cells`` cells, ending in "…" when something was cut."""
    if cell_len(text) <= cells:
        return text
    out, used = [], 0
    for ch in text:
        w = char_width(ch)
        if used + w > cells - 1:
            break
        out.append(ch)
        used += w
    return "".join(out).rstrip() + ELLIPSIS


_TOKEN = re.compile(r"\s+|[^\s]")


def _tokens(text: str) -> list[str]:
    """Breakable units: runs of spaces, single wide characters, and runs of narrow non-space
    characters (words); a closing mark sticks to what precedes it, an opening one to what follows."""
    units: list[str] = []
    word = ""
    for m in _TOKEN.finditer(text):
        s = m.group()
        if s.isspace() or char_width(s) == 2:
            if word:
                units.append(word)
                word = ""
            units.append(" " * len(s) if s.isspace() else s)
        else:
            word += s
    if word:
        units.append(word)
    glued: list[str] = []
    for u in units:
        if glued and not u.isspace() and not glued[-1].isspace() and (u[0] in NO_LINE_START or glued[-1][-1] in NO_LINE_END):
            glued[-1] += u
        else:
            glued.append(u)
    return glued


_BULLET = re.compile(r"[-*•]|\d{1,3}[.)]")
"""A list mark stays on the line of what follows it, even when that is too long for a line."""


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """``text`` (one paragraph; tabs and newlines read as spaces, spaces where a line breaks
    dropped) in lines of at most ``width`` cells, but for a single unit longer than a line, which
    gets a line of its own (or shares it with the list mark before it)."""
    if not text.strip():
        return []
    lines: list[str] = []
    indent = initial_indent
    line: list[str] = []
    used = cell_len(indent)
    for unit in _tokens(text.strip()):
        if unit.isspace():
            if line:
                line.append(unit)
                used += len(unit)
            continue
        w = cell_len(unit)
        if line and used + w > width and not _BULLET.fullmatch("".join(line).strip()):
            while line and line[-1].isspace():
                line.pop()
            lines.append(indent + "".join(line))
            indent, line, used = subsequent_indent, [], cell_len(subsequent_indent)
        line.append(unit)
        used += w
    while line and line[-1].isspace():
        line.pop()
    if line:
        lines.append(indent + "".join(line))
    return lines


def fill(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> str:
    return "\n".join(wrap(text, width, initial_indent, subsequent_indent))
