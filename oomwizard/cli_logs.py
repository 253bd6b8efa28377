"""The commands that read logs: ``diagnose`` (what went wrong, and its fix) and ``verify`` (did the
fix work), with the progress line and Ctrl+C while a log is read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .cli_shared import check_python, err, load_kb, machine_facts, overrides, print_json, say, text_width
from .exitcodes import Exit
from .i18n import detect_lang, said, ui

if TYPE_CHECKING:
    from .logs.model import Diagnosis
    from .logs.reader import Progress, Source


def cmd_diagnose(args: argparse.Namespace) -> int:
    from .engine import Done, walk
    from .logs.diagnose import InputError, diagnose_sources
    from .logs.inputs import IDLE_WAIT, open_inputs
    from .report.diagnosis import diagnosis_markdown, diagnosis_text
    from .report.leaf import leaf_json, leaf_markdown
    from .report.runthis import leaf_text_and_run_this

    if args.replay:
        from .bundle.command import diagnose_replay

        return diagnose_replay(args)
    lang = detect_lang(args.lang)
    kb = load_kb()
    if args.detect and not args.machine:
        check_python(args)
    files = args.files or ["-"]
    if args.follow and len(files) != 1:
        say("cli.error.follow_one")
        return Exit.USAGE
    try:
        sources = open_inputs(files, idle=None if args.follow else IDLE_WAIT)
        if files == ["-"] and sys.stdin.isatty():
            say("cli.note.paste_log")
        diag = _follow(sources[0], lang) if args.follow else _read_logs(
            files, lang, lambda progress: diagnose_sources(sources, progress=progress), json_out=args.format == "json")
    except InputError as e:
        err(said(e, lang))
        return Exit.INPUT
    except KeyboardInterrupt:
        return Exit.CANCELLED
    facts = machine_facts(args, args.detect)
    facts.update(diag.facts)
    facts.update(overrides(args.overrides))
    result = None
    if diag.matches or args.overrides:
        step = walk(kb, facts, {}, auto_accept=True, use_unknown=True, lang=lang)
        result = step if isinstance(step, Done) else None
    if args.format == "json":
        out = diag.to_json()
        out["facts"] = facts.to_json()
        out["leaf"] = leaf_json(result.leaf, result.facts, result.path) if result else None
        print_json(out, "diagnose")
    elif args.format == "markdown":
        sys.stdout.write(diagnosis_markdown(diag, lang))
        if result:
            sys.stdout.write("\n" + leaf_markdown(result.leaf, result.facts, result.path, lang))
    else:
        sys.stdout.write(diagnosis_text(diag, lang, text_width()))
        if result:
            sys.stdout.write("\n" + leaf_text_and_run_this(result.leaf, result.facts, result.path, lang, text_width()))
    for w in diag.warnings:
        err(w(lang))
    if args.output:
        code = _save_output(args, result, kb, lang)
        if code:
            return code
    return Exit.OK if diag.matches else Exit.NO_MATCH


def _save_output(args: argparse.Namespace, result: Any, kb: Any, lang: str) -> int:
    """``diagnose --output FILE``: the file the wizard's save writes (same code, report/save.py)."""
    from .report.save import save_leaf

    if result is None:
        err(ui("save.no_fix", lang, path=args.output))
        return Exit.NO_MATCH
    try:
        path = save_leaf(args.output, result, kb, lang, overwrite=args.force)
    except FileExistsError:
        err(ui("save.exists", lang, path=args.output))
        return Exit.ERROR
    except OSError as e:
        err(ui("tui.save.failed", lang, path=args.output, error=e.strerror or e))
        return Exit.ERROR
    err(ui("tui.save.done", lang, path=str(path)))
    return 0


T = TypeVar("T")


def _read_logs(files: list[str], lang: str, read: Callable[[Progress | None], T], *, json_out: bool) -> T:
    """Run ``read`` with a progress line on a terminal's stderr (never in JSON mode); Ctrl+C
    clears the line, says what was being read and propagates."""
    from .progress import ProgressLine

    name = files[0] if len(files) == 1 else ui("cli.logs_count", lang, n=len(files))
    line = ProgressLine(name, lang, enabled=not json_out)
    try:
        return read(line)
    except KeyboardInterrupt:
        line.clear()  # before the message, so it starts its own line
        err(ui("interrupted", lang, name=name))
        raise
    finally:
        line.clear()


def _follow(source: Source, lang: str) -> Diagnosis:
    from .logs.follow import follow

    return follow(source, status=lambda key, fields: err(ui(key, lang, **fields)))


def cmd_verify(args: argparse.Namespace) -> int:
    from .logs.diagnose import InputError
    from .report.verification import verification_text
    from .verify import verify

    lang = detect_lang(args.lang)
    kb = load_kb()
    leaf = kb.resolve(args.id)
    if leaf is None:
        say("cli.error.no_leaf", id=args.id)
        return Exit.NOT_FOUND
    files = args.files or ["-"]
    try:
        if files == ["-"] and sys.stdin.isatty():
            say("cli.note.paste_new_log")
        result = _read_logs(files, lang, lambda progress: verify(leaf, files, progress=progress),
                            json_out=args.format == "json")
    except InputError as e:
        err(said(e, lang))
        return Exit.INPUT
    except KeyboardInterrupt:
        return Exit.CANCELLED
    if args.format == "json":
        print_json(result.to_json(), "verify")
    else:
        sys.stdout.write(verification_text(result, lang, text_width()))
    for w in result.warnings:
        err(w(lang))
    if result.failed:
        return Exit.CHECK_FAILED
    return Exit.OK if result.proven else Exit.NOT_PROVEN
