"""Standard streams that may be closed, full or gone, so that none of these ends in a traceback.

Started with ``<&-`` or ``>&-``, a program has no fd 0 or 1: Python sets ``sys.stdin`` or
``sys.stdout`` to None, and the next file opened takes that number, so what is meant for stdout
could land in a log file. :func:`guard` puts /dev/null on each missing descriptor, remembers which
were missing (reading ``-`` from a closed stdin is an error, not an empty log), and wraps stdout so
that a failed write (``/dev/full``, a closed stdout, EIO) raises :class:`OutputError` with a plain
message instead of an ``OSError`` from deep inside a renderer. A reader that went away
(``| head``) stays a :class:`BrokenPipeError`: that is not an error.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from .i18n import TextError, msg

_closed: set[int] = set()


class OutputError(TextError):
    """stdout cannot take the output; the message says why (``No space left on device``)."""


def stdin_closed() -> bool:
    """True when the program was started without a standard input (``<&-``)."""
    return 0 in _closed


class _Output:
    """stdout with write failures turned into :class:`OutputError`; everything else passes through."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _call(self, name: str, *args: Any) -> Any:
        if self._stream is None:
            raise OutputError(msg("cli.error.stdout_closed"))
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(e.strerror or str(e)) from None

    def write(self, text: str) -> int:
        written = self._call("write", text)
        return len(text) if written is None else int(written)

    def writelines(self, lines: Any) -> None:
        self._call("writelines", lines)

    def flush(self) -> None:
        self._call("flush")

    def isatty(self) -> bool:
        return self._stream is not None and bool(self._stream.isatty())

    def __getattr__(self, name: str) -> Any:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def guard() -> Callable[[], None]:
    """Make fds 0-2 and ``sys.std*`` safe to use; returns a function that puts the objects back."""
    _closed.clear()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            _closed.add(fd)
    for fd in sorted(_closed):
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    saved = (sys.stdin, sys.stdout, sys.stderr)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = _Output(None if 1 in _closed else sys.stdout)

    def restore() -> None:
        sys.stdin, sys.stdout, sys.stderr = saved

    return restore


def silence_stdout() -> None:
    """After a broken pipe or a failed write: send what is still buffered to /dev/null at exit."""
    stream = sys.__stdout__
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
