"""How long ``oomwizard lint`` and ``oomwizard export`` take on the real knowledge base.

Target: ``lint`` well under 2 s cold (it runs in CI and in contributors' edit loops), each export
under 2 s.

    python benchmarks/bench_lint_export.py            # 5 warm runs each
    python benchmarks/bench_lint_export.py --runs 20 --json out.json

Cold = a fresh interpreter running ``python -m oomwizard lint`` (imports included). Warm = in-process
calls after a first one (median, min). Exports are written to a temporary folder and loaded without
``strict`` so that the figures exist while the knowledge base is still being written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from oomwizard.kb.loader import load_kb  # noqa: E402
from oomwizard.lint import lint  # noqa: E402 - after the path set-up above
from oomwizard.report.export import export  # noqa: E402


def timed(fn: Callable[[], object], runs: int) -> dict[str, float]:
    fn()  # first call: caches, lazy imports
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return {"median_s": round(statistics.median(samples), 4), "min_s": round(min(samples), 4)}


def cold_lint() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "oomwizard", "lint", "--format", "json"], cwd=REPO, capture_output=True, check=False)
    return round(time.perf_counter() - t0, 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    kb, _ = load_kb(REPO, strict=False)
    out: dict[str, object] = {
        "questions": len(kb.questions),
        "leaves": len(kb.leaves),
        "articles": len(kb.articles),
        "lint_cold_s": cold_lint(),
        "lint_warm": timed(lambda: lint(REPO), args.runs),
        "load_kb_warm": timed(lambda: load_kb(REPO, strict=False), args.runs),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("json", "markdown", "html"):
            target = Path(tmp) / fmt
            out[f"export_{fmt}"] = timed(lambda fmt=fmt, target=target: export(kb, fmt, target, None), args.runs)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
