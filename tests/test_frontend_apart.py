"""The wizard's first log read in a child process: the same diagnosis, the same errors, and the
wizard's own read whenever the child gives no answer."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oomwizard.frontend import apart
from oomwizard.frontend.apart import Apart, start, with_child
from oomwizard.frontend.inputs import InputProblem, _diagnose_paths, default_sources
from oomwizard.frontend.options import DEMO_LOG, LaunchOptions

LOGS = Path(__file__).parent / "logs"
SOME = [str(DEMO_LOG), *(str(p) for p in sorted(LOGS.glob("*.log"))[::9])]


@pytest.fixture(autouse=True)
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apart, "cpus", lambda: 2)


def _child_of(code: str) -> Apart:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    return Apart(["x.log"], proc)


def _own_reads(calls: list[list[str]]):
    def own(paths, progress=None):
        calls.append(list(paths))
        return "own diagnosis"
    return own


@pytest.mark.parametrize("log", SOME, ids=lambda p: Path(p).name)
def test_the_child_gives_the_diagnosis_the_wizard_would(log: str) -> None:
    child = start(LaunchOptions(logs=[log]))
    assert child is not None
    got = with_child(default_sources(), child).diagnose_paths([log], None)
    assert got == _diagnose_paths([log])


def test_two_logs_read_together() -> None:
    logs = SOME[:2]
    child = start(LaunchOptions(logs=logs))
    assert child is not None
    assert with_child(default_sources(), child).diagnose_paths(logs, None) == _diagnose_paths(logs)


def test_an_input_the_reader_refuses_is_the_same_problem(tmp_path: Path) -> None:
    """A directory is no log: the child's refusal reaches the wizard as the same message."""
    with pytest.raises(InputProblem) as own:
        _diagnose_paths([str(tmp_path)])
    child = start(LaunchOptions(logs=[str(tmp_path)]))
    assert child is not None
    with pytest.raises(InputProblem) as got:
        with_child(default_sources(), child).diagnose_paths([str(tmp_path)], None)
    assert got.value.text == own.value.text


@pytest.mark.parametrize("code", [
    "import sys; sys.exit(1)",                                   # died before answering
    "import sys; sys.stdout.buffer.write(b'not a frame at all'); sys.stdout.flush()",
    "import struct, sys; sys.stdout.buffer.write(struct.pack('<cQ', b'R', 5) + b'12345')",  # not a pickle
    "import struct, sys; sys.stdout.buffer.write(struct.pack('<cQ', b'Z', 0))",              # unknown frame
])
def test_a_child_without_an_answer_leaves_the_read_to_the_wizard(code: str) -> None:
    calls: list[list[str]] = []
    base = default_sources()
    base.diagnose_paths = _own_reads(calls)
    sources = with_child(base, _child_of(code))
    assert sources.diagnose_paths(["x.log"], None) == "own diagnosis"
    assert calls == [["x.log"]]


def test_progress_frames_reach_the_screen_then_the_diagnosis() -> None:
    diag = _diagnose_paths([str(DEMO_LOG)])
    blob = pickle.dumps(diag)
    code = (
        "import struct, sys\n"
        "from oomwizard.frontend.apart import _send, _PROGRESS\n"
        "out = sys.stdout.buffer\n"
        "_send(out, b'P', _PROGRESS.pack(1024, 4096))\n"
        "_send(out, b'P', _PROGRESS.pack(2048, -1))\n"
        f"_send(out, b'R', {blob!r})\n"
    )
    seen: list[tuple[int, int | None]] = []
    assert _child_of(code).result(lambda done, total: seen.append((done, total))) == diag
    assert seen == [(1024, 4096), (2048, None)]


def test_the_child_reads_once_then_the_wizard_reads_again() -> None:
    calls: list[list[str]] = []
    base = default_sources()
    base.diagnose_paths = _own_reads(calls)
    child = start(LaunchOptions(logs=[str(DEMO_LOG)]))
    sources = with_child(base, child)
    assert sources.diagnose_paths([str(DEMO_LOG)], None).best is not None   # the child's
    assert calls == []
    assert sources.diagnose_paths([str(DEMO_LOG)], None) == "own diagnosis"  # read again: the wizard's
    assert sources.diagnose_paths(["other.log"], None) == "own diagnosis"
    assert calls == [[str(DEMO_LOG)], ["other.log"]]


def test_another_log_first_is_read_by_the_wizard_and_the_child_is_not_waited_for() -> None:
    calls: list[list[str]] = []
    base = default_sources()
    base.diagnose_paths = _own_reads(calls)
    sources = with_child(base, start(LaunchOptions(logs=[str(DEMO_LOG)])))
    assert sources.diagnose_paths(["pasted.log"], None) == "own diagnosis"
    assert calls == [["pasted.log"]]


def test_closing_ends_a_child_still_reading() -> None:
    child = _child_of("import time; time.sleep(60)")
    t = time.monotonic()
    child.close()
    assert child._proc.poll() is not None
    assert time.monotonic() - t < 5


def test_the_demo_is_read_apart() -> None:
    child = start(LaunchOptions(demo=True))
    assert child is not None and child.paths == [str(DEMO_LOG)]
    child.close()


@pytest.mark.parametrize("opts", [
    LaunchOptions(),                                        # no log: the welcome screen
    LaunchOptions(logs=["-"]),                              # standard input is read once
    LaunchOptions(logs=[str(DEMO_LOG)], plain=True),        # plain mode draws nothing meanwhile
    LaunchOptions(logs=[str(DEMO_LOG)], follow=True),       # a followed log keeps being read
], ids=["no-log", "stdin", "plain", "follow"])
def test_not_started_where_the_wizard_must_read_itself(opts: LaunchOptions) -> None:
    assert start(opts) is None


def test_not_started_for_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    assert start(LaunchOptions(logs=[str(fifo)])) is None


def test_not_started_on_one_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apart, "cpus", lambda: 1)
    assert start(LaunchOptions(logs=[str(DEMO_LOG)])) is None


def test_the_child_runs_at_a_lower_priority() -> None:
    """Where CPUs are short the screen comes first: the child lowers its own priority."""
    code = "import os, sys; sys.argv = ['x']; from oomwizard.frontend import apart; apart.child = lambda p: print(os.nice(0)) or 0; apart._main([])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) >= min(os.nice(0) + apart.NICE, 19)



def test_a_wizard_that_ends_ends_its_child() -> None:
    """The operator quits before the diagnosis (or the session drops): the child still reading
    a large log is ended when the wizard's interpreter exits."""
    code = (
        "import subprocess, sys\n"
        "from oomwizard.frontend.apart import Apart\n"
        "proc = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], stdout=subprocess.PIPE)\n"
        "Apart(['x.log'], proc)\n"
        "print(proc.pid, flush=True)\n"
    )
    pid = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30).stdout)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()


def test_the_wizard_is_given_the_child_for_its_log_and_none_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from oomwizard import launch as launching
    from oomwizard.tui import app

    given: list[object] = []
    monkeypatch.setattr(app, "run_tui", lambda opts, sources=None: given.append(sources) or 0)
    assert launching.launch(LaunchOptions(demo=True)) == 0
    sources = given[-1]
    assert sources is not None and sources.diagnose_paths([str(DEMO_LOG)], None) == _diagnose_paths([str(DEMO_LOG)])
    assert launching.launch(LaunchOptions()) == 0
    assert given[-1] is None  # the welcome screen: nothing to read, no child
