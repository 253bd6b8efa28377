"""Every scenario in one list, filtered as the operator types.

A query is either words (a flag, a variable, a model family, a GPU generation, any text of the
scenario and its leaves: every word must match) or a pasted log line. A pasted line is not matched
here: it goes through the same log diagnosis as ``oomwizard diagnose``, so browse lands on exactly
the scenario a real log with that line would get.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..kb.model import KnowledgeBase, Leaf
from .data import Message, Onboarding, Step

_WORD_RE = re.compile(r"\S+")
PASTE_MIN_CHARS = 24
"""Shorter text is only searched for; longer text is first read as a log line by the diagnosis,
and searched for as words when the diagnosis recognises nothing in it."""


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    summary: str
    step: Step | None
    messages: tuple[Message, ...]
    leaves: tuple[Leaf, ...]
    haystack: str
    """Lower-case text the word search looks in: both languages, leaves, messages, flags, env."""


@dataclass(frozen=True)
class Result:
    entries: list[Entry]
    how: str
    """``all`` (empty query), ``words`` (text search) or ``diagnosis`` (a pasted log line)."""
    scores: dict[str, float]


def _leaf_words(leaf: Leaf) -> list[str]:
    words = [leaf.id, leaf.title.en, leaf.title.zh, leaf.environment.en, leaf.environment.zh,
             leaf.conclusion.en, leaf.conclusion.zh, leaf.root_cause.en]
    for fix in leaf.fixes:
        words += [fix.title.en, fix.title.zh]
        for v in fix.variants:
            words += [name for name, _ in v.flags] + list(v.remove_flags)
            words += [f"{name}={value}" for name, value in v.env] + list(v.unset_env) + list(v.shell)
    return words


def entries(kb: KnowledgeBase, ob: Onboarding, lang: str) -> list[Entry]:
    out = []
    for sid, sc in kb.scenarios.items():
        info = ob.scenarios.get(sid)
        leaves = tuple(kb.leaves_for_scenario(sid))
        step = ob.steps.get(info.step) if info else None
        msgs = info.messages if info else ()
        words = [sid, sc.title.en, sc.title.zh, sc.summary.en, sc.summary.zh, *[m.text for m in msgs]]
        if step:
            words += [step.id, step.title.en, step.title.zh]
        for leaf in leaves:
            words += _leaf_words(leaf)
        for term in ob.terms.values():
            if any(leaf.id in term.leaves for leaf in leaves):
                words += [term.id, term.name.en, term.name.zh]
        out.append(Entry(sid, sc.title(lang), sc.summary(lang), step, msgs, leaves, "\n".join(words).lower()))
    return out


def looks_pasted(query: str) -> bool:
    q = query.strip()
    return len(q) >= PASTE_MIN_CHARS or "\n" in q


def _expand(word: str, ob: Onboarding) -> tuple[str, ...]:
    w = word.lower()
    return (w, *(a.lower() for a in ob.aliases.get(w, ())))


def search(all_entries: list[Entry], query: str, ob: Onboarding) -> Result:
    q = query.strip()
    if not q:
        return Result(list(all_entries), "all", {})
    if looks_pasted(q):
        from ..logs.diagnose import diagnose_text

        diag = diagnose_text(q)
        by_id = {e.id: e for e in all_entries}
        found = [by_id[m.scenario] for m in diag.matches if m.scenario in by_id]
        if found:
            return Result(found, "diagnosis", {m.scenario: m.score for m in diag.matches})
    words = [_expand(w, ob) for w in _WORD_RE.findall(q)]
    hits = [e for e in all_entries if all(any(alt in e.haystack for alt in alts) for alts in words)]
    return Result(hits, "words", {})
