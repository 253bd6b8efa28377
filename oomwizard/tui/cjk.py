"""Line breaking for Chinese (and other CJK) text in Textual.

Textual wraps at whitespace only, so a run of Chinese characters is one unbreakable "word": a
sentence with few spaces jumps to the next line whole and leaves ragged half-empty lines. Here
every CJK character becomes its own break opportunity, with closing punctuation kept on the line
before and opening punctuation on the line after. Textual has no public hook for this, so the
word patterns of the wrappers (Rich's for ``Content``/``Text``, Textual's for the text area) are
replaced, and nothing happens if those internals ever move.
"""

from __future__ import annotations

import re

CJK = "\u2e80-\u2fff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
OPEN = "（《「『【〔"
CLOSE = "，。、；：？！）》」』】〕…"

_WORD = rf"(?:[{OPEN}]*(?:[{CJK}]|[^\s{CJK}{OPEN}{CLOSE}]+)[{CLOSE}]*|[{OPEN}{CLOSE}]+)"
"""One CJK character or a word in another script, with the punctuation that sticks to it (opening
before, closing after), or stray punctuation."""

WORD_RE = re.compile(rf"\s*{_WORD}\s*")
"""Rich's word pattern (``\\s*\\S+\\s*``), used when Textual wraps ``Content`` and Rich wraps ``Text``."""

CHUNK_RE = re.compile(rf"{_WORD}\s*|\s+")
"""Textual's chunk pattern (``\\S+\\s*|\\s+``), used by the text area's soft wrap."""


def enable() -> bool:
    """Teach the wrappers to break between CJK characters; False if their internals changed."""
    done = False
    try:
        from rich import _wrap as rich_wrap
    except ImportError:
        rich_wrap = None  # type: ignore[assignment]
    if rich_wrap is not None and isinstance(getattr(rich_wrap, "re_word", None), re.Pattern):
        rich_wrap.re_word = WORD_RE
        done = True
    try:
        from textual import _wrap as textual_wrap
    except ImportError:
        return done
    if isinstance(getattr(textual_wrap, "re_chunk", None), re.Pattern):
        textual_wrap.re_chunk = CHUNK_RE
        done = True
    return done
