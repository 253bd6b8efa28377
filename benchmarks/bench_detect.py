"""How long ``oomwizard detect`` takes, stage by stage.

Target: the whole detection under 0.3 s for 8 GPUs, not counting another interpreter's start-up.

    python benchmarks/bench_detect.py                 # mocked 8-GPU NVML shaped like the real H200
    python benchmarks/bench_detect.py --real          # the real NVML of this machine
    python benchmarks/bench_detect.py --python /venv/bin/python   # also time reading another venv
    python benchmarks/bench_detect.py --json out.json

It reports: a cold run in a fresh interpreter (imports of oomwizard and nvidia-ml-py included),
then warm in-process runs (median, p90, min) with the stages ``detect_machine`` records. /proc,
the host and this interpreter's packages are the real ones of the machine it runs on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "fixtures" / "machine"))

COLD = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {repo!r}); sys.path.insert(0, {fixtures!r})
from oomwizard.facts.machine import detect_machine
t1 = time.perf_counter()
nvml = None
if {mock!r}:
    from fake_nvml import FakeNVML, hgx_spec
    nvml = FakeNVML(hgx_spec({gpus}, used_gib=12.0), call_delay_s={delay!r})
t2 = time.perf_counter()
r = detect_machine(nvml=nvml, environ={env!r})
t3 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "detect_s": t3 - t2, "gpus": len(r.data["gpus"]), "timings_ms": r.data["timings_ms"]}}))
"""


def bench_env() -> dict[str, str]:
    """This shell's environment without a PATH that could lead to another vLLM interpreter."""
    env = dict(os.environ)
    env["PATH"] = "/usr/bin:/bin"
    return env


def cold_run(mock: bool, gpus: int, delay: float) -> dict[str, Any]:
    code = COLD.format(repo=str(REPO), fixtures=str(REPO / "tests" / "fixtures" / "machine"), mock=mock, gpus=gpus, delay=delay, env=bench_env())
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["process_wall_s"] = wall
    return data


def warm_runs(mock: bool, gpus: int, delay: float, runs: int, python: str | None) -> dict[str, Any]:
    from oomwizard.facts.machine import detect_machine

    nvml = None
    if mock:
        from fake_nvml import FakeNVML, hgx_spec

        nvml = FakeNVML(hgx_spec(gpus, used_gib=12.0), call_delay_s=delay)
    times, stages = [], []
    report = None
    for _ in range(runs):
        t = time.perf_counter()
        report = detect_machine(python=python, nvml=nvml, environ=bench_env())
        times.append(time.perf_counter() - t)
        stages.append(report.data["timings_ms"])
    times.sort()
    assert report is not None
    med_stages = {k: round(statistics.median(s[k] for s in stages), 2) for k in stages[0]}
    return {
        "runs": runs,
        "median_s": statistics.median(times),
        "p90_s": times[min(len(times) - 1, int(len(times) * 0.9))],
        "min_s": times[0],
        "stages_ms_median": med_stages,
        "gpus": len(report.data["gpus"]),
        "nvml_calls_per_run": (nvml.calls // runs) if nvml is not None else None,
        "processes_scanned": report.data["processes"]["scanned"],
        "nvml_available": report.data["nvml"]["available"],
    }


def nvml_latency(repeat: int = 200) -> dict[str, float]:
    """Microseconds per call of the real NVML functions detection uses most (GPU 0)."""
    import pynvml

    out: dict[str, float] = {}
    t = time.perf_counter()
    pynvml.nvmlInit()
    out["init_us"] = (time.perf_counter() - t) * 1e6
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        calls = {
            "memory_v2": lambda: pynvml.nvmlDeviceGetMemoryInfo(h, pynvml.nvmlMemory_v2),
            "name": lambda: pynvml.nvmlDeviceGetName(h),
            "compute_processes": lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(h),
            "nvlink_state_0": lambda: pynvml.nvmlDeviceGetNvLinkState(h, 0),
        }
        for name, fn in calls.items():
            t = time.perf_counter()
            for _ in range(repeat):
                with contextlib.suppress(pynvml.NVMLError):
                    fn()
            out[f"{name}_us"] = (time.perf_counter() - t) / repeat * 1e6
    finally:
        pynvml.nvmlShutdown()
    return {k: round(v, 2) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", action="store_true", help="use this machine's NVML instead of the mocked 8 GPUs")
    ap.add_argument("--gpus", type=int, default=8, help="mocked GPU count (default 8)")
    ap.add_argument("--call-delay-us", type=float, default=0.0, help="extra latency per mocked NVML call, microseconds")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--python", help="also read this interpreter's packages (its start-up is then included)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args()
    mock = not args.real
    delay = args.call_delay_us / 1e6
    result: dict[str, Any] = {
        "mode": "real NVML" if args.real else f"mocked {args.gpus}-GPU NVML",
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "cold": cold_run(mock, args.gpus, delay),
        "warm": warm_runs(mock, args.gpus, delay, args.runs, None),
    }
    if args.real:
        result["nvml_call_us"] = nvml_latency()
    if args.python:
        result["warm_with_other_python"] = warm_runs(mock, args.gpus, delay, max(3, args.runs // 5), args.python)
    w, c = result["warm"], result["cold"]
    calls = f", {w['nvml_calls_per_run']} NVML calls per run" if w["nvml_calls_per_run"] else ""
    print(f"{result['mode']}, {w['gpus']} GPU(s){calls}, {w['processes_scanned']} processes scanned, Python {result['python']}, {result['cpus']} CPUs")
    print(f"cold (fresh interpreter): import {c['import_s'] * 1000:.1f} ms + detect {c['detect_s'] * 1000:.1f} ms; process wall {c['process_wall_s'] * 1000:.0f} ms")
    print(f"warm x{w['runs']}: median {w['median_s'] * 1000:.1f} ms, p90 {w['p90_s'] * 1000:.1f} ms, min {w['min_s'] * 1000:.1f} ms")
    print("stages (median ms): " + ", ".join(f"{k} {v}" for k, v in w["stages_ms_median"].items()))
    st = w["stages_ms_median"]
    print(f"without waiting for other interpreters: {st['total'] - st.get('packages_other', 0):.1f} ms (median)")
    if "nvml_call_us" in result:
        print("NVML per call (us): " + ", ".join(f"{k} {v}" for k, v in result["nvml_call_us"].items()))
    if "warm_with_other_python" in result:
        o = result["warm_with_other_python"]
        print(f"with --python {args.python}: median {o['median_s'] * 1000:.1f} ms (packages_other {o['stages_ms_median'].get('packages_other')} ms)")
    verdict = "OK" if c["detect_s"] < 0.3 and w["p90_s"] < 0.3 else "OVER"
    print(f"target < 300 ms: {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
