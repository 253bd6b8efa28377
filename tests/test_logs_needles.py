"""Planted needles: each failure form at 1 %, 50 % and 99.9 % of a big serving log, plain and gzip.

The log is ``OOMWIZARD_NEEDLE_MIB`` MiB (512 by default) of a server's request traffic after its
start-up, with a whole failed start (one of the synthetic logs) planted at the given share of it.
Every byte is searched, so the failure must be found wherever it sits, ranked first, with the
line number it has in the big file.
"""

from __future__ import annotations

import os
import random
import sys
import zlib
from pathlib import Path

import pytest
from logkit import LOGS

from oomwizard.logs.diagnose import diagnose_paths

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
SIZE = int(os.environ.get("OOMWIZARD_NEEDLE_MIB", "512")) << 20

NEEDLES = {
    "torch OOM with traceback": ("runtime_oom_0110_tp2.log", "runtime-oom"),
    "custom all-reduce C++ error": ("allreduce_ipc_compose_072.log", "custom-allreduce-ipc"),
    "OOM killer's Killed": ("host_oom_killer_dmesg.log", "host-memory"),
    "Workspace is locked": ("workspace_locked_moe_gke.log", "workspace-locked"),
    "no memory for the cache blocks": ("no_kv_memory_085.log", "no-kv-cache-memory"),
    "Ray's memory monitor": ("host_ray_task_killed_v1_083.log", "host-memory"),
}
SHARES = (0.01, 0.5, 0.999)


def _gen_log():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    try:
        import gen_log
    finally:
        sys.path.remove(str(BENCH))
    return gen_log


@pytest.fixture(scope="module")
def filler() -> tuple[bytes, bytes]:
    """A server's start-up, and about 1 MiB of its request traffic (repeated to fill the log)."""
    gen_log = _gen_log()
    head = ("\n".join(gen_log.startup()) + "\n").encode()
    pool = gen_log.serving_pool(random.Random(3), 6000)
    chunk = ("\n".join(pool) + "\n").encode()
    return head, chunk


def _plant(path: Path, head: bytes, chunk: bytes, needle: bytes, share: float, packed: bool) -> tuple[int, int]:
    """Write the log; return the number of lines and of bytes before the needle."""
    chunks = max(2, SIZE // len(chunk))
    before = min(chunks - 1, max(0, round(chunks * share)))
    parts = [head, *([chunk] * before), needle, *([chunk] * (chunks - before))]
    if packed:
        # One gzip stream, written as it would be by a log rotation (``gzip -1``).
        comp = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        with open(path, "wb") as fh:
            for part in parts:
                fh.write(comp.compress(part))
            fh.write(comp.flush())
    else:
        with open(path, "wb") as fh:
            for part in parts:
                fh.write(part)
    return head.count(b"\n") + before * chunk.count(b"\n"), len(head) + before * len(chunk)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("form", list(NEEDLES))
def test_a_planted_failure_is_found_wherever_it_sits(form: str, packed: bool, filler: tuple[bytes, bytes],
                                                     tmp_path: Path) -> None:
    name, scenario = NEEDLES[form]
    needle = (LOGS / name).read_bytes()
    alone = diagnose_paths([str(LOGS / name)])
    assert alone.matches[0].scenario == scenario
    want = sorted(e.line for e in alone.matches[0].evidence)
    head, chunk = filler
    path = tmp_path / ("big.log.gz" if packed else "big.log")
    for share in SHARES:
        offset, at = _plant(path, head, chunk, needle, share, packed)
        d = diagnose_paths([str(path)])
        assert d.matches, (form, share)
        top = d.matches[0]
        assert top.scenario == scenario, (form, share, [(m.scenario, m.score) for m in d.matches[:3]])
        got = sorted(e.line for e in top.evidence)
        assert [n + offset for n in want] == got, (form, share)
        if not packed:  # the needle is where the line count says
            with open(path, "rb") as fh:
                fh.seek(at)
                assert fh.read(len(needle)) == needle
                fh.seek(0)
                newlines, left = 0, at
                while left:
                    block = fh.read(min(left, 8 << 20))
                    newlines += block.count(b"\n")
                    left -= len(block)
                assert newlines == offset
