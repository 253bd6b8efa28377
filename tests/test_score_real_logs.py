"""The scoring rules of benchmarks/score_real_logs.py, on hand-made answers, and one end-to-end run
on two synthetic logs of tests/logs (the real logs stay outside the repository)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
try:
    import score_real_logs as srl
finally:
    sys.path.remove(str(BENCH))


def _label(**kw):  # type: ignore[no-untyped-def]
    base = dict(id="x", log="logs/x.log", issue="o/r#1", expected="sampler-warmup", allowed=[],
                error_line=True, non_oom=False, ambiguous=False, facts={})
    base.update(kw)
    return base


def _answer(*matches, leaf=None, facts=None, ooms=()):  # type: ignore[no-untyped-def]
    return {"matches": [{"scenario": s, "score": v, "evidence": []} for s, v in matches],
            "facts": {k: {"value": v} for k, v in (facts or {}).items()},
            "oom_messages": list(ooms), "leaf": leaf}


def test_top1_strict_and_allowed() -> None:
    lab = _label(allowed=["sampler-sort-large-vocab"])
    s = srl.score(lab, _answer(("sampler-sort-large-vocab", 0.9), ("sampler-warmup", 0.7)))
    assert s["top1"] and not s["strict"] and s["top3"]
    s = srl.score(lab, _answer(("runtime-oom", 0.4), ("fragmentation", 0.3), ("lora", 0.2), ("sampler-warmup", 0.1)))
    assert not s["top1"] and not s["top3"]


def test_non_oom_and_ambiguous_are_right_only_without_a_confident_claim() -> None:
    calm = _label(expected=None, non_oom=True)
    assert srl.score(calm, _answer())["top1"]
    assert srl.score(calm, _answer(("runtime-oom", 0.4), leaf={"id": "oom-triage"}))["leaf"]
    claim = srl.score(calm, _answer(("cudagraph-capture", 0.5), leaf={"id": "cudagraph-capture",
                                                                      "scenarios": ["cudagraph-capture"]}))
    assert not claim["top1"] and not claim["leaf"]
    amb = _label(expected="runtime-oom", ambiguous=True)
    assert srl.score(amb, _answer(("runtime-oom", 0.4), leaf={"id": "oom-triage"}))["leaf"]
    assert not srl.score(amb, _answer(("fragmentation", 0.55)))["top1"]


def test_facts_numbers_within_tolerance_model_by_name_bytes_from_any_message() -> None:
    lab = _label(facts={"tp": 2, "model": "Qwen3-32B", "oom_total": 1000, "vllm_version": "0.11.0"})
    s = srl.score(lab, _answer(facts={"tp": 2, "model": "Qwen/Qwen3-32B", "vllm_version": "0.11.0"},
                               ooms=[{"total": None}, {"total": 1001}]))
    assert s["facts"] == {"tp": True, "model": True, "oom_total": True, "vllm_version": True}
    s = srl.score(lab, _answer(facts={"tp": 4, "model": "Qwen/Qwen3-8B"}, ooms=[{"total": 1010}]))
    assert s["facts"] == {"tp": False, "model": False, "oom_total": False, "vllm_version": False}


def test_runs_the_tool_and_prints_the_table(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(HERE / "logs" / "allreduce_expandable_0240_sm120.log", logs / "a.log")
    shutil.copy(HERE / "logs" / "cudagraph_capture_v0_073_blank_lines.log", logs / "b.log")
    labels = [_label(id="a", log="logs/a.log", expected="expandable-segments-custom-allreduce", facts={"tp": 2}),
              _label(id="b", log="logs/b.log", expected=None, non_oom=True, error_line=False)]
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    assert srl.main([str(tmp_path / "labels.json"), str(logs), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "| with error line | 1 | 1 (100 %) | 1 | 1 | 1 | 1 of 1 |" in out
    assert "| cut | 1 | 0 (0 %) | 0 | 0 | 0 | 0 of 0 |" in out
    assert "non-OOM logs with a confident claim (>= 0.5): 1 of 1" in out
    assert json.loads((tmp_path / "out" / "b.json").read_text())["matches"][0]["scenario"] == "cudagraph-capture"
