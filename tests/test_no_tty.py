"""Without a terminal the wizard must refuse at once, say why on stderr, and never load Textual.

Textual without a TTY writes escape codes into the pipe and spins (or crashes and exits 0), so the
check happens before anything heavy is imported. ``-X importtime`` lists every module the process
imported, which shows that neither Textual nor questionary was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_without_tty(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TERM", None)
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "oomwizard", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened either
        timeout=20,  # a hang (Textual spinning on a pipe) fails here instead of blocking the suite
    )


def imported_modules(stderr: str) -> set[str]:
    mods = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip())
    return mods


@pytest.mark.parametrize("args", [(), ("--plain",), ("--demo",), ("--log", "vllm.log", "--inline")])
def test_no_tty_exits_3_with_the_hint_and_without_loading_a_frontend(args: tuple[str, ...]) -> None:
    done = run_without_tty(*args)
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout == ""
    hint = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    text = "\n".join(hint)
    assert "no interactive terminal" in text
    assert "oomwizard diagnose" in text
    mods = imported_modules(done.stderr)
    assert "oomwizard.cli" in mods  # the import-time listing really covers the program
    frontends = sorted(m for m in mods if m.split(".")[0] in ("textual", "questionary", "prompt_toolkit", "rich"))
    assert frontends == []
    assert not any(m.startswith("oomwizard.tui") or m == "oomwizard.plain" for m in mods)
