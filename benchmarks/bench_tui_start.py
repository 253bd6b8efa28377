"""Time to first frame: a bare Textual app with a Footer, ``oomwizard`` (welcome), ``oomwizard --demo``.

Each command is started in a detached tmux session of its own server (``tmux -L``, so no other
tmux is touched) at 80x24, and ``capture-pane`` is polled every 10 ms until a text that only the
screen measured shows appears: the bare app's label; the welcome menu's first entry; for
``--demo`` its first frame (the diagnosis screen reading the log) and, separately, the diagnosis
itself (the best-matching scenario's title: the log read and diagnosed). The time runs from just before ``tmux new-session`` to the poll that saw it,
so interpreter start and imports count. The three are run in turn, ``--runs`` times each (so load
on the box hits them alike), and the median and range are printed with the ratios to the bare app.

Byte-code is on, as for an installed tool (pip compiles a wheel's modules when it installs them):
every command runs with its own ``PYTHONPYCACHEPREFIX`` and without ``PYTHONDONTWRITEBYTECODE``,
and one uncounted run of each writes the cache first. ``--no-bytecode`` measures the way an
environment with ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` runs, every module
compiled from source at each start. ``--tree DIR`` adds the same wizard cases run from another
source tree (``PYTHONPATH=DIR``, e.g. an older commit unpacked with ``git archive``), in the same
turns, so a change is measured before and after under the same load.

    python benchmarks/bench_tui_start.py              # 7 runs each
    python benchmarks/bench_tui_start.py --runs 9 --json out.json
    python benchmarks/bench_tui_start.py --tree /tmp/before   # before/after side by side
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
    # In a folder of its own: ``python -m`` puts the current folder first on the path.
    tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-c", tempfile.gettempdir(), command)
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
    ap.add_argument("--no-bytecode", action="store_true", help="compile every module from source at each start")
    ap.add_argument("--tree", metavar="DIR", help="also run the wizard from this source tree (PYTHONPATH)")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is needed", file=sys.stderr)
        return 2
    py = sys.executable
    load_before = os.getloadavg()[0]
    # A session killed at its marker may still be writing byte-code into tmp as it is removed.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE)
        env = "env -u TMUX TERM=xterm-256color "
        if args.no_bytecode:
            env += "PYTHONDONTWRITEBYTECODE=1 "
        else:
            env = f"env -u TMUX -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX={tmp}/pyc TERM=xterm-256color "
        wizard = {
            "oomwizard (welcome)": ("--lang en", "Open a log file"),
            "oomwizard --demo (first frame)": ("--demo --lang en", "Reading vllm-serve.log"),
            "oomwizard --demo (diagnosis)": ("--demo --lang en", "OOM while warming up the sampler"),
        }
        cases = {"bare Textual app + Footer": (f"{env}{py} {bare}", "bare textual app ready")}
        for label, (argv, marker) in wizard.items():
            cases[label] = (f"{env}{py} -m oomwizard {argv}", marker)
        if args.tree:
            tree = Path(args.tree).resolve()
            for label, (argv, marker) in wizard.items():
                cases[f"{label} [tree]"] = (f"{env}PYTHONPATH={tree} {py} -m oomwizard {argv}", marker)
        times: dict[str, list[float]] = {k: [] for k in cases}
        # A session that outlives the measured ones keeps the server up between them.
        tmux("new-session", "-d", "-s", "holder", "-x", "80", "-y", "24", "sleep 100000")
        try:
            if not args.no_bytecode:  # one uncounted run of each writes the byte-code cache
                for command, marker in cases.values():
                    first_frame(command, marker)
            for _ in range(args.runs):
                for label, (command, marker) in cases.items():
                    times[label].append(first_frame(command, marker))
        finally:
            tmux("kill-server")
    base = statistics.median(times["bare Textual app + Footer"])
    code = "compiled from source each start" if args.no_bytecode else "byte-code cached"
    print(f"first frame at 80x24, {args.runs} runs each, {code}, load {load_before:.1f}-{os.getloadavg()[0]:.1f}"
          f" on {os.cpu_count()} CPUs")
    report = {}
    for label, ts in times.items():
        med = statistics.median(ts)
        report[label] = {"median_s": med, "min_s": min(ts), "max_s": max(ts), "ratio": med / base,
                         "bytecode": not args.no_bytecode}
        print(f"  {label:<39} median {med:.3f} s  ({min(ts):.3f}-{max(ts):.3f})  {med / base:.2f}x bare")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
