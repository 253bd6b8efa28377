"""argparse's own words in the operator's language: usage, section titles, ``-h``, ``--version``, "error".

argparse takes them from gettext, which has no Chinese for them here. The parser cli.py builds is
walked once and those words are set from the string catalogue (``cli.argparse.…``). Flag names,
metavars and the details argparse adds to an error (a choice list, an argument's name) stay as
argparse writes them. English is left exactly as argparse prints it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

from .i18n import LANGS, ui

HEADINGS = {
    "positional arguments": "cli.argparse.positionals",
    "options": "cli.argparse.options",
    "optional arguments": "cli.argparse.options",  # Python 3.9's word for the same section
}


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose error line is in its language (sub-commands inherit the class)."""

    lang = "en"

    def error(self, message: str) -> NoReturn:
        if self.lang == "en":
            super().error(message)
        self.print_usage(sys.stderr)
        self.exit(2, ui("cli.argparse.error", self.lang, prog=self.prog, message=message) + "\n")


def argv_lang(argv: Sequence[str]) -> str | None:
    """The ``--lang`` of a command line before it is parsed (the help must be in it), if valid."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else arg[7:] if arg.startswith("--lang=") else None
        if value in LANGS:
            return value
    return None


def localize(parser: argparse.ArgumentParser, lang: str) -> None:
    """Set argparse's own words of ``parser`` and every sub-command's parser in ``lang``."""
    if lang == "en":
        return
    from .text.cells import fill, wrap

    prefix = ui("cli.argparse.usage", lang)

    class Formatter(argparse.HelpFormatter):
        def add_usage(self, usage: str | None, actions: object, groups: object, prefix_: str | None = None) -> None:
            super().add_usage(usage, actions, groups, prefix if prefix_ is None else prefix_)  # type: ignore[arg-type]

        def _split_lines(self, text: str, width: int) -> list[str]:
            return wrap(" ".join(text.split()), width)  # by cells, between CJK characters too

        def _fill_text(self, text: str, width: int, indent: str) -> str:
            return fill(" ".join(text.split()), width, indent, indent)

    for p in _parsers(parser):
        if isinstance(p, Parser):
            p.lang = lang
        p.formatter_class = Formatter
        for group in p._action_groups:
            if group.title in HEADINGS:
                group.title = ui(HEADINGS[group.title], lang)
        for action in p._actions:
            if action.option_strings == ["-h", "--help"]:
                action.help = ui("cli.argparse.help", lang)
            elif action.option_strings == ["--version"]:
                action.help = ui("cli.argparse.version", lang)


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action.choices, dict):
            for sub in dict.fromkeys(v for v in action.choices.values() if isinstance(v, argparse.ArgumentParser)):
                yield from _parsers(sub)
