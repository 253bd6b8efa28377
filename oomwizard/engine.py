"""The pure walker: facts and answers in, the next question (or a leaf) and the path out.

No I/O and no UI: every frontend calls :func:`walk` after each answer and shows what it returns.
A question bound to a known fact, or whose ``auto`` rule holds, comes with a *suggestion* and the
source behind it; interactive frontends pre-select it (Enter accepts), ``diagnose`` accepts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .facts.catalog import CATALOG
from .facts.model import Fact, FactSet
from .i18n import ui
from .kb.model import KnowledgeBase, Leaf, Question, Route
from .versions import Version

UNKNOWN = "unknown"
"""The answer to a version question that nobody can give."""


class EngineError(RuntimeError):
    """The tree cannot be walked (a cycle, or a route that leads nowhere)."""


@dataclass(frozen=True)
class Answer:
    value: str
    source: str = "answered"
    """``answered`` when a person chose it; otherwise the suggestion's source they accepted."""


@dataclass(frozen=True)
class Suggestion:
    answer: str
    source: str
    facts: tuple[str, ...] = ()
    rule: str | None = None


@dataclass(frozen=True)
class Step:
    question: str
    answer: str
    label: str
    source: str
    how: str
    """``answered``, ``accepted`` (a suggestion confirmed), ``auto`` (accepted without asking),
    or ``default`` (nothing known, the question's ``unknown`` choice)."""
    earlier: str | None = None
    """The question whose answer this one reused (``source`` says so in English)."""

    def said_how(self, lang: str) -> str:
        """How the answer was reached, and from what, in ``lang`` (``answered`` alone when typed)."""
        how = ui(f"engine.how.{self.how}", lang)
        if self.how == "answered" or self.source in ("answered", self.how):
            return how
        if self.how == "default":
            return f"{how}: {ui('engine.source.not_known', lang)}"
        if self.earlier is not None:
            return f"{how}: {ui('engine.source.answered_earlier', lang, question=self.earlier)}"
        return f"{how}: {self.source}"  # a file and line, a detector: the same in every language


@dataclass(frozen=True)
class Ask:
    question: Question
    suggestion: Suggestion | None
    path: tuple[Step, ...]
    facts: FactSet = field(repr=False, default_factory=FactSet)


@dataclass(frozen=True)
class Done:
    leaf: Leaf
    path: tuple[Step, ...]
    facts: FactSet = field(repr=False, default_factory=FactSet)


def fact_value(facts: FactSet, name: str) -> object:
    """A fact's value as conditions compare it (version facts parsed), or None."""
    value = facts.value(name)
    if value is not None and CATALOG.get(name) is not None and CATALOG[name].type == "version":
        return Version.try_parse(value)
    return value


def _describe(facts: FactSet, names: set[str]) -> str:
    parts = []
    for n in sorted(names):
        f = facts.get(n)
        if f is not None:
            parts.append(f"{n}={f.value} ({f.source})")
    return "; ".join(parts)


def suggest(question: Question, facts: FactSet) -> Suggestion | None:
    """What the facts say the answer is, if anything, and why."""
    fact = facts.get(question.fact)
    if fact is not None:
        if question.kind == "version":
            if Version.try_parse(fact.value) is not None:
                return Suggestion(str(fact.value), fact.source, (fact.name,))
        else:
            value = _choice_id(fact.value)
            if question.choice(value) is not None:
                return Suggestion(value, fact.source, (fact.name,))

    def lookup(name: str) -> object:
        return fact_value(facts, name)

    for rule in question.auto:
        if rule.condition.evaluate(lookup) is True:
            used = {n for n in rule.condition.names() if n in facts}
            return Suggestion(rule.answer, _describe(facts, used) or rule.condition.source, tuple(sorted(used)), rule.condition.source)
    return None


def _choice_id(value: object) -> str:
    """Bool facts answer yes/no questions; everything else by its string form."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _route(routes: tuple[Route, ...], facts: FactSet, where: str) -> str:
    def lookup(name: str) -> object:
        return fact_value(facts, name)

    for r in routes:
        if r.condition is None or r.condition.evaluate(lookup) is True:
            return r.target
    raise EngineError(f"{where}: no route applies and there is no fallback")


def _label(question: Question, answer: str, lang: str) -> str:
    c = question.choice(answer)
    if c is not None:
        return c.label(lang)
    return ui("engine.unknown", lang) if answer == UNKNOWN else answer


def walk(
    kb: KnowledgeBase,
    facts: FactSet,
    answers: Mapping[str, Answer] | None = None,
    *,
    auto_accept: bool = False,
    use_unknown: bool = False,
    lang: str = "en",
    start: str | None = None,
) -> Ask | Done:
    """Follow the tree from ``start`` as far as answers (and, if allowed, suggestions) reach.

    ``auto_accept`` takes every suggestion without asking (``diagnose``); ``use_unknown`` takes a
    question's ``unknown`` choice when there is no suggestion either, so a non-interactive walk
    always ends in a leaf.
    """
    answers = answers or {}
    facts = facts.copy()
    path: list[Step] = []
    node_id = start or kb.start
    seen: set[str] = set()
    settled: dict[str, str] = {}
    """Facts already confirmed by an earlier question on this path: never asked twice."""
    while True:
        if node_id in seen:
            raise EngineError(f"the tree loops back to {node_id!r}")
        seen.add(node_id)
        if node_id in kb.leaves:
            return Done(kb.leaves[node_id], tuple(path), facts)
        q = kb.questions.get(node_id)
        if q is None:
            raise EngineError(f"route to {node_id!r}, which does not exist")
        given = answers.get(q.id)
        sug = suggest(q, facts)
        earlier: str | None = None
        if given is not None and _valid(q, given.value):
            value, source = given.value, given.source
            how = "answered" if given.source == "answered" else "accepted"
        elif sug is not None and auto_accept and _valid(q, sug.answer):
            value, source, how = sug.answer, sug.source, "auto"
        elif sug is not None and q.fact in settled and _valid(q, sug.answer) and sug.facts == (q.fact,):
            value, source, how = sug.answer, f"answered earlier ({settled[q.fact]})", "auto"
            earlier = settled[q.fact]
        elif use_unknown and (q.unknown is not None or q.kind == "version"):
            value = q.unknown if q.kind == "choice" and q.unknown else UNKNOWN
            source, how = "not known", "default"
        else:
            return Ask(q, sug, tuple(path), facts)
        path.append(Step(q.id, value, _label(q, value, lang), source, how, earlier))
        _record(q, value, source, how, facts)
        if how != "default" and value != UNKNOWN:
            settled.setdefault(q.fact, q.id)
        routes = q.choice(value).routes if q.kind == "choice" else q.routes  # type: ignore[union-attr]
        node_id = _route(routes, facts, f"question {q.id}, answer {value}")


def _valid(q: Question, value: str) -> bool:
    if q.kind == "version":
        return value == UNKNOWN or Version.try_parse(value) is not None
    return q.choice(value) is not None


def _record(q: Question, value: str, source: str, how: str, facts: FactSet) -> None:
    """Make the answer a fact so later conditions and command templates can use it."""
    if how == "default" or value == UNKNOWN:
        return
    existing = facts.get(q.fact)
    if existing is not None and how != "answered":
        # A rule's coarse answer ("other") must not overwrite a more specific known value ("qwen").
        return
    typed: object = value
    spec = CATALOG.get(q.fact)
    if q.kind == "version":
        typed = Version.parse(value)
    elif spec is not None and spec.type == "bool":
        typed = value == "yes"
    if existing is not None and _choice_id(existing.value) == _choice_id(typed):
        return
    facts.add(Fact(q.fact, typed, "answered" if how == "answered" else source, kind="answered"))
