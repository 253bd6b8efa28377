"""Following a growing log (``diagnose --follow``): wait for the engine to die, then diagnose.

For ``tail -f vllm.log``, ``journalctl -fu vllm`` or ``kubectl logs -f pod | oomwizard diagnose
--follow -``. What the file already holds is read first, by the searching reader; then every new
line goes to the same collector as it arrives. The engine counts as dead once a new failure the
diagnosis is sure of (an OOM, or a message that names its cause) has been followed by
:data:`SETTLE_S` seconds without new lines (the other ranks' tracebacks and the API server's
report arrive in that time), or when the input ends. A truncated file is read again from its
start and a rotated one (a new file at the path) is reopened, like ``tail -F``.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import BinaryIO

from ..i18n import msg
from .collect import Collector, Failure, scanner
from .diagnose import conclude
from .lines import Joiner
from .model import Diagnosis
from .reader import MAX_LINE, InputError, ReadStats, Source, cannot_read, decode_line, read_lines
from .signatures import CONFIDENT

SETTLE_S = 2.0
POLL_S = 0.2
CHUNK = 1 << 20

Status = Callable[[str, dict[str, object]], None]
"""Told what the follower is doing: a key of ``follow.*`` in :mod:`oomwizard.i18n` and its fields."""


def _fatal(f: Failure) -> bool:
    return f.is_oom or (f.signature is not None and f.signature.score >= CONFIDENT)


class _File:
    """New bytes at a path as the file grows, surviving truncation and rotation. A file cut and
    written again between two looks (``>`` onto the log) is told by the bytes just before the
    position read so far: they changed."""

    MARK = 64

    def __init__(self, path: str, start: int) -> None:
        self.path = path
        self.fh: BinaryIO = open(path, "rb")  # noqa: SIM115 - kept open while following
        self.ino = os.fstat(self.fh.fileno()).st_ino
        self.fh.seek(start)
        self.mark = self._mark()
        self.restarted = False

    def _mark(self) -> bytes:
        pos = self.fh.tell()
        return os.pread(self.fh.fileno(), min(self.MARK, pos), pos - min(self.MARK, pos))

    def _replaced(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False  # moved away and not yet recreated: wait
        return st.st_ino != self.ino or st.st_size < self.fh.tell() or self._mark() != self.mark

    def read(self) -> bytes:
        if self._replaced():
            self.fh.close()
            self.fh = open(self.path, "rb")  # noqa: SIM115
            self.ino = os.fstat(self.fh.fileno()).st_ino
            self.restarted = True
        data = self.fh.read(CHUNK)
        if data:
            self.mark = (self.mark + data)[-self.MARK:]
        return data

    def close(self) -> None:
        self.fh.close()


class _Stream:
    """Bytes from a pipe as they come, read by a thread so the follower can keep time."""

    def __init__(self, stream: BinaryIO) -> None:
        self.q: queue.Queue[bytes] = queue.Queue(maxsize=64)
        self.ended = False
        self.thread = threading.Thread(target=self._pump, args=(stream,), name="oomwizard-follow", daemon=True)
        self.thread.start()

    def _pump(self, stream: BinaryIO) -> None:
        read = getattr(stream, "read1", stream.read)
        try:
            while True:
                data = read(CHUNK)
                if not data:
                    break
                self.q.put(data)
        except (OSError, ValueError):
            pass
        self.q.put(b"")

    def read(self, timeout: float) -> bytes | None:
        """New bytes, ``b""`` when none came in ``timeout``, None once the input ended."""
        if self.ended:
            return None
        try:
            data = self.q.get(timeout=timeout)
        except queue.Empty:
            return b""
        if not data:
            self.ended = True
            return None
        return data

    def close(self) -> None:
        pass


class Follower:
    """Feeds a collector line by line from bytes that arrive in pieces."""

    def __init__(self, name: str) -> None:
        self.col = Collector()
        self.col.file = name
        self.col.files.append(name)
        self.joiner = Joiner()
        self.stats = ReadStats(name)
        self.line = 1
        self.rest = b""

    def feed_bytes(self, data: bytes) -> None:
        data = self.rest + data
        cut = data.rfind(b"\n") + 1
        if cut:
            lines, self.rest = data[: cut - 1].split(b"\n"), data[cut:]
        elif len(data) > MAX_LINE * 4:
            lines, self.rest = [data], b""  # a line with no end in sight: read what came
        else:
            self.rest = data
            return
        for raw in lines:
            text = decode_line(raw, self.stats)
            if text is not None:
                self.feed_line(self.line, text)
            self.line += 1

    def restart(self) -> None:
        """The file was replaced: what it held is over, the new one starts at line 1."""
        self.rest = b""
        self.gap()
        self.line = 1

    def gap(self) -> None:
        """What came before does not continue after: the message being joined is complete."""
        for lg in self.joiner.flush():
            self.col.feed(lg)

    def feed_line(self, n: int, text: str) -> None:
        for lg in self.joiner.feed(n, text):
            self.col.feed(lg)

    def flush(self) -> None:
        if self.rest:
            self.feed_bytes(b"\n")
        self.gap()

    def conclude(self) -> Diagnosis:
        self.flush()
        return conclude(self.col, list(self.col.files), [])


def _start(source: Source, follower: Follower) -> _File | _Stream:
    """The tail to follow: a stream read as it comes, or a file whose complete lines are read now."""
    name = source.name
    if source.gzip:
        raise InputError(msg("logs.input.follow_compressed").format(path=name))
    if name == "<stdin>" or source.size is None:
        try:
            stream = source.opener()
        except OSError as e:
            raise cannot_read(name, e) from None
        return _Stream(stream)
    end = _last_newline(name, source.size)
    held = Source(name, lambda: _Limited(open(name, "rb"), end), end)  # type: ignore[arg-type,return-value]  # noqa: SIM115
    for item in read_lines(held, follower.stats, scanner()):
        if item[0] < 0:
            follower.gap()
        else:
            follower.feed_line(*item)
    follower.gap()
    follower.line = follower.stats.lines + 1
    return _File(name, end)


def _read(tail: _File | _Stream, follower: Follower, poll: float) -> bytes | None:
    """What the tail has grown by (``b""``: nothing yet, after waiting ``poll``); None once a
    stream has ended. A file rewritten from its start restarts the follower."""
    if isinstance(tail, _Stream):
        return tail.read(poll)
    data = tail.read()
    if tail.restarted:
        tail.restarted = False
        follower.restart()
    if not data:
        time.sleep(poll)
    return data


def follow(source: Source, *, status: Status | None = None, settle: float = SETTLE_S, poll: float = POLL_S,
           clock: Callable[[], float] = time.monotonic, stop: Callable[[], bool] | None = None) -> Diagnosis:
    """Read ``source``, keep reading as it grows, and diagnose once the engine died, or when
    ``stop()`` says so, or on Ctrl+C (a ``KeyboardInterrupt`` is caught and what was read is
    diagnosed)."""
    tell = status or (lambda key, fields: None)
    name = source.name
    follower = Follower(name)
    tail = _start(source, follower)
    earlier = [f for f in follower.col.failures if _fatal(f)]
    if earlier:
        tell("follow.earlier", {"name": name, "count": len(earlier), "line": earlier[-1].line})
    seen = len(follower.col.failures)
    tell("follow.waiting", {"name": name})
    last_data = clock()
    try:
        while stop is None or not stop():
            data = _read(tail, follower, poll)
            if data is None:
                tell("follow.ended", {"name": name})
                break
            if data:
                follower.feed_bytes(data)
                last_data = clock()
                continue
            new = [f for f in follower.col.failures[seen:] if _fatal(f)]
            if new and clock() - last_data >= settle:
                tell("follow.died", {"where": f"{new[0].file}:{new[0].line}"})
                break
    except KeyboardInterrupt:
        pass
    finally:
        tail.close()
    return follower.conclude()


def _last_newline(path: str, size: int) -> int:
    """The offset just after the last complete line of the first ``size`` bytes: a line still
    being written is left for the follower."""
    with open(path, "rb") as fh:
        pos = size
        while pos > 0:
            start = max(0, pos - (1 << 16))
            fh.seek(start)
            chunk = fh.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                return start + i + 1
            pos = start
    return 0


class _Limited:
    """A file read only up to ``end``."""

    def __init__(self, fh: BinaryIO, end: int) -> None:
        self.fh = fh
        self.left = end

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data

    def readinto(self, view: memoryview) -> int:
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.fh.close()

