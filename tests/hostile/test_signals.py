"""A signal ends both frontends with the terminal as it was before, and with 128 + the signal.

SIGHUP is what an SSH connection that drops sends, SIGTERM what ``kill`` sends. Each case starts
the wizard in a real terminal (a tmux pane), waits until it has taken the terminal over (alternate
screen and mouse reporting for the full-screen interface, a prompt with a hidden cursor for plain
mode), signals the process and reads back what the terminal was left in.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from panes import Pane, needs_tmux

pytestmark = pytest.mark.skipif(needs_tmux, reason="needs tmux")

CLEAN = "0 1 0"
"""Normal screen, cursor visible, no mouse reporting."""

CASES = [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]


@pytest.fixture
def pane_factory(tmp_path: Path) -> Iterator[object]:
    panes: list[Pane] = []

    def make(args: list[str]) -> Pane:
        folder = tmp_path / f"pane{len(panes)}"
        folder.mkdir()
        p = Pane(folder, args)
        panes.append(p)
        return p

    yield make
    for p in panes:
        p.close()


def _signal_when_ready(pane: Pane, ready: str, check: object, signum: int) -> None:
    pane.wait_for("the program to start", lambda: pane.program_pid() is not None)
    pane.wait_for(ready, check)  # type: ignore[arg-type]
    pid = pane.program_pid()
    assert pid is not None
    os.kill(pid, signum)


@pytest.mark.parametrize(("signum", "code"), CASES, ids=[s.name for s, _ in CASES])
def test_tui_restores_the_terminal_and_exits_128_plus_n(pane_factory, signum: int, code: int) -> None:
    pane = pane_factory(["--demo"])
    _signal_when_ready(
        pane,
        "the wizard to show the diagnosis with mouse reporting on",
        lambda: pane.flags() == "1 0 1" and "sampler" in pane.screen().lower(),
        signum,
    )
    assert pane.exit_code() == code, pane.screen()
    assert pane.flags() == CLEAN
    assert pane.stty_restored()
    assert "Traceback" not in pane.screen()


@pytest.mark.parametrize(("signum", "code"), CASES, ids=[s.name for s, _ in CASES])
def test_plain_mode_restores_the_terminal_and_exits_128_plus_n(pane_factory, signum: int, code: int) -> None:
    pane = pane_factory(["--plain", "--demo"])
    _signal_when_ready(
        pane,
        "the first question with the cursor hidden",
        lambda: pane.flags() == "0 0 0" and "?" in pane.screen(),
        signum,
    )
    assert pane.exit_code() == code, pane.screen()
    assert pane.flags() == CLEAN
    assert pane.stty_restored()
    assert "Traceback" not in pane.screen()


@pytest.mark.parametrize(("key", "code"), [("q", 0), ("C-c", 130)])
def test_tui_quits_while_the_log_read_is_stuck(pane_factory, tmp_path: Path, key: str, code: int) -> None:
    """A writer that sent one line and then went quiet: the read blocks for ever, q and Ctrl+C still quit."""
    fifo = tmp_path / "stalled-writer"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never closes
    try:
        os.write(writer, b"INFO 10-14 09:12:07 [api_server.py:1] vLLM API server version 0.11.0\n")
        machine = Path(__file__).parents[2] / "oomwizard" / "demo" / "machine.json"
        pane = pane_factory(["--log", str(fifo), "--machine", str(machine)])
        pane.wait_for("the reading screen", lambda: pane.flags() == "1 0 1" and "stalled-writer" in pane.screen())
        pane.tmux("send-keys", "-t", "w", key)
        assert pane.exit_code() == code, pane.screen()
        assert pane.flags() == CLEAN
        assert pane.stty_restored()
    finally:
        os.close(writer)


@pytest.mark.parametrize("plain", [False, True], ids=["tui", "plain"])
def test_wizard_refuses_a_log_on_stdin_when_stdin_is_the_terminal(pane_factory, plain: bool) -> None:
    pane = pane_factory(["--plain"] * plain + ["--log", "-"])
    assert pane.exit_code() == 4
    assert "the terminal the wizard reads keys from" in " ".join(pane.screen().split())
    assert pane.flags() == CLEAN


def test_tui_refuses_a_device_as_a_log_before_it_starts(pane_factory) -> None:
    """As ``diagnose`` and plain mode do: exit 4 with the reason, the terminal untouched."""
    machine = Path(__file__).parents[2] / "oomwizard" / "demo" / "machine.json"
    pane = pane_factory(["--log", "/dev/zero", "--machine", str(machine)])
    assert pane.exit_code() == 4
    assert "/dev/zero: it is a device" in " ".join(pane.screen().split())
    assert pane.flags() == CLEAN


def test_plain_mode_refuses_a_device_as_a_log(pane_factory) -> None:
    pane = pane_factory(["--plain", "--log", "/dev/zero"])
    assert pane.exit_code() == 4
    assert "/dev/zero: it is a device" in " ".join(pane.screen().split())
    assert pane.flags() == CLEAN
