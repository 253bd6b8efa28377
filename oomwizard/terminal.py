"""The wizard's terminal when its standard streams are not one: ``kubectl logs pod/x | oomwizard``.

As fzf and less do, the piped log is taken first and the keys then come from ``/dev/tty``, the
controlling terminal, whatever fd 0 is. The log is copied to a private temporary file (mode 0600,
removed at exit) so the wizard can read it again (after an override, or to watch it); with
``--follow`` the pipe itself is kept and read as it grows. Where the screen is drawn (stderr for
the full-screen interface, stdout for plain prompts) the terminal is put in place too, and the
streams are put back when the session ends. A redirected stdout is the terminal during the
session too (the screen's size is read from it), so what the wizard prints on exit shows there. Without a controlling terminal (cron, CI, ``ssh``
without ``-t``) there is nothing to attach to: the caller exits 3.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from .stdio import stdin_closed
from .text.units import GIB, MIB

TTY = "/dev/tty"
SPOOL_LIMIT = 8 * GIB
"""A piped log larger than this is cut there (the reader states it): a pipe may never end."""
CHUNK = MIB


@dataclass
class Attached:
    """What :func:`attach` did: ``piped`` is true when stdin carried a log (now readable as ``-``)."""

    piped: bool = False
    truncated: bool = False
    _undo: list[Callable[[], None]] = field(default_factory=list)

    def detach(self) -> None:
        """Put the standard streams back as they were (the wizard has ended)."""
        while self._undo:
            with contextlib.suppress(OSError, ValueError):
                self._undo.pop()()


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _carries_log(fd: int) -> bool:
    """stdin is a pipe, a socket or a regular file (``< vllm.log``), not /dev/null or a closed one."""
    if stdin_closed():
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def open_tty() -> int | None:
    """A descriptor on the controlling terminal, or None when the process has none."""
    try:
        fd = os.open(TTY, os.O_RDWR | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    if not _isatty(fd):
        os.close(fd)
        return None
    return fd


def has_tty() -> bool:
    fd = open_tty()
    if fd is None:
        return False
    os.close(fd)
    return True


def spool(fd: int, limit: int = SPOOL_LIMIT) -> tuple[str, bool]:
    """Copy everything readable on ``fd`` into a private temporary file; ``(path, cut)``."""
    out_fd, path = tempfile.mkstemp(prefix="oomwizard-stdin-", suffix=".log")
    atexit.register(_unlink, path)
    written, cut = 0, False
    with os.fdopen(out_fd, "wb") as out:
        while True:
            block = os.read(fd, CHUNK)
            if not block:
                break
            if written + len(block) > limit:
                out.write(block[: limit - written])
                cut = True
                break
            out.write(block)
            written += len(block)
    return path, cut


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def needs_attach(screen_fds: tuple[int, ...]) -> bool:
    return not all(_isatty(fd) for fd in (0, *screen_fds))


def attach(screen_fds: tuple[int, ...], *, follow: bool = False) -> Attached | None:
    """Read a piped log and put ``/dev/tty`` on fd 0 and on each of ``screen_fds`` that is not a
    terminal; None when there is no terminal at all (nothing is changed then)."""
    tty = open_tty()
    if tty is None:
        return None
    att = Attached()
    try:
        if not _isatty(0):
            if _carries_log(0):
                _take_log(att, follow)
            _replace(att, 0, tty)
            saved_stdin = sys.stdin
            sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115 - the session's
            att._undo.append(lambda: setattr(sys, "stdin", saved_stdin))
        for fd in screen_fds:
            if not _isatty(fd):
                _replace(att, fd, tty)
    finally:
        os.close(tty)
    return att


def _take_log(att: Attached, follow: bool) -> None:
    from .logs import inputs  # only with a piped log: the wizard's first frame does not wait for the reader

    log_fd = os.dup(0)
    if follow:
        stream = os.fdopen(log_fd, "rb")
        inputs.use_piped_stdin(lambda: stream, None)
    else:
        try:
            path, att.truncated = spool(log_fd)
        finally:
            os.close(log_fd)
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        # A gzip stream's size says nothing of its lines: the reader then decides as for a pipe.
        inputs.use_piped_stdin(lambda: open(path, "rb"), None if gz  # noqa: SIM115 - the reader closes it
                            else os.path.getsize(path))
    att.piped = True
    att._undo.append(lambda: inputs.use_piped_stdin(None))


def _replace(att: Attached, fd: int, tty: int) -> None:
    saved = os.dup(fd)
    os.dup2(tty, fd)

    def undo() -> None:
        os.dup2(saved, fd)
        os.close(saved)

    att._undo.append(undo)


SCREEN_FDS = (1, 2)
"""Textual draws on stderr and takes the screen size from stdout; plain prompts use stdout."""


def attach_for(follow: bool) -> Attached | None:
    """:func:`attach` for the wizard (either frontend)."""
    return attach(SCREEN_FDS, follow=follow)

