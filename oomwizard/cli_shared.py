"""What every command of the command line shares: its language, its output, the knowledge base, and
the facts given on the command line (``--set``, ``--machine``, ``--python``).

Kept apart from the entry point so that a command's own module (``cli_logs``, ``cli_commands``,
``bundle/command.py``) can use it without importing the part that picks a frontend.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from .exitcodes import Exit
from .i18n import detect_lang, said, ui

LANG = [""]
"""The language the running command talks in (``--lang``, else the locale), set once its arguments are read."""


def talk() -> str:
    return LANG[0] or detect_lang()


def text_width() -> int:
    """Wrap prose to the terminal (60-100 columns); 88 when writing to a pipe or file."""
    if not sys.stdout.isatty():
        return 88
    import shutil

    return max(60, min(100, shutil.get_terminal_size((88, 24)).columns - 1))


def print_json(data: dict[str, Any], kind: str | None = None) -> None:
    """Print one JSON document: ``data`` as it is when it already carries the envelope, else
    wrapped in the envelope of ``kind`` (every JSON output has one; see envelope.py)."""
    from .envelope import envelope, kind_of
    from .text.output import clean_json, write_clean

    if kind_of(data) is None:
        if kind is None:
            raise TypeError("JSON output without an envelope: pass kind= or call envelope()")
        data = envelope(kind, data)
    write_clean(sys.stdout, clean_json(data) + "\n")


def err(text: str) -> None:
    print(f"oomwizard: {text}", file=sys.stderr)


def say(key: str, /, **fmt: object) -> None:
    """One catalogue line on stderr, in the command's language."""
    err(ui(key, talk(), **fmt))


def load_kb() -> Any:
    from .kb.loader import get_kb
    from .kb.yamlsrc import KBError

    try:
        return get_kb()
    except KBError as e:
        from .frontend.problems import print_kb_broken

        print_kb_broken(e.problems, talk(), sys.stderr)
        raise SystemExit(Exit.KB_INVALID) from None


def overrides(items: Sequence[str]) -> Any:
    """The facts of ``--set FACT=VALUE``; a name or value the catalogue refuses ends the command (2)."""
    from .facts.catalog import CATALOG, FactValueError, coerce
    from .facts.model import Fact, FactSet

    fs = FactSet()
    for item in items:
        name, eq, raw = item.partition("=")
        name = name.strip()
        if not eq:
            say("cli.error.set_syntax", item=item)
            raise SystemExit(Exit.USAGE)
        if name not in CATALOG:
            close = [n for n in CATALOG if name in n or n in name][:5]
            if close:
                say("cli.error.unknown_fact_close", name=name, close=", ".join(close))
            else:
                say("cli.error.unknown_fact", name=name)
            raise SystemExit(Exit.USAGE)
        try:
            fs.add(Fact(name, coerce(name, raw), "--set on the command line", kind="answered"))
        except FactValueError as e:
            err(f"--set: {e.text(talk())}")
            raise SystemExit(Exit.USAGE) from None
    return fs


def check_python(args: argparse.Namespace) -> None:
    """``--python`` names the one program detection starts: refuse one others could have replaced."""
    if getattr(args, "python", None):
        from .facts.trust import check_python as check

        _, problem = check(args.python)
        if problem:
            err(problem(talk()))
            raise SystemExit(Exit.USAGE)


def machine_facts(args: argparse.Namespace, detect: bool) -> Any:
    """Facts from ``--machine FILE`` (a saved ``detect`` report) or from this machine."""
    from .facts.model import FactSet

    if getattr(args, "machine", None):
        from .facts.saved import ReportError, load_report

        try:
            return load_report(args.machine).facts
        except ReportError as e:
            err(said(e, talk()))
            raise SystemExit(Exit.INPUT) from None
    if detect:
        from .facts.machine import detect_machine

        return detect_machine(python=getattr(args, "python", None)).facts
    return FactSet()
