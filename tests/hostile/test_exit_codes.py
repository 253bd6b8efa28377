"""The README's exit-code table and :class:`~oomwizard.exitcodes.Exit` list the same codes."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from oomwizard.exitcodes import SIGNAL_EXITS, Exit

README = Path(__file__).resolve().parents[2] / "README.md"


def _table() -> dict[int, str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| (.+) \|$", section, re.M)}


def test_every_exit_code_is_documented_and_every_documented_code_exists() -> None:
    assert sorted(_table()) == sorted(int(e) for e in Exit)


def test_each_signal_code_is_128_plus_the_signal_and_documented_as_that_signal() -> None:
    table = _table()
    for name, code in SIGNAL_EXITS.items():
        assert code == 128 + getattr(signal, name)
        assert name in table[code]
