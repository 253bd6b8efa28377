"""How fast ``oomwizard diagnose`` reads a big log, next to ``grep -E -c`` with the same patterns.

Generates a log (``gen_log.py``, 1 GiB by default, an OOM about 2 MiB before its end), warms the
page cache, then runs each command several times and reports the best and median wall time and
the peak resident memory (``os.wait4``'s ``ru_maxrss``) of each, and their ratio. The patterns
given to grep are the anchors ``oomwizard`` searches every byte of a big log for
(``logs.signatures.SPARSE_ANCHORS``), in one ``-E`` alternation; a second grep run with every
trigger the reader knows is reported for reference.

    python benchmarks/bench_diagnose.py                 # 1 GiB, 3 runs each
    python benchmarks/bench_diagnose.py --size 200M --runs 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import gen_log  # noqa: E402

from oomwizard.logs.collect import DENSE_ANCHORS  # noqa: E402
from oomwizard.logs.signatures import SPARSE_ANCHORS  # noqa: E402

TIME = "/usr/bin/time"


def run(cmd: list[str]) -> tuple[float, int, int, bytes]:
    """(wall seconds, peak RSS in KiB, exit status, stdout) of one run of ``cmd``.

    The peak is read by ``/usr/bin/time``: a child forked from this (large) interpreter would
    report this interpreter's size as its own high-water mark.
    """
    if os.path.exists(TIME):
        with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            t0 = time.perf_counter()
            proc = subprocess.run([TIME, "-f", "%M", "-o", tf.name, *cmd], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, check=False)
            wall = time.perf_counter() - t0
            lines = [ln for ln in tf.read().splitlines() if ln.strip().isdigit()]
        return wall, int(lines[-1]) if lines else 0, proc.returncode, proc.stdout
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, int(usage.ru_maxrss), os.waitstatus_to_exitcode(status), out


def grep_pattern(words: list[bytes]) -> str:
    return "|".join(re.escape(w.decode()) for w in words)


def warm(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(64 << 20):
            pass


def measure(cmd: list[str], runs: int) -> dict[str, object]:
    walls, rss = [], []
    status = 0
    out = b""
    for _ in range(runs):
        wall, peak, status, out = run(cmd)
        walls.append(wall)
        rss.append(peak)
    return {"best_s": min(walls), "median_s": statistics.median(walls), "peak_rss_mib": max(rss) / 1024,
            "status": status, "stdout": out}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1G")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--log", type=Path, default=None, help="reuse this log instead of generating one")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)

    log = args.log
    if log is None:
        out_dir = HERE / "out"
        out_dir.mkdir(exist_ok=True)
        log = out_dir / f"vllm-{args.size}.log"
        if not log.exists():
            print(f"generating {log} ...", file=sys.stderr)
            gen_log.write(str(log), gen_log._size(args.size))
    size = log.stat().st_size
    grep = shutil.which("grep") or "grep"
    warm(log)

    tool = [sys.executable, "-m", "oomwizard", "diagnose", str(log), "--format", "json"]
    anchors = grep_pattern([a.text for a in SPARSE_ANCHORS])
    every = grep_pattern(sorted({a.text for a in DENSE_ANCHORS + SPARSE_ANCHORS}))
    demo = [sys.executable, "-m", "oomwizard", "diagnose", str(ROOT / "oomwizard" / "demo" / "vllm-serve.log"),
            "--format", "json"]

    results = {
        "oomwizard": measure(tool, args.runs),
        "grep_anchors": measure([grep, "-E", "-c", anchors, str(log)], args.runs),
        "grep_all_triggers": measure([grep, "-E", "-c", every, str(log)], 1),
        "oomwizard_small_log": measure(demo, args.runs),
    }
    diag = json.loads(results["oomwizard"].pop("stdout") or b"{}")  # type: ignore[arg-type]
    for r in results.values():
        r.pop("stdout", None)
    best = diag.get("matches", [{}])[0].get("scenario") if diag.get("matches") else None
    ratio = results["oomwizard"]["best_s"] / results["grep_anchors"]["best_s"]  # type: ignore[operator]
    summary = {
        "log_bytes": size,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "grep_pattern": anchors,
        "diagnosis": best,
        "ratio_best": round(ratio, 2),
        "ratio_median": round(results["oomwizard"]["median_s"] / results["grep_anchors"]["median_s"], 2),  # type: ignore[operator]
        **{k: {kk: round(vv, 3) if isinstance(vv, float) else vv for kk, vv in v.items()} for k, v in results.items()},
    }
    print(f"log: {log} ({size / (1 << 30):.2f} GiB), diagnosis: {best}")
    print(f"{'command':<22} {'best s':>8} {'median s':>9} {'peak RSS MiB':>13}")
    for name, r in results.items():
        print(f"{name:<22} {r['best_s']:>8.2f} {r['median_s']:>9.2f} {r['peak_rss_mib']:>13.1f}")
    print(f"oomwizard / grep (same anchors): {ratio:.2f}x best, {summary['ratio_median']}x median")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    ok = best is not None and ratio <= 2.0 and results["oomwizard"]["peak_rss_mib"] < 150  # type: ignore[operator]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
