"""``oomwizard`` with no command: the interactive wizard, TUI or plain, started only where there is a
terminal to draw on (a log piped in is read from the pipe, the keys from ``/dev/tty``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .cli_shared import check_python, err, overrides, say, talk
from .exitcodes import Exit
from .i18n import detect_lang, said, ui


def run_interactive(args: argparse.Namespace) -> int:
    check_python(args)
    from .frontend.options import LaunchOptions
    from .launch import launch
    from .terminal import SCREEN_FDS, attach_for, has_tty, needs_attach

    plain = args.plain or os.environ.get("TERM", "") == "dumb"
    attach = needs_attach(SCREEN_FDS)
    if attach and not has_tty():
        print(ui("cli.error.no_tty", talk()), file=sys.stderr)
        return Exit.NO_TTY
    code = _check_logs(args.log)
    if code:
        return code
    attached = None
    if attach:
        # `kubectl logs pod/x | oomwizard`: the log from the pipe, the keys from /dev/tty.
        attached = attach_for(args.follow)
        if attached is None:
            print(ui("cli.error.no_tty", talk()), file=sys.stderr)
            return Exit.NO_TTY
    try:
        piped = attached is not None and attached.piped and "-" not in args.log
        opts = LaunchOptions(
            logs=[*args.log, *(["-"] if piped else [])],
            demo=args.demo,
            lang=detect_lang(args.lang),
            inline=args.inline,
            plain=plain,
            machine=args.machine,
            python=args.python,
            overrides=overrides(args.overrides),
            follow=args.follow,
            replay=args.replay,
            resume=args.resume,
            keep_state=True,
        )
        if args.follow and len(opts.logs) != 1:
            say("cli.error.follow_one_log")
            return Exit.USAGE
        return launch(opts)
    finally:
        if attached is not None:
            attached.detach()


def _check_logs(paths: Sequence[str]) -> int:
    """``--log`` files the wizard cannot read stop it before it starts, as ``diagnose`` does
    (exit 4); a named pipe is left unopened, its data is the wizard's to read. Only the reader is
    imported, not the diagnosis and its rules: the wizard's first frame must not wait for them."""
    if not any(p != "-" for p in paths):
        return 0
    from .logs.inputs import check_path, is_named_pipe
    from .logs.reader import InputError, open_source

    try:
        for p in paths:
            if p != "-":
                st = check_path(p)
                if st is None or not is_named_pipe(st):
                    open_source(p)
    except InputError as e:
        err(said(e, talk()))
        return Exit.INPUT
    return 0
