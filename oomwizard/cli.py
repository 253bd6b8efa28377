"""Command line: pick a frontend or run a non-interactive command. stdout is data, stderr talk.

This module is the entry point (``oomwizard``, ``python -m oomwizard``): it reads the arguments,
runs one command behind the output boundary and turns how it ended into an exit code. The parts
live beside it: ``cli_parser`` (every option and its help), ``cli_logs`` (``diagnose``, ``verify``),
``cli_commands`` (the other commands, ``COMMANDS``), ``cli_interactive`` (the wizard),
``cli_shared`` (what commands share), ``cli_exit`` (exit codes for every way out), ``cli_lang``
(argparse's own words).

Nothing heavy is imported at module level: ``--version``, the no-terminal hint and ``show`` must be
instant, and Textual must never start without a terminal (it would spin or crash there).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from . import cli_shared
from .cli_commands import COMMANDS
from .cli_exit import exit_code
from .cli_lang import argv_lang
from .cli_parser import build_parser
from .cli_shared import print_json as _json
from .i18n import detect_lang, ui

__all__ = ["COMMANDS", "_forget_interrupt", "_json", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    from . import stdio

    restore = stdio.guard()
    try:
        code = _main(argv)
    finally:
        restore()
    _forget_interrupt()  # any exit: plain mode leaving on Ctrl+C with the fix shown returns 0, not 130
    return code


def _forget_interrupt() -> None:
    """Exit with the code returned after a caught Ctrl+C, not by SIGINT. When a KeyboardInterrupt
    escapes an ``exec`` of a string (``dataclasses`` and ``namedtuple`` build methods that way while
    a module is imported), CPython marks the run as interrupted even though the exception was caught, and at exit kills
    itself with SIGINT (``python -m`` runs). Evaluating one more string clears that mark."""
    exec("")  # an empty string: nothing runs


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; file names after an option (``verify ID --format json new.log``) still count
    as files, which argparse alone refuses once the positional arguments were taken."""
    lang = detect_lang(argv_lang(sys.argv[1:] if argv is None else list(argv)))
    cli_shared.LANG[0] = lang
    parser = build_parser(lang)
    args, extra = parser.parse_known_args(argv)
    if extra:
        if any(x.startswith("-") and x != "-" for x in extra) or not isinstance(getattr(args, "files", None), list):
            parser.error(ui("cli.error.unrecognized", lang, args=" ".join(extra)))
        args.files.extend(extra)
    return args


def _run(args: argparse.Namespace) -> int:
    if args.command is None:
        from .cli_interactive import run_interactive

        return run_interactive(args)
    from .signals import unwinding
    from .text.output import safe_stream

    # Every byte a command prints passes the output boundary (no raw escapes, no secrets).
    with contextlib.ExitStack() as stack:
        stack.enter_context(unwinding())
        for name in ("stdout", "stderr"):
            stack.callback(setattr, sys, name, getattr(sys, name))
            setattr(sys, name, safe_stream(getattr(sys, name)))
        return COMMANDS[args.command](args)


def _main(argv: Sequence[str] | None) -> int:
    cli_shared.LANG[0] = ""
    return exit_code(lambda: _run(_parse(argv)))
