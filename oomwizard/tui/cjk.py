"""Line breaking for Chinese (and other CJK) text in Textual.

Textual wraps at whitespace only, so a run of Chinese characters is one unbreakable "word": a
sentence with few spaces jumps to the next line whole and leaves ragged half-empty lines. Here
every CJK character becomes its own break opportunity, with closing punctuation kept on the line
before and opening punctuation on the line after. Textual has no public hook for this, so the
word patterns of the wrappers (Rich's for ``Content``/``Text``, Textual's for the text area) are
replaced, and nothing happens if those internals ever move.

Compiling the two patterns takes about 10 ms (``re`` expands every CJK range code point by code
point), so the wizard does it before its first frame only where that frame can show such text
(:func:`needed`), and otherwise before it draws something that needs it (a log's diagnosis) or
once the first diagnosis is drawn.
"""

from __future__ import annotations

import re
from functools import cache

CJK = "\u2e80-\u2fff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
OPEN = "（《「『【〔"
CLOSE = "，。、；：？！）》」』】〕…"

_WORD = rf"(?:[{OPEN}]*(?:[{CJK}]|[^\s{CJK}{OPEN}{CLOSE}]+)[{CLOSE}]*|[{OPEN}{CLOSE}]+)"
"""One CJK character or a word in another script, with the punctuation that sticks to it (opening
before, closing after), or stray punctuation."""

FIRST = min(OPEN + CLOSE + CJK[0])
"""The lowest code point the patterns treat apart (``…``): a text below it wraps alike either way."""


@cache
def patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Rich's word pattern (``\\s*\\S+\\s*``), used when Textual wraps ``Content`` and Rich wraps
    ``Text``, and Textual's chunk pattern (``\\S+\\s*|\\s+``), used by the text area's soft wrap."""
    return re.compile(rf"\s*{_WORD}\s*"), re.compile(rf"{_WORD}\s*|\s+")


_RANGES = tuple((ord(a), ord(b)) for a, b in re.findall(r"(.)-(.)", CJK))
_OPEN = frozenset(OPEN)
_CLOSE = frozenset(CLOSE)


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return any(lo <= o <= hi for lo, hi in _RANGES)


def needed(text: str) -> bool:
    """Whether ``text`` can wrap differently once :func:`enable` ran: it holds a CJK character or
    opening punctuation, or closing punctuation with a word right after it (``abc…def`` breaks after
    ``…``; a trailing ``…`` of a shortened line sticks to its word either way). Read character by
    character, without the patterns, so that asking costs nothing like compiling them."""
    if max(text, default=" ") < FIRST:
        return False
    for i, ch in enumerate(text):
        if ch < FIRST:
            continue
        if ch in _OPEN or _is_cjk(ch):
            return True
        if ch in _CLOSE and i + 1 < len(text) and not text[i + 1].isspace() and text[i + 1] not in _CLOSE:
            return True
    return False


def enable() -> bool:
    """Teach the wrappers to break between CJK characters; False if their internals changed."""
    done = False
    try:
        from rich import _wrap as rich_wrap
    except ImportError:
        rich_wrap = None  # type: ignore[assignment]
    word, chunk = patterns()
    if rich_wrap is not None and isinstance(getattr(rich_wrap, "re_word", None), re.Pattern):
        rich_wrap.re_word = word
        done = True
    try:
        from textual import _wrap as textual_wrap
    except ImportError:
        return done
    if isinstance(getattr(textual_wrap, "re_chunk", None), re.Pattern):
        textual_wrap.re_chunk = chunk
        done = True
    return done
