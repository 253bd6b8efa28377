"""The tree's condition language: parsing, errors with columns, and three-valued evaluation."""

from __future__ import annotations

import pytest

from oomwizard.expr import Condition, ExprError, tokenize
from oomwizard.versions import Version

V = Version.parse


def ev(src: str, **facts: object) -> bool | None:
    return Condition.parse(src).evaluate(facts)


def test_tokens() -> None:
    kinds = [(t.kind, t.text) for t in tokenize('a >= -1.5 and b in ["x", \'y\'] or not known(c)')]
    assert kinds == [
        ("name", "a"), ("op", ">="), ("number", "-1.5"), ("kw", "and"), ("name", "b"), ("kw", "in"), ("op", "["),
        ("string", '"x"'), ("op", ","), ("string", "'y'"), ("op", "]"), ("kw", "or"), ("kw", "not"), ("name", "known"),
        ("op", "("), ("name", "c"), ("op", ")"), ("end", ""),
    ]


@pytest.mark.parametrize(
    ("src", "facts", "expected"),
    [
        ('vllm_version in ">=0.18,<0.29" and model_runner == "v2"', {"vllm_version": V("0.20.0"), "model_runner": "v2"}, True),
        ('vllm_version in ">=0.18,<0.29"', {"vllm_version": V("0.29.0")}, False),
        ('vllm_version in ">=0.18,<0.29"', {"vllm_version": V("0.28.1rc2")}, True),
        ('vllm_version >= "0.11"', {"vllm_version": V("0.11.0rc1")}, True),
        ('vllm_version == "0.11"', {"vllm_version": V("0.11.0")}, True),
        ('vllm_version < "0.9"', {"vllm_version": V("0.10.0")}, False),
        ('vllm_version in ["0.11.0", "0.11.1"]', {"vllm_version": V("0.11.1")}, True),
        ('gpu_arch in ["hopper", "ada"]', {"gpu_arch": "ada"}, True),
        ('gpu_arch not in ["hopper"]', {"gpu_arch": "ampere"}, True),
        ('gpu_arch != "hopper"', {"gpu_arch": "hopper"}, False),
        ("tp > 1", {"tp": 2}, True),
        ('tp > "1"', {"tp": 2}, True),
        ("tp >= 2.5", {"tp": 2}, False),
        ("x == -1", {"x": -1}, True),
        ("is_moe == false", {"is_moe": False}, True),
        ("is_moe == true", {"is_moe": False}, False),
        ("flag", {"flag": True}, True),
        ("expandable_segments and tp > 1", {"expandable_segments": True, "tp": 4}, True),
        ('x == "a\\"b"', {"x": 'a"b'}, True),
        ("(a == 1 or b == 2) and c == 3", {"a": 1, "c": 3}, True),
        ("not (a == 1)", {"a": 2}, True),
        ('name == "x"', {"name": "y"}, False),
    ],
)
def test_evaluate(src: str, facts: dict[str, object], expected: bool) -> None:
    assert Condition.parse(src).evaluate(facts) is expected


def test_unknown_facts_give_unknown_not_false() -> None:
    assert ev('gpu_arch == "hopper"') is None
    assert ev('gpu_arch != "hopper"') is None
    assert ev('gpu_arch not in ["hopper"]') is None
    assert ev("not flag") is None
    assert ev("a == 1 and b == 2", a=1) is None
    assert ev("a == 1 and b == 2", a=2) is False  # false whatever b is
    assert ev("a == 1 or b == 2", a=1) is True  # true whatever b is
    assert ev("a == 1 or b == 2", a=2) is None
    assert ev("known(a)") is False and ev("known(a)", a=0) is True
    assert ev("not known(a)") is True


def test_mismatched_types_decide_nothing() -> None:
    assert ev("tp > 1", tp="many") is None
    assert ev("tp == 1", tp="many") is False
    assert ev('tp == "2"', tp=2) is True
    assert ev('vllm_version in ">=0.1x"', vllm_version=V("0.11.0")) is None
    assert ev("x < 1", x=[1]) is None


def test_lookup_may_be_a_function() -> None:
    assert Condition.parse("a == 1").evaluate(lambda name: {"a": 1}.get(name)) is True


def test_names_and_source() -> None:
    c = Condition.parse('a == 1 and (b in [c, "x"] or not known(d))')
    assert c.names() == {"a", "b", "c", "d"}
    assert str(c) == 'a == 1 and (b in [c, "x"] or not known(d))'


@pytest.mark.parametrize(
    ("src", "message", "column"),
    [
        ("a ==", "expected a value", 5),
        ("(a", "expected ')'", 3),
        ("a == b c", "unexpected 'c'", 8),
        ("", "empty condition", 1),
        ("   ", "empty condition", 1),
        ("known()", "known() takes a fact name", 7),
        ("a @ b", "unexpected character '@'", 3),
        ("a in", "expected a value", 5),
        ("[1,", "expected a value", 4),
        ("a == 'open", "unexpected character", 6),
    ],
)
def test_errors_carry_a_column(src: str, message: str, column: int) -> None:
    with pytest.raises(ExprError) as e:
        Condition.parse(src)
    assert message in str(e.value)
    assert e.value.column == column


def test_never_evaluates_python() -> None:
    with pytest.raises(ExprError):
        Condition.parse("__import__('os').system('true')")
