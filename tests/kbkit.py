"""Shared helpers for tests over the real knowledge base and its calculations."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from oomwizard.advice.commands import render_fix
from oomwizard.advice.numbers import resolve
from oomwizard.engine import Answer, Done, walk
from oomwizard.facts.catalog import coerce
from oomwizard.facts.model import Fact, FactSet
from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase, Leaf
from oomwizard.kb.yamlsrc import Problem
from oomwizard.lint import CHECKS, lint
from oomwizard.lint.strings import check_strings

GIB = 1024**3
MIB = 1024**2
H200_BYTES = 150754820096
"""NVML's total for the H200 in the fixtures (probe.json)."""


REPO = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def shipped_lint() -> tuple[Problem, ...]:
    """``oomwizard lint`` of the knowledge base in this checkout, run once per test process: every
    area's test reads its own problems from it instead of linting the whole base again (nothing
    writes to the shipped files while the tests run; tests that break a file lint a copy)."""
    return tuple(lint(REPO))


KB_CHECKS = tuple(check for check in CHECKS if check is not check_strings)
"""Every lint area but the program's string catalogues: that check, the costliest (it reads every
module of the package), reports only in ``content/*/strings.yaml`` and ``.py`` files, so a test that
breaks a copy of the knowledge base and reads the problems of a ``decision_trees/`` file runs these."""


@lru_cache(maxsize=1)
def kb() -> KnowledgeBase:
    base, _ = load_kb(strict=False)
    return base


def facts(**values: object) -> FactSet:
    """Facts as a log would give them, typed through the catalog."""
    return FactSet.of(Fact(k, coerce(k, v), "test log", kind="log") for k, v in values.items())


def walk_to(fs: FactSet, answers: dict[str, str] | None = None) -> Done:
    """The non-interactive walk (`diagnose`): suggestions accepted, unknowns defaulted."""
    result = walk(kb(), fs, {k: Answer(v) for k, v in (answers or {}).items()}, auto_accept=True, use_unknown=True)
    assert isinstance(result, Done), f"stopped at a question: {result}"
    return result


def leaf_for(fs: FactSet, answers: dict[str, str] | None = None) -> Leaf:
    return walk_to(fs, answers).leaf


def script(leaf_id: str, fix_id: str, fs: FactSet) -> tuple[bool, str]:
    """(available for this version, the rendered commands of the chosen variant(s))."""
    fix = next(f for f in kb().leaves[leaf_id].fixes if f.id == fix_id)
    rendered = render_fix(fix, fs)
    return rendered.available, "\n".join(v.script for v in rendered.variants)


def value(name: str, fs: FactSet) -> str | None:
    return resolve(name, fs).value


def why(name: str, fs: FactSet) -> str:
    r = resolve(name, fs)
    assert r.why is not None
    return r.why.en + "\n" + r.why.zh
