"""``oomwizard browse`` and ``oomwizard tour``: the full-screen screens on a terminal, text otherwise."""

from __future__ import annotations

import argparse
import os
import sys

from ..exitcodes import Exit
from ..i18n import detect_lang, ui


def _interactive(args: argparse.Namespace) -> bool:
    return (not args.plain and sys.stdin.isatty() and sys.stdout.isatty()
            and os.environ.get("TERM", "") != "dumb")


def _width() -> int:
    if not sys.stdout.isatty():
        return 88
    import shutil

    return max(60, min(100, shutil.get_terminal_size((88, 24)).columns - 1))


def cmd_browse(args: argparse.Namespace) -> int:
    from ..kb.loader import get_kb
    from .browse import entries, search
    from .data import get_onboarding
    from .plain_text import browse_text, glossary_text

    lang = detect_lang(args.lang)
    kb, ob = get_kb(), get_onboarding()
    query = " ".join(args.query)
    if _interactive(args):
        from ..tui.onboard_app import run_onboard

        return run_onboard("glossary" if args.glossary else "browse", lang, query)
    if args.glossary:
        sys.stdout.write(glossary_text(ob, lang, query, _width()))
        return Exit.OK
    result = search(entries(kb, ob, lang), query, ob)
    sys.stdout.write(browse_text(result, ob, lang, _width()))
    return Exit.OK if result.entries else Exit.NOT_FOUND


def cmd_tour(args: argparse.Namespace) -> int:
    from ..kb.loader import get_kb
    from .data import get_onboarding
    from .plain_text import tour_text
    from .tour import tour_pages

    lang = detect_lang(args.lang)
    if _interactive(args):
        from ..tui.onboard_app import run_onboard

        return run_onboard("tour", lang, "")
    kb, ob = get_kb(), get_onboarding()
    sys.stdout.write(tour_text(tour_pages(kb, ob, lang), ob, lang, _width()))
    return Exit.OK


def add_parsers(sub: argparse._SubParsersAction, add_common: object, lang: str) -> None:
    p = sub.add_parser("browse", help=ui("cli.help.browse", lang))
    p.add_argument("query", nargs="*", help=ui("cli.help.browse.query", lang))
    p.add_argument("--glossary", action="store_true", help=ui("cli.help.browse.glossary", lang))
    p.add_argument("--plain", action="store_true", help=ui("cli.help.browse.plain", lang))
    add_common(p)  # type: ignore[operator]
    p = sub.add_parser("tour", help=ui("cli.help.tour", lang))
    p.add_argument("--plain", action="store_true", help=ui("cli.help.tour.plain", lang))
    add_common(p)  # type: ignore[operator]
