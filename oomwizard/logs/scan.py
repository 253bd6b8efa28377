"""Many patterns searched over raw bytes in one pass, by a well-kept regex library.

The log reader looks at every byte of its input for every trigger the diagnosis reacts to, and
only the lines around a hit reach Python. The search is done by, in order of preference:

* `hyperscan <https://pypi.org/project/hyperscan/>`_ (Intel's multi-pattern matcher, x86-64
  wheels): every pattern at once, zero-copy over the reader's buffer, about 2 GB/s here;
* `google-re2 <https://pypi.org/project/google-re2/>`_ (one alternation, linear time, every
  platform with a wheel): about 0.6 GB/s;
* Python's ``re`` when neither imports: correct, but about 20 times slower.

``OOMWIZARD_SCANNER=hyperscan|re2|re`` picks one (tests run every engine). A pattern is a regex in
the common subset of the three (literals are escaped by :func:`literal`); a pattern one engine
cannot compile sends the whole set to the next.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

ENGINES = ("hyperscan", "re2", "re")


def literal(text: str | bytes) -> bytes:
    """A pattern that matches ``text`` exactly."""
    raw = text.encode() if isinstance(text, str) else text
    return re.escape(raw)


@dataclass(frozen=True)
class Anchor:
    """A pattern whose hits make the lines around them worth reading."""

    pattern: bytes
    """A regex (bytes); :func:`literal` for plain text."""
    before: int
    """Bytes before the end of a hit to read as well (snapped to whole lines)."""
    after: int
    """Bytes after the end of a hit."""


class _Engine(Protocol):
    name: str

    def ends(self, buf: Any, n: int) -> list[tuple[int, int]]:
        """``(end offset, anchor index)`` of every hit in ``buf[:n]``, in order."""

    def first(self, buf: Any, start: int, n: int) -> int:
        """The end offset of the first hit in ``buf[start:n]``, or -1."""


class _Hyperscan:
    name = "hyperscan"

    def __init__(self, patterns: Sequence[bytes]) -> None:
        import hyperscan

        self._hs = hyperscan
        self.db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.db.compile(expressions=list(patterns), ids=list(range(len(patterns))),
                        elements=len(patterns), flags=[0] * len(patterns))
        self.scratch = hyperscan.Scratch(self.db)

    def ends(self, buf: Any, n: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        add = out.append

        def on(pid: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            add((to, pid))

        self.db.scan(memoryview(buf)[:n], match_event_handler=on, scratch=self.scratch)  # type: ignore[type-var]
        out.sort()
        return out

    def first(self, buf: Any, start: int, n: int) -> int:
        found = [-1]

        def on(_pid: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            found[0] = start + to
            return True  # stop the scan

        with contextlib.suppress(self._hs.ScanTerminated):
            self.db.scan(memoryview(buf)[start:n], match_event_handler=on,  # type: ignore[type-var]
                         scratch=self.scratch)
        return found[0]


class _Regex:
    """google-re2 or ``re``: one alternation; the anchor of a hit is known by its text."""

    def __init__(self, patterns: Sequence[bytes], module: Any, name: str) -> None:
        self.name = name
        self.rx = module.compile(b"|".join(b"(?:" + p + b")" for p in patterns))
        self.by_text: dict[bytes, int] = {}
        self.regex_ids: list[tuple[Any, int]] = []
        for i, p in enumerate(patterns):
            text = _unescaped(p)
            if text is not None:
                self.by_text.setdefault(text, i)
            else:
                self.regex_ids.append((module.compile(p), i))

    def _which(self, m: Any) -> int:
        i = self.by_text.get(bytes(m.group()))
        if i is not None:
            return i
        for rx, j in self.regex_ids:
            if rx.match(m.string, m.start()) is not None:
                return j
        return 0

    def ends(self, buf: Any, n: int) -> list[tuple[int, int]]:
        return [(m.end(), self._which(m)) for m in self.rx.finditer(buf, 0, n)]

    def first(self, buf: Any, start: int, n: int) -> int:
        m = self.rx.search(buf, start, n)
        return -1 if m is None else m.end()


_META = re.compile(rb"(?<!\\)[.^$*+?{}\[\]|()]|\\[A-Za-z0-9]")


def _unescaped(pattern: bytes) -> bytes | None:
    """The text a pattern matches when it is a plain (escaped) literal, else None."""
    if _META.search(pattern):
        return None
    return re.sub(rb"\\(.)", rb"\1", pattern)


def _build(name: str, patterns: Sequence[bytes]) -> _Engine:
    if name == "hyperscan":
        return _Hyperscan(patterns)
    if name == "re2":
        import re2

        return _Regex(patterns, re2, "re2")
    return _Regex(patterns, re, "re")


def _engine(patterns: Sequence[bytes], prefer: str | None = None) -> _Engine:
    wanted = prefer or os.environ.get("OOMWIZARD_SCANNER") or ""
    order = [wanted, *ENGINES] if wanted in ENGINES else list(ENGINES)
    last: Exception | None = None
    for name in order:
        try:
            return _build(name, patterns)
        except ImportError:
            continue
        except Exception as e:  # noqa: BLE001 - each engine has its own compile error; the next engine is tried
            last = e
    raise ValueError(f"cannot compile the log patterns: {last}")


class Scanner:
    """Finds the anchors' hits and the first mark after a position, in line-aligned buffers.

    ``marks`` are patterns that repeat on nearly every line of a serving log (requests, throughput
    reports): only their first hit after the start of a buffer and after each anchor hit is asked
    for, which is all the diagnosis needs of them (where serving began) and costs one short search.
    """

    def __init__(self, anchors: Sequence[Anchor], marks: Sequence[Anchor] = (), engine: str | None = None) -> None:
        if not anchors:
            raise ValueError("a scanner needs at least one pattern")
        self.anchors = tuple(anchors)
        self.marks = tuple(marks)
        self._prefer = engine
        self.mark_window = (max((a.before for a in self.marks), default=0), max((a.after for a in self.marks), default=0))
        self.reach = max(a.after for a in (*self.anchors, *self.marks))
        """The widest window after a hit: a window may run this far into the next buffer."""

    @functools.cached_property
    def engine(self) -> _Engine:
        """Compiled when first searched with: a log under 1 MiB is read line by line and searched
        only for a line too long to keep whole, so the demo's diagnosis does not wait for it."""
        return _engine([a.pattern for a in self.anchors], self._prefer)

    @functools.cached_property
    def mark_engine(self) -> _Engine | None:
        return _engine([a.pattern for a in self.marks], self._prefer) if self.marks else None

    @property
    def name(self) -> str:
        return self.engine.name

    def spans(self, buf: Any, n: int) -> list[tuple[int, int]]:
        """``[start, end)`` byte ranges of ``buf[:n]`` to read (may reach below 0 or past ``n``), in
        order of their start, not yet merged."""
        out: list[tuple[int, int]] = []
        mark = self.mark_engine.first(buf, 0, n) if self.mark_engine else -1
        mb, ma = self.mark_window
        for end, i in self.engine.ends(buf, n):
            a = self.anchors[i]
            out.append((end - a.before, end + a.after))
            if 0 <= mark < end and self.mark_engine is not None:
                out.append((mark - mb, mark + ma))
                mark = self.mark_engine.first(buf, end, n)
        if mark >= 0:
            out.append((mark - mb, mark + ma))
        out.sort()
        return out
