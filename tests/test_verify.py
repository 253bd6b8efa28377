"""`oomwizard verify`: a fix's checklist ticked against the log of the next start."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard.expr import Condition
from oomwizard.i18n import Text
from oomwizard.kb.model import AutoCheck, Check, Leaf
from oomwizard.verify import FAIL, MANUAL, PASS, UNKNOWN, UNPROVEN, verify
from oomwizard.versions import VersionSpec

T = Text("t", "t")

SAMPLER_ERR = (
    "(EngineCore_DP0 pid=7) ERROR 10-14 09:14:46 [core.py:708] RuntimeError: CUDA out of memory occurred when "
    "warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or "
    "`gpu_memory_utilization` when initializing the engine."
)
START = [
    "INFO 10-14 09:13:01 [api_server.py:1896] vLLM API server version 0.11.0",
    "(EngineCore_DP0 pid=7) INFO 10-14 09:14:09 [gpu_worker.py:298] Available KV cache memory: 58.10 GiB",
    "(EngineCore_DP0 pid=7) INFO 10-14 09:14:09 [kv_cache_utils.py:1087] GPU KV cache size: 190,368 tokens",
]
READY = [
    "(EngineCore_DP0 pid=7) INFO 10-14 09:14:50 [core.py:210] init engine (profile, create kv cache, warmup "
    "model) took 62.31 seconds",
    "INFO:     Application startup complete.",
]


def leaf(*checks: Check) -> Leaf:
    return Leaf(
        id="demo", scenarios=("sampler-warmup",), title=T, conclusion=T, environment=T, root_cause=T,
        root_cause_status="confirmed", evidence="verified", fixes=(), checks=checks, caveats=(), sources=(),
        versions=VersionSpec.parse("*"),
    )


ABSENT = Check(T, AutoCheck(log_absent="CUDA out of memory occurred when warming up sampler"))
PRESENT = Check(T, AutoCheck(log_present=r"init engine \(profile, create kv cache, warmup model\) took"))
FACT = Check(T, AutoCheck(fact=Condition.parse("kv_cache_tokens >= 100000")))
MANUAL_CHECK = Check(T)


def write(tmp_path: Path, name: str, lines: list[str]) -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def test_a_log_of_a_good_start_proves_the_fix(tmp_path: Path) -> None:
    log = write(tmp_path, "after.log", START + READY)
    v = verify(leaf(ABSENT, PRESENT, FACT, MANUAL_CHECK), [log])
    assert v.ready and v.ready_at is not None and v.ready_at.line == 4
    assert [r.status for r in v.results] == [PASS, PASS, PASS, MANUAL]
    assert v.proven and not v.failed
    assert v.results[1].hit is not None and v.results[1].hit.line == 4


def test_the_old_failure_still_there_fails(tmp_path: Path) -> None:
    log = write(tmp_path, "again.log", [*START, SAMPLER_ERR])
    v = verify(leaf(ABSENT, PRESENT), [log])
    assert v.results[0].status == FAIL
    assert v.results[0].hit is not None and v.results[0].hit.line == 4
    assert "warming up sampler" in v.results[0].hit.text
    assert v.failed and not v.proven


def test_a_log_cut_short_proves_nothing_absent(tmp_path: Path) -> None:
    log = write(tmp_path, "short.log", START[:1])
    v = verify(leaf(ABSENT, PRESENT, FACT), [log])
    assert [r.status for r in v.results] == [UNPROVEN, UNPROVEN, UNKNOWN]
    assert not v.failed and not v.proven


def test_a_false_fact_fails(tmp_path: Path) -> None:
    lines = [START[0], START[1], "GPU KV cache size: 4,096 tokens", *READY]
    v = verify(leaf(FACT), [write(tmp_path, "small.log", lines)])
    assert v.results[0].status == FAIL


def test_wrapped_and_decorated_logs_still_match(tmp_path: Path) -> None:
    """A terminal-wrapped, coloured error line is still recognised as the old failure."""
    err = "\x1b[31m" + SAMPLER_ERR + "\x1b[0m"
    wrapped = [err[i : i + 80] for i in range(0, len(err), 80)]
    p = tmp_path / "after.log.gz"
    p.write_bytes(gzip.compress(("\n".join(START + wrapped) + "\n").encode()))
    v = verify(leaf(ABSENT), [str(p)])
    assert v.results[0].status == FAIL


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    good = write(tmp_path, "good.log", START + READY)
    bad = write(tmp_path, "bad.log", [*START, SAMPLER_ERR])
    run = [sys.executable, "-m", "oomwizard", "verify", "sampler-warmup"]
    r = subprocess.run([*run, bad, "--format", "json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 8, r.stderr
    data = json.loads(r.stdout)
    assert data["leaf"] == "sampler-warmup" and data["failed"] is True
    assert any(c["status"] == "fail" for c in data["checks"])
    r = subprocess.run([*run, good], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 9), r.stdout + r.stderr
    assert "FAILED" not in r.stdout
    r = subprocess.run([*run, str(tmp_path / "missing.log")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 4 and "missing.log" in r.stderr
    r = subprocess.run([sys.executable, "-m", "oomwizard", "verify", "no-such-leaf", good], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 7


def test_large_inputs_are_matched_line_by_line_and_across_breaks(tmp_path: Path, monkeypatch) -> None:
    """Searching a big log still finds a failure a terminal wrapped onto two lines."""
    cut = SAMPLER_ERR.index("warming up") + 4
    lines = [*START, *READY, SAMPLER_ERR[:cut], SAMPLER_ERR[cut:]]
    v = verify(leaf(ABSENT, PRESENT), [write(tmp_path, "big.log", lines)], all_lines_limit=0)
    assert v.ready
    assert v.results[0].status == FAIL and v.results[0].hit is not None
    assert v.results[0].hit.line == 6
    assert v.results[1].status == PASS


@pytest.mark.parametrize("engine", ["hyperscan", "re2"])
def test_every_checklist_pattern_compiles_for_the_log_search(engine: str) -> None:
    """A checklist is searched in the same pass as the diagnosis: its patterns must compile in the
    fast engines, or the whole search would fall back to a slower one."""
    pytest.importorskip(engine)
    from oomwizard.kb.loader import get_kb
    from oomwizard.logs.scan import Anchor, Scanner

    pats = {p for leaf in get_kb().leaves.values() for c in leaf.checks if c.auto
            for p in (c.auto.log_present, c.auto.log_absent) if p}
    assert len(pats) > 30
    for p in sorted(pats):
        assert Scanner([Anchor(p.encode(), 0, 0)], engine=engine).name == engine, p


def test_log_files_may_follow_the_options() -> None:
    """``verify ID --format json new.log``: argparse alone refuses a file after an option; the
    file still counts, and a real unknown option is still refused."""
    demo = str(Path(__file__).resolve().parent.parent / "oomwizard" / "demo" / "vllm-serve.log")
    run = [sys.executable, "-m", "oomwizard", "verify", "sampler-warmup"]
    after = subprocess.run([*run, "--format", "json", demo], capture_output=True, text=True, timeout=60)
    before = subprocess.run([*run, demo, "--format", "json"], capture_output=True, text=True, timeout=60)
    assert after.returncode == before.returncode == 8, after.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)
    bogus = subprocess.run([*run, "--bogus", demo], capture_output=True, text=True, timeout=60)
    assert bogus.returncode == 2 and "unrecognized arguments: --bogus" in bogus.stderr
