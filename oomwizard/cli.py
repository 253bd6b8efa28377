"""Command line: pick a frontend or run a non-interactive command. stdout is data, stderr talk.

Nothing heavy is imported at module level: ``--version``, the no-terminal hint and ``show`` must be
instant, and Textual must never start without a terminal (it would spin or crash there).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from . import __version__
from .cli_lang import Parser, argv_lang, localize
from .exitcodes import Exit
from .i18n import LANGS, detect_lang, ui

if TYPE_CHECKING:
    from .logs.model import Diagnosis
    from .logs.reader import Progress, Source

_LANG = [""]
"""The language the running command talks in (``--lang``, else the locale), set once its arguments are read."""


def _talk() -> str:
    return _LANG[0] or detect_lang()



def _add_common(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument("--lang", choices=LANGS, help=ui("cli.help.common.lang", lang))


def _add_fact_inputs(p: argparse.ArgumentParser, lang: str) -> None:
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FACT=VALUE",
        help=ui("cli.help.common.set", lang),
    )
    p.add_argument(
        "--machine",
        metavar="FILE",
        help=ui("cli.help.common.machine", lang),
    )
    p.add_argument("--python", metavar="PATH", help=ui("cli.help.common.python", lang))


def build_parser(lang: str | None = None) -> argparse.ArgumentParser:
    """The parser, its help in ``lang`` (default: the locale's); flag names are never translated."""
    lang = detect_lang(lang)
    parser = Parser(
        prog="oomwizard",
        description=ui("cli.help.description", lang),
    )
    parser.add_argument("--version", action="version", version=f"oomwizard {__version__}")
    parser.add_argument("--log", action="append", default=[], metavar="FILE", help=ui("cli.help.log", lang))
    parser.add_argument("--demo", action="store_true", help=ui("cli.help.demo", lang))
    parser.add_argument("--plain", action="store_true", help=ui("cli.help.plain", lang))
    parser.add_argument("--inline", action="store_true", help=ui("cli.help.inline", lang))
    parser.add_argument("--follow", action="store_true",
                        help=ui("cli.help.follow", lang))
    parser.add_argument("--resume", action="store_true", help=ui("cli.help.resume", lang))
    parser.add_argument("--replay", metavar="BUNDLE", help=ui("cli.help.replay", lang))
    _add_common(parser, lang)
    _add_fact_inputs(parser, lang)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("diagnose", help=ui("cli.help.diagnose", lang))
    p.add_argument("files", nargs="*", metavar="FILE", help=ui("cli.help.diagnose.files", lang))
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--detect", action="store_true", help=ui("cli.help.diagnose.detect", lang))
    p.add_argument("--output", metavar="FILE",
                   help=ui("cli.help.diagnose.output", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.diagnose.force", lang))
    p.add_argument("--replay", metavar="BUNDLE", help=ui("cli.help.diagnose.replay", lang))
    p.add_argument("--follow", action="store_true",
                   help=ui("cli.help.diagnose.follow", lang))
    _add_common(p, lang)
    _add_fact_inputs(p, lang)

    p = sub.add_parser("detect", help=ui("cli.help.detect", lang))
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--python", metavar="PATH", help=ui("cli.help.common.python", lang))
    _add_common(p, lang)

    p = sub.add_parser("show", help=ui("cli.help.show", lang))
    p.add_argument("id", metavar="LEAF_ID|SCENARIO_ID")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    _add_common(p, lang)
    _add_fact_inputs(p, lang)

    p = sub.add_parser("verify", help=ui("cli.help.verify", lang))
    p.add_argument("id", metavar="LEAF_ID|SCENARIO_ID", help=ui("cli.help.verify.id", lang))
    p.add_argument("files", nargs="*", metavar="FILE", help=ui("cli.help.verify.files", lang))
    p.add_argument("--format", choices=("text", "json"), default="text")
    _add_common(p, lang)

    p = sub.add_parser("lint", help=ui("cli.help.lint", lang))
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("export", help=ui("cli.help.export", lang))
    p.add_argument("--format", choices=("json", "markdown", "html"), required=True)
    p.add_argument("--output", metavar="PATH", help=ui("cli.help.export.output", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.export.force", lang))
    _add_common(p, lang)

    p = sub.add_parser("kit", help=ui("cli.help.kit", lang))
    p.add_argument("dir", metavar="DIR", help=ui("cli.help.kit.dir", lang))
    p.add_argument("--python", dest="pythons", nargs="+", metavar="X.Y", help=ui("cli.help.kit.python", lang))
    p.add_argument("--platform", dest="platforms", nargs="+", metavar="TAG",
                   help=ui("cli.help.kit.platform", lang))
    p.add_argument("--pyz", action="store_true", help=ui("cli.help.kit.pyz", lang))
    p.add_argument("--force", action="store_true", help=ui("cli.help.kit.force", lang))
    _add_common(p, lang)
    p = sub.add_parser("completion", help=ui("cli.help.completion", lang))
    p.add_argument("shell", choices=("bash", "zsh", "fish"),
                   help=ui("cli.help.completion.shell", lang))

    p = sub.add_parser("scenarios", help=ui("cli.help.scenarios", lang))
    p.add_argument("--format", choices=("text", "json"), default="text")
    _add_common(p, lang)

    from .onboard.commands import add_parsers as add_onboard_parsers

    add_onboard_parsers(sub, lambda p: _add_common(p, lang), lang)
    from .plan.command import add_parser as _add_plan

    _add_plan(sub, lang)

    p = sub.add_parser("report", help=ui("cli.help.report", lang))
    p.add_argument("--log", action="append", default=[], metavar="FILE", help=ui("cli.help.report.log", lang))
    p.add_argument("--output", metavar="FILE", help=ui("cli.help.report.output", lang))
    p.add_argument("--format", choices=("markdown", "json", "html"), help=ui("cli.help.report.format", lang))
    p.add_argument("--no-redact", action="store_true", help=ui("cli.help.report.no_redact", lang))
    _add_common(p, lang)
    _add_fact_inputs(p, lang)
    localize(parser, lang)
    return parser


def _text_width() -> int:
    """Wrap prose to the terminal (60-100 columns); 88 when writing to a pipe or file."""
    if not sys.stdout.isatty():
        return 88
    import shutil

    return max(60, min(100, shutil.get_terminal_size((88, 24)).columns - 1))


def _json(data: dict[str, Any], kind: str | None = None) -> None:
    """Print one JSON document: ``data`` as it is when it already carries the envelope, else
    wrapped in the envelope of ``kind`` (every JSON output has one; see envelope.py)."""
    from .envelope import envelope, kind_of
    from .text.output import clean_json, write_clean

    if kind_of(data) is None:
        if kind is None:
            raise TypeError("JSON output without an envelope: pass kind= or call envelope()")
        data = envelope(kind, data)
    write_clean(sys.stdout, clean_json(data) + "\n")


def _err(msg: str) -> None:
    print(f"oomwizard: {msg}", file=sys.stderr)


def _say(key: str, /, **fmt: object) -> None:
    """One catalogue line on stderr, in the command's language."""
    _err(ui(key, _talk(), **fmt))


def _load_kb() -> Any:
    from .kb.loader import get_kb
    from .kb.yamlsrc import KBError

    try:
        return get_kb()
    except KBError as e:
        _say("cli.error.kb_broken")
        for p in e.problems[:20]:
            print(f"  {p}", file=sys.stderr)
        raise SystemExit(Exit.KB_INVALID) from None


def _overrides(items: Sequence[str]) -> Any:
    from .facts.catalog import CATALOG, FactValueError, coerce
    from .facts.model import Fact, FactSet

    fs = FactSet()
    for item in items:
        name, eq, raw = item.partition("=")
        name = name.strip()
        if not eq:
            _say("cli.error.set_syntax", item=item)
            raise SystemExit(Exit.USAGE)
        if name not in CATALOG:
            close = [n for n in CATALOG if name in n or n in name][:5]
            if close:
                _say("cli.error.unknown_fact_close", name=name, close=", ".join(close))
            else:
                _say("cli.error.unknown_fact", name=name)
            raise SystemExit(Exit.USAGE)
        try:
            fs.add(Fact(name, coerce(name, raw), "--set on the command line", kind="answered"))
        except FactValueError as e:
            _err(f"--set: {e.text(_talk())}")
            raise SystemExit(Exit.USAGE) from None
    return fs


def _check_python(args: argparse.Namespace) -> None:
    """``--python`` names the one program detection starts: refuse one others could have replaced."""
    if getattr(args, "python", None):
        from .facts.trust import check_python

        _, err = check_python(args.python)
        if err:
            _err(err)
            raise SystemExit(Exit.USAGE)


def _machine_facts(args: argparse.Namespace, detect: bool) -> Any:
    """Facts from ``--machine FILE`` (a saved ``detect`` report) or from this machine."""
    from .facts.model import FactSet

    if getattr(args, "machine", None):
        from .facts.saved import ReportError, load_report

        try:
            return load_report(args.machine).facts
        except ReportError as e:
            _err(str(e))
            raise SystemExit(Exit.INPUT) from None
    if detect:
        from .facts.machine import detect_machine

        return detect_machine(python=getattr(args, "python", None)).facts
    return FactSet()


# --- commands ---------------------------------------------------------------------------------


def cmd_diagnose(args: argparse.Namespace) -> int:
    from .engine import Done, walk
    from .logs.diagnose import InputError, diagnose_sources
    from .logs.inputs import IDLE_WAIT, open_inputs
    from .report.diagnosis import diagnosis_markdown, diagnosis_text
    from .report.leaf import leaf_json, leaf_markdown, leaf_text

    if args.replay:
        from .bundle.command import diagnose_replay

        return diagnose_replay(args)
    lang = detect_lang(args.lang)
    kb = _load_kb()
    if args.detect and not args.machine:
        _check_python(args)
    files = args.files or ["-"]
    if args.follow and len(files) != 1:
        _say("cli.error.follow_one")
        return Exit.USAGE
    try:
        sources = open_inputs(files, idle=None if args.follow else IDLE_WAIT)
        if files == ["-"] and sys.stdin.isatty():
            _say("cli.note.paste_log")
        diag = _follow(sources[0], lang) if args.follow else _read_logs(
            files, lang, lambda progress: diagnose_sources(sources, progress=progress), json_out=args.format == "json")
    except InputError as e:
        _err(str(e))
        return Exit.INPUT
    except KeyboardInterrupt:
        return Exit.CANCELLED
    facts = _machine_facts(args, args.detect)
    facts.update(diag.facts)
    facts.update(_overrides(args.overrides))
    result = None
    if diag.matches or args.overrides:
        step = walk(kb, facts, {}, auto_accept=True, use_unknown=True, lang=lang)
        result = step if isinstance(step, Done) else None
    if args.format == "json":
        out = diag.to_json()
        out["facts"] = facts.to_json()
        out["leaf"] = leaf_json(result.leaf, result.facts, result.path) if result else None
        _json(out, "diagnose")
    elif args.format == "markdown":
        sys.stdout.write(diagnosis_markdown(diag, lang))
        if result:
            sys.stdout.write("\n" + leaf_markdown(result.leaf, result.facts, result.path, lang))
    else:
        sys.stdout.write(diagnosis_text(diag, lang, _text_width()))
        if result:
            sys.stdout.write("\n" + leaf_text(result.leaf, result.facts, result.path, lang, width=_text_width()))
    for w in diag.warnings:
        _err(w)
    if args.output:
        code = _save_output(args, result, kb, lang)
        if code:
            return code
    return Exit.OK if diag.matches else Exit.NO_MATCH


def _save_output(args: argparse.Namespace, result: Any, kb: Any, lang: str) -> int:
    """``diagnose --output FILE``: the file the wizard's save writes (same code, report/save.py)."""
    from .report.save import save_leaf

    if result is None:
        _err(ui("save.no_fix", lang, path=args.output))
        return Exit.NO_MATCH
    try:
        path = save_leaf(args.output, result, kb, lang, overwrite=args.force)
    except FileExistsError:
        _err(ui("save.exists", lang, path=args.output))
        return Exit.ERROR
    except OSError as e:
        _err(ui("tui.save.failed", lang, path=args.output, error=e.strerror or e))
        return Exit.ERROR
    _err(ui("tui.save.done", lang, path=str(path)))
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
        _err(ui("interrupted", lang, name=name))
        raise
    finally:
        line.clear()


def _follow(source: Source, lang: str) -> Diagnosis:
    from .logs.follow import follow

    return follow(source, status=lambda key, fields: _err(ui(key, lang, **fields)))


def cmd_detect(args: argparse.Namespace) -> int:
    from .facts.machine import detect_machine
    from .report.machine import machine_text

    _check_python(args)
    report = detect_machine(python=args.python)
    if args.format == "json":
        _json(report.to_json())
    else:
        sys.stdout.write(machine_text(report, detect_lang(args.lang)))
    return Exit.OK


def cmd_show(args: argparse.Namespace) -> int:
    from .report.leaf import leaf_json, leaf_markdown, leaf_text

    lang = detect_lang(args.lang)
    kb = _load_kb()
    leaf = kb.resolve(args.id)
    if leaf is None:
        ids = sorted(set(kb.leaves) | set(kb.scenarios))
        close = [i for i in ids if args.id in i or i in args.id][:5]
        if close:
            _say("cli.error.no_leaf_close", id=args.id, close=", ".join(close))
        else:
            _say("cli.error.no_leaf", id=args.id)
        return Exit.NOT_FOUND
    facts = None
    if args.overrides or args.machine:
        facts = _machine_facts(args, False)
        facts.update(_overrides(args.overrides))
    if args.format == "json":
        _json(leaf_json(leaf, facts), "show")
    elif args.format == "markdown":
        art = kb.article("leaves", leaf.id, lang)
        sys.stdout.write(leaf_markdown(leaf, facts, None, lang, article=art.body if art else None))
    else:
        sys.stdout.write(leaf_text(leaf, facts, None, lang, width=_text_width()))
    return Exit.OK


def cmd_verify(args: argparse.Namespace) -> int:
    from .logs.diagnose import InputError
    from .report.verification import verification_text
    from .verify import verify

    lang = detect_lang(args.lang)
    kb = _load_kb()
    leaf = kb.resolve(args.id)
    if leaf is None:
        _say("cli.error.no_leaf", id=args.id)
        return Exit.NOT_FOUND
    files = args.files or ["-"]
    try:
        if files == ["-"] and sys.stdin.isatty():
            _say("cli.note.paste_new_log")
        result = _read_logs(files, lang, lambda progress: verify(leaf, files, progress=progress),
                            json_out=args.format == "json")
    except InputError as e:
        _err(str(e))
        return Exit.INPUT
    except KeyboardInterrupt:
        return Exit.CANCELLED
    if args.format == "json":
        _json(result.to_json(), "verify")
    else:
        sys.stdout.write(verification_text(result, lang, _text_width()))
    for w in result.warnings:
        _err(w)
    if result.failed:
        return Exit.CHECK_FAILED
    return Exit.OK if result.proven else Exit.NOT_PROVEN


def cmd_lint(args: argparse.Namespace) -> int:
    from .kb.yamlsrc import KBError
    from .lint import lint

    try:
        problems = lint()
    except KBError as e:  # rule files the program itself cannot load: report them as lint would
        problems = e.problems
    errors = [p for p in problems if p.severity == "error"]
    if args.format == "json":
        _json({"ok": not errors, "problems": [dict(p.__dict__) for p in problems]}, "lint")
    else:
        for p in problems:
            print(p)
        print(ui("cli.lint.summary", _talk(), errors=len(errors), warnings=len(problems) - len(errors)), file=sys.stderr)
    return Exit.KB_INVALID if errors else Exit.OK


def cmd_export(args: argparse.Namespace) -> int:
    from .report.export import export

    kb = _load_kb()
    return int(export(kb, args.format, args.output, args.lang, force=args.force))


def cmd_kit(args: argparse.Namespace) -> int:
    from .kit.build import build_kit

    return int(build_kit(args.dir, args.pythons, args.platforms, pyz=args.pyz, force=args.force,
                         lang=detect_lang(args.lang), kb_loader=_load_kb))


def cmd_scenarios(args: argparse.Namespace) -> int:
    lang = detect_lang(args.lang)
    kb = _load_kb()
    if args.format == "json":
        from .report.export import scenarios_json

        _json({"scenarios": scenarios_json(kb)}, "scenarios")
        return Exit.OK
    from .text.cells import fill

    width = max(len(s) for s in kb.scenarios)
    for sid, sc in kb.scenarios.items():
        print(fill(f"{sid:<{width}}  {sc.title(lang)}", _text_width(), "", " " * (width + 2)))
    return Exit.OK


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan.command import run

    return run(args)
def cmd_report(args: argparse.Namespace) -> int:
    from .bundle.command import cmd_report as report

    return report(args)


def run_interactive(args: argparse.Namespace) -> int:
    _check_python(args)
    from .frontend.options import LaunchOptions
    from .launch import launch
    from .terminal import SCREEN_FDS, attach_for, has_tty, needs_attach

    plain = args.plain or os.environ.get("TERM", "") == "dumb"
    attach = needs_attach(SCREEN_FDS)
    if attach and not has_tty():
        print(ui("cli.error.no_tty", _talk()), file=sys.stderr)
        return Exit.NO_TTY
    code = _check_logs(args.log)
    if code:
        return code
    attached = None
    if attach:
        # `kubectl logs pod/x | oomwizard`: the log from the pipe, the keys from /dev/tty.
        attached = attach_for(args.follow)
        if attached is None:
            print(ui("cli.error.no_tty", _talk()), file=sys.stderr)
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
            overrides=_overrides(args.overrides),
            follow=args.follow,
            replay=args.replay,
            resume=args.resume,
            keep_state=True,
        )
        if args.follow and len(opts.logs) != 1:
            _say("cli.error.follow_one_log")
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
        _err(str(e))
        return Exit.INPUT
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    from .completion import script

    sys.stdout.write(script(args.shell, build_parser()))
    return Exit.OK


COMMANDS = {
    "diagnose": cmd_diagnose,
    "detect": cmd_detect,
    "show": cmd_show,
    "verify": cmd_verify,
    "lint": cmd_lint,
    "export": cmd_export,
    "kit": cmd_kit,
    "scenarios": cmd_scenarios,
    "browse": lambda args: _onboard("cmd_browse", args),
    "tour": lambda args: _onboard("cmd_tour", args),
    "plan": cmd_plan,
    "completion": cmd_completion,
    "report": cmd_report,
}


def _onboard(name: str, args: argparse.Namespace) -> int:
    from .onboard import commands

    return int(getattr(commands, name)(args))


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
    _LANG[0] = lang
    parser = build_parser(lang)
    args, extra = parser.parse_known_args(argv)
    if extra:
        if any(x.startswith("-") and x != "-" for x in extra) or not isinstance(getattr(args, "files", None), list):
            parser.error(ui("cli.error.unrecognized", lang, args=" ".join(extra)))
        args.files.extend(extra)
    return args


def _run(args: argparse.Namespace) -> int:
    if args.command is None:
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
    from .signals import SignalExit
    from .stdio import OutputError, silence_stdout

    _LANG[0] = ""

    try:
        try:
            code = _run(_parse(argv))
        except SystemExit as e:
            code = Exit.OK if e.code is None else int(e.code) if isinstance(e.code, int) else Exit.ERROR
        sys.stdout.flush()  # a full disk shows here, while there is still a way to say so
        return code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return Exit.CANCELLED
    except SignalExit as e:  # SIGTERM, SIGHUP, SIGQUIT: what was printed stays, nothing more is
        silence_stdout()
        return e.code
    except BrokenPipeError:
        # `oomwizard show … | head`: the reader went away; not an error worth a traceback.
        silence_stdout()
        return Exit.OK
    except OutputError as e:
        silence_stdout()
        _say("cli.error.output", error=e)
        return Exit.OUTPUT
    except Exception as e:  # noqa: BLE001 - the last resort: every known failure has its own message above
        return _internal_error(e)


def _internal_error(e: BaseException) -> int:
    """One line instead of a traceback (``OOMWIZARD_TRACEBACK=1`` shows it, for a bug report)."""
    if os.environ.get("OOMWIZARD_TRACEBACK"):
        import traceback

        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    from .text.safe_text import printable

    text = " ".join(printable(str(e)).split())[:300]
    _say("cli.error.internal", error=f"{type(e).__name__}{': ' + text if text else ''}")
    _say("cli.error.bug", version=__version__)
    return Exit.BUG
