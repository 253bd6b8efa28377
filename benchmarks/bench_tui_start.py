"""Time to first frame: a bare Textual app with a Footer, ``oomwizard`` (welcome), ``oomwizard --demo``.

Each command is started in a detached tmux session of its own server (``tmux -L``, so no other
tmux is touched) at 80x24, and ``capture-pane`` is polled every 10 ms until a text that only the
screen measured shows appears: the bare app's label; the welcome menu's first entry; for
``--demo`` its first frame (the diagnosis screen reading the log) and, separately, the diagnosis
itself (the best-matching scenario's title: the log read and diagnosed). The time runs from just before ``tmux new-session`` to the poll that saw it,
so interpreter start and imports count. The three are run in turn, ``--runs`` times each (so load
on the box hits them alike), and the median and range are printed with the ratios to the bare app.

    python benchmarks/bench_tui_start.py              # 7 runs each
    python benchmarks/bench_tui_start.py --runs 9 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = '''
from textual.app import App
from textual.widgets import Footer, Static

class Bare(App):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Static("bare textual app ready")
        yield Footer()

Bare().run()
'''

SOCKET = f"oomwizard-bench-{os.getpid()}"


def tmux(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False)


def first_frame(command: str, marker: str, timeout: float = 30.0) -> float:
    """Seconds from starting ``command`` in tmux until ``marker`` is on its screen."""
    name = f"b{time.monotonic_ns()}"
    start = time.perf_counter()
    tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", command)
    try:
        while time.perf_counter() - start < timeout:
            shown = tmux("capture-pane", "-p", "-t", name).stdout
            if marker in shown:
                return time.perf_counter() - start
            time.sleep(0.01)
        raise SystemExit(f"{marker!r} never appeared for {command!r}:\n{shown}")
    finally:
        tmux("kill-session", "-t", name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is needed", file=sys.stderr)
        return 2
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        env = "env -u TMUX TERM=xterm-256color "
        cases = {
            "bare Textual app + Footer": (f"{env}{py} {bare}", "bare textual app ready"),
            "oomwizard (welcome)": (f"{env}{py} -m oomwizard --lang en", "Open a log file"),
            "oomwizard --demo (first frame)": (f"{env}{py} -m oomwizard --demo --lang en", "Reading vllm-serve.log"),
            "oomwizard --demo (diagnosis)": (f"{env}{py} -m oomwizard --demo --lang en", "OOM while warming up the sampler"),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        # A session that outlives the measured ones keeps the server up between them.
        tmux("new-session", "-d", "-s", "holder", "-x", "80", "-y", "24", "sleep 100000")
        try:
            for _ in range(args.runs):
                for label, (command, marker) in cases.items():
                    times[label].append(first_frame(command, marker))
        finally:
            tmux("kill-server")
    base = statistics.median(times["bare Textual app + Footer"])
    print(f"first frame at 80x24, {args.runs} runs each, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    report = {}
    for label, ts in times.items():
        med = statistics.median(ts)
        report[label] = {"median_s": med, "min_s": min(ts), "max_s": max(ts), "ratio": med / base}
        print(f"  {label:<32} median {med:.3f} s  ({min(ts):.3f}-{max(ts):.3f})  {med / base:.2f}x bare")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
