"""Lint of the compiled copies of the knowledge base's YAML (``oomwizard/data/compiled/``).

The program reads a copy only while its file has the bytes it was made from, so a stale copy is
never wrong, only slow; it is still an error here, as a stale string catalogue is, so what ships is
what was meant to be read fast. Only the program's own knowledge base has copies.
"""

from __future__ import annotations

from ..kb.compiled import stale
from ..kb.root import own_root
from .context import LintContext


def check_compiled(ctx: LintContext) -> None:
    if ctx.base.resolve() == own_root().resolve():
        ctx.problems.extend(stale(ctx.base))
