"""Run the whole hostile-input corpus against an installed oomwizard and print the totals.

Each case is a real run in its own process session with a kill timer: damaged and strange logs,
special files and closed streams, gzip bombs, broken saved machine reports, escape payloads in
every untrusted source, planted secrets, a fake server whose interpreter records whether it ran,
broken knowledge bases and signals. Every count but "cases run" must be 0.

    python benchmarks/hostile_cases.py                  # the oomwizard on PATH
    python benchmarks/hostile_cases.py --big --jobs 2   # with the 100 MiB-1 GiB inputs
    python benchmarks/hostile_cases.py --tool "python -m oomwizard" --json results/hostile.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))

import corpus  # noqa: E402

COLUMNS = ("cases", "tracebacks", "hangs", "leaks", "raw escapes", "programs executed", "wrong exit codes")


def _tool(spec: str | None) -> list[str]:
    if spec:
        return shlex.split(spec)
    found = shutil.which("oomwizard")
    return [found] if found else [sys.executable, "-m", "oomwizard"]


def totals(results: list[corpus.Result]) -> dict[str, int]:
    return {
        "cases": len(results),
        "tracebacks": sum(r.traceback for r in results),
        "hangs": sum(r.hang for r in results),
        "leaks": sum(sum(r.leaked.values()) for r in results),
        "raw escapes": sum(bool(r.raw) for r in results),
        "programs executed": sum(r.executed for r in results),
        "wrong exit codes": sum(r.wrong_code for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", help="the command that starts oomwizard (default: oomwizard on PATH)")
    ap.add_argument("--big", action="store_true", help="also the 100 MiB and 1 GiB inputs")
    ap.add_argument("--quick", action="store_true", help="leave out the cases that wait on purpose (10-45 s each)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", help="run the cases whose id starts with this")
    ap.add_argument("--json", help="write every result to this file")
    args = ap.parse_args(argv)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # started in the background: the children would inherit an ignored SIGINT, and the
        # Ctrl+C cases would test that instead of the tool
        signal.signal(signal.SIGINT, signal.default_int_handler)
    tool = _tool(args.tool)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="oomwizard-hostile-") as d:
        cases = corpus.build(Path(d), big=args.big)
        if args.quick:
            cases = [c for c in cases if not c.slow or c.group in ("bombs", "content")]
        if args.only:
            cases = [c for c in cases if c.id.startswith(args.only)]
        # cases that hold a named pipe or a timer run alone; the rest share the workers
        alone = [c for c in cases if c.setup or c.signal_when_ready]
        shared = [c for c in cases if c not in alone]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(lambda c: corpus.run(c, tool), shared))
        results += [corpus.run(c, tool) for c in alone]
    wall = time.monotonic() - t0
    groups = sorted({r.case.group for r in results})
    print(f"tool: {' '.join(tool)}")
    print(f"{'group':<10}" + "".join(f"{c:>19}" for c in COLUMNS))
    for g in [*groups, "all"]:
        rs = [r for r in results if g in ("all", r.case.group)]
        t = totals(rs)
        print(f"{g:<10}" + "".join(f"{t[c]:>19}" for c in COLUMNS))
    print(f"wall: {wall:.0f} s, slowest case: {max(results, key=lambda r: r.wall).case.id} "
          f"({max(r.wall for r in results):.1f} s)")
    bad = [r for r in results if not r.ok]
    for r in bad:
        why = [w for w, on in (("traceback", r.traceback), ("hang", r.hang), (f"leaks {r.leaked}", r.leaked),
                               (f"raw {r.raw}", r.raw), ("executed", r.executed),
                               (f"rc {r.rc} not in {sorted(r.case.expect)}", r.wrong_code)) if on]
        print(f"FAIL {r.case.id}: {'; '.join(why)}\n    {r.stderr.strip()[-300:]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"tool": tool, "totals": totals(results), "wall_s": round(wall, 1), "results": [
            {"id": r.case.id, "rc": r.rc, "wall_s": round(r.wall, 2), "ok": r.ok} for r in results]},
            indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
