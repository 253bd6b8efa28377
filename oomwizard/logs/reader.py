"""Reading logs as raw lines: files, ``-`` for stdin, gzip, in bounded memory whatever the size.

A log is read in large binary blocks into two reused buffers and never held whole. How much of
it reaches the line-by-line reader depends on its size:

* up to :data:`ALL_LINES_LIMIT` (a paste, a short log): every line;
* up to :data:`EXACT_LIMIT`: the lines around any trigger the collector reacts to (``dense``
  anchors, found with ``bytes.find`` at C speed);
* beyond: the first :data:`HEAD` bytes and the windows around a few ``sparse`` anchors, and
  within those only the lines around dense anchors.

Most lines of a big log are requests and throughput reports; skipping them without touching them
in Python is what keeps a 1 GiB log within reach of ``grep``.

What comes out is ``(line_number, text)``: the 1-based number of the line in the original input
(``\\n`` separated, whatever else the line holds) and its text decoded as UTF-8 with replacement.
NUL bytes are dropped, over-long lines are cut to their start and end, and binary input is
counted so the caller can warn about it.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

BLOCK = 8 << 20
"""Bytes read at a time."""
ALL_LINES_LIMIT = 1 << 20
"""Inputs up to this size (a paste, a short log) go through the line reader whole."""
EXACT_LIMIT = 8 << 20
"""Inputs up to this size are searched for every trigger the collector knows (``dense``);
larger ones only for a few anchors with wide windows (``sparse``)."""
HEAD = 2 << 20
"""A big log's first bytes are always read (around dense anchors): the engine's start-up."""
MAX_LINE = 32 << 10
"""A physical line longer than this keeps only its first and last ``MAX_LINE // 2`` bytes."""

# Control bytes never found in text (tabs, newlines, form feeds and ANSI colours are text): a
# log holds none of them, random or compressed data about one byte in nine.
_CONTROL_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32), 127])


class InputError(Exception):
    """The input could not be read at all: a missing file, a directory, no permission."""


@dataclass(frozen=True)
class Anchor:
    """A string whose presence in a log makes the lines around it worth reading."""

    text: bytes
    before: int
    """Bytes before the hit to read as well (snapped to whole lines)."""
    after: int
    """Bytes after the hit."""
    once: bool = False
    """One hit per block is enough (markers that repeat on every request)."""


@dataclass
class ReadStats:
    """What the reader noticed about one input, for the warnings shown to the operator."""

    name: str
    bytes_read: int = 0
    lines: int = 0
    binary_bytes: int = 0
    long_lines: int = 0
    damaged: str | None = None
    scanned: bool = False
    """True when the input was big enough to be scanned around anchors instead of read whole."""
    bytes_parsed: int = 0
    """Bytes that went through the line-by-line reader."""


@dataclass
class Source:
    """One input: a path, ``-`` (stdin) or pasted text."""

    name: str
    opener: Callable[[], BinaryIO]
    size: int | None = None
    """Size in bytes when known up front (a regular, uncompressed file)."""


def _describe(err: OSError) -> str:
    return err.strerror or str(err)


def open_source(path: str) -> Source:
    """Check that ``path`` can be read, without reading it; raises :class:`InputError`."""
    if path == "-":
        return Source("<stdin>", lambda: sys.stdin.buffer)
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"cannot read {path}: {_describe(e)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot read {path}: it is a directory (pass the log files inside it)")
    if not stat.S_ISREG(st.st_mode):
        # A pipe (``<(zcat …)``): reading ahead would consume it; sniff gzip on the stream itself.
        return Source(path, lambda: _maybe_gzip(open(path, "rb")))
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed right below; this only checks permission
    except OSError as e:
        raise InputError(f"cannot read {path}: {_describe(e)}") from None
    with fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return Source(path, lambda: gzip.open(path, "rb"))
    return Source(path, lambda: open(path, "rb"), st.st_size)


def text_source(text: str, name: str) -> Source:
    data = text.encode("utf-8", "surrogatepass")
    return Source(name, lambda: io.BytesIO(data), len(data))


def _maybe_gzip(stream: BinaryIO) -> BinaryIO:
    """Stdin may carry a gzip stream (``zcat`` forgotten); look at its first bytes."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        try:
            head = peek(2)[:2]
        except (OSError, ValueError):
            return stream
        if head == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream


class _Reader:
    """``readinto`` for any input: plain streams directly, UTF-16 ones through a decoder."""

    def __init__(self, stream: BinaryIO, stats: ReadStats) -> None:
        self.stream = stream
        self.stats = stats
        self.decoder: codecs.IncrementalDecoder | None = None
        self.pending = b""
        self.first = True
        self.eof = False
        self.dropped = 0
        """Bytes cut out of over-long lines so far (positions after a cut no longer match the file)."""

    def _read(self, n: int) -> bytes:
        try:
            return self.stream.read(n)
        except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
            self.stats.damaged = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            return b""

    def readinto(self, view: memoryview) -> int:
        if self.eof:
            return 0
        if self.first:
            self.first = False
            head = self._read(len(view))
            if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
                # PowerShell's `>` writes UTF-16: read it as text and go on in UTF-8.
                self.decoder = codecs.getincrementaldecoder("utf-16")("replace")
            self.stats.bytes_read += len(head)
            if self.decoder is None:
                view[: len(head)] = head
                if not head:
                    self.eof = True
                return len(head)
            self.pending = self.decoder.decode(head).encode("utf-8")
        if self.decoder is None:
            try:
                n = self.stream.readinto(view)  # type: ignore[attr-defined]
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
                self.stats.damaged = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                n = 0
            n = n or 0
            self.stats.bytes_read += n
            if n == 0:
                self.eof = True
            return n
        while len(self.pending) < len(view) // 2:
            raw = self._read(len(view) // 2)
            self.stats.bytes_read += len(raw)
            if not raw:
                self.pending += self.decoder.decode(b"", final=True).encode("utf-8")
                break
            self.pending += self.decoder.decode(raw).encode("utf-8")
        out, self.pending = self.pending[: len(view)], self.pending[len(view):]
        view[: len(out)] = out
        if not out:
            self.eof = True
        return len(out)


Block = tuple[bytearray, int]
"""A buffer and the length of its valid part: whole lines (only the last block may end without a
newline). Two buffers alternate, so a block stays valid while the next one is read."""


def _line_aligned(reader: _Reader, block_size: int = BLOCK) -> Iterator[Block]:
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
                half = MAX_LINE // 2
                tail = bytes(buf[n - half: n])
                marker = b" [...] "
                buf[half: half + len(marker)] = marker
                buf[half + len(marker): half + len(marker) + len(tail)] = tail
                reader.dropped += n - (half + len(marker) + len(tail))
                n = half + len(marker) + len(tail)
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


PARALLEL_MIN = 64 << 20
"""A scanned regular file at least this big has its newlines counted by a helper process."""
GRANULE = 64 << 10
"""The helper reports the newline count at every multiple of this many bytes."""

# The helper is a plain script (no imports from this package): it reads the file on its own and
# writes, for every GRANULE bytes, the number of newlines so far as 8 little-endian bytes.
_HELPER = r"""
import sys
path, g = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
buf = bytearray(g * 128)
view = memoryview(buf)
total = 0
with open(path, "rb", buffering=0) as f:
    while True:
        n = 0
        while n < len(buf):
            got = f.readinto(view[n:])
            if not got:
                break
            n += got
        if not n:
            break
        parts = []
        for a in range(0, n, g):
            total += buf.count(b"\n", a, min(a + g, n))
            parts.append(total.to_bytes(8, "little"))
        out.write(b"".join(parts))
        out.flush()
        if n < len(buf):
            break
"""


class _Helper:
    """Newline counts of a file from a second process, so counting runs beside the anchor search.

    Counting newlines is the costliest C loop of a scan (``bytes.count`` does not vectorise);
    anchors and counts together take one core's time twice. The line number of an offset is the
    count the helper gives for the granule before it plus the newlines of the rest, read again
    with ``pread`` (at most one granule, only for the few offsets that are reported).
    """

    def __init__(self, path: str) -> None:
        import subprocess
        import threading

        self.fd = os.open(path, os.O_RDONLY)
        try:
            self.proc = subprocess.Popen([sys.executable, "-c", _HELPER, path, str(GRANULE)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            os.close(self.fd)
            raise
        self.data = bytearray()
        self.done = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._pump, name="oomwizard-line-counter", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        out = self.proc.stdout
        try:
            while out is not None:
                chunk = out.read1(1 << 16)  # type: ignore[attr-defined]
                if not chunk:
                    break
                with self.cond:
                    self.data += chunk
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.done = True
                self.cond.notify_all()

    def _count(self, granules: int) -> int | None:
        """Newlines in the first ``granules`` granules, or None if the helper never got there."""
        if granules == 0:
            return 0
        need = granules * 8
        with self.cond:
            while len(self.data) < need and not self.done:
                self.cond.wait()
            if len(self.data) < need:
                return None
            return int.from_bytes(self.data[need - 8: need], "little")

    def newlines_before(self, offset: int) -> int:
        g = offset // GRANULE
        known = self._count(g)
        start = g * GRANULE
        if known is None:
            # The helper failed or the file grew past what it read: count here, from the start.
            known, start = 0, 0
        n = 0
        while start < offset:
            chunk = os.pread(self.fd, min(offset - start, 8 << 20), start)
            if not chunk:
                break
            n += chunk.count(b"\n")
            start += len(chunk)
        return known + n

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.thread.join(timeout=5)
        os.close(self.fd)


class _Numbers:
    """Line numbers in a scanned input: counted here block by block, or by a :class:`_Helper`."""

    def __init__(self, reader: _Reader | None, path: str | None) -> None:
        self.reader = reader
        self.path = path
        self.helper: _Helper | None = None
        self.started = False
        self.offset = 0  # input offset of the current block
        self.base = 0  # newlines before the current block (counted here)

    def start_block(self) -> None:
        if not self.started:
            self.started = True
            usable = (self.reader is not None and self.reader.decoder is None and hasattr(os, "pread")
                      and (os.cpu_count() or 1) >= 2)
            if self.path and usable:
                try:
                    self.helper = _Helper(self.path)
                except OSError:
                    self.helper = None
        if self.helper is not None and self.reader is not None and self.reader.dropped:
            # A line was cut: offsets no longer match the file. Go on counting here.
            self.base = self.helper.newlines_before(self.offset)
            self.stop()

    def newlines_before(self, buf: bytes | bytearray, block_offset: int, block_base: int, s: int) -> int:
        if self.helper is not None:
            return self.helper.newlines_before(block_offset + s)
        return block_base + buf.count(b"\n", 0, s)

    def end_block(self, buf: bytes | bytearray, n: int) -> None:
        if self.helper is None:
            self.base += buf.count(b"\n", 0, n)
        self.offset += n

    def stop(self) -> None:
        if self.helper is not None:
            self.helper.close()
            self.helper = None


_KEEP_CONTROL = bytes(sorted(set(range(256)) - set(_CONTROL_BYTES)))


def _binary_count(buf: bytearray, n: int) -> int:
    """Control bytes in the block. Only counted when the block holds a NUL, which binary data
    practically always does (``find`` is memchr speed, the count is not)."""
    if buf.find(b"\x00", 0, n) < 0:
        return 0
    return len(bytes(buf[:n]).translate(None, _KEEP_CONTROL))


def _decode(raw: bytes, stats: ReadStats) -> str | None:
    """One physical line as text, or None when it is binary noise."""
    if len(raw) > MAX_LINE:
        stats.long_lines += 1
        half = MAX_LINE // 2
        raw = raw[:half] + b" ... " + raw[-half:]
    if b"\x00" in raw:
        cleaned = raw.replace(b"\x00", b"")
        if len(cleaned) < len(raw) // 2:
            return None if len(cleaned.strip()) < 8 else cleaned.decode("utf-8", "replace")
        raw = cleaned
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def _lines_of(chunk: bytes, first_line: int, stats: ReadStats) -> Iterator[tuple[int, str]]:
    n = first_line
    parts = chunk.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    for raw in parts:
        text = _decode(raw, stats)
        if text is not None:
            yield n, text
        n += 1


GAP = (-1, "")
"""Yielded between two windows of a scanned log: what came before does not continue after."""


def read_lines(source: Source, stats: ReadStats, dense: tuple[Anchor, ...], sparse: tuple[Anchor, ...],
               exact_limit: int = EXACT_LIMIT, all_lines_limit: int = ALL_LINES_LIMIT,
               head: int = HEAD) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for the lines worth reading, in order; :data:`GAP` between windows.

    Small inputs are read whole; up to ``exact_limit`` the lines around any ``dense`` anchor
    are read; beyond it only the first ``head`` bytes and the windows around ``sparse`` anchors,
    and within those only the lines around ``dense`` anchors.
    """
    try:
        stream = source.opener()
    except OSError as e:
        raise InputError(f"cannot read {source.name}: {_describe(e)}") from None
    if source.name == "<stdin>":
        stream = _maybe_gzip(stream)  # type: ignore[arg-type]
    reader = _Reader(stream, stats)
    numbers: _Numbers | None = None
    try:
        blocks: Iterator[Block] = _line_aligned(reader)
        size = source.size
        if size is None:
            # Unknown size (gzip, stdin): keep copies up to the limit to decide how to read.
            buffered: list[Block] = []
            total = 0
            for buf, n in blocks:
                buffered.append((bytearray(buf[:n]), n))
                total += n
                if total > exact_limit:
                    break
            else:
                size = total
            blocks = _chain(buffered, blocks)
        if size is not None and size <= all_lines_limit:
            yield from _exact(blocks, stats)
        elif size is not None and size <= exact_limit:
            yield from _scan(blocks, stats, dense)
        else:
            stats.scanned = True
            path = source.name if source.size is not None and source.size >= PARALLEL_MIN else None
            numbers = _Numbers(reader, path)
            yield from _scan(blocks, stats, sparse, dense, head, numbers)
    finally:
        if numbers is not None:
            numbers.stop()
        if stream is not sys.stdin.buffer:
            stream.close()


def _chain(first: list[Block], rest: Iterator[Block]) -> Iterator[Block]:
    while first:
        yield first.pop(0)
    yield from rest


def _exact(blocks: Iterator[Block], stats: ReadStats) -> Iterator[tuple[int, str]]:
    line = 1
    for buf, n in blocks:
        stats.binary_bytes += _binary_count(buf, n)
        stats.bytes_parsed += n
        chunk = bytes(buf[:n])
        yield from _lines_of(chunk, line, stats)
        line += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
    stats.lines = line - 1


def _hits(buf: bytes | bytearray, n: int, anchors: tuple[Anchor, ...]) -> list[tuple[int, int]]:
    """Byte ranges ``[start, end)`` of ``buf[:n]`` around anchor hits, merged and sorted.

    After a hit the search for the same anchor resumes half a window later, and the window is
    stretched to cover a hit that might hide in the part skipped: a log full of one anchor must
    not cost a Python step per hit.
    """
    spans: list[tuple[int, int]] = []
    find = buf.find
    for a in anchors:
        i = find(a.text, 0, n)
        if i < 0:
            continue
        if a.once:
            spans.append((i - a.before, i + a.after))
            continue
        step = max(len(a.text), a.after // 2)
        while i >= 0:
            spans.append((i - a.before, i + step + a.after))
            i = find(a.text, i + step, n)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _snap(buf: bytes | bytearray, n: int, s: int, e: int, floor: int) -> tuple[int, int]:
    """``[s, e)`` widened to whole lines within ``[floor, n)``."""
    s = max(s, floor)
    if s > 0:
        s = max(buf.rfind(b"\n", 0, s) + 1, floor)
    if e >= n:
        return s, n
    nxt = buf.find(b"\n", e, n)
    return s, n if nxt < 0 else nxt + 1


def _sub_chunks(chunk: bytes, first: int, anchors: tuple[Anchor, ...]) -> list[tuple[int, bytes]]:
    """The parts of a line-aligned ``chunk`` around ``anchors``, as ``(first_line, bytes)``."""
    out: list[tuple[int, bytes]] = []
    cursor = 0
    line = first
    n = len(chunk)
    for s, e in _hits(chunk, n, anchors):
        s, e = _snap(chunk, n, s, e, cursor)
        if s >= e:
            continue
        line += chunk.count(b"\n", cursor, s)
        out.append((line, chunk[s:e]))
        line += chunk.count(b"\n", s, e)
        cursor = e
    return out


def _scan(blocks: Iterator[Block], stats: ReadStats, anchors: tuple[Anchor, ...],
          inner: tuple[Anchor, ...] = (), head: int = 0, numbers: _Numbers | None = None) -> Iterator[tuple[int, str]]:
    """Read only the windows around anchor hits (and the first ``head`` bytes). A window may reach
    back into the previous block and forward into the next ones; each line is yielded at most
    once, in order, with :data:`GAP` wherever lines were skipped. With ``inner`` anchors, a
    window is itself only read around those (a start-up window of a few MiB holds a few hundred
    lines that matter)."""
    numbers = numbers or _Numbers(None, None)
    prev: bytes | bytearray = b""
    prev_n = 0
    prev_at = (0, 0)  # (input offset, newlines before) of ``prev``
    prev_done = 0  # bytes of ``prev`` already yielded: a look-back starts after them
    pending_end = head  # a window reaches this far into the current block
    expected = 0  # line number that would continue what was yielded last (0: nothing yet)
    for buf, n in blocks:
        numbers.start_block()
        at = (numbers.offset, numbers.base)
        # Binary data is looked for in the first block and at the start of the others: a NUL
        # search over every byte would cost as much as an anchor.
        if buf.find(b"\x00", 0, n if at[0] == 0 else min(n, 1 << 16)) >= 0:
            stats.binary_bytes += _binary_count(buf, n)
        spans = _hits(buf, n, anchors)
        if pending_end > 0:
            spans.insert(0, (0, pending_end))
        pending_end = 0
        chunks: list[tuple[int, bytes]] = []
        cursor = 0  # bytes of the block already taken
        for s, e in spans:
            if s < 0 and prev_n and prev_done < prev_n:
                ps, _ = _snap(prev, prev_n, prev_n + s, prev_n, prev_done)
                if ps < prev_n:
                    line = 1 + numbers.newlines_before(prev, prev_at[0], prev_at[1], ps)
                    chunks.append((line, bytes(prev[ps:prev_n])))
                prev_done = prev_n
            if e > n:
                pending_end = e - n
            s, e = _snap(buf, n, s, e, cursor)
            if s < e:
                chunks.append((1 + numbers.newlines_before(buf, at[0], at[1], s), bytes(buf[s:e])))
                cursor = e
        if inner:
            chunks = [sub for ln, chunk in chunks for sub in _sub_chunks(chunk, ln, inner)]
        for ln, chunk in chunks:
            if expected and ln != expected:
                yield GAP
            stats.bytes_parsed += len(chunk)
            yield from _lines_of(chunk, ln, stats)
            expected = ln + chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        prev, prev_n, prev_at, prev_done = buf, n, at, cursor
        numbers.end_block(buf, n)
        if n > 0 and buf[n - 1] != 10:
            numbers.base += 1  # the last line has no newline
    if numbers.helper is None:
        stats.lines = numbers.base
