"""Every scenario, from at least two synthetic logs with real-world mess (tests/logs/make_logs.py):
the scenario ranks first, and the facts and numbers are read with the line they came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from logkit import LOGS, b

from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.logs.model import Diagnosis


def line_of(name: str, needle: str, last: bool = False) -> int:
    """1-based number of the physical line of ``name`` holding ``needle`` (first or last)."""
    text = (LOGS / name).read_bytes().decode("utf-8", "replace")
    hits = [i for i, ln in enumerate(text.split("\n"), 1) if needle in ln]
    assert hits, f"{needle!r} not in {name}"
    return hits[-1] if last else hits[0]


# log -> (scenario ranked first, {fact: value}, {fact: (needle, last?)} for the line each fact comes from)
CASES: dict[str, tuple[str, dict[str, Any], dict[str, tuple[str, bool]]]] = {
    "sampler_warmup_v082_tp8.log": (
        "sampler-warmup",
        {"vllm_version": "0.8.2", "engine": "v1", "tp": 8, "sampler_dummy_requests": 1024, "failed_rank": 3,
         "failure_phase": "sampler_warmup", "error_platform": "cuda", "oom_requested_bytes": b("1.74 GiB"),
         "oom_process_bytes": b("22.97 GiB"), "oom_other_processes_bytes": 0, "oom_private_pools_bytes": b("128.00 MiB"),
         "weights_gib": 7.6889, "kv_cache_tokens": 265408, "max_concurrency": 8.1},
        {"failed_rank": ("torch.OutOfMemoryError", False), "sampler_dummy_requests": ("warming up sampler", True),
         "kv_cache_tokens": ("GPU KV cache size", False)},
    ),
    "sampler_warmup_k8s_cri.log": (
        "sampler-warmup",
        {"vllm_version": "0.11.1", "sampler_dummy_requests": 256, "max_num_seqs": 256, "gpu_memory_utilization": 0.95,
         "weights_gib": 51.4611, "kv_cache_gib": 18.62, "kv_cache_tokens": 34816, "oom_process_bytes": b("78.97 GiB"),
         "oom_private_pools_bytes": b("862.00 MiB"), "model": "google/gemma-3-27b-it", "model_family": "gemma"},
        {"kv_cache_gib": ("Available KV cache memory", False), "weights_gib": ("Model loading took", False)},
    ),
    "pooler_warmup_jsonlines.log": (
        "sampler-warmup",
        {"vllm_version": "0.10.2", "sampler_dummy_requests": 1024, "model": "BAAI/bge-m3", "kv_cache_gib": 19.75},
        {"sampler_dummy_requests": ("warming up pooler", False)},
    ),
    "sampler_sort_deepseek_v32_wrapped.log": (
        "sampler-sort-large-vocab",
        {"vllm_version": "0.11.1rc2.dev142+g5a1f3e2d8", "model_arch": "DeepseekV32ForCausalLM", "tp": 8,
         "use_deep_gemm": True, "failed_rank": 2, "sampler_dummy_requests": 1024, "oom_requested_bytes": b("1002.00 MiB"),
         "model_family": "deepseek_v32", "is_moe": True},
        {"model_arch": ("Resolved architecture", False), "oom_requested_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "sampler_sort_mrv2_flashinfer.log": (
        "sampler-sort-large-vocab",
        {"vllm_version": "0.22.0", "model_runner": "v2", "failure_phase": "sampler_warmup",
         "oom_requested_bytes": b("4.00 GiB")},
        {"model_runner": ("Using V2 Model Runner", False)},
    ),
    "profile_run_v1_0101.log": (
        "profile-run-oom",
        {"vllm_version": "0.10.1", "failure_phase": "profile_run", "max_num_batched_tokens": 32768,
         "weights_gib": 43.9203, "oom_requested_bytes": b("2.50 GiB"), "gpu_memory_utilization": 0.95},
        {"weights_gib": ("Model loading took", False), "failure_phase": ("torch.OutOfMemoryError", False)},
    ),
    "sampler_in_profile_0200.log": (
        "profile-run-oom",
        {"vllm_version": "0.20.0", "failure_phase": "profile_run", "sampler_dummy_requests": 1024},
        {"failure_phase": ("warming up sampler", False)},
    ),
    "kernel_warmup_deepgemm_0200_dp8.log": (
        "kernel-warmup-oom",
        {"vllm_version": "0.20.0", "failure_phase": "kernel_warmup", "dp": 8, "kv_cache_gib": 37.12,
         "oom_requested_bytes": b("4.03 GiB"), "oom_free_bytes": b("2.71 GiB"), "gpu_memory_utilization": 0.95},
        {"failure_phase": ("torch.OutOfMemoryError", False), "kv_cache_gib": ("Available KV cache memory", False)},
    ),
    "kernel_warmup_flashinfer_autotune_0250_tp4.log": (
        "kernel-warmup-oom",
        {"vllm_version": "0.25.0", "failure_phase": "kernel_warmup", "tp": 4, "max_num_batched_tokens": 32768,
         "oom_requested_bytes": b("3.75 GiB"), "failed_rank": 2},
        {"failure_phase": ("torch.OutOfMemoryError", False)},
    ),
    "cudagraph_profile_0200_h100.log": (
        "cudagraph-profile-oom",
        {"vllm_version": "0.20.0", "failure_phase": "cudagraph_profile", "weights_gib": 67.7213,
         "oom_requested_bytes": b("1.02 GiB"), "oom_private_pools_bytes": b("1.37 GiB")},
        {"failure_phase": ("torch.OutOfMemoryError", False), "weights_gib": ("Model loading took", False)},
    ),
    "cudagraph_profile_0290_mrv2_tp2.log": (
        "cudagraph-profile-oom",
        {"vllm_version": "0.29.0", "failure_phase": "cudagraph_profile", "model_runner": "v2", "tp": 2,
         "oom_requested_bytes": b("640.00 MiB")},
        {"model_runner": ("Using V2 Model Runner", True)},
    ),
    "profile_run_v0_066_journald.log": (
        "profile-run-oom",
        {"vllm_version": "0.6.6", "engine": "v0", "weights_gib": 14.9888, "max_model_len": 131072,
         "max_num_batched_tokens": 131072, "oom_requested_bytes": b("15.66 GiB")},
        {"weights_gib": ("Loading model weights took", False)},
    ),
    "cudagraph_capture_ray_092.log": (
        "cudagraph-capture",
        {"vllm_version": "0.9.2", "tp": 4, "pp": 2, "kv_cache_tokens": 329632, "weights_gib": 17.0145,
         "failure_phase": "graph_capture", "gpu_memory_utilization": 0.98},
        {"weights_gib": ("Model loading took", False), "failure_phase": ("CUDA error: out of memory", False)},
    ),
    "cudagraph_capture_v0_073_blank_lines.log": (
        "cudagraph-capture",
        {"vllm_version": "0.7.3", "engine": "v0", "kv_cache_gib": 2.26, "activation_peak_gib": 1.15,
         "non_torch_gib": 0.08, "requested_gib": 20.86, "gpu_memory_utilization": 0.95,
         "oom_private_pools_bytes": b("1.31 GiB")},
        {"kv_cache_gib": ("the rest of the memory reserved for KV Cache", False),
         "requested_gib": ("total_gpu_memory", False)},
    ),
    "mrv2_capture_0251_tp8.log": (
        "mrv2-cudagraph-profile-zero",
        {"vllm_version": "0.25.1", "model_runner": "v2", "failed_rank": 5, "tp": 8, "quantization": "fp8",
         "kv_cache_tokens": 3127264, "max_concurrency": 23.86, "max_model_len": 131072, "oom_gpu_index": 5},
        {"kv_cache_tokens": ("GPU KV cache size", False)},
    ),
    "mrv2_capture_0210_markdown.log": (
        "mrv2-cudagraph-profile-zero",
        {"vllm_version": "0.21.0", "model_runner": "v2", "env_vllm_use_v2_model_runner": "1",
         "serve_command": "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve Qwen/Qwen3-14B --max-model-len 32768 "
                          "--gpu-memory-utilization 0.93"},
        {"serve_command": ("$ VLLM_USE_V2_MODEL_RUNNER=1", False), "model_runner": ("Using V2 Model Runner", False)},
    ),
    "allreduce_expandable_0240_sm120.log": (
        "expandable-segments-custom-allreduce",
        {"vllm_version": "0.24.0", "expandable_segments": True, "alloc_conf_var": "PYTORCH_CUDA_ALLOC_CONF", "tp": 2,
         "failure_phase": "graph_capture", "failed_rank": 1},
        {"expandable_segments": ("export PYTORCH_CUDA_ALLOC_CONF", False)},
    ),
    "allreduce_expandable_ray_collect_env.log": (
        "expandable-segments-custom-allreduce",
        {"vllm_version": "0.13.0", "expandable_segments": True, "alloc_conf_var": "PYTORCH_ALLOC_CONF",
         "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_count": 4, "torch_version": "2.9.0+cu128", "torch_cuda": "12.8"},
        {"expandable_segments": ("PYTORCH_ALLOC_CONF=", False)},
    ),
    "allreduce_ipc_compose_072.log": (
        "custom-allreduce-ipc",
        {"vllm_version": "0.7.2", "tp": 8, "custom_all_reduce_disabled": False},
        {},
    ),
    "allreduce_ipc_crlf_caret.log": (
        "custom-allreduce-ipc",
        {"vllm_version": "0.10.0", "expandable_segments": False, "alloc_conf": "max_split_size_mb:512",
         "max_split_size_mb": 512, "failed_rank": 1},
        {"failed_rank": ("custom_all_reduce.cuh", False)},
    ),
    "workspace_locked_windows_0210.log": (
        "workspace-locked",
        {"vllm_version": "0.21.0", "workspace_required_mb": 0.76, "workspace_current_mb": 0.0,
         "speculative_method": "mtp", "num_speculative_tokens": 2, "kv_cache_dtype": "turboquant_k8v4",
         "failure_phase": "serving"},
        {"workspace_required_mb": ("Workspace is locked", False)},
    ),
    "workspace_locked_moe_gke.log": (
        "workspace-locked",
        {"vllm_version": "0.26.0", "workspace_required_mb": 146.41, "workspace_current_mb": 3.75,
         "model_family": "kimi", "is_moe": True},
        {"workspace_required_mb": ("Workspace is locked", False)},
    ),
    "mamba_blocks_nemotron_0280.log": (
        "mamba-cache-blocks",
        {"vllm_version": "0.28.0", "max_num_seqs": 1024, "mamba_cache_blocks": 176, "kv_cache_gib": 2.47,
         "gpu_memory_utilization": 0.35, "failure_phase": "kv_cache_alloc", "model_runner": "v1"},
        {"mamba_cache_blocks": ("exceeds available Mamba cache blocks", False)},
    ),
    "mamba_blocks_qwen3next_tp2_docker_0300.log": (
        "mamba-cache-blocks",
        {"vllm_version": "0.30.0", "max_num_seqs": 512, "mamba_cache_blocks": 209, "kv_cache_gib": 1.93, "tp": 2,
         "model_runner": "v2", "is_hybrid": True},
        {"kv_cache_gib": ("Available KV cache memory", True)},
    ),
    "kv_too_small_v1_0102.log": (
        "kv-cache-too-small",
        {"vllm_version": "0.10.2", "max_model_len": 131072, "kv_needed_gib": 16.0, "kv_cache_gib": 9.35,
         "estimated_max_model_len": 76592, "tp": 2, "failure_phase": "kv_cache_alloc"},
        {"estimated_max_model_len": ("To serve at least one request", False)},
    ),
    "kv_too_small_v0_066_docker_ts.log": (
        "kv-cache-too-small",
        {"vllm_version": "0.6.6", "kv_cache_tokens": 3600, "max_model_len": 32768, "requested_gib": 28.57,
         "gpu_mem_total_bytes": round(31.74 * (1 << 30)), "weights_gib": 27.59},
        {"kv_cache_tokens": ("max seq len", False)},
    ),
    "kv_too_small_0220_wrapped100.log": (
        "kv-cache-too-small",
        {"vllm_version": "0.22.0", "kv_needed_gib": 4.31, "kv_cache_gib": 2.13, "estimated_max_model_len": 64768,
         "max_model_len": 131072},
        {"kv_needed_gib": ("To serve at least", False)},
    ),
    "no_kv_memory_085.log": (
        "no-kv-cache-memory",
        {"vllm_version": "0.8.5", "kv_cache_gib": -1.41, "gpu_memory_utilization": 0.3, "failure_phase": "kv_cache_alloc",
         "is_multimodal": True},
        {"kv_cache_gib": ("Available KV cache memory", False)},
    ),
    "no_kv_memory_0220_json.log": (
        "no-kv-cache-memory",
        {"vllm_version": "0.22.0", "model": "openai/gpt-oss-20b", "quantization": "mxfp4", "model_family": "gpt_oss",
         "is_moe": True},
        {"failure_phase": ("No available memory", False)},
    ),
    "weights_load_092.log": (
        "weights-load-oom",
        {"vllm_version": "0.9.2", "failure_phase": "load_weights", "oom_requested_bytes": b("464.00 MiB"),
         "max_model_len": 8192},
        {"oom_requested_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "weights_load_offline_rank0.log": (
        "weights-load-oom",
        {"vllm_version": "0.7.3", "engine": "v0", "failed_rank": 0, "failure_phase": "load_weights"},
        {"failed_rank": ("torch.OutOfMemoryError", False)},
    ),
    "free_memory_0102.log": (
        "insufficient-free-memory-at-startup",
        {"vllm_version": "0.10.2", "startup_free_gib": 59.32, "startup_total_gib": 79.15, "requested_gib": 71.24,
         "gpu_memory_utilization": 0.9, "gpu_mem_total_bytes": round(79.15 * (1 << 30)),
         "failure_phase": "startup_check"},
        {"startup_free_gib": ("Free memory on device", False)},
    ),
    "free_memory_buildkite_ray_0160.log": (
        "insufficient-free-memory-at-startup",
        {"vllm_version": "0.16.0", "startup_free_gib": 19.77, "startup_total_gib": 22.05, "requested_gib": 19.84},
        {"requested_gib": ("Free memory on device cuda:0", False)},
    ),
    "memory_profiling_error_092.log": (
        "insufficient-free-memory-at-startup",
        {"vllm_version": "0.9.2", "failure_phase": "profile_run"},
        {"failure_phase": ("Error in memory profiling", False)},
    ),
    "prompt_logprobs_v1_0250.log": (
        "runtime-oom-logprobs",
        {"vllm_version": "0.25.0", "failure_phase": "serving", "model_runner": "v1", "max_num_batched_tokens": 32768},
        {"oom_requested_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "prompt_logprobs_all_mrv2_0290.log": (
        "runtime-oom-logprobs",
        {"vllm_version": "0.29.0", "failure_phase": "serving", "model_runner": "v2", "oom_requested_bytes": b("23.48 GiB")},
        {},
    ),
    "mm_encoder_runtime_v1_0250.log": (
        "runtime-oom-multimodal",
        {"vllm_version": "0.25.0", "failure_phase": "serving", "model_runner": "v1", "oom_requested_bytes": b("4.63 GiB")},
        {"oom_requested_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "mm_encoder_runtime_mrv2_0260.log": (
        "runtime-oom-multimodal",
        {"vllm_version": "0.26.0", "failure_phase": "serving", "model_runner": "v2"},
        {"model_runner": ("Using V2 Model Runner", False)},
    ),
    "mm_encoder_profile_mrv2_0270.log": (
        "multimodal-profile",
        {"vllm_version": "0.27.0", "failure_phase": "profile_run", "model_runner": "v2"},
        {},
    ),
    "runtime_oom_0110_tp2.log": (
        "runtime-oom",
        {"vllm_version": "0.11.0", "failed_rank": 1, "failure_phase": "serving", "max_num_batched_tokens": 65536,
         "oom_gpu_index": 1, "oom_reserved_unallocated_bytes": b("412.55 MiB")},
        {"failed_rank": ("torch.OutOfMemoryError", False)},
    ),
    "runtime_oom_v0_066_compose.log": (
        "runtime-oom",
        {"vllm_version": "0.6.6", "engine": "v0", "oom_total_bytes": b("15.77 GiB"), "failure_phase": "serving"},
        {"oom_total_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "fragmentation_torch210.log": (
        "fragmentation",
        {"vllm_version": "0.18.0", "oom_reserved_unallocated_bytes": b("6.21 GiB"), "oom_requested_bytes": b("2.00 GiB"),
         "model_family": "qwen", "is_moe": True, "failure_phase": "serving"},
        {"oom_reserved_unallocated_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "fragmentation_rocm_no_traceback.log": (
        "fragmentation",
        {"vllm_version": "0.11.0", "error_platform": "rocm", "platform": "rocm", "failure_phase": "serving",
         "oom_reserved_unallocated_bytes": b("16.84 GiB")},
        {"error_platform": ("HIP out of memory", False)},
    ),
    "multimodal_qwen25vl_0110.log": (
        "multimodal-profile",
        {"vllm_version": "0.11.0", "is_multimodal": True, "failed_rank": 2, "failure_phase": "profile_run",
         "model_arch": "Qwen2_5_VLForConditionalGeneration", "limit_mm_per_prompt": "{'image': 8, 'video': 2}"},
        {"is_multimodal": ("Encoder cache will be initialized", False)},
    ),
    "multimodal_rocm_vit_0171.log": (
        "multimodal-profile",
        {"vllm_version": "0.17.1", "error_platform": "rocm", "oom_requested_bytes": b("192.00 GiB"),
         "failure_phase": "profile_run"},
        {"oom_requested_bytes": ("HIP out of memory", False)},
    ),
    "lora_serving_0111.log": (
        "lora",
        {"vllm_version": "0.11.1", "lora_enabled": True, "max_loras": 8, "max_lora_rank": 64, "failure_phase": "serving"},
        {"lora_enabled": ("non-default args", False)},
    ),
    "lora_profile_dummy_0100.log": (
        "lora",
        {"vllm_version": "0.10.0", "lora_enabled": True, "max_lora_rank": 256, "failure_phase": "profile_run"},
        {},
    ),
    "specdec_eagle_0101.log": (
        "speculative-decoding",
        {"vllm_version": "0.10.1", "speculative_method": "eagle", "num_speculative_tokens": 5, "failure_phase": "serving"},
        {},
    ),
    "specdec_draft_load_v0_066.log": (
        "speculative-decoding",
        {"vllm_version": "0.6.6", "speculative_method": "draft_model", "num_speculative_tokens": 5, "tp": 4,
         "failure_phase": "load_weights"},
        {},
    ),
    "sleep_wake_kv_cumem_verl_083.log": (
        "sleep-mode",
        {"vllm_version": "0.8.3", "sleep_mode": True, "sleep_freed_gib": 47.92, "sleep_in_use_gib": 38.57,
         "error_platform": "cuda", "weights_gib": 30.7134, "tp": 2},
        {"sleep_freed_gib": ("Sleep mode freed", True), "error_platform": ("cumem_allocator.cpp", True)},
    ),
    "sleep_expandable_assert_trl_0102.log": (
        "sleep-mode",
        {"vllm_version": "0.10.2", "sleep_mode": True, "expandable_segments": True,
         "alloc_conf_var": "PYTORCH_CUDA_ALLOC_CONF", "gpu_memory_utilization": 0.35, "failed_rank": 0},
        {"expandable_segments": ("Expandable segments are not compatible", True),
         "alloc_conf_var": ("export PYTORCH_CUDA_ALLOC_CONF", False)},
    ),
    "sleep_trainer_oom_asleep_openrlhf_0151.log": (
        "sleep-mode",
        {"vllm_version": "0.15.1", "sleep_freed_gib": 9.87, "sleep_in_use_gib": 61.2, "kv_cache_gib": 9.61,
         "weights_gib": 27.59, "oom_requested_bytes": b("4.64 GiB"), "oom_other_processes_bytes": b("29.93 GiB")},
        {"sleep_in_use_gib": ("Sleep mode freed", False), "oom_requested_bytes": ("torch.OutOfMemoryError", False)},
    ),
    "sleep_kv_connector_expandable_0270_compose.log": (
        "sleep-mode",
        {"vllm_version": "0.27.0", "expandable_segments": True, "tp": 4},
        {"expandable_segments": ("KV connector NixlConnector", False)},
    ),
    "host_oom_killer_dmesg.log": (
        "host-memory",
        {"vllm_version": "0.7.2", "failure_phase": "host_memory",
         "serve_command": "vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B --tensor-parallel-size 4 --swap-space 64"},
        {"failure_phase": ("Out of memory: Killed process", False), "serve_command": ("$ vllm serve", False)},
    ),
    "host_swap_cannot_allocate.log": (
        "host-memory",
        {"vllm_version": "0.6.6", "swap_space_gb": 256.0, "failure_phase": "host_memory"},
        {"swap_space_gb": ("Possibly too large swap space", False)},
    ),
    "host_k8s_oomkilled.log": (
        "host-memory",
        {"vllm_version": "0.11.0", "failure_phase": "host_memory", "tp": 4},
        {"failure_phase": ("OOMKilled", False)},
    ),
}


@pytest.fixture(scope="module")
def diagnoses() -> dict[str, Diagnosis]:
    return {name: diagnose_paths([str(LOGS / name)]) for name in CASES}


def test_every_scenario_has_two_logs() -> None:
    from oomwizard.kb.loader import load_kb

    kb, _ = load_kb(strict=False)
    per: dict[str, int] = {}
    for scenario, _, _ in CASES.values():
        per[scenario] = per.get(scenario, 0) + 1
    assert set(kb.scenarios) <= set(per), f"scenarios without logs: {set(kb.scenarios) - set(per)}"
    assert all(n >= 2 for n in per.values()), per


@pytest.mark.parametrize("name", sorted(CASES))
def test_scenario_ranks_first(name: str, diagnoses: dict[str, Diagnosis]) -> None:
    scenario = CASES[name][0]
    d = diagnoses[name]
    assert d.matches, f"{name}: no match; warnings {d.warnings}"
    assert d.matches[0].scenario == scenario, [(m.scenario, m.score) for m in d.matches]
    assert d.facts.value("diagnosis") == scenario
    assert d.matches[0].score >= 0.5
    assert d.matches[0].reasons and d.matches[0].evidence
    for e in d.matches[0].evidence:
        assert e.file.endswith(name) and e.line >= 1 and e.text


@pytest.mark.parametrize("name", sorted(CASES))
def test_facts_and_their_lines(name: str, diagnoses: dict[str, Diagnosis]) -> None:
    _, facts, lines = CASES[name]
    d = diagnoses[name]
    for fact, expected in facts.items():
        got = d.facts.get(fact)
        assert got is not None, f"{name}: fact {fact} missing"
        value = str(got.value) if fact in ("vllm_version", "torch_version") else got.value
        if isinstance(expected, float):
            assert value == pytest.approx(expected, abs=1e-6), (fact, value)
        else:
            assert value == expected, (fact, value)
        assert got.kind == "log" and got.file and got.file.endswith(name)
        assert got.source == f"{name}:{got.line}"
    for fact, (needle, last) in lines.items():
        got = d.facts.get(fact)
        assert got is not None, f"{name}: fact {fact} missing"
        assert got.line == line_of(name, needle, last), (fact, got.line, needle)


def test_evidence_points_at_the_original_line() -> None:
    """Blank lines, a Markdown header and wrapped pieces do not shift the line numbers."""
    d = diagnose_paths([str(LOGS / "cudagraph_capture_v0_073_blank_lines.log")])
    ev = d.matches[0].evidence[0]
    assert ev.line == line_of("cudagraph_capture_v0_073_blank_lines.log", "torch.OutOfMemoryError")
    assert "CUDA out of memory" in ev.text
    d = diagnose_paths([str(LOGS / "kv_too_small_0220_wrapped100.log")])
    ev = d.matches[0].evidence[0]
    assert ev.line == line_of("kv_too_small_0220_wrapped100.log", "ValueError: To serve")
    # the wrapped pieces were joined: the whole message is in the evidence
    assert "estimated maximum model length is 64768" in ev.text or ev.text.endswith("…")


def test_interleaved_ranks_keep_their_own_tracebacks() -> None:
    d = diagnose_paths([str(LOGS / "sampler_warmup_v082_tp8.log")])
    ranks = sorted({m["rank"] for m in d.oom_messages})
    assert ranks == [0, 1, 3, 5]
    assert all(m["requested"] == b("1.74 GiB") for m in d.oom_messages)


def test_healthy_log_gives_no_match_and_a_warning() -> None:
    d = diagnose_paths([str(LOGS / "healthy_startup.log")])
    assert d.matches == []
    assert "diagnosis" not in d.facts
    assert any("no out-of-memory error" in w.en for w in d.warnings)
    assert d.facts.value("vllm_version") is not None  # facts are still read


def test_the_last_failing_start_is_the_one_diagnosed(tmp_path: Path) -> None:
    """A serving OOM, then a restart that cannot start because the old engine still holds memory."""
    first = (LOGS / "runtime_oom_0110_tp2.log").read_text(encoding="utf-8")
    second = (LOGS / "free_memory_0102.log").read_text(encoding="utf-8")
    p = tmp_path / "restarts.log"
    p.write_text(first + second, encoding="utf-8")
    d = diagnose_paths([str(p)])
    assert [m.scenario for m in d.matches[:2]] == ["insufficient-free-memory-at-startup", "runtime-oom"]
    assert d.matches[1].score < 0.8  # evidence from the earlier start counts for less
    assert d.facts.value("failure_phase") == "startup_check"
    assert str(d.facts.value("vllm_version")) == "0.10.2"  # the later start's facts win
