"""The repr scanner behind `non-default args: {...}` and `Namespace(...)`: brackets and quotes respected."""

from __future__ import annotations

from oomwizard.logs.args import _matching, split_top


def test_split_top_ignores_separators_inside_brackets_and_quotes() -> None:
    text = "'model': 'a,b', 'sizes': [1, 2, (3, 4)], 'cfg': {'k': \"x,}\"}, n=5"
    assert list(split_top(text)) == ["'model': 'a,b'", " 'sizes': [1, 2, (3, 4)]", " 'cfg': {'k': \"x,}\"}", " n=5"]


def test_matching_finds_the_closing_bracket_and_tolerates_escapes() -> None:
    text = "{'a': [1, {'b': 'it\\'s }'}], 'c': 2} trailing"
    assert text[: _matching(text, 0)] == "{'a': [1, {'b': 'it\\'s }'}], 'c': 2}"
    assert _matching("{'unclosed': [1, 2", 0) == len("{'unclosed': [1, 2")
