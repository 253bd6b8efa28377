"""The memory-budget branch: realistic facts walk to the right leaf, and its commands carry our numbers."""

from __future__ import annotations

import pytest
from kbkit import GIB, H200_BYTES, facts, kb, leaf_for, script

from oomwizard.advice.commands import render_fix
from oomwizard.engine import suggest
from oomwizard.facts.catalog import coerce
from oomwizard.kb.loader import load_kb

AREA_LEAVES = (
    "kv-cache-too-small",
    "no-kv-cache-memory",
    "insufficient-free-memory-at-startup",
    "weights-load-oom",
    "runtime-oom",
    "runtime-oom-logprobs",
    "fragmentation",
    "host-memory",
    "oom-triage",
)


# --- the leaves load cleanly ---------------------------------------------------------------------


def test_area_leaves_and_question_load_without_problems() -> None:
    base, problems = load_kb(strict=False)
    for leaf_id in AREA_LEAVES:
        assert leaf_id in base.leaves, leaf_id
        assert base.article("leaves", leaf_id, "en") is not None
        assert base.article("leaves", leaf_id, "zh") is not None
    assert "serving_feature" in base.questions
    mine = [p for p in problems if any(x in p.file for x in (*AREA_LEAVES, "serving.yaml"))]
    # routes to colleagues' leaves may not exist yet; everything else must be clean
    assert [p for p in mine if "neither a question nor a leaf" not in p.message] == []


# --- KV cache too small -------------------------------------------------------------------------

KV_TOO_SMALL = dict(
    diagnosis="kv-cache-too-small",
    vllm_version="0.15.2",
    max_model_len=262144,
    kv_needed_gib=24.0,
    kv_cache_gib=3.18,
    estimated_max_model_len=34736,
    startup_total_gib=31.36,
    startup_free_gib=30.9,
    gpu_memory_utilization=0.9,
)


def test_kv_too_small_walks_to_its_leaf_with_vllms_estimate() -> None:
    fs = facts(**KV_TOO_SMALL)
    assert leaf_for(fs).id == "kv-cache-too-small"
    ok, cmd = script("kv-cache-too-small", "fit-max-model-len", fs)
    assert ok and "--max-model-len 33792" in cmd


def test_max_model_len_auto_only_from_0_14() -> None:
    ok, cmd = script("kv-cache-too-small", "max-model-len-auto", facts(**KV_TOO_SMALL))
    assert ok and "--max-model-len auto" in cmd
    older = facts(**{**KV_TOO_SMALL, "vllm_version": "0.13.0"})
    assert script("kv-cache-too-small", "max-model-len-auto", older)[0] is False


def test_kv_too_small_utilization_is_a_placeholder_when_memory_is_not_there() -> None:
    # 20.8 GiB missing on a 31 GiB card cannot come from utilization
    ok, cmd = script("kv-cache-too-small", "raise-utilization", facts(**KV_TOO_SMALL))
    assert ok and "<FRACTION>" in cmd


def test_kv_too_small_utilization_computed_when_it_fits() -> None:
    fs = facts(
        diagnosis="kv-cache-too-small",
        vllm_version="0.11.0",
        kv_needed_gib=20.0,
        kv_cache_gib=12.0,
        gpu_mem_total_bytes=H200_BYTES,
        startup_free_gib=139.3,
    )
    assert leaf_for(fs).id == "kv-cache-too-small"
    assert "--gpu-memory-utilization 0.96" in script("kv-cache-too-small", "raise-utilization", fs)[1]


def test_kv_too_small_on_0_8_4_estimates_from_the_gib_figures() -> None:
    fs = facts(diagnosis="kv-cache-too-small", vllm_version="0.8.4", max_model_len=131072, kv_needed_gib=16.0, kv_cache_gib=5.37)
    # 131072 x 5.37 / 16 = 43,991 -> 43,008
    assert "--max-model-len 43008" in script("kv-cache-too-small", "fit-max-model-len", fs)[1]


# --- no KV cache memory ---------------------------------------------------------------------------

NO_KV = dict(
    diagnosis="no-kv-cache-memory",
    vllm_version="0.11.0",
    weights_gib=40.0,
    activation_peak_gib=6.9,
    non_torch_gib=0.5,
    startup_total_gib=79.19,
    startup_free_gib=78.6,
    gpu_memory_utilization=0.5,
    max_num_batched_tokens=16384,
)


def test_no_kv_memory_raises_utilization_to_cover_the_charges() -> None:
    fs = facts(**NO_KV)
    assert leaf_for(fs).id == "no-kv-cache-memory"
    # (40 + 6.9 + 0.5 + 1 + 0.25) / 79.19 = 0.614 -> 0.62
    assert "--gpu-memory-utilization 0.62" in script("no-kv-cache-memory", "raise-utilization", fs)[1]
    assert "--max-num-batched-tokens 8192" in script("no-kv-cache-memory", "smaller-profiling-batch", fs)[1]


def test_no_kv_memory_version_gates() -> None:
    fs = facts(**{**NO_KV, "vllm_version": "0.10.1", "suggested_kv_cache_bytes": 20 * GIB})
    assert script("no-kv-cache-memory", "kv-cache-bytes-from-vllm", fs)[0] is False
    fs = facts(**{**NO_KV, "vllm_version": "0.10.2", "suggested_kv_cache_bytes": 20 * GIB})
    assert script("no-kv-cache-memory", "kv-cache-bytes-from-vllm", fs) == (
        True,
        "vllm serve <MODEL> --kv-cache-memory-bytes 21474836480  # plus your other flags",
    )
    assert script("no-kv-cache-memory", "upgrade-co-tenancy", facts(vllm_version="0.8.5"))[0] is True
    assert script("no-kv-cache-memory", "upgrade-co-tenancy", facts(vllm_version="0.9.2"))[0] is False
    assert script("no-kv-cache-memory", "eager-no-graph-estimate", facts(vllm_version="0.19.0"))[0] is False


def test_the_running_command_is_rewritten_not_repeated() -> None:
    fs = facts(**NO_KV, serve_command="vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.5 --port 8000")
    cmd = script("no-kv-cache-memory", "raise-utilization", fs)[1]
    assert cmd == "vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.62 --port 8000"


# --- free memory at start-up -------------------------------------------------------------------


def test_startup_check_asks_for_what_is_free() -> None:
    fs = facts(diagnosis="insufficient-free-memory-at-startup", vllm_version="0.14.0", startup_free_gib=59.32, startup_total_gib=79.15)
    assert leaf_for(fs).id == "insufficient-free-memory-at-startup"
    assert "--gpu-memory-utilization 0.74" in script("insufficient-free-memory-at-startup", "fit-utilization-to-free", fs)[1]
    shell = script("insufficient-free-memory-at-startup", "stop-stale-processes", fs)[1]
    assert "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv" in shell
    assert "[V]LLM::" in shell  # the bracket keeps grep from matching itself


# --- weights ---------------------------------------------------------------------------------------


def test_weights_load_phase_walks_to_its_leaf_and_computes_tp() -> None:
    fs = facts(failure_phase="load_weights", vllm_version="0.11.0", checkpoint_gib=140.0, gpu_count=8, gpu_mem_total_bytes=85 * GIB)
    assert leaf_for(fs).id == "weights-load-oom"
    # 85 x 0.9 - 2 = 74.5 GiB per GPU; 140 / 2 = 70 fits
    assert "--tensor-parallel-size 2" in script("weights-load-oom", "tensor-parallel", fs)[1]


def test_weights_expandable_segments_notes_follow_the_release() -> None:
    fix = next(f for f in kb().leaves["weights-load-oom"].fixes if f.id == "expandable-segments-while-loading")
    mid = render_fix(fix, facts(vllm_version="0.17.0")).variants[0]
    new = render_fix(fix, facts(vllm_version="0.21.0")).variants[0]
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in mid.script
    assert mid.note is not None and "sleep-mode" in mid.note.en
    assert new.note is not None and "KV connector" in new.note.en


# --- serving -----------------------------------------------------------------------------------


def test_serving_oom_walks_to_runtime_oom_with_halved_limits() -> None:
    fs = facts(diagnosis="runtime-oom", vllm_version="0.11.0", max_num_seqs=256, max_num_batched_tokens=8192, gpu_memory_utilization=0.95)
    assert leaf_for(fs).id == "runtime-oom"
    assert "--max-num-seqs 128" in script("runtime-oom", "fewer-sequences", fs)[1]
    assert "--max-num-batched-tokens 4096 --enable-chunked-prefill" in script("runtime-oom", "smaller-steps", fs)[1]
    assert "--gpu-memory-utilization 0.90" in script("runtime-oom", "more-headroom", fs)[1]


def test_serving_oom_with_prompt_logprobs_sizes_the_step_from_the_vocabulary() -> None:
    fs = facts(failure_phase="serving", vllm_version="0.11.0", vocab_size=152064, max_num_batched_tokens=8192)
    leaf = leaf_for(fs, {"serving_feature": "prompt_logprobs"})
    assert leaf.id == "runtime-oom-logprobs"
    assert "--max-num-batched-tokens 1024" in script(leaf.id, "step-sized-for-logits", fs)[1]


def test_fragmented_oom_message_routes_serving_to_fragmentation() -> None:
    fs = facts(
        failure_phase="serving",
        vllm_version="0.15.0",
        oom_requested_bytes=int(1.5 * GIB),
        oom_reserved_unallocated_bytes=int(4.61 * GIB),
        oom_fragmented=True,  # the log reader's verdict on these numbers (logs/torch_oom.py)
    )
    assert leaf_for(fs).id == "fragmentation"
    cmd = script("fragmentation", "expandable-segments", fs)[1]
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in cmd
    assert "unset PYTORCH_ALLOC_CONF" in cmd


def test_small_reserved_memory_is_not_fragmentation() -> None:
    fs = facts(
        failure_phase="serving",
        vllm_version="0.15.0",
        oom_requested_bytes=int(1.25 * GIB),
        oom_reserved_unallocated_bytes=612 * 1024**2,
        oom_fragmented=False,
    )
    assert leaf_for(fs).id == "runtime-oom"


def test_serving_feature_suggests_lora_and_speculative_from_facts() -> None:
    q = kb().questions["serving_feature"]
    lora = suggest(q, facts(lora_enabled=True))
    spec = suggest(q, facts(num_speculative_tokens=3))
    assert lora is not None and lora.answer == "lora"
    assert spec is not None and spec.answer == "speculative"
    routes = {c.id: c.routes for c in q.choices}
    assert routes["lora"][0].target == "lora"
    assert routes["speculative"][0].target == "speculative-decoding"


def test_upgrade_from_v0_goes_to_migration_unless_it_already_ran_on_v1() -> None:
    base = dict(failure_phase="serving", vllm_version="0.9.2", changed_recently="vllm_upgrade", engine="v1")
    q = kb().questions["serving_feature"]
    plain = q.choice("plain")
    assert plain is not None
    targets = [r.target for r in plain.routes]
    assert targets == ["v1-migration", "runtime-oom"]
    cond = plain.routes[0].condition
    assert cond is not None
    assert cond.evaluate(lambda n: coerce(n, base[n]) if n in base else None) is True
    already = {**base, "v0_v1_choice": "already_v1"}
    assert cond.evaluate(lambda n: coerce(n, already[n]) if n in already else None) is False
    later = {**base, "vllm_version": "0.11.0"}
    assert cond.evaluate(lambda n: coerce(n, later[n]) if n in later else None) is False


# --- host memory, fragmentation per release, triage -------------------------------------------


def test_swap_space_only_up_to_0_17() -> None:
    fs = facts(failure_phase="host_memory", vllm_version="0.17.0", host_mem_total_bytes=64 * GIB, tp=2)
    assert leaf_for(fs).id == "host-memory"
    ok, cmd = script("host-memory", "smaller-swap-space", fs)
    assert ok and "--swap-space 9" in cmd
    assert script("host-memory", "smaller-swap-space", facts(vllm_version="0.18.0"))[0] is False


def test_multimodal_cache_spelling_per_release() -> None:
    old = script("host-memory", "smaller-mm-cache", facts(vllm_version="0.9.2"))[1]
    new = script("host-memory", "smaller-mm-cache", facts(vllm_version="0.10.1"))[1]
    assert "export VLLM_MM_INPUT_CACHE_GIB=1" in old
    assert "--mm-processor-cache-gb 1" in new


def test_tp_fragmentation_fix_disables_custom_all_reduce() -> None:
    ok, cmd = script("fragmentation", "expandable-segments-tp", facts(vllm_version="0.33.0"))
    assert ok and "--disable-custom-all-reduce" in cmd and "expandable_segments:True" in cmd


@pytest.mark.parametrize("version", ["0.7.3", "0.12.0", "0.33.0"])
def test_nothing_known_ends_in_triage_with_debug_logging(version: str) -> None:
    fs = facts(vllm_version=version)
    assert leaf_for(fs).id == "oom-triage"
    cmd = script("oom-triage", "debug-logging", fs)[1]
    assert "export VLLM_LOGGING_LEVEL=DEBUG" in cmd


# --- the trunk's engine and model-runner suggestions (vllm-facts §1) ------------------------------


def suggested(question: str, **values: object) -> str | None:
    s = suggest(kb().questions[question], facts(**values))
    return None if s is None else s.answer


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"vllm_version": "0.7.3"}, "v0"),
        ({"vllm_version": "0.7.3", "env_vllm_use_v1": "1"}, "v1"),
        ({"vllm_version": "0.8.0"}, "v1"),
        ({"vllm_version": "0.10.2", "env_vllm_use_v1": "0"}, "v0"),
        ({"vllm_version": "0.11.0", "env_vllm_use_v1": "0"}, "v1"),  # V0 is gone; 0.11.0 refuses the switch
        ({"vllm_version": "0.33.0"}, "v1"),
    ],
)
def test_engine_suggestion_follows_the_release(values: dict[str, object], expected: str) -> None:
    assert suggested("engine", **values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"vllm_version": "0.11.2"}, "v1"),
        ({"vllm_version": "0.15.0"}, "v1"),
        ({"vllm_version": "0.15.0", "env_vllm_use_v2_model_runner": "1"}, "v2"),
        ({"vllm_version": "0.22.0", "model_arch": "Qwen3ForCausalLM"}, "v2"),
        ({"vllm_version": "0.22.0", "model_arch": "Qwen3ForCausalLM", "quantization": "fp8"}, "v1"),
        ({"vllm_version": "0.22.0", "model_arch": "LlamaForCausalLM"}, "v1"),
        ({"vllm_version": "0.23.0", "model_arch": "LlamaForCausalLM"}, "v2"),
        ({"vllm_version": "0.23.0", "model_arch": "LlamaForCausalLM", "quantization": "awq"}, "v1"),
        # 0.24 takes the listed architectures quantized too
        ({"vllm_version": "0.24.0", "model_arch": "LlamaForCausalLM", "quantization": "awq"}, "v2"),
        ({"vllm_version": "0.24.0", "model_arch": "Qwen2MoeForCausalLM"}, "v2"),
        ({"vllm_version": "0.24.0", "model_arch": "GemmaForCausalLM"}, "v1"),
        ({"vllm_version": "0.25.0", "is_moe": False}, "v2"),
        ({"vllm_version": "0.25.0", "is_moe": True, "model_arch": "Qwen3MoeForCausalLM"}, "v1"),
        ({"vllm_version": "0.26.0", "is_moe": True, "model_arch": "LongcatFlashNgramForCausalLM"}, "v2"),
        ({"vllm_version": "0.26.0", "is_moe": True, "model_arch": "KimiK3ForConditionalGeneration"}, "v1"),
        ({"vllm_version": "0.27.0", "is_moe": True, "model_arch": "KimiK3ForConditionalGeneration"}, "v2"),
        ({"vllm_version": "0.28.0", "is_moe": True, "model_arch": "DeepseekV4ForCausalLM"}, "v2"),
        ({"vllm_version": "0.29.0", "is_moe": True}, "v2"),
        ({"vllm_version": "0.30.0", "platform": "rocm", "model_arch": "GlmMoeDsaForCausalLM"}, "v1"),
        ({"vllm_version": "0.32.0", "platform": "rocm", "model_arch": "DeepseekV4ForCausalLM"}, "v2"),
        ({"vllm_version": "0.30.0", "env_vllm_use_v2_model_runner": "0"}, "v1"),
    ],
)
def test_model_runner_suggestion_follows_each_releases_default(values: dict[str, object], expected: str) -> None:
    assert suggested("model_runner", **values) == expected


@pytest.mark.parametrize("version", ["0.22.0", "0.25.0", "0.28.0"])
def test_model_runner_is_asked_when_what_decides_is_unknown(version: str) -> None:
    assert suggested("model_runner", vllm_version=version) is None


def test_a_leftover_v0_switch_on_a_v1_only_release_leads_to_the_migration_leaf() -> None:
    fs = facts(diagnosis="runtime-oom", vllm_version="0.17.0", env_vllm_use_v1="0")
    assert suggested("changed_recently", vllm_version="0.17.0", env_vllm_use_v1="0") == "vllm_upgrade"
    assert leaf_for(fs).id == "v1-migration"
    # the same switch where V0 still exists is a choice, not evidence of an upgrade
    assert suggested("changed_recently", vllm_version="0.9.2", env_vllm_use_v1="0") is None


def test_cpu_offload_forces_the_v1_runner_only_before_0_28() -> None:
    # vllm/v1/worker/gpu/model_runner.py@0.28.0 builds the offloader (vllm#51413); 0.27.1 does not
    for lid in ("weights-load-oom", "kv-cache-too-small"):
        ok, cmd = script(lid, "cpu-offload-weights", facts(vllm_version="0.27.1", checkpoint_gib=40))
        assert ok and "VLLM_USE_V2_MODEL_RUNNER=0" in cmd, lid
        ok, cmd = script(lid, "cpu-offload-weights", facts(vllm_version="0.28.0", checkpoint_gib=40))
        assert ok and "VLLM_USE_V2_MODEL_RUNNER" not in cmd, lid


def test_fixed_kv_cache_size_keeps_the_utilization_check_in_view() -> None:
    # vllm/v1/worker/utils.py@0.21.0 request_memory(): the free-memory check runs with --kv-cache-memory-bytes too
    for lid, fid in (("no-kv-cache-memory", "kv-cache-bytes-from-vllm"), ("runtime-oom", "kv-cache-bytes-that-fit"),
                     ("sleep-mode", "fixed-kv-cache-size")):
        fix = next(f for f in kb().leaves[lid].fixes if f.id == fid)
        note = fix.variants[0].note
        assert note is not None and "free share" in note.en and "空闲比例" in note.zh, lid


def test_logprobs_leaf_states_the_v2_chunking_as_verified() -> None:
    # vllm/v1/worker/gpu/sample/prompt_logprob.py@0.33.0: CHUNK_SIZE = 1024
    leaf = kb().leaves["runtime-oom-logprobs"]
    assert not any("unverified" in c.en or "downstream" in c.en.lower() for c in leaf.caveats)
    assert any("1,024-token chunks" in c.en and "--max-logprobs" in c.en for c in leaf.caveats)
    step = next(f for f in leaf.fixes if f.id == "step-sized-for-logits").variants[0].note
    assert step is not None and "1,024" in step.en and "1,024" in step.zh


def test_a_multimodal_server_that_dies_at_run_time_reaches_the_multimodal_leaf() -> None:
    # v1/worker/gpu/model_runner.py@0.26.0 profiles no encoder under V2; @0.27.0 does
    assert leaf_for(facts(failure_phase="serving", vllm_version="0.26.0", is_multimodal=True)).id == "runtime-oom-multimodal"
    # gpu/mm/encoder_runner.py@0.15.0: V2 (opt-in) runs multimodal models from 0.15.0
    ok, cmd = script("multimodal-profile", "v1-runner-profiles-the-encoder", facts(vllm_version="0.15.0"))
    assert ok and "export VLLM_USE_V2_MODEL_RUNNER=0" in cmd
    assert not script("multimodal-profile", "v1-runner-profiles-the-encoder", facts(vllm_version="0.14.0"))[0]
    ok, cmd = script("multimodal-profile", "v1-runner-profiles-the-encoder", facts(vllm_version="0.26.0"))
    assert ok and "export VLLM_USE_V2_MODEL_RUNNER=0" in cmd
    assert not script("multimodal-profile", "v1-runner-profiles-the-encoder", facts(vllm_version="0.27.0"))[0]
    ok, cmd = script("multimodal-profile", "profile-with-your-size", facts(vllm_version="0.11.1"))
    assert ok and '"width": 1024' in cmd
