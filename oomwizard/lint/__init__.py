"""``oomwizard lint``: every check of the knowledge base, as a list of located problems.

The loader already reports what keeps the engine from running (schema, references). Lint adds what
makes advice wrong or a walk end badly: the tree's shape (reachability, cycles, questions a
non-interactive walk cannot pass), conditions that can never hold, incomplete leaves, flags and
variables some vLLM release in a fix's range rejects, and English/Chinese articles that drifted
apart, text that cites internal documents instead of vLLM, the program's string catalogues and the compiled copies of the YAML. Each area lives in its own module; this one runs them and orders the result by file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..kb.loader import default_root, load_kb
from ..kb.yamlsrc import Problem
from .articles import check_articles
from .commands import check_commands
from .compiled import check_compiled
from .context import LintContext
from .diagnosis import check_diagnosis_rules
from .glossary import check_onboarding
from .internal import check_internal_references
from .leaves import check_leaves
from .strings import check_strings
from .tree import check_scenarios, check_tree

CHECKS = (check_tree, check_scenarios, check_leaves, check_commands, check_articles, check_internal_references,
          check_onboarding, check_diagnosis_rules, check_strings, check_compiled)


def lint(root: Path | str | None = None, checks: tuple[Callable[[LintContext], None], ...] = CHECKS) -> list[Problem]:
    """All problems of the knowledge base under ``root`` (default: the one the program uses) that
    ``checks`` find (default: every area; a caller that reads one area's problems may run fewer)."""
    base = Path(root) if root is not None else default_root()
    kb, problems = load_kb(base, strict=False)
    ctx = LintContext(kb, base, problems)
    if kb.questions or kb.leaves:
        for check in checks:
            check(ctx)
    return sort_problems(problems)


def sort_problems(problems: list[Problem]) -> list[Problem]:
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: (p.file, p.line or 0, p.severity != "error", p.message))
