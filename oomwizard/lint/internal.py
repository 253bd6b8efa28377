"""The knowledge base speaks about vLLM, never about how it was written.

An operator reading a leaf cannot open our working notes, so a sentence such as "as some guides
(and seed 004) say" points at nothing they can check and leaks how the text was produced. Claims
must stand on vLLM's own code, its docs or public threads. This check flags references to internal
documents (numbered seeds, "the seed's claim", review or audit notes) in every leaf, tree file and
article, in both languages. A sampling seed (``seed`` as a request parameter) is not flagged.
"""

from __future__ import annotations

import re
from pathlib import Path

from .context import LintContext

INTERNAL_REF_RES = (
    re.compile(r"\bseeds?\s*#?\d+\b", re.I),
    re.compile(r"\bthe\s+seeds?(?:'s)?(?![\w-])(?!\s+(?:of|for|value|parameter|argument))", re.I),
    re.compile(r"(?<![自身带])\s*seed\s*(?:中|给出|所说|说|还|把|认为|建议)", re.I),
    re.compile(r"\b(?:kb[- ]?(?:review|audit)|knowledge[- ]base\s+(?:review|audit))\b", re.I),
    re.compile(r"\b(?:reviewer|auditor)s?\b", re.I),
    re.compile(r"(?:shared/reviews|vllm-facts\.md|reviews/kb-)", re.I),
)
"""Phrases that name an internal document; each one is a sentence to rewrite as a fact about vLLM."""


def internal_references(text: str) -> list[tuple[int, str]]:
    """(line, matched text) for every reference to an internal document in ``text``."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for rx in INTERNAL_REF_RES:
            m = rx.search(line)
            if m:
                out.append((n, m.group(0).strip()))
                break
    return out


def check_internal_references(ctx: LintContext) -> None:
    files: list[Path] = []
    trees = ctx.base / "decision_trees"
    if trees.is_dir():
        files += sorted(p for p in trees.rglob("*.yaml"))
    content = ctx.base / "content"
    if content.is_dir():
        files += sorted(content.rglob("*.md"))
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the loader reports unreadable files
        rel = path.relative_to(ctx.base).as_posix()
        for line, found in internal_references(text):
            ctx.error(
                rel,
                line,
                f"{found!r} refers to an internal document; state the fact about vLLM (with its source) instead",
            )
