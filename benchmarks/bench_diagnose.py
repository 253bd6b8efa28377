"""How fast ``oomwizard diagnose`` reads a big log, next to ``grep -E -c -f`` with the same patterns.

Generates a log (``gen_log.py``, 1 GiB by default, an OOM about 2 MiB before its end), warms the
page cache, then runs the two commands alternately, several times each, and reports the best and
median wall time, the CPU time and the peak resident memory (``/usr/bin/time``) of each, and their
ratio. grep is given every string the reader searches the log for
(``logs.collect.trigger_words()``), escaped, one per line: the same work, every byte of the file.

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

from oomwizard.logs.collect import scanner, trigger_words  # noqa: E402

TIME = "/usr/bin/time"


def run(cmd: list[str]) -> tuple[float, float, int, int, bytes]:
    """(wall seconds, CPU seconds, peak RSS in KiB, exit status, stdout) of one run of ``cmd``.

    The peak is read by ``/usr/bin/time``: a child forked from this (large) interpreter would
    report this interpreter's size as its own high-water mark.
    """
    if os.path.exists(TIME):
        with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            t0 = time.perf_counter()
            proc = subprocess.run([TIME, "-f", "%U %S %M", "-o", tf.name, *cmd], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, check=False)
            wall = time.perf_counter() - t0
            fields = [ln.split() for ln in tf.read().splitlines() if len(ln.split()) == 3]
        user, system, peak = fields[-1] if fields else ("0", "0", "0")
        return wall, float(user) + float(system), int(peak), proc.returncode, proc.stdout
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss), os.waitstatus_to_exitcode(status), out


def warm(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(64 << 20):
            pass


def measure(cmds: dict[str, list[str]], runs: int) -> dict[str, dict[str, object]]:
    """Each command ``runs`` times, alternating, so a busy machine slows them alike."""
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, list[int]] = {k: [] for k in cmds}
    last: dict[str, tuple[int, bytes]] = {}
    for _ in range(runs):
        for name, cmd in cmds.items():
            wall, cpu, peak, status, out = run(cmd)
            walls[name].append(wall)
            cpus[name].append(cpu)
            rss[name].append(peak)
            last[name] = (status, out)
    return {k: {"best_s": min(walls[k]), "median_s": statistics.median(walls[k]), "cpu_s": min(cpus[k]),
                "peak_rss_mib": max(rss[k]) / 1024, "status": last[k][0], "stdout": last[k][1]} for k in cmds}


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
    patterns = log.with_name(log.name + ".patterns")
    patterns.write_text("".join(_ere(w) + "\n" for w in trigger_words()), encoding="utf-8")
    grep_e = [grep, "-E", "-c", "-f", str(patterns), str(log)]
    demo = [sys.executable, "-m", "oomwizard", "diagnose", str(ROOT / "oomwizard" / "demo" / "vllm-serve.log"),
            "--format", "json"]

    results = measure({"oomwizard": tool, "grep_E_f": grep_e}, args.runs)
    results.update(measure({"grep_F_f": [grep, "-F", "-c", "-f", str(patterns.with_suffix(".fixed")), str(log)]}
                           if _fixed(patterns) else {}, 1))
    results.update(measure({"oomwizard_small_log": demo}, args.runs))
    diag = json.loads(results["oomwizard"].pop("stdout") or b"{}")  # type: ignore[arg-type]
    for r in results.values():
        r.pop("stdout", None)
    best = diag.get("matches", [{}])[0].get("scenario") if diag.get("matches") else None
    ratio = results["oomwizard"]["best_s"] / results["grep_E_f"]["best_s"]  # type: ignore[operator]
    summary = {
        "log_bytes": size,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "engine": scanner().name,
        "patterns": len(trigger_words()),
        "diagnosis": best,
        "ratio_best": round(ratio, 2),
        "ratio_median": round(results["oomwizard"]["median_s"] / results["grep_E_f"]["median_s"], 2),  # type: ignore[operator]
        **{k: {kk: round(vv, 3) if isinstance(vv, float) else vv for kk, vv in v.items()} for k, v in results.items()},
    }
    print(f"log: {log} ({size / (1 << 30):.2f} GiB), diagnosis: {best}, engine: {summary['engine']}, "
          f"{summary['patterns']} patterns")
    print(f"{'command':<22} {'best s':>8} {'median s':>9} {'CPU s':>7} {'peak RSS MiB':>13}")
    for name, r in results.items():
        print(f"{name:<22} {r['best_s']:>8.2f} {r['median_s']:>9.2f} {r['cpu_s']:>7.2f} {r['peak_rss_mib']:>13.1f}")
    print(f"oomwizard / grep -E -c -f (same patterns): {ratio:.2f}x best, {summary['ratio_median']}x median")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    ok = best is not None and ratio <= 1.0 and results["oomwizard"]["peak_rss_mib"] < 100  # type: ignore[operator]
    return 0 if ok else 1


def _ere(word: str) -> str:
    """``word`` as a POSIX extended regex that matches it literally."""
    return re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", word)


def _fixed(patterns: Path) -> bool:
    """The same strings unescaped, for ``grep -F`` (reported for reference)."""
    patterns.with_suffix(".fixed").write_text("".join(w + "\n" for w in trigger_words()), encoding="utf-8")
    return True


if __name__ == "__main__":
    sys.exit(main())
