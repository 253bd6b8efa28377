"""CUDA graphs, custom all-reduce, the workspace lock, speculative decoding: realistic facts walk to the
right leaf, and the commands carry the spelling of each vLLM release and this machine's numbers."""

from __future__ import annotations

import pytest
from kbkit import GIB, H200_BYTES, facts, kb, leaf_for, script, shipped_lint, walk_to

AREA_LEAVES = (
    "cudagraph-capture",
    "mrv2-cudagraph-profile-zero",
    "mrv2-cudagraph-profile-zero-deepseek-v4",
    "expandable-segments-custom-allreduce",
    "custom-allreduce-ipc",
    "workspace-locked",
    "speculative-decoding",
)
AREA_QUESTIONS = ("capture_runner", "mrv2_model", "capture_spec", "allreduce_expandable")


# --- the knowledge base of this area is complete and lints clean ----------------------------------


def test_leaves_questions_and_articles_exist_in_both_languages() -> None:
    base = kb()
    for leaf_id in AREA_LEAVES:
        assert leaf_id in base.leaves, leaf_id
        for lang in ("en", "zh"):
            assert ("leaves", leaf_id, lang) in base.articles, (leaf_id, lang)
    for qid in AREA_QUESTIONS:
        assert qid in base.questions, qid
        for lang in ("en", "zh"):
            assert ("questions", qid, lang) in base.articles, (qid, lang)


def test_lint_finds_nothing_in_this_area() -> None:
    names = (*AREA_LEAVES, *AREA_QUESTIONS, "questions/graphs.yaml")
    mine = [p for p in shipped_lint() if any(n in p.file for n in names)]
    assert mine == [], "\n".join(str(p) for p in mine)


# --- CUDA graph capture --------------------------------------------------------------------------


def test_capture_oom_on_the_v1_runner_goes_to_the_general_leaf() -> None:
    fs = facts(diagnosis="cudagraph-capture", vllm_version="0.20.0", model_arch="Qwen3ForCausalLM", is_moe=False)
    done = walk_to(fs)
    assert done.leaf.id == "cudagraph-capture"
    assert [s.question for s in done.path][-2:] == ["capture_runner", "capture_spec"]


def test_capture_phase_without_a_named_scenario_reaches_the_branch() -> None:
    fs = facts(failure_phase="graph_capture", vllm_version="0.9.2")
    assert leaf_for(fs).id == "cudagraph-capture"


def test_dense_model_on_0_25_runs_model_runner_v2_with_a_zero_estimate() -> None:
    # vllm#49224: Llama-3.1-70B-Instruct FP8, TP=8, 8x L40S, 0.25.1
    fs = facts(failure_phase="graph_capture", vllm_version="0.25.1", model_arch="LlamaForCausalLM", is_moe=False, tp=8)
    done = walk_to(fs)
    assert done.leaf.id == "mrv2-cudagraph-profile-zero"
    assert ("mrv2_model", "other") in [(s.question, s.answer) for s in done.path]


def test_deepseek_v4_on_0_28_gets_its_own_leaf() -> None:
    fs = facts(
        diagnosis="mrv2-cudagraph-profile-zero",
        vllm_version="0.28.0",
        model_arch="DeepseekV4ForCausalLM",
        is_moe=True,
        tp=4,
        ep=True,
    )
    assert leaf_for(fs).id == "mrv2-cudagraph-profile-zero-deepseek-v4"


def test_from_0_29_the_estimate_is_real_so_the_general_leaf_applies() -> None:
    fs = facts(failure_phase="graph_capture", vllm_version="0.29.0", model_arch="DeepseekV4ForCausalLM", is_moe=True)
    assert leaf_for(fs).id == "cudagraph-capture"


def test_forced_v2_on_0_20_is_the_zero_estimate_too() -> None:
    fs = facts(failure_phase="graph_capture", vllm_version="0.20.0", env_vllm_use_v2_model_runner="1")
    assert leaf_for(fs).id == "mrv2-cudagraph-profile-zero"


def test_capture_oom_with_speculative_decoding_goes_to_its_leaf() -> None:
    fs = facts(failure_phase="graph_capture", vllm_version="0.21.0", speculative_method="mtp", num_speculative_tokens=3)
    assert leaf_for(fs).id == "speculative-decoding"


def test_operator_answers_override_the_suggestions() -> None:
    fs = facts(failure_phase="graph_capture", vllm_version="0.26.0", model_arch="LlamaForCausalLM", is_moe=False)
    assert leaf_for(fs, {"model_runner": "v1", "capture_runner": "v1", "capture_spec": "no"}).id == "cudagraph-capture"


# --- commands of the capture leaves, per release -------------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.8.5", '--compilation-config \'{"cudagraph_capture_sizes": [1, 2, 4, 8, 16'),
        ("0.10.2", "--cuda-graph-sizes 128"),
        ("0.11.0", "--cuda-graph-sizes 128"),
        ("0.11.1", "--max-cudagraph-capture-size 128"),
        ("0.33.0", "--max-cudagraph-capture-size 128"),
    ],
)
def test_fewer_capture_sizes_uses_each_releases_spelling(version: str, expected: str) -> None:
    ok, cmd = script("cudagraph-capture", "fewer-capture-sizes", facts(vllm_version=version, max_num_seqs=128))
    assert ok and expected in cmd


def test_nccl_cumem_is_a_caveat_not_a_fix() -> None:
    # NCCL 2.22.3 fixed the cuMem capture overhead and vllm#24141 stopped overriding the variable
    leaf = kb().leaves["cudagraph-capture"]
    assert not any(n == "NCCL_CUMEM_ENABLE" for f in leaf.fixes for v in f.variants for n in v.unset_env)
    assert any("vllm#24141" in c.en for c in leaf.caveats)


def test_fewer_sequences_is_offered_for_the_v0_engine() -> None:
    fs = facts(vllm_version="0.6.6", engine="v0", max_num_seqs=256, serve_command="vllm serve m --max-num-seqs 256")
    ok, cmd = script("cudagraph-capture", "lower-max-num-seqs", fs)
    assert ok and cmd == "vllm serve m --max-num-seqs 128"
    costs = [f.cost for f in kb().leaves["cudagraph-capture"].fixes]
    order = ["none", "low", "medium", "high", "upgrade"]
    assert costs == sorted(costs, key=order.index)


GOOD_CAPTURE_LINES = (
    # V0 0.6.x, V1 runner 0.2x, model runner V2: the same line in each
    "INFO 12-24 06:17:49 model_runner.py:1527] Graph capturing finished in 71 secs, took 6.56 GiB",
    "(EngineCore pid=4113) INFO 08-14 14:07:22 [gpu_model_runner.py:4512] Graph capturing finished in 14 secs, took 1.34 GiB",
    "(Worker_TP1 pid=3264436) INFO 07-14 09:50:23 [model_runner.py:729] Graph capturing finished in 15 secs, took 2.04 GiB",
    "(EngineCore_DP0 pid=77) INFO 03-02 10:11:12 [gpu_model_runner.py:4100] Graph capturing finished in 3 secs, took -0.12 GiB",
)


@pytest.mark.parametrize("leaf_id", ["cudagraph-capture", "mrv2-cudagraph-profile-zero", "mrv2-cudagraph-profile-zero-deepseek-v4"])
def test_capture_checks_match_the_real_log_lines(leaf_id: str) -> None:
    import re

    present = [c.auto.log_present for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_present]
    capture = next(p for p in present if "Graph capturing finished" in p)
    for line in GOOD_CAPTURE_LINES:
        assert re.search(capture, line), (leaf_id, line)
    absent = [c.auto.log_absent for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_absent]
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 3 has a total capacity of 44.39 GiB"
    assert any(re.search(p, oom) for p in absent)
    assert not any(re.search(p, line) for p in absent for line in GOOD_CAPTURE_LINES)


def test_eager_mode_satisfies_the_capture_check_of_the_general_leaf() -> None:
    import re

    line = "(EngineCore pid=9) INFO 05-01 [core.py:93] Initializing a V1 LLM engine (v0.20.0) with config: model='m', enforce_eager=True, kv_cache_dtype=auto"
    present = [c.auto.log_present for c in kb().leaves["cudagraph-capture"].checks if c.auto and c.auto.log_present]
    assert any(re.search(p, line) for p in present)


def test_estimate_variable_exists_only_from_0_18() -> None:
    assert script("cudagraph-capture", "estimate-graphs-in-budget", facts(vllm_version="0.17.0"))[0] is False
    ok, cmd = script("cudagraph-capture", "estimate-graphs-in-budget", facts(vllm_version="0.18.0"))
    assert ok and "export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1" in cmd


def test_kv_bytes_from_0_10_2_and_piecewise_mode_from_0_11() -> None:
    assert script("cudagraph-capture", "kv-cache-bytes-for-graphs", facts(vllm_version="0.10.1"))[0] is False
    ok, cmd = script(
        "cudagraph-capture", "kv-cache-bytes-for-graphs", facts(vllm_version="0.10.2", kv_cache_gib=31.2, cudagraph_estimate_gib=9.5)
    )
    assert ok and "--kv-cache-memory-bytes 22762487808" in cmd
    assert script("cudagraph-capture", "piecewise-graphs-only", facts(vllm_version="0.10.2"))[0] is False
    ok, cmd = script("cudagraph-capture", "piecewise-graphs-only", facts(vllm_version="0.11.0"))
    assert ok and '"cudagraph_mode": "PIECEWISE"' in cmd


def test_capture_util_replaces_the_operators_own_flag() -> None:
    fs = facts(
        vllm_version="0.22.0",
        serve_command="vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.95 --max-model-len 32768",
        gpu_memory_utilization=0.95,
        gpu_mem_total_bytes=H200_BYTES,
        oom_private_pools_bytes=3 * GIB,
        oom_requested_bytes=512 * 1024**2,
    )
    ok, cmd = script("cudagraph-capture", "lower-gpu-util-for-graphs", fs)
    assert ok and cmd == "vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.92 --max-model-len 32768"


def test_model_runner_v1_fallback_only_while_the_estimate_is_zero() -> None:
    ok, cmd = script("mrv2-cudagraph-profile-zero", "use-v1-model-runner", facts(vllm_version="0.25.1"))
    assert ok and "export VLLM_USE_V2_MODEL_RUNNER=0" in cmd
    assert script("mrv2-cudagraph-profile-zero", "use-v1-model-runner", facts(vllm_version="0.29.0"))[0] is False
    # 0.18-0.19 only print the V1 runner's estimate unless asked to apply it
    ok, cmd = script("mrv2-cudagraph-profile-zero", "use-v1-model-runner", facts(vllm_version="0.19.0"))
    assert ok and "export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1" in cmd
    ok, cmd = script("mrv2-cudagraph-profile-zero", "use-v1-model-runner", facts(vllm_version="0.20.0"))
    assert ok and "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" not in cmd
    ok, cmd = script("mrv2-cudagraph-profile-zero", "upgrade-0-29", facts(vllm_version="0.27.0"))
    assert ok and "vllm>=0.29.0" in cmd


def test_deepseek_v4_on_0_28_tries_the_plain_v1_runner_first() -> None:
    # vllm#52401 dropped the V1 + PIECEWISE refusal of vllm#51768; 0.28.0 ran V1 + FULL_AND_PIECEWISE (vllm#55486)
    leaf = kb().leaves["mrv2-cudagraph-profile-zero-deepseek-v4"]
    assert leaf.fixes[0].id == "use-v1-model-runner"
    ok, cmd = script(leaf.id, "use-v1-model-runner", facts(vllm_version="0.28.0", serve_command="vllm serve deepseek-ai/DeepSeek-V4-Pro -tp 4"))
    assert ok and cmd.splitlines() == ["export VLLM_USE_V2_MODEL_RUNNER=0", "vllm serve deepseek-ai/DeepSeek-V4-Pro -tp 4"]
    assert any("vllm#52401" in c.en and "vllm#55486" in c.en and "attention.py@0.28.0" in c.en for c in leaf.caveats)
    # DeepSeek-V4-Pro (861B) never ran on 8x L40S: that environment belongs to the Llama report
    assert "L40S" not in leaf.environment.en


def test_deepseek_v4_fallback_pairs_the_v1_runner_with_full_decode_only() -> None:
    ok, cmd = script("mrv2-cudagraph-profile-zero-deepseek-v4", "v1-runner-full-decode-only", facts(vllm_version="0.28.0"))
    assert ok
    assert "export VLLM_USE_V2_MODEL_RUNNER=0" in cmd
    assert '"cudagraph_mode": "FULL_DECODE_ONLY"' in cmd


# --- custom all-reduce ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expandable", "leaf"),
    [
        (True, "expandable-segments-custom-allreduce"),
        (False, "custom-allreduce-ipc"),
        (None, "expandable-segments-custom-allreduce"),
    ],
)
def test_invalid_argument_splits_on_expandable_segments(expandable: bool | None, leaf: str) -> None:
    values: dict[str, object] = dict(diagnosis="expandable-segments-custom-allreduce", vllm_version="0.24.0", tp=2)
    if expandable is not None:
        values["expandable_segments"] = expandable
    assert leaf_for(facts(**values)).id == leaf


def test_without_the_environment_the_log_readers_choice_decides() -> None:
    fs = facts(diagnosis="custom-allreduce-ipc", vllm_version="0.23.0", tp=4)
    assert leaf_for(fs).id == "custom-allreduce-ipc"
    # a fact read from the server's environment beats the log reader's guess
    fs = facts(diagnosis="custom-allreduce-ipc", vllm_version="0.23.0", tp=4, expandable_segments=True)
    assert leaf_for(fs).id == "expandable-segments-custom-allreduce"


def test_unsetting_both_allocator_variables_keeps_the_command() -> None:
    fs = facts(vllm_version="0.24.0", serve_command="vllm serve deepseek-ai/DeepSeek-V4-Flash -tp 2 --trust-remote-code")
    ok, cmd = script("expandable-segments-custom-allreduce", "drop-expandable-segments", fs)
    assert ok
    assert cmd.splitlines()[:3] == ["unset PYTORCH_CUDA_ALLOC_CONF", "unset PYTORCH_ALLOC_CONF", "unset PYTORCH_HIP_ALLOC_CONF"]
    assert cmd.splitlines()[-1] == "vllm serve deepseek-ai/DeepSeek-V4-Flash -tp 2 --trust-remote-code"


def test_disable_custom_all_reduce_drops_the_0_33_opposite_switch() -> None:
    fs = facts(vllm_version="0.33.0", serve_command="vllm serve m -tp 2 --enable-custom-all-reduce")
    ok, cmd = script("expandable-segments-custom-allreduce", "disable-custom-all-reduce", fs)
    assert ok and cmd == "vllm serve m -tp 2 --disable-custom-all-reduce"


def test_real_p2p_check_clears_the_cache_first() -> None:
    ok, cmd = script("custom-allreduce-ipc", "real-p2p-check", facts(vllm_version="0.14.0"))
    lines = cmd.splitlines()
    assert ok and lines[0] == "export VLLM_SKIP_P2P_CHECK=0"
    # the cache follows VLLM_CACHE_ROOT, else XDG_CACHE_HOME, else ~/.cache
    assert lines[1] == 'rm -f "${VLLM_CACHE_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/vllm}"/gpu_p2p_access_cache_for_*.json'


@pytest.mark.parametrize(
    "line",
    [
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'",
        "Failed: /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:310 'invalid argument'",
    ],
)
def test_allreduce_checks_catch_every_releases_line_number(line: str) -> None:
    import re

    for leaf_id in ("expandable-segments-custom-allreduce", "custom-allreduce-ipc"):
        absent = [c.auto.log_absent for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_absent]
        assert any(re.search(p, line) for p in absent), (leaf_id, line)


def test_allreduce_success_lines_satisfy_the_checks() -> None:
    import re

    good = {
        "expandable-segments-custom-allreduce": "(Worker_TP0 pid=1440) INFO 06-22 11:18:30 [custom_all_reduce.py:211] Registering 4902 cuda graph addresses",
        "custom-allreduce-ipc": (
            "(Worker_TP1 pid=1589) WARNING 05-11 03:01:18 [custom_all_reduce.py:165] Custom allreduce is disabled because your "
            "platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly."
        ),
    }
    for leaf_id, line in good.items():
        present = [c.auto.log_present for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_present]
        assert any(re.search(p, line) for p in present), leaf_id


# --- the workspace lock ----------------------------------------------------------------------------


def test_workspace_assertion_goes_straight_to_its_leaf() -> None:
    fs = facts(diagnosis="workspace-locked", vllm_version="0.21.0", kv_cache_dtype="turboquant_4bit_nc", workspace_required_mb=0.76)
    assert leaf_for(fs).id == "workspace-locked"


def test_workspace_fixes_exist_only_where_the_lock_does() -> None:
    assert script("workspace-locked", "enforce-eager", facts(vllm_version="0.12.0"))[0] is False
    ok, cmd = script("workspace-locked", "enforce-eager", facts(vllm_version="0.13.0"))
    assert ok and "--enforce-eager" in cmd


@pytest.mark.parametrize(
    "line",
    [
        "AssertionError: Workspace is locked but allocation from 'turboquant_attn.py:879:_decode_attention' requires 0.76 MB, "
        "current size is 0.00 MB. Workspace growth is not allowed after locking.",
        "AssertionError: Workspace is locked but 'attn_scratch' was not allocated during warmup for the current ubatch and lane.",
        "AssertionError: Workspace is locked but MoE permute scratch requires 8192 rows, current capacity is 4096 rows. "
        "Scratch growth is not allowed after locking.",
    ],
)
def test_workspace_check_catches_each_releases_wording(line: str) -> None:
    import re

    absent = [c.auto.log_absent for c in kb().leaves["workspace-locked"].checks if c.auto and c.auto.log_absent]
    assert any(re.search(p, line) for p in absent)


def test_turboquant_with_speculation_points_at_the_output_fault_too() -> None:
    leaf = kb().leaves["workspace-locked"]
    assert [f.id for f in leaf.fixes][:2] == ["drop-mtp-with-turboquant", "fp8-kv-with-mtp"]
    assert any("vllm#40831" in c.en for c in leaf.caveats)
    assert any("vllm#44053" in c.en for c in leaf.caveats)


def test_no_command_anywhere_in_this_area_uses_a_variable_that_never_existed() -> None:
    for leaf_id in AREA_LEAVES:
        for fix in kb().leaves[leaf_id].fixes:
            for variant in fix.variants:
                names = [n for n, _ in variant.env] + list(variant.unset_env) + list(variant.shell)
                assert not any("VLLM_ALLOW_WORKSPACE_GROWTH" in n for n in names), (leaf_id, fix.id)
                assert "--use-deepgemm" not in dict(variant.flags), (leaf_id, fix.id)
                assert "--swap-space" not in dict(variant.flags), (leaf_id, fix.id)


# --- speculative decoding --------------------------------------------------------------------------


def test_serving_oom_with_speculation_reaches_the_leaf() -> None:
    fs = facts(diagnosis="speculative-decoding", vllm_version="0.21.0", num_speculative_tokens=5)
    assert leaf_for(fs).id == "speculative-decoding"


def test_fewer_spec_tokens_uses_the_old_flag_before_0_8_2() -> None:
    ok, cmd = script("speculative-decoding", "fewer-spec-tokens", facts(vllm_version="0.8.1", num_speculative_tokens=5))
    assert ok and "--num-speculative-tokens 2" in cmd and "--speculative-config" not in cmd


def test_fewer_spec_tokens_rewrites_the_operators_config() -> None:
    fs = facts(
        vllm_version="0.21.0",
        serve_command="vllm serve Qwen/Qwen3.6-27B -sc '{\"method\": \"mtp\", \"num_speculative_tokens\": 5}' --max-num-seqs 64",
    )
    ok, cmd = script("speculative-decoding", "fewer-spec-tokens", fs)
    assert ok
    assert cmd == "vllm serve Qwen/Qwen3.6-27B --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}' --max-num-seqs 64"


def test_dropping_speculation_removes_the_flags_of_each_era() -> None:
    old = facts(vllm_version="0.7.3", serve_command="vllm serve big --speculative-model small --num-speculative-tokens 4 -tp 2")
    ok, cmd = script("speculative-decoding", "drop-speculative-decoding", old)
    assert ok and cmd == "vllm serve big -tp 2"
    new = facts(vllm_version="0.24.0", serve_command="vllm serve big -sc '{\"method\": \"ngram\", \"num_speculative_tokens\": 4}' -tp 2")
    ok, cmd = script("speculative-decoding", "drop-speculative-decoding", new)
    assert ok and cmd == "vllm serve big -tp 2"


def test_spec_headroom_uses_vocabulary_and_draft_tokens() -> None:
    fs = facts(vllm_version="0.24.0", max_num_seqs=1024, num_speculative_tokens=7, vocab_size=151936, startup_total_gib=79.19)
    ok, cmd = script("speculative-decoding", "spec-headroom", fs)
    assert ok and "--gpu-memory-utilization 0.86" in cmd


def test_real_p2p_check_is_offered_only_where_it_is_not_already_the_default() -> None:
    # vllm/envs.py@0.10.0: VLLM_SKIP_P2P_CHECK defaults to "0" (the real test); envs.py@0.10.1: "1"
    assert not script("custom-allreduce-ipc", "real-p2p-check", facts(vllm_version="0.10.0"))[0]
    ok, cmd = script("custom-allreduce-ipc", "real-p2p-check", facts(vllm_version="0.10.1"))
    assert ok and "export VLLM_SKIP_P2P_CHECK=0" in cmd


def test_capture_checks_pass_when_the_registering_line_is_debug_only() -> None:
    # distributed/device_communicators/custom_all_reduce.py@0.27.0 logs "Registering ..." at DEBUG
    import re

    log = "INFO 09-01 gpu_model_runner.py:6914] Graph capturing finished in 12 secs, took 0.42 GiB"
    for lid in ("custom-allreduce-ipc", "expandable-segments-custom-allreduce"):
        pats = [c.auto.log_present for c in kb().leaves[lid].checks if c.auto and c.auto.log_present and "Registering" in c.auto.log_present]
        assert pats and all(re.search(p, log) for p in pats), lid


def test_capture_leaf_separates_the_oom_that_only_looks_like_capture() -> None:
    # gpu_worker.py@0.20.0: profile_cudagraph_memory() runs before the KV cache, kernel_warmup() before capture
    leaf = kb().leaves["cudagraph-capture"]
    first = leaf.caveats[0]
    for text in (first.en, first.zh):
        assert "profile_cudagraph_memory()" in text and "kernel_warmup()" in text and "--max-num-batched-tokens" in text
    assert "only lever" not in next(f for f in leaf.fixes if f.id == "lower-max-num-seqs").cost_note.en
    assert not any("not verified" in c.en for c in leaf.caveats)


def test_an_unsupported_speculative_method_keeps_the_v1_runner() -> None:
    # config/vllm.py@0.25.0 and @0.29.0: ngram (and other non-EAGLE/MTP methods) fall back to the V1 runner
    from oomwizard.engine import suggest

    for qid in ("model_runner", "capture_runner"):
        q = kb().questions[qid]
        assert suggest(q, facts(vllm_version="0.30.0", speculative_method="ngram")).answer == "v1", qid
        assert suggest(q, facts(vllm_version="0.30.0", speculative_method="mtp")).answer == "v2", qid
        assert suggest(q, facts(vllm_version="0.26.0", speculative_method="ngram", is_moe=False)).answer == "v1", qid
