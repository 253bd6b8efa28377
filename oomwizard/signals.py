"""Ending on SIGTERM, SIGHUP, SIGINT or SIGQUIT the way Ctrl+C ends: terminal restored, exit 128+n.

Both frontends put the terminal in a state a shell cannot use: the alternate screen, a hidden
cursor, mouse reporting, raw tty modes. The default action of these signals kills the process and
leaves the terminal that way (an SSH connection that drops sends SIGHUP). Each frontend catches
them and asks its toolkit to end normally (Textual's ``App.exit``, prompt_toolkit's
``Application.exit``), which undoes all of that. In case the toolkit cannot finish (a terminal that
hung up may block writes), :class:`Watchdog` restores the tty modes saved at start, writes the
sequences that undo the rest, and ends the process with the same code a few seconds later.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from .exitcodes import SIGNAL_EXITS

HANDLED = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM") if hasattr(signal, name))
GRACE = 5.0
"""Seconds the toolkit gets to restore the terminal and end before the watchdog does it."""

RESET = (
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l"  # mouse reporting off
    "\x1b[?2004l"  # bracketed paste off
    "\x1b[?1049l"  # leave the alternate screen
    "\x1b[?25h"  # show the cursor
)


def exit_code(signum: int) -> int:
    """128 + the signal number, as a shell reports a process that a signal ended."""
    name = signal.Signals(signum).name
    return int(SIGNAL_EXITS.get(name, 128 + signum))


class SignalExit(BaseException):
    """Raised in plain mode to unwind on a signal (a BaseException, so ``except Exception`` lets it by)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.code = exit_code(signum)


class Watchdog:
    """The tty modes from before the frontend started, and a timer that restores them and exits."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = fd if fd is not None else _tty_fd()
        self.attrs: list[Any] | None = None
        self._timer: threading.Timer | None = None
        if self.fd is not None:
            with contextlib.suppress(Exception):
                import termios

                self.attrs = termios.tcgetattr(self.fd)

    def restore(self) -> None:
        """Put the terminal back as it was; every step may fail on a terminal that is gone."""
        if self.fd is None:
            return
        with contextlib.suppress(Exception):
            import termios

            if self.attrs is not None:
                termios.tcsetattr(self.fd, termios.TCSANOW, self.attrs)
        with contextlib.suppress(OSError):
            os.write(self.fd, RESET.encode())

    def abort(self, code: int) -> None:
        """Restore the terminal and end now: for a signal that comes before the toolkit can act."""
        self.restore()
        os._exit(code)

    def arm(self, code: int, grace: float = GRACE) -> None:
        """End the process with ``code`` after ``grace`` seconds unless it has ended by then."""
        if self._timer is not None:
            return

        self._timer = threading.Timer(grace, self.abort, (code,))
        self._timer.daemon = True
        self._timer.start()


@contextlib.contextmanager
def unwinding() -> Iterator[None]:
    """For the commands that print and end: SIGTERM, SIGHUP and SIGQUIT raise :class:`SignalExit`.

    Their default action kills the process mid-write, with no exit code a script can read as
    documented and no chance for ``finally`` blocks (a probe subprocess, a half-written file) to
    run. Unwinding like Ctrl+C does gives both; SIGINT keeps Python's ``KeyboardInterrupt``.
    """
    previous: dict[int, Any] = {}
    RECEIVED.clear()
    if threading.current_thread() is threading.main_thread():
        for signum in HANDLED:
            if signum != signal.SIGINT:
                previous[signum] = signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


RECEIVED: list[int] = []
"""The signal :func:`unwinding` raised for, if any. The exception can be swallowed or wrapped on its
way up (Python 3.11 turns one raised while a class is created into ``RuntimeError: Error calling
__set_name__``, and a module imported inside ``except Exception`` takes that for a failure): the
command's exit code is still the signal's (see cli_exit.py)."""


def received() -> SignalExit | None:
    """The signal that ended the command, however its exception fared."""
    return SignalExit(RECEIVED[0]) if RECEIVED else None


def _raise(signum: int, _frame: object) -> None:
    for s in HANDLED:  # a second signal while unwinding is not a second exception
        if s != signal.SIGINT:
            signal.signal(s, signal.SIG_IGN)
    RECEIVED.append(signum)
    raise SignalExit(signum)


def _tty_fd() -> int | None:
    for stream in (sys.__stdin__, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None and stream.isatty():
                return int(stream.fileno())
    return None
