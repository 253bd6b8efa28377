"""``TERM=dumb``: plain mode writes nothing but text: not one escape byte, through a real pty."""

from __future__ import annotations

import pytest
from ptyrun import run_pty


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_term_dumb_demo_to_the_fix_without_one_escape(lang: str) -> None:
    # Enter on every prompt: the suggestions, then no to saving and no to checking a new log.
    code, out = run_pty(["--demo", "--lang", lang], cols=80, env={"TERM": "dumb"}, keys=b"\r" * 30,
                        wait_for=b"1-")
    assert code == 0, out[-3000:].decode("utf-8", "replace")
    assert b"$ vllm serve" in out  # it got to the fix
    assert b"\x1b" not in out


def test_term_dumb_is_plain_even_without_plain_and_a_cancel_is_clean() -> None:
    code, out = run_pty(["--demo"], env={"TERM": "dumb"}, keys=b"\x03", wait_for=b"1-")
    assert code == 130
    assert b"cancelled" in out and b"\x1b" not in out


def test_no_color_still_prompts_but_without_colour() -> None:
    code, out = run_pty(["--plain", "--demo"], env={"TERM": "xterm-256color", "NO_COLOR": "1"}, keys=b"\x03",
                        wait_for=b"?")
    assert code == 130
    assert b"\x1b[3" not in out and b"\x1b[38;" not in out  # no foreground colours
