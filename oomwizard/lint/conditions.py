"""Conditions that parse but can never do what their author meant.

``gpu_arch == "hoper"`` is valid syntax and simply never true, so the branch it guards is dead and
nobody notices. Every comparison is held against what its fact can actually be: an enum's values,
true/false for a bool, scenario ids for ``diagnosis``, the choice ids of the questions that set a
fact, a well-formed and non-empty version range for a version.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..expr import BoolOp, Compare, Condition, ListLit, Literal, Name, Node, Not
from ..facts.catalog import CATALOG, FactSpec
from ..kb.model import KnowledgeBase
from ..versions import Version, VersionError, VersionSpec

_BIG = 10**6
_NUMERIC = ("int", "float", "bytes")


def range_is_empty(spec: VersionSpec) -> bool:
    """True when no version at all satisfies every clause (``>=0.11,<0.9``)."""
    if spec.is_any:
        return False
    points = {(0, 0, 0), (_BIG, 0, 0)}
    for c in spec.clauses:
        a, b, z = c.version.release
        points |= {(a, b, z), (a, b, z + 1), (a, b + 1, 0), (a + 1, 0, 0)}
        if z:
            points.add((a, b, z - 1))
        if b:
            points.add((a, b - 1, _BIG))
        if a:
            points.add((a - 1, _BIG, _BIG))
    return not any(
        all(c.matches(Version(p, ".".join(map(str, p)))) for c in spec.clauses) for p in points
    )


def parse_range(text: str) -> tuple[VersionSpec | None, str | None]:
    """The range, or why it is unusable (malformed, or empty)."""
    try:
        spec = VersionSpec.parse(text)
    except VersionError as e:
        return None, str(e)
    if range_is_empty(spec):
        return spec, f"version range {text!r} is empty: no version satisfies {' and '.join(map(str, spec.clauses))}"
    return spec, None


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    if isinstance(node, Not):
        yield from _nodes(node.operand)
    elif isinstance(node, BoolOp):
        for o in node.operands:
            yield from _nodes(o)
    elif isinstance(node, Compare):
        yield from _nodes(node.left)
        yield from _nodes(node.right)
    elif isinstance(node, ListLit):
        for i in node.items:
            yield from _nodes(i)


def fact_domains(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Values a ``str`` fact can take when only the tree sets it: the choice ids of its questions."""
    out: dict[str, set[str]] = {}
    for q in kb.questions.values():
        spec = CATALOG.get(q.fact)
        if q.kind == "choice" and spec is not None and spec.type == "str":
            out.setdefault(q.fact, set()).update(c.id for c in q.choices if c.id != "unknown")
    if kb.scenarios:
        out["diagnosis"] = set(kb.scenarios)
    return out


def condition_problems(cond: Condition, domains: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(severity, message) for every comparison in ``cond`` that cannot match as written."""
    out: list[tuple[str, str]] = []
    for node in _nodes(cond.tree):
        if not isinstance(node, Compare):
            continue
        for name, other, flipped in ((node.left, node.right, False), (node.right, node.left, True)):
            if isinstance(name, Name) and isinstance(other, (Literal, ListLit)):
                out.extend(_compare_problems(name.name, node.op, other, flipped, cond, domains))
    return out


def _literals(node: Literal | ListLit) -> list[object]:
    if isinstance(node, Literal):
        return [node.value]
    return [i.value for i in node.items if isinstance(i, Literal)]


def _compare_problems(
    fact: str, op: str, other: Literal | ListLit, flipped: bool, cond: Condition, domains: dict[str, set[str]]
) -> Iterator[tuple[str, str]]:
    spec = CATALOG.get(fact)
    if spec is None:
        return  # the loader reports unknown names
    src = cond.source
    if op == "in" and flipped:
        yield "warning", f"condition {src!r}: a value 'in' the fact {fact!r} is a substring test; compare with == instead"
        return
    range_text = other.value if op == "in" and isinstance(other, Literal) and isinstance(other.value, str) else None
    if spec.type == "version":
        yield from _version_problems(fact, op, other, range_text, src)
    elif range_text is not None:
        yield "warning", f"condition {src!r}: {fact!r} is not a version, so 'in \"…\"' is a substring test; use a list"
    else:
        yield from _value_problems(spec, _literals(other), src, domains)


def _version_problems(fact: str, op: str, other: Literal | ListLit, range_text: str | None, src: str) -> Iterator[tuple[str, str]]:
    if range_text is not None:
        _, why = parse_range(range_text)
        if why:
            yield "error", f"condition {src!r}: {why}"
        return
    for v in _literals(other):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            yield "error", f"condition {src!r}: quote versions ({fact} {op} \"{v}\"); as a number 0.10 reads as 0.1"
        elif not isinstance(v, str) or Version.try_parse(v) is None:
            yield "error", f"condition {src!r}: {v!r} is not a version"


def _value_problems(spec: FactSpec, values: list[Any], src: str, domains: dict[str, set[str]]) -> Iterator[tuple[str, str]]:
    """Literal values a fact of this type can never equal."""
    fact = spec.name
    if spec.type == "bool":
        for v in values:
            if not isinstance(v, bool):
                yield "error", f"condition {src!r}: {fact!r} is yes/no; compare it with true or false, not {v!r}"
    elif spec.type in _NUMERIC:
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                yield "error", f"condition {src!r}: {fact!r} is a number ({spec.type}); {v!r} never equals it"
    elif spec.type == "enum":
        for v in values:
            if v not in spec.values:
                yield "error", f"condition {src!r}: {v!r} is not a value of {fact!r} ({', '.join(spec.values)}), so this never matches"
    elif spec.type == "str" and fact in domains:
        severity = "error" if fact == "diagnosis" else "warning"
        what = "scenario ids" if fact == "diagnosis" else "choices of the questions that set it"
        for v in values:
            if v not in domains[fact]:
                yield severity, f"condition {src!r}: {v!r} is not one of the {what} ({', '.join(sorted(domains[fact]))})"
