"""The commands that read no log: ``detect``, ``show``, ``lint``, ``export``, ``kit``, ``scenarios``,
``completion``, and the entry points of those whose work lives in their own package (``plan``,
``report``, ``browse``, ``tour``); ``COMMANDS`` names every command's handler.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .cli_logs import cmd_diagnose, cmd_verify
from .cli_shared import check_python, load_kb, machine_facts, overrides, print_json, say, talk, text_width
from .exitcodes import Exit
from .i18n import detect_lang, ui


def cmd_detect(args: argparse.Namespace) -> int:
    from .facts.machine import detect_machine
    from .report.machine import machine_text

    check_python(args)
    report = detect_machine(python=args.python)
    if args.format == "json":
        print_json(report.to_json())
    else:
        sys.stdout.write(machine_text(report, detect_lang(args.lang)))
    return Exit.OK


def cmd_show(args: argparse.Namespace) -> int:
    from .report.leaf import leaf_json, leaf_markdown
    from .report.runthis import leaf_text_and_run_this

    lang = detect_lang(args.lang)
    kb = load_kb()
    leaf = kb.resolve(args.id)
    if leaf is None:
        ids = sorted(set(kb.leaves) | set(kb.scenarios))
        close = [i for i in ids if args.id in i or i in args.id][:5]
        if close:
            say("cli.error.no_leaf_close", id=args.id, close=", ".join(close))
        else:
            say("cli.error.no_leaf", id=args.id)
        return Exit.NOT_FOUND
    facts = None
    if args.overrides or args.machine:
        facts = machine_facts(args, False)
        facts.update(overrides(args.overrides))
    if args.format == "json":
        print_json(leaf_json(leaf, facts), "show")
    elif args.format == "markdown":
        art = kb.article("leaves", leaf.id, lang)
        sys.stdout.write(leaf_markdown(leaf, facts, None, lang, article=art.body if art else None))
    else:
        sys.stdout.write(leaf_text_and_run_this(leaf, facts, None, lang, text_width()))
    return Exit.OK


def cmd_lint(args: argparse.Namespace) -> int:
    from .kb.yamlsrc import KBError
    from .lint import lint

    try:
        problems = lint()
    except KBError as e:  # rule files the program itself cannot load: report them as lint would
        problems = e.problems
    errors = [p for p in problems if p.severity == "error"]
    if args.format == "json":
        print_json({"ok": not errors, "problems": [dict(p.__dict__) for p in problems]}, "lint")
    else:
        for p in problems:
            print(p)
        print(ui("cli.lint.summary", talk(), errors=len(errors), warnings=len(problems) - len(errors)), file=sys.stderr)
    return Exit.KB_INVALID if errors else Exit.OK


def cmd_export(args: argparse.Namespace) -> int:
    from .report.export import export

    kb = load_kb()
    return int(export(kb, args.format, args.output, args.lang, force=args.force))


def cmd_kit(args: argparse.Namespace) -> int:
    from .kit.build import build_kit

    return int(build_kit(args.dir, args.pythons, args.platforms, pyz=args.pyz, force=args.force,
                         lang=detect_lang(args.lang), kb_loader=load_kb))


def cmd_scenarios(args: argparse.Namespace) -> int:
    lang = detect_lang(args.lang)
    kb = load_kb()
    if args.format == "json":
        from .report.export import scenarios_json

        print_json({"scenarios": scenarios_json(kb)}, "scenarios")
        return Exit.OK
    from .text.cells import fill

    width = max(len(s) for s in kb.scenarios)
    for sid, sc in kb.scenarios.items():
        print(fill(f"{sid:<{width}}  {sc.title(lang)}", text_width(), "", " " * (width + 2)))
    return Exit.OK


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan.command import run

    return run(args)


def cmd_report(args: argparse.Namespace) -> int:
    from .bundle.command import cmd_report as report

    return report(args)


def cmd_completion(args: argparse.Namespace) -> int:
    from .cli_parser import build_parser
    from .completion import script

    sys.stdout.write(script(args.shell, build_parser()))
    return Exit.OK


def _onboard(name: str, args: argparse.Namespace) -> int:
    from .onboard import commands

    return int(getattr(commands, name)(args))


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
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
