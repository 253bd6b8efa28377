"""Opening log inputs so that none can block for ever or be read without end.

The reader takes any path and reads what it gets. Some paths never end or never start: a device
(``/dev/zero``, ``/dev/urandom``, a terminal), a named pipe nobody writes to, ``-`` when stdin is
the terminal the wizard itself reads keys from, or a stdin the program was started without. These
are refused here with one line that says what to do instead, before anything is read. A named pipe
is opened without blocking and waited on for at most :data:`PIPE_WAIT` seconds; what arrives is
then read from that same descriptor (opening the pipe a second time would wait for a writer that
may be gone already, with the data still inside).

Every stream that is not a regular file (stdin from a pipe, ``<(…)``, a named pipe) is read through
:class:`IdleStream`: a writer that stops sending without closing its end (a hung ``ssh … cat``, a
stopped ``kubectl logs``) ends the read after :data:`IDLE_WAIT` seconds of silence, and the
diagnosis uses what came before. ``--follow`` waits on purpose, so it opens its input without one.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, BinaryIO, cast

from .. import stdio
from ..i18n import msg
from .reader import InputError, Source, cannot_read, open_source

PIPE_WAIT = 10.0
"""Seconds to wait for the first data on a named pipe before giving up on it."""

IDLE_WAIT = 30.0
"""Seconds without a byte from a pipe, after which its writer is taken to have stopped."""

STDIN = "<stdin>"

_piped: tuple[Callable[[], BinaryIO], int | None] | None = None
"""The log that came on stdin before the wizard put the terminal there (see oomwizard/terminal.py)."""


def use_piped_stdin(opener: Callable[[], BinaryIO] | None, size: int | None = None) -> None:
    """From now on ``-`` reads what ``opener`` returns (None: stdin itself again)."""
    global _piped
    _piped = None if opener is None else (opener, size)


class WriterStopped(OSError):
    """A pipe's writer went quiet for :data:`IDLE_WAIT` seconds without closing it."""

    def __init__(self, idle: float) -> None:
        self.reason = msg("logs.input.writer_stopped").format(idle=f"{idle:g}")
        super().__init__(self.reason.en)


class IdleStream:
    """A pipe read by descriptor, each wait for data bounded by ``idle`` seconds.

    ``read``/``readinto`` behave like a buffered reader's (``read(n)`` returns ``n`` bytes unless the
    input ends), but poll before each system call, so no call blocks longer than ``idle``.
    """

    def __init__(self, fd: int, idle: float, *, owned: bool = True) -> None:
        self.fd = fd
        self.idle = idle
        self.owned = owned
        self.stopped = False
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    def _wait(self) -> None:
        if self.stopped:
            raise WriterStopped(self.idle)
        while True:
            try:
                if self._poll.poll(int(self.idle * 1000)):
                    return
            except InterruptedError:  # pragma: no cover - Python retries poll itself (PEP 475)
                continue
            self.stopped = True
            raise WriterStopped(self.idle)

    def readinto(self, view: memoryview | bytearray) -> int:
        if not len(view):
            return 0
        self._wait()
        return os.readv(self.fd, [view])

    def read(self, n: int = -1) -> bytes:
        out = bytearray()
        while n < 0 or len(out) < n:
            try:
                self._wait()
            except WriterStopped:
                if not out:
                    raise
                break  # what came is returned now; the next call says the writer stopped
            data = os.read(self.fd, 1 << 16 if n < 0 else min(n - len(out), 1 << 20))
            if not data:
                break
            out += data
        return bytes(out)

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.owned:
            self.owned = False
            os.close(self.fd)


@lru_cache(maxsize=1)
def _pipefs_dev() -> int:
    """The device number of anonymous pipes (Linux's pipefs), which no named pipe has."""
    r, w = os.pipe()
    try:
        return os.fstat(r).st_dev
    finally:
        os.close(r)
        os.close(w)


def _is_null(st: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


def _device_problem(name: str, st: os.stat_result) -> InputError | None:
    """Why ``st`` cannot be a log, or None; /dev/null is allowed (it reads as an empty log)."""
    if (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) and not _is_null(st):
        return cannot_read(name, msg("logs.input.is_device"))
    return None


def is_named_pipe(st: os.stat_result) -> bool:
    """A FIFO made with ``mkfifo``, as opposed to a shell's ``<(…)`` or ``|`` pipe."""
    return stat.S_ISFIFO(st.st_mode) and st.st_dev != _pipefs_dev()


def check_stdin(*, wizard: bool) -> None:
    """Raise :class:`InputError` if ``-`` cannot be read; ``wizard``: the interface owns the terminal."""
    if _piped is not None:
        return
    if stdio.stdin_closed() or sys.stdin is None:
        raise cannot_read(STDIN, msg("logs.input.stdin_closed"))
    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return  # not a real descriptor (a test's stand-in): nothing to check
    if wizard and os.isatty(sys.stdin.fileno()):
        raise InputError(msg("logs.input.stdin_is_terminal"))
    if not os.isatty(sys.stdin.fileno()):
        problem = _device_problem(STDIN, st)
        if problem is not None:
            raise problem


def check_path(path: str) -> os.stat_result | None:
    """Raise :class:`InputError` for a device; the stat result, or None where the reader reports the error."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # missing or unreadable: the reader says so in its own words
    problem = _device_problem(path, st)
    if problem is not None:
        raise problem
    return st


def _is_stream(st: os.stat_result) -> bool:
    """Input that arrives as it is written: a pipe or a socket (a terminal is a person typing)."""
    return stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)


def open_pipe(path: str, wait: float | None = None, idle: float | None = IDLE_WAIT) -> Source:
    """A named pipe as a source: wait up to ``wait`` seconds for a writer's data, then read it
    (each later wait bounded by ``idle`` seconds; None waits as long as the writer keeps it open)."""
    wait = PIPE_WAIT if wait is None else wait
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise cannot_read(path, e) from None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        if not poller.poll(int(wait * 1000)):
            raise cannot_read(path, msg("logs.input.pipe_silent").format(wait=wait))
        os.set_blocking(fd, True)
        stream: Any = IdleStream(fd, idle) if idle is not None else os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return Source(path, lambda: stream)  # the reader recognises gzip on the stream itself


def _idle_source(p: str, st: os.stat_result | None, idle: float | None) -> Source | None:
    """``p`` read through :class:`IdleStream` when it is a pipe or socket (stdin, ``<(…)``), else None."""
    if idle is None:
        return None
    if p == "-":
        try:
            fd = sys.stdin.fileno()
            st = os.fstat(fd)
        except (OSError, ValueError, AttributeError):
            return None
        if not _is_stream(st):
            return None
        return Source(STDIN, lambda: cast(BinaryIO, IdleStream(fd, idle, owned=False)))  # a reader-like stream
    if st is None or not _is_stream(st):
        return None

    def opener() -> Any:
        return IdleStream(os.open(p, os.O_RDONLY), idle)

    return Source(p, opener)


def open_inputs(paths: Iterable[str], *, wizard: bool = False, idle: float | None = IDLE_WAIT) -> list[Source]:
    """Sources for ``paths`` (``-`` is stdin); raises :class:`InputError` for the first bad one.

    ``idle``: seconds a pipe may stay silent before its writer is taken to have stopped (see
    :class:`IdleStream`); None for ``--follow``, which waits for new lines on purpose.
    """
    paths = list(paths) or ["-"]
    for p in paths:  # every input is checked before any is read (or waited on)
        if p == "-":
            check_stdin(wizard=wizard)
        else:
            check_path(p)
    sources = []
    for p in paths:
        st = check_path(p) if p != "-" else None
        if p == "-" and _piped is not None:
            sources.append(Source(STDIN, _piped[0], _piped[1]))
        elif st is not None and is_named_pipe(st):
            sources.append(open_pipe(p, idle=idle))
        else:
            source = open_source(p)  # the reader's checks and messages (missing, directory, permission)
            sources.append(_idle_source(p, st, idle) or source)
    return sources
