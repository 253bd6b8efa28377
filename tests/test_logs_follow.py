"""``diagnose --follow``: a log that grows, is truncated, or comes through a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from logkit import LOGS

from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.logs.follow import follow
from oomwizard.logs.reader import open_source

RUNTIME = LOGS / "runtime_oom_0110_tp2.log"


def _evidence(d) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return [(m.scenario, e.line) for m in d.matches for e in m.evidence]


def _write_later(path: Path, pieces: list[bytes], pause: float = 0.3, mode: str = "ab") -> threading.Thread:
    def run() -> None:
        for piece in pieces:
            time.sleep(pause)
            with open(path, mode) as fh:
                fh.write(piece)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_a_growing_log_is_diagnosed_like_the_whole_file(tmp_path: Path) -> None:
    data = RUNTIME.read_bytes()
    p = tmp_path / "vllm.log"
    cut = data.index(b"\n", len(data) // 3) + 1
    p.write_bytes(data[: cut + 9])  # a line still being written when following starts
    said: list[str] = []
    t = _write_later(p, [data[cut + 9: cut + 500], data[cut + 500:]])
    d = follow(open_source(str(p)), status=lambda key, fields: said.append(key), settle=0.5, poll=0.05)
    t.join()
    assert p.read_bytes() == data
    assert _evidence(d) == _evidence(diagnose_paths([str(p)]))
    assert d.matches[0].scenario == "runtime-oom"
    assert said[0] == "follow.waiting" and said[-1] == "follow.died"


def test_an_old_failure_is_announced_and_a_new_one_awaited(tmp_path: Path) -> None:
    data = RUNTIME.read_bytes()
    p = tmp_path / "vllm.log"
    p.write_bytes(data)
    said: list[tuple[str, dict[str, object]]] = []
    t = _write_later(p, [b"INFO restarting\n", data], pause=1.0)
    start = time.monotonic()
    d = follow(open_source(str(p)), status=lambda key, fields: said.append((key, fields)), settle=0.5, poll=0.05)
    t.join()
    assert time.monotonic() - start >= 2.0  # it waited for the second crash, not the first
    assert said[0][0] == "follow.earlier" and said[0][1]["count"] >= 1
    lines = data.count(b"\n")
    assert max(line for _, line in _evidence(d)) > lines  # the new failure, in the appended copy


def test_a_truncated_log_is_read_again_from_its_start(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log"
    p.write_bytes(b"INFO old run line 1\n" * 500)
    t = _write_later(p, [RUNTIME.read_bytes()], pause=0.5, mode="wb")
    d = follow(open_source(str(p)), settle=0.5, poll=0.05)
    t.join()
    assert _evidence(d) == _evidence(diagnose_paths([str(RUNTIME)]))


def test_a_pipe_that_ends_is_diagnosed_at_its_end(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = RUNTIME.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data[:1000])
            fh.flush()
            time.sleep(0.3)
            fh.write(data[1000:])

    t = threading.Thread(target=feed)
    t.start()
    said: list[str] = []
    d = follow(open_source(str(fifo)), status=lambda key, fields: said.append(key), settle=30, poll=0.05)
    t.join()
    assert said[-1] == "follow.ended"
    assert _evidence(d) == _evidence(diagnose_paths([str(RUNTIME)]))


def test_cli_follow_prints_the_fix_once_the_engine_died(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log"
    p.write_bytes(b"")
    proc = subprocess.Popen([sys.executable, "-m", "oomwizard", "diagnose", "--follow", str(p)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the log is being followed before it gets its lines (a slow start
    assert "following" in first    # would otherwise find them already there and wait for a new one)
    assert proc.poll() is None  # still waiting: nothing failed yet
    p.write_bytes(RUNTIME.read_bytes())
    out, err = proc.communicate(timeout=60)
    err = first + err
    assert proc.returncode == 0, err
    assert "engine died" in err and "runtime-oom" in out


def test_cli_follow_refuses_several_logs(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "oomwizard", "diagnose", "--follow", str(RUNTIME), str(RUNTIME)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "one log" in r.stderr
