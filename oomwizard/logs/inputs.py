"""Opening log inputs so that none can block for ever or be read without end.

The reader takes any path and reads what it gets. Some paths never end or never start: a device
(``/dev/zero``, ``/dev/urandom``, a terminal), a named pipe nobody writes to, ``-`` when stdin is
the terminal the wizard itself reads keys from, or a stdin the program was started without. These
are refused here with one line that says what to do instead, before anything is read. A named pipe
is opened without blocking and waited on for at most :data:`PIPE_WAIT` seconds; what arrives is
then read from that same descriptor (opening the pipe a second time would wait for a writer that
may be gone already, with the data still inside).
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import BinaryIO

from .. import stdio
from .reader import InputError, Source, open_source

PIPE_WAIT = 10.0
"""Seconds to wait for the first data on a named pipe before giving up on it."""

STDIN = "<stdin>"

_piped: tuple[Callable[[], BinaryIO], int | None] | None = None
"""The log that came on stdin before the wizard put the terminal there (see oomwizard/terminal.py)."""


def use_piped_stdin(opener: Callable[[], BinaryIO] | None, size: int | None = None) -> None:
    """From now on ``-`` reads what ``opener`` returns (None: stdin itself again)."""
    global _piped
    _piped = None if opener is None else (opener, size)


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


def _device_problem(name: str, st: os.stat_result) -> str | None:
    """Why ``st`` cannot be a log, or None; /dev/null is allowed (it reads as an empty log)."""
    if (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) and not _is_null(st):
        return f"cannot read {name}: it is a device, not a log file"
    return None


def is_named_pipe(st: os.stat_result) -> bool:
    """A FIFO made with ``mkfifo``, as opposed to a shell's ``<(…)`` or ``|`` pipe."""
    return stat.S_ISFIFO(st.st_mode) and st.st_dev != _pipefs_dev()


def check_stdin(*, wizard: bool) -> None:
    """Raise :class:`InputError` if ``-`` cannot be read; ``wizard``: the interface owns the terminal."""
    if _piped is not None:
        return
    if stdio.stdin_closed() or sys.stdin is None:
        raise InputError(f"cannot read {STDIN}: standard input is closed (pass a log file)")
    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return  # not a real descriptor (a test's stand-in): nothing to check
    if wizard and os.isatty(sys.stdin.fileno()):
        raise InputError(
            "cannot read the log from stdin: it is the terminal the wizard reads keys from; "
            "pass a file (--log vllm.log), pipe the log in with `oomwizard diagnose -`, or paste it in the wizard"
        )
    if not os.isatty(sys.stdin.fileno()):
        problem = _device_problem(STDIN, st)
        if problem is not None:
            raise InputError(problem)


def check_path(path: str) -> os.stat_result | None:
    """Raise :class:`InputError` for a device; the stat result, or None where the reader reports the error."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # missing or unreadable: the reader says so in its own words
    problem = _device_problem(path, st)
    if problem is not None:
        raise InputError(problem)
    return st


def open_pipe(path: str, wait: float | None = None) -> Source:
    """A named pipe as a source: wait up to ``wait`` seconds for a writer's data, then read it."""
    wait = PIPE_WAIT if wait is None else wait
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        if not poller.poll(int(wait * 1000)):
            raise InputError(
                f"cannot read {path}: it is a named pipe and nothing was written to it in {wait:g} s "
                "(start the program that writes to it first)"
            )
        os.set_blocking(fd, True)
        stream = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return Source(path, lambda: stream)  # the reader recognises gzip on the stream itself


def open_inputs(paths: Iterable[str], *, wizard: bool = False) -> list[Source]:
    """Sources for ``paths`` (``-`` is stdin); raises :class:`InputError` for the first bad one."""
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
        else:
            sources.append(open_pipe(p) if st is not None and is_named_pipe(st) else open_source(p))
    return sources
