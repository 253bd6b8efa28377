"""Chinese outside the TUI is never wider than the terminal: wrapped by cells, choices too.

Run on a real pseudo-terminal of 60 and 80 columns, so the program sees the width as an operator's
would. Commands (``$ `` lines) are never wrapped, by design (they must paste whole), and a single
unbreakable token (a URL) keeps its line; every other line fits.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

import pytest
from ptyrun import run_pty

from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE
from oomwizard.kb.loader import get_kb
from oomwizard.text.cells import cell_len

COMMANDS = [
    ["show", "sampler-warmup", "--lang", "zh"],
    ["show", "cudagraph-capture", "--lang", "zh"],
    ["diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--lang", "zh"],
    ["verify", "sampler-warmup", str(DEMO_LOG), "--lang", "zh"],
    ["scenarios", "--lang", "zh"],
]


def too_wide(text: str, cols: int) -> list[str]:
    """Lines wider than the terminal, but for commands (kept whole to be copied: ``$ …``, or the
    same command again unprefixed at the end) and one unit longer than a line (after its list mark)."""
    lines = text.replace("\r\n", "\n").split("\n")
    commands = {line.lstrip()[2:] for line in lines if line.lstrip().startswith("$ ")}
    bad = []
    for line in lines:
        if line.lstrip().startswith("$ ") or line in commands:
            continue
        if re.fullmatch(r"(?:[-*•]|\d{1,3}[.)])?\s*\S+", line.strip()):
            continue
        if cell_len(line) > cols:
            bad.append(line)
    return bad


@pytest.mark.parametrize("cols", [60, 80])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]).replace(str(DEMO_LOG), "demo"))
def test_zh_output_fits_the_terminal(args: list[str], cols: int) -> None:
    code, out = run_pty(args, cols=cols)
    assert code in (0, 8), out[-2000:]
    text = out.decode("utf-8")
    assert any(cell_len(line) > len(line) for line in text.splitlines())  # Chinese really is there
    assert too_wide(text, cols) == []


def test_plain_mode_in_zh_at_60_columns_wraps_choices_instead_of_cutting_them() -> None:
    code, out = run_pty(["--plain", "--demo", "--lang", "zh"], cols=60, env={"TERM": "dumb"},
                        keys=b"\r" * 30, wait_for=b"1-")
    assert code == 0, out[-2000:]
    # Keys typed ahead are echoed before they are read, so the next prompt follows an answer's
    # prompt on the same line of the transcript; on a terminal the operator's Enter ends it.
    text = re.sub(r"(1-\d+(?: \[\d+\])?: |\[y/N\]: |\[[^\]\n]*\]: )", r"\1\n", out.decode("utf-8"))
    assert "“Capturing CUDA graphs”）" in " ".join(text.split())  # a long choice is wrapped whole, not cut
    assert too_wide(text, 60) == []


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plain_mode_menus_wrap_long_choices_on_a_real_terminal(tmp_path, lang: str) -> None:
    """questionary's arrow-key menu (a terminal that takes cursor movement): a choice longer than
    the line is wrapped under itself, whole, never cut, in a 60-column tmux pane."""
    import subprocess
    import time

    sock = str(tmp_path / "tmux.sock")
    cmd = f"{sys.executable} -m oomwizard --plain --demo --lang {lang}"
    env = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    env = {k: v for k, v in env.items() if not k.startswith("TMUX") and k not in ("COLUMNS", "LINES")}
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "60", "-y", "40", cmd],
                   check=True, env=env, cwd=str(DEMO_LOG.parents[2]))
    try:
        screen, before = "", None
        end = time.monotonic() + 60
        while time.monotonic() < end and not ("»" in screen and screen == before):  # the menu, fully drawn
            time.sleep(0.3)
            before = screen
            screen = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True, text=True).stdout
        assert "»" in screen, screen
        assert max(cell_len(line.rstrip()) for line in screen.splitlines()) <= 60
        shown = "".join(screen.split())  # wrapped lines joined (the zh labels wrap without spaces)
        labels = ["".join(c.label(lang).split()) for c in get_kb().questions["symptom"].choices]
        seen = [lab for lab in labels if lab[:12] in shown]
        assert len(seen) >= 5 and any(cell_len(lab) > 60 for lab in seen), seen
        assert [lab for lab in seen if lab not in shown] == []  # each whole, none cut
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
