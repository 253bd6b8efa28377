"""Named exit codes, so scripts can tell "nothing matched" from "could not read the log"."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    ERROR = 1
    """Something unexpected; the message says what."""
    USAGE = 2
    """Bad command-line arguments (argparse's own code)."""
    NO_TTY = 3
    """An interactive frontend was asked for without a terminal."""
    INPUT = 4
    """An input file could not be read at all."""
    KB_INVALID = 5
    """The knowledge base failed validation (``lint``) or could not be loaded."""
    NO_MATCH = 6
    """``diagnose`` read the input but recognised no failure in it."""
    NOT_FOUND = 7
    """``show`` was given an id that is neither a leaf nor a scenario."""
    CHECK_FAILED = 8
    """``verify``: the new log still shows the failure, or a check is false."""
    NOT_PROVEN = 9
    """``verify``: nothing failed, but the log does not prove the fix (not ready, facts missing)."""
    OUTPUT = 10
    """The output could not be written (stdout closed, disk full)."""
    NO_INDEX = 11
    """``kit``: pip could not reach a package index (kits are built on a connected machine)."""
    BUG = 70
    """An internal error: the one-line message and a request to report it, never a traceback."""
    HANGUP = 129
    """SIGHUP: the terminal went away (an SSH connection dropped); the terminal was restored."""
    CANCELLED = 130
    """Ctrl+C, or SIGINT from ``kill -INT``."""
    QUIT = 131
    """SIGQUIT; the terminal was restored first."""
    TERMINATED = 143
    """SIGTERM (``kill``); the terminal was restored first."""


SIGNAL_EXITS = {"SIGHUP": Exit.HANGUP, "SIGINT": Exit.CANCELLED, "SIGQUIT": Exit.QUIT, "SIGTERM": Exit.TERMINATED}
"""The code each signal ends the program with: 128 + the signal number, as a shell reports it."""
