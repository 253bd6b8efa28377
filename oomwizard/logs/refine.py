"""Evaluating the refinement groups of ``refinements.yaml`` for one failure.

The ranking places a failure (a message, a phase and how it was read, or nothing) and hands the
group of that placement a score and a reason; each rule of the group whose condition holds adds a
candidate scenario. What a condition may look at is gathered here once per failure: the log's
facts, ``flag_<name>`` for each traceback flag, and the failure's own figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..expr import Value
from ..facts.model import Fact
from ..i18n import Text
from .model import where
from .refine_rules import FRAMES_GROUP, Refinements, Rule, Score


@dataclass
class Candidate:
    scenario: str
    score: float
    reason: Text
    context: list[Fact] = field(default_factory=list)
    """Facts whose lines support the candidate (shown as evidence too)."""


class _Default(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass
class Env:
    """What the conditions of one failure see: facts, flags and the failure's own variables."""

    facts: dict[str, Fact]
    values: dict[str, Value]
    evidence: dict[str, Fact] = field(default_factory=dict)
    texts: dict[str, Text] = field(default_factory=dict)
    """Fields shown in each language's own words (a phase's name)."""

    def get(self, name: str) -> Value:
        if name in self.values:
            return self.values[name]
        f = self.facts.get(name)
        return None if f is None else f.value

    def support(self, names: tuple[str, ...]) -> list[Fact]:
        out = [self.evidence.get(n) or self.facts.get(n) for n in names]
        return [f for f in out if f is not None]

    def fill(self, text: Text) -> Text:
        """A reason with ``{name}`` filled from the variables and facts."""
        if "{" not in text.en and "{" not in text.zh:
            return text
        fields = _Default({k: v for k, f in self.facts.items() if (v := f.value) is not None})
        fields.update({k: v for k, v in self.values.items() if v is not None})
        fields.update({f"{k}_source": f.source for k, f in self.facts.items()})
        en = _Default(fields, **{k: t.en for k, t in self.texts.items()})
        zh = _Default(fields, **{k: t.zh for k, t in self.texts.items()})
        try:
            return Text(text.en.format_map(en), text.zh.format_map(zh))
        except (ValueError, TypeError, IndexError):
            return text  # a format the value does not take ({n:,} of a text): the reason unfilled


def sleep_line(mark: tuple[str, int, str] | None) -> dict[str, Fact]:
    """The sleep or wake line that tells where sleep mode stood, as evidence a rule may show."""
    if mark is None:
        return {}
    file, line, text = mark
    return {"sleep_line": Fact("sleep_mode", True, where(file, line), kind="log", detail=text, file=file, line=line)}


def _score(s: Score, base: float, env: Env, best: float | None) -> float:
    if s.fixed is not None:
        return s.fixed
    if s.same_as_best and best is not None:
        return best
    b = base if s.base is None else s.base
    b = b if s.base_at_least is None else max(b, s.base_at_least)
    add = s.add if isinstance(s.add, float) else float(env.get(s.add) or 0.0)
    score = b + add
    return score if s.max is None else min(s.max, score)


def _holds(rule: Rule, env: Env) -> bool:
    return rule.when is None or rule.when.evaluate(env.get) is True


def evaluate(refs: Refinements, group: str, env: Env, base: float, how: Text) -> tuple[list[Candidate], str]:
    """The candidates of ``group`` at placement score ``base`` and reason ``how``, and what the
    failure's phase becomes (``keep``, ``none``, ``frames``)."""
    out: list[Candidate] = []
    phase = "keep"
    saved = dict(env.values)
    env.values["matched"] = False
    for rule in refs.groups[group]:
        if not _holds(rule, env):
            continue
        best = max((c.score for c in out), default=None)
        score = _score(rule.score, base, env, best)
        if rule.include is not None:
            target = refs.phases.get(str(env.get("frames_phase"))) if rule.include == FRAMES_GROUP else rule.include
            if target is None:
                continue
            inner = dict(env.values)
            env.values.update(rule.set)
            got, inner_phase = evaluate(refs, target, env, score, how if rule.reason is None else env.fill(rule.reason))
            env.values = inner
            if not got:
                continue
            out.extend(got)
            phase = inner_phase if inner_phase != "keep" else phase
        else:
            assert rule.scenario is not None
            reason = how if rule.reason is None else env.fill(rule.reason)
            out.append(Candidate(rule.scenario, score, reason, env.support(rule.support)))
        env.values["matched"] = True
        if rule.phase != "keep":
            phase = rule.phase
        if rule.stop:
            break
    env.values = saved
    return out, phase
