import pytest

from oomwizard import __version__
from oomwizard.envelope import envelope, kind_of, schema_id, schema_text


def test_envelope_puts_schema_and_tool_first_and_keeps_them():
    doc = envelope("diagnose", {"schema": "x", "tool": "y", "failures": []})
    assert list(doc)[:2] == ["schema", "tool"]
    assert doc["schema"] == "oomwizard/diagnose/v1"
    assert doc["tool"] == {"name": "oomwizard", "version": __version__}
    assert doc["failures"] == []


@pytest.mark.parametrize("doc,expected", [
    ({"schema": "oomwizard/plan/v2"}, ("plan", 2)),
    ({"schema": "oomwizard/a/b/v1"}, ("a/b", 1)),
    ({"schema": "other/plan/v1"}, None),
    ({"schema": "oomwizard/plan"}, None),
    ({"schema": 3}, None),
    ([], None),
])
def test_kind_of(doc, expected):
    assert kind_of(doc) == expected


def test_unknown_schema_is_an_error():
    with pytest.raises(FileNotFoundError):
        schema_text("no-such-kind")
    assert schema_id("x", 3) == "oomwizard/x/v3"
