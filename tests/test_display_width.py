"""Chinese outside the TUI is never wider than the terminal: wrapped by cells, choices cut with "…".

Run on a real pseudo-terminal of 60 and 80 columns, so the program sees the width as an operator's
would. Commands (``$ `` lines) are never wrapped, by design (they must paste whole), and a single
unbreakable token (a URL) keeps its line; every other line fits.
"""

from __future__ import annotations

import re

import pytest
from ptyrun import run_pty

from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE
from oomwizard.text.cells import cell_len

COMMANDS = [
    ["show", "sampler-warmup", "--lang", "zh"],
    ["show", "cudagraph-capture", "--lang", "zh"],
    ["diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--lang", "zh"],
    ["verify", "sampler-warmup", str(DEMO_LOG), "--lang", "zh"],
    ["scenarios", "--lang", "zh"],
]


def too_wide(text: str, cols: int) -> list[str]:
    bad = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("$ ") or " " not in line.strip():
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
