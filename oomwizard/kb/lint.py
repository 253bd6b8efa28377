"""``oomwizard lint``: every check of the knowledge base, as a list of located problems."""

from __future__ import annotations

from pathlib import Path

from .loader import load_kb
from .yamlsrc import Problem


def lint(root: Path | str | None = None) -> list[Problem]:
    _, problems = load_kb(root, strict=False)
    return problems
