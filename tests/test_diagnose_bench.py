"""The benchmark script runs (on a small log: the figures themselves are taken by hand, see
benchmarks/README.md) and its log generator writes what the reader expects."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _import(name: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(BENCH))


def test_generated_log_ends_in_an_oom(tmp_path: Path) -> None:
    gen_log = _import("gen_log")
    p = tmp_path / "g.log"
    gen_log.write(str(p), 3 << 20)
    data = p.read_bytes()
    assert 3 << 20 <= len(data) < 4 << 20
    assert data.count(b"Traceback (most recent call last)") == 2
    assert data.index(b"torch.OutOfMemoryError") > len(data) // 4
    assert gen_log._size("1G") == 1 << 30 and gen_log._size("200M") == 200 << 20


def test_benchmark_smoke(tmp_path: Path) -> None:
    gen_log = _import("gen_log")
    bench = _import("bench_diagnose")
    log = tmp_path / "small.log"
    gen_log.write(str(log), 2 << 20)
    out = tmp_path / "bench.json"
    bench.main(["--log", str(log), "--runs", "1", "--json", str(out)])
    data = json.loads(out.read_text())
    assert data["diagnosis"] in ("fragmentation", "runtime-oom")
    assert data["log_bytes"] == log.stat().st_size
    assert data["oomwizard"]["best_s"] > 0 and data["grep_E_f"]["best_s"] > 0
    from oomwizard.logs.collect import trigger_words

    assert data["patterns"] == len(trigger_words()) > 100
    written = (tmp_path / "small.log.patterns").read_text().splitlines()
    assert len(written) == data["patterns"] and "Traceback" in written and "out of memory" in written
