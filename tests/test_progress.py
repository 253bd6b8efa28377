"""The progress line: only on a terminal, rewritten in place, cleared at the end, input cleaned."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oomwizard import progress
from oomwizard.progress import ProgressLine
from oomwizard.text.output import safe_stream


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_on_a_pipe_or_a_file() -> None:
    out = io.StringIO()
    line = ProgressLine("vllm.log", stream=out)
    line.start -= 10
    line(1 << 20, 4 << 20)
    line.clear()
    assert out.getvalue() == ""


def test_on_a_terminal_bytes_share_and_time_left_then_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    tty = _Tty()
    line = ProgressLine("vllm.log", stream=safe_stream(tty))  # the output boundary would escape ESC
    line.start -= 10
    line(256 << 20, 1 << 30)
    shown = tty.getvalue()
    assert shown.startswith("\r\x1b[2K") and "vllm.log: 256 MiB of 1,024 MiB (25 %), about 30 s left" in shown
    line.clear()
    assert tty.getvalue().endswith("\r\x1b[2K")


def test_nothing_on_a_dumb_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    tty = _Tty()
    line = ProgressLine("vllm.log", stream=tty)
    line.start -= 10
    line(256 << 20, 1 << 30)
    line.clear()
    assert tty.getvalue() == ""


def test_a_short_read_shows_nothing_and_a_hostile_name_is_cleaned() -> None:
    tty = _Tty()
    line = ProgressLine("evil\x1b]0;owned\x07.log", stream=tty)
    line(1, 2)  # within the first half second: nothing
    assert tty.getvalue() == ""
    line.start -= 10
    line(1 << 20, None)
    assert "\x1b]0" not in tty.getvalue() and "\x07" not in tty.getvalue()
    assert progress.ui("progress.unknown", "zh", name="x", done="1 MiB") == "正在读取 x：1 MiB"


@pytest.mark.slow
def test_cli_draws_on_a_terminal_and_leaves_stdout_clean(tmp_path: Path) -> None:
    """``diagnose`` with stderr on a pseudo-terminal: the line is drawn there, erased at the end,
    and stdout (a pipe) holds the diagnosis alone. Slow: a 32 MiB log read by the slowest engine
    (the tests above draw the line in-process)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import gen_log
    finally:
        sys.path.pop(0)
    log = tmp_path / "big.log"
    gen_log.write(str(log), 32 << 20)  # with the re engine, seconds of reading even on a fast machine: many times DELAY_S
    leader, follower = pty.openpty()
    env = {**os.environ, "OOMWIZARD_SCANNER": "re", "TERM": "xterm-256color"}  # the slowest engine: the read lasts long enough
    proc = subprocess.Popen([sys.executable, "-m", "oomwizard", "diagnose", str(log)], stdout=subprocess.PIPE,
                            stderr=follower, env=env)
    os.close(follower)
    seen = b""
    end = time.monotonic() + 120
    while time.monotonic() < end:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    assert b"reading " in seen and b"MiB of " in seen and b"\x1b[2K" in seen
    assert b"\x1b" not in out and b"reading " not in out
