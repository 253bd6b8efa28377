"""A progress line on the terminal while a big log is read: bytes read, share, time left.

Only on a terminal (never on a pipe, a file or in JSON mode, where it would mix with output) and
only once a read has taken long enough to be worth it. The line is rewritten in place and
cleared at the end, so nothing of it stays in the scrollback.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from .i18n import ui
from .text.output import clean_text
from .text.units import mib

DELAY_S = 0.5
"""A read shorter than this shows nothing."""
EVERY_S = 0.2


def fmt_mib(n: int) -> str:
    return mib(n, grouped=True)


class ProgressLine:
    """A ``reader.Progress`` callback that draws on ``stream`` (stderr) when it is a terminal."""

    def __init__(self, name: str, lang: str = "en", stream: TextIO | None = None, *, enabled: bool = True) -> None:
        stream = stream if stream is not None else sys.stderr
        # The line's own escapes (return, erase line) go to the terminal itself; the file name,
        # which comes from the input, is cleaned here instead of by the output boundary.
        self.stream: TextIO = getattr(stream, "inner", stream)
        # A dumb terminal cannot erase a line: no progress there rather than escape bytes.
        self.enabled = enabled and _is_tty(self.stream) and os.environ.get("TERM", "") != "dumb"
        self.name = clean_text(name)
        self.lang = lang
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int | None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < DELAY_S or now - self.last < EVERY_S:
            return
        self.last = now
        self.stream.write("\r\x1b[2K" + self.text(done, total, now - self.start))
        self.stream.flush()
        self.drawn = True

    def text(self, done: int, total: int | None, elapsed: float) -> str:
        if total and 0 < done <= total:
            left = elapsed * (total - done) / done
            return ui("progress.known", self.lang, name=self.name, done=fmt_mib(done), total=fmt_mib(total),
                      pct=f"{100 * done / total:.0f}", left=f"{left:.0f}")
        return ui("progress.unknown", self.lang, name=self.name, done=fmt_mib(done))

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.drawn = False


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
