"""Hybrid models whose KV pool holds fewer Mamba cache blocks than max_num_seqs: vLLM's message is
read with both numbers, the walk reaches the leaf, and the commands carry the block count and the
utilization that would give every sequence its block."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from kbkit import GIB, facts, kb, leaf_for, script, shipped_lint, value, why
from logkit import LOGS

from oomwizard.logs.diagnose import diagnose_text

# vllm/config/compilation.py@0.20.0 through @0.33.0: one wording in every release.
MESSAGE = ("ValueError: max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks}). Each decode sequence "
           "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most "
           "{blocks} or increase gpu_memory_utilization.")
ERR = "(EngineCore pid=318) ERROR 11-20 10:01:13 [core.py:1324] "


def test_leaf_article_and_lint_are_complete() -> None:
    base = kb()
    assert "mamba-cache-blocks" in base.scenarios
    assert tuple(base.leaves["mamba-cache-blocks"].scenarios) == ("mamba-cache-blocks",)
    for lang in ("en", "zh"):
        assert ("leaves", "mamba-cache-blocks", lang) in base.articles
    mine = [p for p in shipped_lint() if "mamba-cache-blocks" in p.file]
    assert mine == [], "\n".join(str(p) for p in mine)


@pytest.mark.parametrize("text", [
    ERR + MESSAGE.format(seqs=1024, blocks=176),
    # a terminal wrap that swallowed the spaces around a cut
    ERR + "ValueError: max_num_seqs (1024) exceedsavailable Mamba cache blocks(176). Each decode sequence requires",
])
def test_the_message_names_the_scenario_and_both_numbers(text: str) -> None:
    d = diagnose_text(text, name="pasted")
    assert d.best is not None and d.best.scenario == "mamba-cache-blocks"
    assert d.facts.value("max_num_seqs") == 1024
    assert d.facts.value("mamba_cache_blocks") == 176
    assert d.facts.value("failure_phase") == "kv_cache_alloc"


def test_a_healthy_hybrid_start_is_not_this_scenario() -> None:
    text = ("(EngineCore pid=318) INFO 11-20 10:01:12 [gpu_worker.py:579] Available KV cache memory: 12.47 GiB\n"
            "(EngineCore pid=318) INFO 11-20 10:01:12 [kv_cache_utils.py:1869] GPU KV cache size: 92,928 tokens, "
            "Maximum concurrency for 131,072 tokens per request: 5.87x\n")
    d = diagnose_text(text, name="pasted")
    assert d.best is None or d.best.scenario != "mamba-cache-blocks"


def test_without_a_log_the_symptom_choice_reaches_the_leaf() -> None:
    assert leaf_for(facts(vllm_version="0.28.0"), {"symptom": "mamba_blocks"}).id == "mamba-cache-blocks"
    assert leaf_for(facts(diagnosis="mamba-cache-blocks", vllm_version="0.30.0")).id == "mamba-cache-blocks"


def test_max_num_seqs_becomes_the_block_count() -> None:
    fs = facts(vllm_version="0.28.0", max_num_seqs=1024, mamba_cache_blocks=176)
    ok, cmd = script("mamba-cache-blocks", "max-num-seqs-to-blocks", fs)
    assert ok and "--max-num-seqs 176" in cmd
    assert "1024" in why("mamba_max_num_seqs", fs)
    assert value("mamba_max_num_seqs", facts(vllm_version="0.28.0")) is None


def test_utilization_scales_the_budget_to_one_block_per_sequence() -> None:
    # 2.47 GiB holds 176 blocks; 1024 need 2.47 x (1024/176 - 1) = 11.90 GiB more on an 80 GiB card:
    # 0.35 + (11.90 + 0.05) / 80 = 0.4994 -> 0.50.
    fs = facts(vllm_version="0.28.0", max_num_seqs=1024, mamba_cache_blocks=176, kv_cache_gib=2.47,
               gpu_memory_utilization=0.35, gpu_mem_total_bytes=80 * GIB)
    assert value("gpu_util_for_mamba_blocks", fs) == "0.50"
    ok, cmd = script("mamba-cache-blocks", "raise-utilization", fs)
    assert ok and "--gpu-memory-utilization 0.50" in cmd
    # More than the GPU can give (0.35 + 60.81 / 80 > 0.98): a placeholder, not a number.
    assert value("gpu_util_for_mamba_blocks", facts(max_num_seqs=1024, mamba_cache_blocks=40, kv_cache_gib=2.47,
                                                       gpu_memory_utilization=0.35, gpu_mem_total_bytes=80 * GIB)) is None
    # Already enough blocks: nothing to raise.
    assert value("gpu_util_for_mamba_blocks", facts(max_num_seqs=128, mamba_cache_blocks=176, kv_cache_gib=2.47,
                                                       gpu_mem_total_bytes=80 * GIB)) is None


def test_graph_mode_fix_turns_off_full_graphs_only() -> None:
    ok, cmd = script("mamba-cache-blocks", "piecewise-graphs", facts(vllm_version="0.20.0"))
    assert ok and """--compilation-config '{"cudagraph_mode": "PIECEWISE"}'""" in cmd
    # The check exists from 0.20.0 only: no variant for an earlier release.
    assert script("mamba-cache-blocks", "piecewise-graphs", facts(vllm_version="0.19.0"))[0] is False


def test_the_checklist_pattern_fails_on_the_error_and_passes_after_the_fix() -> None:
    leaf = kb().leaves["mamba-cache-blocks"]
    absent = next(re.compile(c.auto.log_absent) for c in leaf.checks if c.auto and c.auto.log_absent)
    present = next(re.compile(c.auto.log_present) for c in leaf.checks if c.auto and c.auto.log_present)
    assert absent.search(ERR + MESSAGE.format(seqs=512, blocks=209))
    fixed = "(EngineCore pid=318) INFO 11-20 10:09:12 [kv_cache_utils.py:1869] GPU KV cache size: 92,928 tokens, " \
            "Maximum concurrency for 131,072 tokens per request: 5.87x"
    assert not absent.search(fixed) and present.search(fixed)


def test_diagnose_json_walks_the_log_to_the_leaf_with_the_computed_value() -> None:
    log = LOGS / "mamba_blocks_nemotron_0280.log"
    out = subprocess.run([sys.executable, "-m", "oomwizard", "diagnose", str(log), "--format", "json"],
                         capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["matches"][0]["scenario"] == "mamba-cache-blocks"
    assert report["leaf"]["id"] == "mamba-cache-blocks"
    first = report["leaf"]["fixes"][0]
    assert first["id"] == "max-num-seqs-to-blocks" and first["number"] == 1
    assert "--max-num-seqs 176" in first["variants"][0]["command"]
    assert "--gpu-memory-utilization 0.35" in first["variants"][0]["command"]
