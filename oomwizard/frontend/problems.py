"""How every entry point says the knowledge base is broken: one catalogue line in the operator's
language, then the first problems with their file and line (``oomwizard lint`` lists them all)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from ..i18n import ui

SHOWN = 20
"""Problems listed before the end (a broken file can hold hundreds; lint prints every one)."""


def print_kb_broken(problems: Iterable[object], lang: str, stream: TextIO) -> None:
    print(f"oomwizard: {ui('cli.error.kb_broken', lang)}", file=stream)
    for i, p in enumerate(problems):
        if i == SHOWN:
            break
        print(f"  {p}", file=stream)
