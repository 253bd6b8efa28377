"""The commands that print and end (diagnose, detect, verify, export, show) end on SIGTERM, SIGHUP
and SIGQUIT with the documented exit code (128 + n) and without a traceback, as on Ctrl+C.

A real child is signalled while it waits for a log on a pipe that the test keeps open; it is
signalled once ``/proc/PID/status`` shows that it catches the signal, so the case cannot race the
start-up. Every command goes through the same entry point; each is also checked in-process, with
the signal arriving while the command runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard import cli
from oomwizard.exitcodes import Exit

ROOT = Path(__file__).resolve().parents[2]
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
HANG = 60
SIGNALS = [(signal.SIGTERM, Exit.TERMINATED), (signal.SIGHUP, Exit.HANGUP), (signal.SIGQUIT, Exit.QUIT)]
IDS = [s.name for s, _ in SIGNALS]


def _catches(pid: int, signum: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(caught >> (signum - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize("command", [["diagnose", "-"], ["diagnose", "-", "--format", "json"],
                                     ["verify", "sampler-warmup", "-"]], ids=["diagnose", "json", "verify"])
@pytest.mark.parametrize(("signum", "code"), SIGNALS, ids=IDS)
def test_a_command_waiting_on_a_pipe_ends_with_128_plus_n(command: list[str], signum: int, code: int) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "oomwizard", *command], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        proc.stdin.write(DEMO_LOG.read_bytes()[:4000])  # the start of a log; the writer stays open
        proc.stdin.flush()
        while not _catches(proc.pid, signum):
            assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=HANG)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == code, err
    assert b"Traceback" not in out + err


@pytest.mark.parametrize("argv", [["diagnose", str(DEMO_LOG)], ["detect", "--format", "json"],
                                  ["verify", "sampler-warmup", str(DEMO_LOG)], ["show", "sampler-warmup"],
                                  ["export", "--format", "json"], ["scenarios"], ["lint"]],
                         ids=lambda a: a[0])
@pytest.mark.parametrize(("signum", "code"), SIGNALS, ids=IDS)
def test_every_command_unwinds_on_a_signal_mid_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                   argv: list[str], signum: int, code: int) -> None:
    real = cli.COMMANDS[argv[0]]

    def signalled(args: object) -> int:
        os.kill(os.getpid(), signum)  # delivered right here, in the middle of the command
        return real(args)

    monkeypatch.setitem(cli.COMMANDS, argv[0], signalled)
    before = signal.getsignal(signum)
    assert cli.main(argv) == code
    assert signal.getsignal(signum) == before  # the handler is the command's only
    assert "Traceback" not in capsys.readouterr().err


def test_a_signal_while_waiting_for_the_python_probe_stops_the_probe_too() -> None:
    import subprocess as sp
    import threading

    from oomwizard.facts.packages import finish_probe
    from oomwizard.signals import SignalExit, unwinding

    probe = sp.Popen(["sleep", "120"], stdout=sp.PIPE, stderr=sp.PIPE, text=True, start_new_session=True)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    with unwinding(), pytest.raises(SignalExit):
        timer.start()
        finish_probe(probe, "python", timeout=HANG)
    timer.join()
    assert probe.poll() == -signal.SIGKILL  # killed with its session, and reaped


class _SignalledOnSetName:
    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __set_name__(self, owner: type, name: str) -> None:
        os.kill(os.getpid(), self.signum)  # the handler raises here, inside class creation


@pytest.mark.parametrize(("signum", "code"), SIGNALS, ids=IDS)
def test_a_signal_whose_exception_is_wrapped_or_swallowed_still_sets_the_exit_code(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], signum: int, code: int) -> None:
    # A signal during an import that defines a dataclass: Python 3.11 wraps the handler's exception
    # in "RuntimeError: Error calling __set_name__", and code that imports a module inside
    # `except Exception` takes that for a failure and goes on; the run still ends as signalled.
    def swallowed(args: object) -> int:
        with contextlib.suppress(Exception):  # what a fallback import does
            type("Done", (), {"facts": _SignalledOnSetName(signum)})
        return Exit.NO_MATCH

    def wrapped(args: object) -> int:
        try:
            type("Done", (), {"facts": _SignalledOnSetName(signum)})
        except Exception as e:
            raise ValueError("import failed") from e
        return Exit.OK

    for command in (swallowed, wrapped):
        monkeypatch.setitem(cli.COMMANDS, "scenarios", command)
        assert cli.main(["scenarios"]) == code, command.__name__
        err = capsys.readouterr().err
        assert "internal error" not in err and "Traceback" not in err
