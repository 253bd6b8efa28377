"""What a message's numbers and words mean as facts, read from the rules' ``facts:``.

A message rule names, per regex group, the facts it carries: a plain fact name (the group's text,
converted to the fact's type), or a mapping with a ``unit`` (vLLM prints sizes in GiB; the fact
holds bytes) or ``values`` (the group's text, by case-insensitive prefix, to a fact value, with a
``default`` when none fits). A group may carry several facts. Each rule's ``fact_examples`` must
give the facts they state; they are checked here when the rules are loaded for ``lint`` (or from a
knowledge base of the operator's own), so a mapping is reported with its file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..facts.catalog import CATALOG, FactValueError, coerce
from ..kb.yamlsrc import LDict, LList
from ..text.units import GIB, KIB, MIB
from .rules_read import _Reader

__all__ = ["UNITS", "MessageFact", "read_fact_examples", "read_facts", "values_of"]

UNITS = {"B": 1, "KiB": KIB, "MiB": MIB, "GiB": GIB, "GB": 1000 ** 3, "MB": 1000 ** 2}
"""Units a message may print a size in; the fact holds bytes."""


@dataclass(frozen=True)
class MessageFact:
    """One fact a regex group carries."""

    group: str
    fact: str
    unit: int | None = None
    """Bytes per unit of the printed number (``GiB``: 2**30); a size of zero says nothing."""
    values: tuple[tuple[str, str], ...] = ()
    """``(prefix, value)``: the group's text, by case-insensitive prefix, to the fact's value."""
    default: str | None = None
    """The value when the group is absent or no prefix fits (``values`` only)."""

    def value(self, raw: str | None) -> Any:
        """The raw value to record for the group's text ``raw`` (None: the group did not match)."""
        if self.values:
            low = (raw or "").lower()
            return next((v for p, v in self.values if low.startswith(p.lower())), self.default)
        if raw is None:
            return None
        text = raw.replace(",", "")
        if self.unit is None:
            return text
        try:
            n = round(float(text) * self.unit)
        except ValueError:
            return None
        return n if n > 0 else None


def values_of(facts: tuple[MessageFact, ...], groups: dict[str, str], only: set[str] | None = None) -> list[tuple[str, Any]]:
    """``(fact, raw value)`` for each fact the matched ``groups`` carry (``only``: those groups)."""
    out = []
    for mf in facts:
        if only is not None and mf.group not in only:
            continue
        raw = groups.get(mf.group)
        if raw is None and not (mf.values and mf.default is not None):
            continue
        v = mf.value(raw)
        if v is not None:
            out.append((mf.fact, v))
    return out


def _one(r: _Reader, group: str, spec: Any, line: int, what: str) -> MessageFact | None:
    if isinstance(spec, str):
        if spec not in CATALOG:
            r.err(line, f"{what}.facts: unknown fact {spec!r}")
            return None
        return MessageFact(group, spec)
    if not r.keys(spec, line, {"fact", "unit", "values", "default"}, {"fact"}, f"{what}.facts.{group}"):
        return None
    fact = spec["fact"]
    if fact not in CATALOG:
        r.err(spec.line_of("fact"), f"{what}.facts: unknown fact {fact!r}")
        return None
    unit = spec.get("unit")
    if unit is not None and unit not in UNITS:
        r.err(spec.line_of("unit"), f"{what}.facts.{group}: unknown unit {unit!r} (one of {', '.join(UNITS)})")
        return None
    values = spec.get("values")
    pairs: list[tuple[str, str]] = []
    if values is not None:
        if not isinstance(values, LDict) or not values:
            r.err(spec.line_of("values"), f"{what}.facts.{group}.values: expected prefix: value")
            return None
        for prefix, v in values.items():
            if _bad_value(fact, v):
                r.err(values.line_of(prefix), f"{what}.facts.{group}: {v!r} is no value of {fact}")
                return None
            pairs.append((str(prefix), str(v)))
    default = spec.get("default")
    if default is not None and (values is None or _bad_value(fact, default)):
        r.err(spec.line_of("default"), f"{what}.facts.{group}.default: needs values, and a value of {fact}")
        return None
    if unit is not None and values is not None:
        r.err(line, f"{what}.facts.{group}: unit and values exclude each other")
        return None
    return MessageFact(group, str(fact), UNITS[unit] if unit else None, tuple(pairs),
                       None if default is None else str(default))


def _bad_value(fact: str, v: Any) -> bool:
    try:
        return coerce(fact, v) is None
    except FactValueError:
        return True


def read_facts(r: _Reader, d: LDict, pattern: re.Pattern[str] | None, what: str) -> tuple[MessageFact, ...]:
    """``facts:`` of a rule: group -> fact, a ``{fact, unit | values}`` mapping, or a list of them."""
    facts = d.get("facts")
    if facts is None:
        return ()
    if not isinstance(facts, LDict):
        r.err(d.line_of("facts"), f"{what}.facts: expected group: fact")
        return ()
    out: list[MessageFact] = []
    for group, spec in facts.items():
        line = facts.line_of(group)
        if pattern is not None and group not in pattern.groupindex:
            r.err(line, f"{what}.facts: the pattern has no group {group!r}")
        specs = list(spec) if isinstance(spec, LList) else [spec]
        for one in specs:
            mf = _one(r, str(group), one, line, what)
            if mf is not None:
                out.append(mf)
    return tuple(out)


def read_fact_examples(r: _Reader, d: LDict, pattern: re.Pattern[str] | None, facts: tuple[MessageFact, ...],
                       what: str) -> None:
    """``fact_examples:``: lines of the message and the facts each must give, checked here (not
    for the program's own rules read lazily: lint has checked them)."""
    if r.lazy:
        return
    items = r.seq(d, "fact_examples", what)
    for i, ex in enumerate(items):
        line = items.line_of(i)
        if not r.keys(ex, line, {"text", "facts"}, {"text", "facts"}, f"{what}.fact_examples") or pattern is None:
            continue
        m = pattern.search(str(ex["text"]))
        if m is None:
            r.err(line, f"{what}.fact_examples: the text does not match the pattern")
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        got: dict[str, Any] = {}
        for fact, raw in values_of(facts, groups):
            try:
                got[fact] = coerce(fact, raw)
            except FactValueError:
                got[fact] = f"<not a {fact}: {raw!r}>"
        want = ex["facts"]
        if not isinstance(want, LDict):
            r.err(ex.line_of("facts"), f"{what}.fact_examples: expected fact: value")
            continue
        for fact, value in want.items():
            try:
                expected = coerce(fact, value) if fact in CATALOG else value
            except FactValueError:
                expected = value
            if fact not in CATALOG or got.get(fact) != expected:
                r.err(want.line_of(fact), f"{what}.fact_examples: {fact} reads {got.get(fact)!r}, expected {value!r}")
        for fact in set(got) - set(want):
            r.err(ex.line_of("facts"), f"{what}.fact_examples: also gives {fact}={got[fact]!r}, not listed")
