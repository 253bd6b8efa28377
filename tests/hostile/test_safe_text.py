"""The terminal sanitiser and the JSON writer on their own."""

from __future__ import annotations

import json

from oomwizard.text.safe_text import json_dumps, printable


def test_an_unterminated_osc_hides_nothing_after_it() -> None:
    line = "before \x1b]0;no terminator here\x9d and this too: Tried to allocate 501.00 MiB"
    shown = printable(line)
    assert "Tried to allocate 501.00 MiB" in shown and "\x1b" not in shown and "\x9d" not in shown


def test_json_dumps_escapes_what_json_leaves_raw() -> None:
    s = json_dumps({"k": "a\u009bb\u202ec\u2066d\U000e0041e\x7f", "zh": "显存不足"}, indent=None)
    assert s == '{"k": "a\\u009bb\\u202ec\\u2066d\\udb40\\udc41e\\u007f", "zh": "显存不足"}'
    assert json.loads(s)["k"] == "a\u009bb\u202ec\u2066d\U000e0041e\x7f"
