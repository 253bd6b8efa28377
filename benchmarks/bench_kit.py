"""Start-up of ``oomwizard.pyz`` next to the same version installed from the kit.

Target: the single file within 1.3x of the installed tool (median, warm cache).

    python benchmarks/bench_kit.py                     # builds benchmarks/out/kit once, 11 runs each
    python benchmarks/bench_kit.py --runs 21 --json benchmarks/results/bench_kit_buildbox.json
    python benchmarks/bench_kit.py --kit DIR           # a kit built with `oomwizard kit DIR --pyz`

Both run on the same interpreter, each from a clean venv of it: the installed tool is the kit's
``install.sh`` venv and its ``bin/oomwizard``; the archive runs as ``python oomwizard.pyz`` from a
venv with nothing installed (so neither sees this machine's site-packages). The archive's cache is
warmed by one run first, so the figures are for every start after the first. Runs alternate
between the two; wall time of the whole process, best and median. The two diagnoses of the demo
log must be equal, so a fast run that did nothing would not count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
DEMO = REPO / "oomwizard" / "demo" / "vllm-serve.log"


def _sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def prepare(kit: Path | None) -> tuple[Path, Path, Path, dict[str, str]]:
    """(kit, installed venv, bare venv, environment): built once under benchmarks/out/."""
    OUT.mkdir(exist_ok=True)
    if kit is None:
        kit = OUT / "kit"
        if not (kit / "oomwizard.pyz").exists():
            _sh([sys.executable, "-m", "oomwizard", "kit", str(kit), "--pyz", "--force"],
                env={**os.environ, "PYTHONPATH": str(REPO)})
    installed, bare = OUT / "kit-venv", OUT / "bare-venv"
    if not (installed / "bin" / "oomwizard").exists():
        _sh(["sh", str(kit / "install.sh"), str(installed)], env={**os.environ, "PYTHON": sys.executable})
    if not (bare / "bin" / "python").exists():
        _sh([sys.executable, "-m", "venv", "--without-pip", str(bare)])
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
           "XDG_CACHE_HOME": str(OUT / "pyz-cache")}
    return kit, installed, bare, env


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kit", type=Path, help="an existing kit with oomwizard.pyz (default: build one)")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--json", type=Path, help="write the readings here")
    args = ap.parse_args()
    kit, installed, bare, env = prepare(args.kit)
    tool = [str(installed / "bin" / "oomwizard")]
    pyz = [str(bare / "bin" / "python"), str(kit / "oomwizard.pyz")]
    diagnose = ["diagnose", str(DEMO), "--format", "json"]
    a = _sh([*tool, *diagnose], env=env).stdout  # also warms the archive's cache, below
    b = _sh([*pyz, *diagnose], env=env).stdout
    for key in ("matches", "leaf"):
        if json.loads(a)[key] != json.loads(b)[key]:
            sys.exit(f"the two diagnoses differ in {key!r}")
    readings: dict[str, dict[str, list[float]]] = {}
    for name, extra in (("--version", ["--version"]), ("diagnose demo", diagnose)):
        times: dict[str, list[float]] = {"installed": [], "pyz": []}
        for _ in range(args.runs):
            times["installed"].append(timed([*tool, *extra], env))
            times["pyz"].append(timed([*pyz, *extra], env))
        readings[name] = times
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, {args.runs} runs each")
    print(f"{'command':<16} {'installed best/median':>22} {'pyz best/median':>18} {'ratio (median)':>15}")
    summary = {}
    for name, times in readings.items():
        mi, mp = statistics.median(times["installed"]), statistics.median(times["pyz"])
        summary[name] = {"installed_best": min(times["installed"]), "installed_median": mi,
                         "pyz_best": min(times["pyz"]), "pyz_median": mp, "ratio_median": mp / mi}
        print(f"{name:<16} {min(times['installed']):>10.3f} / {mi:.3f} s {min(times['pyz']):>7.3f} / {mp:.3f} s "
              f"{mp / mi:>14.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"python": sys.version.split()[0], "runs": args.runs, "summary": summary,
                                         "readings": readings}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
