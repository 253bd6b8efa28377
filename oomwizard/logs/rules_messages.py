"""Loading ``messages.yaml``: the messages that name their cause, those inferred from context,
and PyTorch's generic GPU out-of-memory error, each with its facts and examples checked."""

from __future__ import annotations

import re
from typing import Any

from ..kb.yamlsrc import LDict, Problem
from .message_facts import read_fact_examples, read_facts
from .rules_model import Example, Rules, Signature
from .rules_read import _Reader, _score

_MESSAGE_KEYS = {"id", "scenario", "score", "phase", "triggers", "pattern", "frames", "facts", "oom", "reason", "note",
                 "examples", "by_phase", "fact_examples", "fallback", "also", "prose"}


def _signature_examples(r: _Reader, rules: Rules, d: LDict, sid: str, pattern: re.Pattern[str] | None,
                        triggers: tuple[str, ...], what: str, also: tuple[str, ...] = ()) -> None:
    """Each example, kept for lint, must match the pattern and hold a trigger (and an ``also`` word)."""
    ex_list = r.seq(d, "examples", what)
    for i, text in enumerate(r.strings(d, "examples", what)):
        rules.examples.append(Example(sid, d.get("scenario"), text, r.file, ex_list.line_of(i)))
        if pattern is not None and not r.lazy and not pattern.search(text):
            r.err(ex_list.line_of(i), f"{what}: example does not match the pattern")
        if triggers and not any(t in text for t in triggers):
            r.err(ex_list.line_of(i), f"{what}: example holds none of the triggers")
        check_also(r, ex_list.line_of(i), text, also, what)


def check_also(r: _Reader, line: int, text: str, also: tuple[str, ...], what: str) -> None:
    """An example of a rule with ``also`` words holds one of them (lines are compared lowered)."""
    if also and not any(t in text.lower() for t in also):
        r.err(line, f"{what}: example holds none of the words of also")


def read_also(r: _Reader, d: LDict, what: str) -> tuple[str, ...]:
    """``also:`` lower-case words, one of which a line must hold besides a trigger."""
    words = r.word_list(d, "also", what, cased=False) if d.get("also") is not None else ()
    for w in words:
        if w != w.lower():
            r.err(d.line_of("also"), f"{what}.also: {w!r} must be lower case (lines are compared lowered)")
    return tuple(w for w in words if w == w.lower())


def _signature(r: _Reader, rules: Rules, d: Any, line: int, what: str, inferred: bool = False) -> Signature | None:
    required = {"id", "scenario", "score", "pattern", "reason"} | (set() if inferred else {"triggers", "examples"})
    if not r.keys(d, line, _MESSAGE_KEYS, required, what):
        return None
    sid = d["id"]
    what = f"{what} {sid}"
    score = _score(r, rules.tiers, d["score"], d.line_of("score"), what)
    pattern = r.regex(d["pattern"], d.line_of("pattern"), f"{what}.pattern")
    reason = r.text(d["reason"], d.line_of("reason"), f"{what}.reason")
    phase = r.phase(d["phase"], d.line_of("phase"), what) if d.get("phase") is not None else None
    frames = r.regex(d["frames"], d.line_of("frames"), f"{what}.frames") if d.get("frames") is not None else None
    facts = read_facts(r, d, pattern, what)
    read_fact_examples(r, d, pattern, facts, what)
    if pattern is not None and reason is not None and not inferred:
        for name in re.findall(r"\{(\w+)\}", reason.en + reason.zh):
            if name not in pattern.groupindex:
                r.err(d.line_of("reason"), f"{what}.reason: the pattern has no group {name!r}")
    triggers = r.word_list(d, "triggers", what, cased=True)
    if not inferred and not triggers:
        r.err(d.line_of("triggers"), f"{what}: at least one trigger")
    also = read_also(r, d, what)
    _signature_examples(r, rules, d, sid, pattern, triggers, what, also)
    by_phase = d.get("by_phase") is True
    if by_phase and phase is None:
        r.err(d.line_of("by_phase"), f"{what}: by_phase needs a phase")
    if None in (score, pattern, reason):
        return None
    if sid in rules.sources:
        r.err(line, f"{what}: duplicate id (first at {rules.sources[sid][0]}:{rules.sources[sid][1]})")
    rules.sources[sid] = (r.file, line)
    assert score is not None and pattern is not None and reason is not None
    return Signature(sid, triggers, pattern, str(d["scenario"]), score, reason, phase, facts, d.get("oom") is True,
                     frames, by_phase, d.get("fallback") is True, d.get("prose") is True, also)


def _words(r: _Reader, rules: Rules, doc: LDict) -> None:
    """``words:`` (name -> regex, or ``{pattern, plain}``), each checked before any rule uses it.

    ``plain``: lower-case words, one of which every text the pattern matches holds; a rule's
    ``triggers: ['@name']`` searches a log for them (in each spelling of :func:`spellings`) and
    ``also: ['@name']`` asks a line for one, so the words are written once, beside their regex.
    """
    words = doc.get("words")
    if words is None:
        return
    if not isinstance(words, LDict):
        r.err(doc.line_of("words"), "words: expected name: regex")
        return
    for name, value in words.items():
        what, line = f"words.{name}", words.line_of(name)
        rx, plain = value, None
        if isinstance(value, LDict) and r.keys(value, line, {"pattern", "plain"}, {"pattern", "plain"}, what):
            rx, plain = value["pattern"], r.strings(value, "plain", what)
            for w in plain:
                if w != w.lower():
                    r.err(value.line_of("plain"), f"{what}.plain: {w!r} must be lower case")
        if not isinstance(rx, str) or not re.fullmatch(r"[a-z_]+", str(name)):
            r.err(line, f"{what}: expected a lower-case name and a regex (or pattern and plain)")
            continue
        try:
            if not r.lazy:  # the program's own, checked by lint: compiled where a rule uses them
                re.compile(rx)
        except re.error as e:
            r.err(line, f"{what}: bad regex: {e}")
            continue
        rules.words[str(name)] = rx
        if plain:
            rules.word_plain[str(name)] = tuple(plain)
            rules.word_lines[str(name)] = (r.file, line)


def check_plain_words(rules: Rules, problems: list[Problem]) -> None:
    """Every text a named word's pattern matches in any rule's example holds one of its plain
    words: a spelling the plain words miss would never be searched for, and the rule never read."""
    for name, plain in rules.word_plain.items():
        rx = re.compile(rules.words[name], re.I)
        file, line = rules.word_lines[name]
        for ex in rules.examples:
            for m in rx.finditer(ex.text):
                if m.group() and not any(w in m.group().lower() for w in plain):
                    problems.append(Problem(file, line, f"words.{name}: matches {m.group()!r} in the example at "
                                                        f"{ex.file}:{ex.line}, which holds none of its plain words"))


def load_messages(r: _Reader, rules: Rules, doc: LDict) -> None:
    _words(r, rules, doc)
    items = r.seq(doc, "messages", "messages")
    sigs = [_signature(r, rules, d, items.line_of(i), "message") for i, d in enumerate(items)]
    rules.messages = tuple(s for s in sigs if s is not None)
    inferred = r.seq(doc, "inferred", "inferred")
    for i, d in enumerate(inferred):
        s = _signature(r, rules, d, inferred.line_of(i), "inferred", inferred=True)
        if s is not None:
            rules.inferred[s.id] = s
    oom = doc.get("gpu_oom")
    if r.keys(oom, doc.line_of("gpu_oom"), {"triggers", "patterns", "examples", "note", "facts", "fact_examples"},
              {"triggers", "patterns"}, "gpu_oom"):
        parts = r.strings(oom, "patterns", "gpu_oom")
        rx = r.regex("|".join(parts), oom.line_of("patterns"), "gpu_oom.patterns")
        if rx is not None:
            rules.gpu_oom = rx
            rules.gpu_oom_facts = read_facts(r, oom, rx, "gpu_oom")
            read_fact_examples(r, oom, rx, rules.gpu_oom_facts, "gpu_oom")
            ex = r.seq(oom, "examples", "gpu_oom")
            for i, text in enumerate(r.strings(oom, "examples", "gpu_oom")):
                if not r.lazy and not rx.search(text):
                    r.err(ex.line_of(i), "gpu_oom: example does not match")
        rules.gpu_oom_triggers = r.strings(oom, "triggers", "gpu_oom")
