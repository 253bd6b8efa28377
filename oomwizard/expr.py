"""A small, safe condition language for the decision tree (never ``eval``).

Examples::

    vllm_version in ">=0.18,<0.29" and model_runner == "v2"
    gpu_arch in ["hopper", "blackwell_dc"] or not known(gpu_arch)
    expandable_segments and tp > 1

Names are fact names. A comparison involving a fact nobody knows is *unknown* (``None``); ``and``,
``or`` and ``not`` follow three-valued logic, so an unknown fact never silently routes a user down
a branch meant for a known value. ``known(name)`` is always true or false. A version-typed value
compared with a string compares as versions; ``version in "<range>"`` tests a version range.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .versions import Version, VersionError, VersionSpec

Value = Any


class ExprError(ValueError):
    """A condition that does not parse; ``column`` is 1-based within the expression."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.column = column


_TOKEN_RE = re.compile(
    r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<number>-?\d+(?:\.\d+)?(?![\w.]))
  | (?P<op>==|!=|<=|>=|<|>|\(|\)|\[|\]|,)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "true", "false", "null"}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


def tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        m = _TOKEN_RE.match(source, pos)
        if not m or m.end() == pos:
            col = pos + len(source[pos:]) - len(source[pos:].lstrip()) + 1
            raise ExprError(f"unexpected character {source[col - 1]!r}", col)
        kind = m.lastgroup or ""
        text = m.group(kind)
        start = m.start(kind)
        if kind == "name" and text in _KEYWORDS:
            kind = "kw"
        tokens.append(Token(kind, text, start))
        pos = m.end()
    tokens.append(Token("end", "", len(source)))
    return tokens


# --- AST -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    def names(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class Literal(Node):
    value: Value


@dataclass(frozen=True)
class Name(Node):
    name: str

    def names(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True)
class ListLit(Node):
    items: tuple[Node, ...]

    def names(self) -> set[str]:
        return set().union(*(i.names() for i in self.items)) if self.items else set()


@dataclass(frozen=True)
class Known(Node):
    name: str

    def names(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True)
class Not(Node):
    operand: Node

    def names(self) -> set[str]:
        return self.operand.names()


@dataclass(frozen=True)
class BoolOp(Node):
    op: str
    operands: tuple[Node, ...]

    def names(self) -> set[str]:
        return set().union(*(o.names() for o in self.operands))


@dataclass(frozen=True)
class Compare(Node):
    op: str
    left: Node
    right: Node

    def names(self) -> set[str]:
        return self.left.names() | self.right.names()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def take(self, kind: str, text: str | None = None) -> Token | None:
        t = self.tok
        if t.kind == kind and (text is None or t.text == text):
            self.i += 1
            return t
        return None

    def expect(self, kind: str, text: str) -> Token:
        t = self.take(kind, text)
        if t is None:
            found = self.tok.text or "end of condition"
            raise ExprError(f"expected {text!r}, found {found!r}", self.tok.pos + 1)
        return t

    def parse(self) -> Node:
        if self.tok.kind == "end":
            raise ExprError("empty condition", 1)
        node = self.or_()
        if self.tok.kind != "end":
            raise ExprError(f"unexpected {self.tok.text!r}", self.tok.pos + 1)
        return node

    def or_(self) -> Node:
        items = [self.and_()]
        while self.take("kw", "or"):
            items.append(self.and_())
        return items[0] if len(items) == 1 else BoolOp("or", tuple(items))

    def and_(self) -> Node:
        items = [self.not_()]
        while self.take("kw", "and"):
            items.append(self.not_())
        return items[0] if len(items) == 1 else BoolOp("and", tuple(items))

    def not_(self) -> Node:
        if self.take("kw", "not"):
            return Not(self.not_())
        return self.compare()

    def compare(self) -> Node:
        left = self.operand()
        t = self.tok
        if t.kind == "op" and t.text in ("==", "!=", "<", "<=", ">", ">="):
            self.i += 1
            return Compare(t.text, left, self.operand())
        if self.take("kw", "in"):
            return Compare("in", left, self.operand())
        if t.kind == "kw" and t.text == "not" and self.tokens[self.i + 1].text == "in":
            self.i += 2
            return Not(Compare("in", left, self.operand()))
        return left

    def operand(self) -> Node:
        t = self.tok
        if t.kind == "string":
            self.i += 1
            return Literal(re.sub(r"\\(.)", r"\1", t.text[1:-1]))
        if t.kind == "number":
            self.i += 1
            return Literal(float(t.text) if "." in t.text else int(t.text))
        if t.kind == "kw" and t.text in ("true", "false", "null"):
            self.i += 1
            return Literal({"true": True, "false": False, "null": None}[t.text])
        if t.kind == "name":
            self.i += 1
            if t.text == "known" and self.take("op", "("):
                arg = self.take("name")
                if arg is None:
                    raise ExprError("known() takes a fact name", self.tok.pos + 1)
                self.expect("op", ")")
                return Known(arg.text)
            return Name(t.text)
        if self.take("op", "("):
            node = self.or_()
            self.expect("op", ")")
            return node
        if self.take("op", "["):
            items: list[Node] = []
            if not self.take("op", "]"):
                items.append(self.operand())
                while self.take("op", ","):
                    items.append(self.operand())
                self.expect("op", "]")
            return ListLit(tuple(items))
        found = t.text or "end of condition"
        raise ExprError(f"expected a value, found {found!r}", t.pos + 1)


@dataclass(frozen=True)
class Condition:
    """A parsed condition, kept with its source text for error messages and display."""

    source: str
    tree: Node

    @classmethod
    def parse(cls, source: str) -> Condition:
        return cls(source, _Parser(source).parse())

    def names(self) -> set[str]:
        return self.tree.names()

    def evaluate(self, lookup: Callable[[str], Value] | Mapping[str, Value]) -> bool | None:
        """True, False, or None when the answer depends on a fact nobody knows."""
        get = lookup.get if isinstance(lookup, Mapping) else lookup
        result = _eval(self.tree, get)
        if result is None or isinstance(result, bool):
            return result
        return bool(result)

    def __str__(self) -> str:
        return self.source


_MISSING = object()


def _eval(node: Node, get: Callable[[str], Value]) -> Value:
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, Name):
        return get(node.name)
    if isinstance(node, Known):
        return get(node.name) is not None
    if isinstance(node, ListLit):
        return [_eval(i, get) for i in node.items]
    if isinstance(node, Not):
        v = _eval(node.operand, get)
        return None if v is None else not v
    if isinstance(node, BoolOp):
        values = [_eval(o, get) for o in node.operands]
        truth = [None if v is None else bool(v) for v in values]
        if node.op == "and":
            if False in truth:
                return False
            return None if None in truth else True
        if True in truth:
            return True
        return None if None in truth else False
    if isinstance(node, Compare):
        left, right = _eval(node.left, get), _eval(node.right, get)
        if left is None or right is None:
            return None
        return _compare(node.op, left, right)
    raise TypeError(f"unknown node {node!r}")  # pragma: no cover


def _coerce_pair(left: Value, right: Value) -> tuple[Value, Value]:
    if isinstance(left, Version) or isinstance(right, Version):
        try:
            return Version.parse(left), Version.parse(right)
        except VersionError:
            return str(left), str(right)
    if isinstance(left, bool) or isinstance(right, bool):
        return left, right
    # A number against text that is not a number stays mismatched: == is false, an order is unknown
    # (comparing "many" > "1" as strings would invent an answer).
    if isinstance(left, (int, float)) and isinstance(right, str):
        try:
            return left, float(right)
        except ValueError:
            return left, right
    if isinstance(right, (int, float)) and isinstance(left, str):
        try:
            return float(left), right
        except ValueError:
            return left, right
    return left, right


def _compare(op: str, left: Value, right: Value) -> bool | None:
    if op == "in":
        if isinstance(right, str) and isinstance(left, Version):
            try:
                return VersionSpec.parse(right).contains(left)
            except VersionError:
                return None  # a malformed range decides nothing (lint reports it)
        if isinstance(right, list):
            return any(_compare("==", left, r) for r in right if r is not None)
        if isinstance(right, str):
            return str(left) in right
        return None
    a, b = _coerce_pair(left, right)
    try:
        return bool({
            "==": lambda: a == b,
            "!=": lambda: a != b,
            "<": lambda: a < b,
            "<=": lambda: a <= b,
            ">": lambda: a > b,
            ">=": lambda: a >= b,
        }[op]())
    except TypeError:
        return None
