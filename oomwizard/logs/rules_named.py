"""Functions of a phase named in a report's words: ``frames.yaml``'s ``named_in_words``.

A report often names the function that failed (``profile_cudagraph_memory() OOMs on 0.19``)
without pasting the traceback. The phases' own function lists (``phases:`` of ``frames.yaml``) say
which step that is, so one message rule per phase is built from them here, rather than a pattern
per wording: a name added to a phase's frames is read in reports too. Only names that look like
code (with an underscore) are read; ``step`` or ``capture`` alone are ordinary words.
"""

from __future__ import annotations

import dataclasses
import re

from ..i18n import Text, ui
from ..kb.yamlsrc import LDict
from .rules_messages import check_also, read_also
from .rules_model import Example, Rules, Signature
from .rules_read import _Reader, _score

_KEYS = {"score", "pattern", "also", "reason", "examples", "note"}


def _code_like(func: str) -> bool:
    return "_" in func.strip("_")


def _rule_of(r: _Reader, built: dict[str, Signature], text: str) -> Signature | None:
    """The rule an example belongs to, by the function names it holds (no regex compiled, so
    loading the checked rules stays cheap); lint also asks the full pattern, which must agree."""
    lower = text.lower()
    sig = next((s for s in built.values() if any(n.lower() in lower for n in s.triggers)), None)
    if not r.lazy and next((s for s in built.values() if s.pattern.search(text)), None) is not sig:
        return None
    return sig


def load_named_in_words(r: _Reader, rules: Rules, doc: LDict) -> None:
    """One rule per phase of ``rules.frame_phases`` (read first), each with the phase's example."""
    d = doc.get("named_in_words")
    if d is None:
        return
    if not r.keys(d, doc.line_of("named_in_words"), _KEYS, {"score", "pattern", "reason", "examples"},
                  "named_in_words"):
        return
    what = "named_in_words"
    score = _score(r, rules.tiers, d["score"], d.line_of("score"), what)
    words = r.regex(d["pattern"], d.line_of("pattern"), f"{what}.pattern")
    reason = r.text(d["reason"], d.line_of("reason"), f"{what}.reason")
    also = read_also(r, d, what)
    if score is None or words is None or reason is None:
        return
    funcs: dict[str, set[str]] = {}
    for fp in rules.frame_phases:  # most specific first: a name keeps its first phase
        taken = set().union(*funcs.values()) if funcs else set()
        funcs.setdefault(fp.phase, set()).update(f for f in fp.funcs if _code_like(f) and f not in taken)
    built: dict[str, Signature] = {}
    for phase, names in funcs.items():
        if not names:
            continue
        alts = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
        pattern = r.regex(rf"(?i)^(?=.*?(?<![\w/\\])`?(?P<func>{alts})\b(?!\.py))(?=.*?{words.pattern})",
                          d.line_of("pattern"), f"{what} {phase}")
        if pattern is None:
            continue
        text = Text(*(getattr(reason, lang).replace("{phase}", ui(f"logs.phase.{phase}", lang))
                      for lang in ("en", "zh")))
        sid = f"prose-names-{phase.replace('_', '-')}"
        built[phase] = Signature(sid, tuple(sorted(names)), pattern, "", score, text, phase, by_phase=True, prose=True,
                                 also=also)
    examples = r.seq(d, "examples", what)
    covered: dict[str, str] = {}
    for i, ex in enumerate(examples):
        line = examples.line_of(i)
        if not r.keys(ex, line, {"text", "scenario"}, {"text", "scenario"}, f"{what}.examples"):
            continue
        said = str(ex["text"])
        sig = _rule_of(r, built, said)
        if sig is None:
            r.err(line, f"{what}: example names no function of a phase beside the words")
            continue
        check_also(r, line, said, also, what)
        covered.setdefault(sig.id, str(ex["scenario"]))
        rules.examples.append(Example(sig.id, str(ex["scenario"]), said, r.file, line))
    for phase, sig in list(built.items()):
        # The scenario its example is diagnosed as: what lint checks the rule's scenario against.
        built[phase] = sig = dataclasses.replace(sig, scenario=covered.get(sig.id, ""))
        if sig.id not in covered:
            r.err(d.line_of("examples"), f"{what}: no example for {sig.phase}'s functions")
        if sig.id in rules.sources:
            r.err(d.line, f"{what}: {sig.id} is already a rule's id")
        rules.sources[sig.id] = (r.file, d.line)
    rules.messages = rules.messages + tuple(built.values())
