"""Physical lines to logical lines: a message a terminal hard-wrapped is joined back.

A terminal copy wraps long lines at its width (80 to 200 columns), mid-word, and the pieces lose
the process and logger prefixes that start every real line. A piece is joined to the line before
it when it does not start anything itself (see ``clean._FRESH_RE``) and the line before looks cut:
as wide as the wrap width this input has shown (the most common length among long lines), or,
before that is known, between 72 and 260 characters. Blank lines in between (some pastes double
every line) are skipped. The joined line remembers where each piece came from, so evidence still
points at the line of the original input where the match starts.

An exception's message broken at a space by hand or by an editor, shorter than any terminal
wrap, is joined too (with the space back) when the line before is an exception whose sentence is
still open and the next goes on with a lower-case word.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from .clean import Clean, clean

MIN_WRAP = 72
MAX_WRAP = 260
MAX_JOINED = 64 << 10
MAX_PIECES = 80
BLOCK_CUTS = frozenset({1000, 1024, 2000, 2048, 4000, 4096, 8000, 8192, 16000, 16384})
"""Line lengths (characters or bytes) at which viewers and shippers cut long lines: Docker's
json-file driver splits at 16 KiB, web log viewers and some pastes at 1000 or 1024. A line of
exactly such a length is taken as cut even when it is far wider than any terminal."""


@dataclass
class Logical:
    """One message, possibly joined from several physical lines."""

    text: str
    shown: str
    line: int
    """Physical line (1-based) where the message starts."""
    proc: str = ""
    rank: int | None = None
    level: str = ""
    src: str = ""
    starts: list[int] = field(default_factory=list)
    """Offsets in ``text`` where each later piece starts …"""
    lines: list[int] = field(default_factory=list)
    """… and the physical line each of them came from."""
    shown_starts: list[int] = field(default_factory=list)
    repeated: bool = False
    """Ray's summary of other processes' copies of this line (``[repeated Nx across cluster]``)."""

    def line_at(self, offset: int) -> int:
        """The physical line holding character ``offset`` of ``text``."""
        i = bisect_right(self.starts, offset)
        return self.line if i == 0 else self.lines[i - 1]

    def shown_from(self, offset: int, width: int = 400) -> str:
        """The shown text of the piece holding ``offset`` and what follows, cut to ``width``."""
        i = bisect_right(self.starts, offset)
        start = 0 if i == 0 else self.shown_starts[i - 1]
        out = self.shown[start:]
        return out if len(out) <= width else out[: width - 1] + "…"


_EXCEPTION_HEAD_RE = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*[\w)]$")
_LOWER_START_RE = re.compile(r"^[a-z][a-z]*\s")


def _cut_at_a_word(p: Logical, c: Clean) -> bool:
    """An exception's message broken by hand or by an editor at a space, shorter than any
    terminal wrap: the line is an exception and its message a sentence still open (no closing
    punctuation), and the next line goes on with a lower-case word, e.g. ``ValueError: Free memory
    on device cuda:0 (30.12/31.84 GiB) on startup`` / ``is less than desired GPU memory …``."""
    return not p.starts and _LOWER_START_RE.match(c.text) is not None and _EXCEPTION_HEAD_RE.match(p.text) is not None


class Joiner:
    """Feeds physical lines, yields logical ones."""

    def __init__(self) -> None:
        self.pending: Logical | None = None
        self.last_width = 0
        self.last_partial = False
        self.widths: Counter[int] = Counter()
        self.long_lines = 0
        self.wrap_width: int | None = None
        self.blank_before = False

    def _learn(self, width: int) -> None:
        if width < MIN_WRAP:
            return
        self.long_lines += 1
        self.widths[width] += 1
        if self.long_lines in (8, 32, 128, 512) or (self.wrap_width is None and self.long_lines % 64 == 0):
            w, n = self.widths.most_common(1)[0]
            longer = sum(c for k, c in self.widths.items() if k > w + 2)
            self.wrap_width = w if n >= 3 and n * 4 >= self.long_lines and longer * 10 <= self.long_lines else None

    def _looks_cut(self) -> bool:
        if self.last_partial:
            return True
        w = self.last_width
        if self.wrap_width is not None:
            return self.wrap_width - 1 <= w <= self.wrap_width + 1
        return MIN_WRAP <= w <= MAX_WRAP

    def feed(self, line_no: int, raw: str) -> Iterator[Logical]:
        body = raw.rstrip("\r\n")
        block_cut = len(body) >= 1000 and (len(body) in BLOCK_CUTS or len(body.encode("utf-8", "replace")) in BLOCK_CUTS)
        for c in clean(raw):
            yield from self._feed_clean(line_no, c, block_cut)

    def _feed_clean(self, line_no: int, c: Clean, block_cut: bool = False) -> Iterator[Logical]:
        if c.boundary:
            yield from self.flush()  # the end of a code block ends whatever it held
            return
        if not c.text.strip():
            self.blank_before = True
            return  # blank lines neither start nor end a message (some pastes double every line)
        width = len(c.shown)
        p = self.pending
        cut = p is not None and not c.fresh and self._looks_cut()
        # a break by hand is read as one only with nothing between (prose after a blank line is not it)
        at_word = (p is not None and not c.fresh and not cut and not self.blank_before
                   and self.last_width < MIN_WRAP and _cut_at_a_word(p, c))
        self.blank_before = False
        if p is not None and (cut or at_word) and len(p.text) < MAX_JOINED and len(p.starts) < MAX_PIECES:
            if at_word:  # the line break stood for a space
                p.text += " "
                p.shown += " "
            p.starts.append(len(p.text))
            p.lines.append(line_no)
            p.shown_starts.append(len(p.shown))
            p.text += c.text
            p.shown += c.shown
            p.repeated = p.repeated or c.repeated
        else:
            if p is not None:
                yield p
            self.pending = Logical(c.text, c.shown, line_no, c.proc, c.rank, c.level, c.src, repeated=c.repeated)
        self._learn(width)
        self.last_width = width
        self.last_partial = c.partial or block_cut

    def flush(self) -> Iterator[Logical]:
        """End of input, or a gap in a scanned log: nothing continues across it."""
        if self.pending is not None:
            yield self.pending
        self.pending = None
        self.last_width = 0
        self.last_partial = False
