"""Reading logs as raw lines: every byte of every input searched, in bounded memory.

A log is read in large binary blocks into two reused buffers and never held whole. Inputs up to
:data:`ALL_LINES_LIMIT` (a paste, a short log) reach the line reader whole. Larger ones are
searched, every byte of every block, for every trigger the diagnosis reacts to (one pass of a
multi-pattern matcher, see :mod:`.scan`); only the lines around a hit are decoded. Line numbers
are exact: the newlines between consecutive windows are counted, once per byte.

Most lines of a big log are requests and throughput reports; skipping them without touching them
in Python is what keeps a 1 GiB log faster than ``grep`` with the same patterns.

What comes out is ``(line_number, text)``: the 1-based number of the line in the original input
(``\\n`` separated, whatever else the line holds) and its text decoded as UTF-8 with replacement,
with :data:`GAP` wherever lines were skipped. NUL bytes are dropped, over-long lines are cut to
their start and end, and binary input is counted so the caller can warn about it. Regular files,
pipes, stdin, gzip (several members, a truncated end keeps what it held) and UTF-16 are read the
same way.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..i18n import Text, TextError, msg
from .newlines import _merged, _snap, count_newlines
from .scan import Anchor, Scanner
from .streams import _Reader

__all__ = ["ALL_LINES_LIMIT", "GAP", "MAX_LINE", "Anchor", "InputError", "ReadStats", "Scanner", "Source",
           "decode_line", "open_source", "read_lines", "text_source"]

BLOCK = 8 << 20
"""Bytes read at a time."""
ALL_LINES_LIMIT = 1 << 20
"""Inputs up to this size (a paste, a short log) go through the line reader whole."""
MAX_LINE = 32 << 10
"""A physical line longer than this keeps only its first and last ``MAX_LINE // 2`` bytes."""

# Control bytes never found in text (tabs, newlines, form feeds and ANSI colours are text): a
# log holds none of them, random or compressed data about one byte in nine.
_CONTROL_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32), 127])


class InputError(TextError):
    """The input could not be read at all: a missing file, a directory, no permission (the message
    in both languages; ``str()`` is the English)."""


def cannot_read(path: str, reason: Text | OSError) -> InputError:
    """"cannot read PATH: why", the why an OS error's own words or a catalogue string."""
    why = _describe(reason) if isinstance(reason, OSError) else reason
    return InputError(msg("logs.input.cannot_read").format(path=path, reason=why))


Progress = Callable[[int, "int | None"], None]
"""Called after each block with the input bytes consumed so far and the input's size, if known."""


@dataclass
class ReadStats:
    """What the reader noticed about one input, for the warnings shown to the operator."""

    name: str
    bytes_read: int = 0
    lines: int = 0
    binary_bytes: int = 0
    long_lines: int = 0
    damaged: str | Text | None = None


@dataclass
class Source:
    """One input: a path, ``-`` (stdin) or pasted text."""

    name: str
    opener: Callable[[], BinaryIO]
    size: int | None = None
    """Size in bytes when known up front (a regular file; compressed size for gzip)."""
    gzip: bool = False


def _describe(err: OSError) -> str:
    return err.strerror or str(err)


def open_source(path: str) -> Source:
    """Check that ``path`` can be read, without reading it; raises :class:`InputError`."""
    if path == "-":
        return Source("<stdin>", lambda: sys.stdin.buffer)
    try:
        st = os.stat(path)
    except OSError as e:
        raise cannot_read(path, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise cannot_read(path, msg("logs.input.is_directory"))
    if not stat.S_ISREG(st.st_mode):
        # A pipe (``<(zcat …)``): reading ahead would consume it; gzip is sniffed on the stream.
        return Source(path, lambda: open(path, "rb"))
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed right below; this only checks permission
    except OSError as e:
        raise cannot_read(path, e) from None
    with fh:
        magic = fh.read(2)
    return Source(path, lambda: open(path, "rb"), st.st_size, gzip=magic == b"\x1f\x8b")


def text_source(text: str, name: str) -> Source:
    import io

    data = text.encode("utf-8", "surrogatepass")
    return Source(name, lambda: io.BytesIO(data), len(data))


Block = tuple[bytearray, int]
"""A buffer and the length of its valid part: whole lines (only the last block may end without a
newline). Two buffers alternate, so a block stays valid while the next one is read."""


def _line_aligned(reader: _Reader, scanner: Scanner | None, block_size: int = BLOCK) -> Iterator[Block]:
    bufs = [bytearray(block_size + MAX_LINE + 64), bytearray(block_size + MAX_LINE + 64)]
    which = 0
    carry = 0  # bytes at the head of the current buffer carried over from the previous one
    huge = False  # the current line was already cut
    while True:
        buf = bufs[which]
        n = carry
        while n < carry + 1 or n < len(buf) - MAX_LINE - 64:
            got = reader.readinto(memoryview(buf)[n: n + block_size])
            if got == 0:
                break
            n += got
            if n - carry >= block_size:
                break
        if n == 0:
            return
        cut = buf.rfind(b"\n", 0, n) + 1
        if reader.eof and n == carry:
            # Nothing more to read: the rest is the last line.
            yield buf, n
            return
        if cut == 0:
            # No newline in the whole buffer: one enormous line. Keep its head and tail only.
            if n > MAX_LINE:
                if not huge:
                    reader.stats.long_lines += 1
                    huge = True
                kept = _shorten(bytes(buf[:n]), scanner)
                buf[: len(kept)] = kept
                n = len(kept)
            carry = n
            if reader.eof:
                yield buf, n
                return
            continue
        yield buf, cut
        huge = False
        other = bufs[1 - which]
        rest = n - cut
        other[:rest] = buf[cut:n]
        which = 1 - which
        carry = rest
        if reader.eof:
            if rest:
                yield other, rest
            return


_KEEP_CONTROL = bytes(sorted(set(range(256)) - set(_CONTROL_BYTES)))


def _binary_count(buf: bytearray, n: int) -> int:
    """Control bytes in the block. Only counted when the block holds a NUL, which binary data
    practically always does (``find`` is memchr speed, the count is not)."""
    if buf.find(b"\x00", 0, n) < 0:
        return 0
    return len(bytes(buf[:n]).translate(None, _KEEP_CONTROL))


HIT_KEEP = 2048
"""Bytes kept around each hit in the middle of a line that is cut."""
MAX_KEPT_HITS = 8


def _shorten(raw: bytes, scanner: Scanner | None) -> bytes:
    """An over-long line cut to its start and end, keeping the bytes around any hit in between:
    a trigger in the middle of a 100 MB line is still read."""
    half = MAX_LINE // 2
    if len(raw) <= MAX_LINE:
        return raw
    parts = [raw[:half]]
    if scanner is not None:
        middle = memoryview(raw)[half: len(raw) - half]
        last = 0
        for s, e in scanner.spans(middle, len(middle))[:MAX_KEPT_HITS]:
            s, e = max(s, last, 0), min(max(e, s), len(middle))
            e = min(e, s + 2 * HIT_KEEP)
            if s < e:
                parts.append(bytes(middle[s:e]).replace(b"\n", b" "))
                last = e
    parts.append(raw[-half:])
    return b" [...] ".join(parts)


def decode_line(raw: bytes, stats: ReadStats, scanner: Scanner | None = None) -> str | None:
    """One physical line as text, or None when it is binary noise."""
    if len(raw) > MAX_LINE:
        stats.long_lines += 1
        raw = _shorten(raw, scanner)
    if b"\x00" in raw:
        cleaned = raw.replace(b"\x00", b"")
        if len(cleaned) < len(raw) // 2:
            return None if len(cleaned.strip()) < 8 else cleaned.decode("utf-8", "replace")
        raw = cleaned
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def _lines_of(chunk: bytes, first_line: int, stats: ReadStats,
              scanner: Scanner | None = None) -> Iterator[tuple[int, str]]:
    n = first_line
    parts = chunk.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    for raw in parts:
        text = decode_line(raw, stats, scanner)
        if text is not None:
            yield n, text
        n += 1




GAP = (-1, "")
"""Yielded between two windows of a searched log: what came before does not continue after."""


def read_lines(source: Source, stats: ReadStats, scanner: Scanner | None, *,
               all_lines_limit: int = ALL_LINES_LIMIT, progress: Progress | None = None,
               block_size: int = BLOCK) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for the lines worth reading, in order; :data:`GAP` between windows.

    An input up to ``all_lines_limit`` bytes is read whole (so is any input without a
    ``scanner``); a larger one only around the scanner's hits, every byte searched.
    """
    try:
        stream = source.opener()
    except OSError as e:
        raise cannot_read(source.name, e) from None
    reader = _Reader(stream, stats)
    if source.size is not None and not source.gzip and source.size <= all_lines_limit:
        # A short file needs no 8 MiB buffers: zero-filling two of them costs more than reading it.
        block_size = min(block_size, max(source.size + 1, 64 << 10))
    try:
        blocks: Iterator[Block] = _line_aligned(reader, scanner, block_size)
        whole = scanner is None
        if not whole and (source.size is None or source.gzip):
            # Unknown size (gzip, a pipe): keep copies up to the limit to decide how to read.
            buffered: list[Block] = []
            total = 0
            for buf, n in blocks:
                buffered.append((bytearray(buf[:n]), n))
                total += n
                if total > all_lines_limit:
                    break
            else:
                whole = True
            blocks = _chain(buffered, blocks)
        elif not whole:
            whole = (source.size or 0) <= all_lines_limit
        if progress is not None:
            blocks = _reporting(blocks, reader, source.size, progress)
        if whole:
            yield from _every_line(blocks, stats, scanner)
        else:
            assert scanner is not None
            yield from _search(blocks, stats, scanner)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _chain(first: list[Block], rest: Iterator[Block]) -> Iterator[Block]:
    while first:
        yield first.pop(0)
    yield from rest


def _reporting(blocks: Iterator[Block], reader: _Reader, size: int | None, progress: Progress) -> Iterator[Block]:
    for block in blocks:
        yield block
        progress(reader.position(), size)


def _every_line(blocks: Iterator[Block], stats: ReadStats, scanner: Scanner | None) -> Iterator[tuple[int, str]]:
    line = 1
    for buf, n in blocks:
        stats.binary_bytes += _binary_count(buf, n)
        chunk = bytes(buf[:n])
        yield from _lines_of(chunk, line, stats, scanner)
        line += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
    stats.lines = line - 1


def _search(blocks: Iterator[Block], stats: ReadStats, scanner: Scanner) -> Iterator[tuple[int, str]]:
    """Only the windows around hits. A window may reach back into the previous block and forward
    into the next ones; each line is yielded at most once, in order, with :data:`GAP` wherever
    lines were skipped. Newlines are counted once: between the windows of a block and after the
    last one."""
    prev: bytes | bytearray = b""
    prev_n = 0
    prev_done = 0  # bytes of ``prev`` already yielded: a look-back starts after them
    pending_end = 0  # a window reaches this far into the current block
    line = 1  # line number at the start of the current block
    expected = 0  # line number that would continue what was yielded last (0: nothing yet)
    first = True
    for buf, n in blocks:
        # Binary data is looked for in the first block and at the start of the others: a NUL
        # search over every byte would cost as much as the pattern search.
        if buf.find(b"\x00", 0, n if first else min(n, 1 << 16)) >= 0:
            stats.binary_bytes += _binary_count(buf, n)
        first = False
        spans = scanner.spans(buf, n)
        if pending_end > 0:
            spans.insert(0, (0, pending_end))
        pending_end = 0
        chunks: list[tuple[int, bytes]] = []
        cursor = 0  # bytes of the block already taken (and their newlines counted)
        cursor_line = line
        for s, e in _merged(spans):
            if s < 0 and prev_n and prev_done < prev_n:
                ps, _ = _snap(prev, prev_n, prev_n + s, prev_n, prev_done)
                if ps < prev_n:
                    # Counted back from the start of this block: only the look-back's own bytes.
                    chunks.append((line - count_newlines(prev, ps, prev_n), bytes(prev[ps:prev_n])))
                prev_done = prev_n
            if e > n:
                pending_end = max(pending_end, e - n)
            s, e = _snap(buf, n, s, e, cursor)
            if s < e:
                cursor_line += count_newlines(buf, cursor, s)
                chunk = bytes(buf[s:e])
                chunks.append((cursor_line, chunk))
                cursor_line += chunk.count(b"\n")
                cursor = e
        for ln, chunk in chunks:
            if expected and ln != expected:
                yield GAP
            yield from _lines_of(chunk, ln, stats, scanner)
            expected = ln + chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        prev, prev_n, prev_done = buf, n, cursor
        line = cursor_line + count_newlines(buf, cursor, n)
        if n > 0 and buf[n - 1] != 10:
            line += 1  # the last line has no newline
    stats.lines = line - 1
