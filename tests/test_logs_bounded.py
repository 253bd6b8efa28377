"""Bounded memory whatever the input: a 10 GiB gzip expansion, a 100 MB line, both read to the end."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

LINE = b"(APIServer pid=1) INFO 06-02 08:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s\n"
OOM = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       b"79.19 GiB of which 1.00 GiB is free.\n")

_CHILD = """
import json, sys
from oomwizard.logs.diagnose import diagnose_paths
d = diagnose_paths([sys.argv[1]])
m = d.matches[0] if d.matches else None
# VmHWM is this process's own peak (ru_maxrss would carry the forking parent's over exec)
hwm = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
print(json.dumps({"scenario": m.scenario if m else None, "lines": [e.line for e in m.evidence] if m else [],
                  "warnings": [w.en for w in d.warnings], "rss_mib": hwm / 1024}))
"""


def _diagnose(path: Path) -> dict[str, object]:
    """In a fresh interpreter, so its peak resident memory is this read's alone."""
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=600, check=True)
    return json.loads(r.stdout)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_gzip_that_expands_to_10_gib_is_read_to_its_end_in_bounded_memory(tmp_path: Path) -> None:
    block = LINE * ((1 << 20) // len(LINE))
    member = zlib.compress(block, 9, wbits=31)  # one gzip member of 1 MiB of text; members concatenate
    p = tmp_path / "bomb.log.gz"
    with open(p, "wb") as fh:
        fh.write(zlib.compress(b"INFO vLLM API server version 0.11.0\n", 9, wbits=31))
        for _ in range(10 * 1024):
            fh.write(member)
        fh.write(zlib.compress(OOM, 9, wbits=31))
    assert p.stat().st_size < 100 << 20
    got = _diagnose(p)
    assert got["scenario"] == "runtime-oom"
    assert got["lines"] == [1 + 10 * 1024 * block.count(b"\n") + 1]
    assert got["rss_mib"] < 100, got


def test_a_100_mb_line_is_cut_but_a_failure_in_its_middle_is_read(tmp_path: Path) -> None:
    p = tmp_path / "one-line.log"
    half = b'{"token_ids": [' + b"151644, 872, 198, " * (3 << 20) + b"]}"  # ~50 MB each side
    p.write_bytes(LINE * 20000 + half + b" " + OOM.rstrip(b"\n") + b" " + half + b"\n" + LINE)
    del half
    got = _diagnose(p)
    assert got["scenario"] == "runtime-oom"
    assert got["lines"] == [20001]
    assert any("cut to their start and end" in w for w in got["warnings"])  # type: ignore[union-attr]
    assert got["rss_mib"] < 100, got
