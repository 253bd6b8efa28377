"""The memory-budget calculations: values an operator pastes, and the arithmetic shown with them."""

from __future__ import annotations

import pytest
from kbkit import GIB, H200_BYTES, facts, value, why

# --- max_model_len_fit ----------------------------------------------------------------------


def test_context_from_vllm_estimate_rounds_down_to_1024() -> None:
    fs = facts(estimated_max_model_len=34736)
    assert value("max_model_len_fit", fs) == "33792"
    assert "34,736" in why("max_model_len_fit", fs)


def test_context_estimated_from_gib_when_vllm_prints_no_number() -> None:
    # 0.8.4-0.9.0 print the error without the estimate: 262144 x 3.18 / 24.0 = 34,734
    fs = facts(max_model_len=262144, kv_needed_gib=24.0, kv_cache_gib=3.18)
    assert value("max_model_len_fit", fs) == "33792"
    assert "262,144 x 3.18 / 24.00" in why("max_model_len_fit", fs)


def test_context_from_v0_token_count_and_small_values() -> None:
    assert value("max_model_len_fit", facts(kv_cache_tokens=7344)) == "7168"
    assert value("max_model_len_fit", facts(kv_cache_tokens=900)) == "896"
    assert value("max_model_len_fit", facts()) is None


# --- utilization ----------------------------------------------------------------------------


def test_util_that_fits_free_memory_at_startup() -> None:
    # "Free memory on device (59.32/79.15 GiB) on startup is less than desired ... (0.9, 71.24 GiB)"
    fs = facts(startup_free_gib=59.32, startup_total_gib=79.15)
    assert value("gpu_util_fit_free", fs) == "0.74"


def test_util_fit_free_never_above_the_ceiling_nor_the_current_share() -> None:
    # NVML read after the culprit left: the GPU is free, nothing to lower.
    assert value("gpu_util_fit_free", facts(startup_free_gib=139.5, startup_total_gib=139.8)) is None
    assert value("gpu_util_fit_free", facts(startup_free_gib=139.5, startup_total_gib=139.8, gpu_memory_utilization=0.99)) == "0.98"


def test_util_fit_free_warns_when_only_weights_would_fit() -> None:
    fs = facts(startup_free_gib=20.0, startup_total_gib=79.15, weights_gib=18.5)
    assert value("gpu_util_fit_free", fs) == "0.24"
    assert "free the GPU" in why("gpu_util_fit_free", fs)


def test_util_lower_uses_the_release_default() -> None:
    assert value("gpu_util_lower", facts(gpu_memory_utilization=0.9)) == "0.85"
    assert value("gpu_util_lower", facts(vllm_version="0.20.0")) == "0.87"
    assert value("gpu_util_lower", facts(vllm_version="0.19.0")) == "0.85"
    # Lowering must lower, even from an already small share.
    assert value("gpu_util_lower", facts(gpu_memory_utilization=0.4)) == "0.35"
    assert value("gpu_util_lower", facts(gpu_memory_utilization=0.08)) is None
    # A share that no longer holds the weights cannot start at all.
    assert value("gpu_util_lower", facts(gpu_memory_utilization=0.3, startup_total_gib=79.15, weights_gib=20.0)) is None
    assert value("gpu_util_lower", facts(gpu_memory_utilization=0.4, startup_total_gib=79.15, weights_gib=20.0)) == "0.35"


def test_util_for_kv_adds_what_is_missing() -> None:
    fs = facts(
        vllm_version="0.11.0",
        kv_needed_gib=20.0,
        kv_cache_gib=12.0,
        gpu_mem_total_bytes=H200_BYTES,
        startup_free_gib=139.3,
    )
    # 0.9 + (20 - 12 + 0.05) / 140.40 = 0.9573 -> 0.96
    assert value("gpu_util_for_kv", fs) == "0.96"


def test_util_for_kv_refuses_what_the_startup_check_would_reject() -> None:
    fs = facts(kv_needed_gib=20.0, kv_cache_gib=12.0, startup_total_gib=139.8, startup_free_gib=120.0, gpu_memory_utilization=0.8)
    assert value("gpu_util_for_kv", fs) is None


def test_util_cover_non_kv_sums_what_vllm_charged() -> None:
    fs = facts(
        vllm_version="0.21.0",
        weights_gib=20.0,
        activation_peak_gib=2.0,
        non_torch_gib=0.5,
        cudagraph_estimate_gib=1.0,
        kv_needed_gib=4.0,
        startup_total_gib=79.15,
    )
    # (20 + 2 + 0.5 + 1 + 4 + 0.25) / 79.15 = 0.3506 -> 0.36
    assert value("gpu_util_cover_non_kv", fs) == "0.36"
    # before 0.20 the CUDA graph estimate is not charged to the budget
    older = facts(weights_gib=20.0, activation_peak_gib=2.0, non_torch_gib=0.5, cudagraph_estimate_gib=1.0,
                  kv_needed_gib=4.0, startup_total_gib=79.15, vllm_version="0.19.0")
    assert value("gpu_util_cover_non_kv", older) == "0.34"


def test_util_cover_non_kv_gives_up_when_weights_fill_the_gpu() -> None:
    fs = facts(weights_gib=75.0, activation_peak_gib=3.0, startup_total_gib=79.15)
    assert value("gpu_util_cover_non_kv", fs) is None


# --- KV size from vLLM's suggestion -----------------------------------------------------------


def test_kv_cache_bytes_come_from_vllms_own_suggestion() -> None:
    fs = facts(suggested_kv_cache_bytes=57403864576, suggested_kv_cache_full_bytes=61203864576)
    assert value("kv_cache_memory_bytes", fs) == "57403864576"
    assert value("kv_cache_memory_bytes_full", fs) == "61203864576"
    assert "53.46 GiB" in why("kv_cache_memory_bytes", fs)
    assert value("kv_cache_memory_bytes", facts()) is None
    # When the charges exceed the budget the "fit" figure is negative: nothing to paste.
    assert value("kv_cache_memory_bytes", facts(suggested_kv_cache_bytes=-5_000_000_000)) is None


# --- batch limits -----------------------------------------------------------------------------


def test_max_num_seqs_halves_the_hardware_default() -> None:
    assert value("serving_max_num_seqs", facts(max_num_seqs=256)) == "128"
    h200 = facts(vllm_version="0.11.0", gpu_mem_total_bytes=H200_BYTES, gpu_name="NVIDIA H200")
    assert value("serving_max_num_seqs", h200) == "512"


def test_max_num_batched_tokens_halves_the_default_per_gpu_tier() -> None:
    assert value("serving_max_num_batched_tokens", facts(max_num_batched_tokens=8192)) == "4096"
    h200 = facts(vllm_version="0.11.0", gpu_mem_total_bytes=H200_BYTES)
    assert value("serving_max_num_batched_tokens", h200) == "4096"
    small = facts(vllm_version="0.11.0", gpu_mem_total_bytes=24 * GIB)
    assert value("serving_max_num_batched_tokens", small) == "1024"


def test_max_num_batched_tokens_never_below_max_num_seqs() -> None:
    fs = facts(max_num_batched_tokens=1536, max_num_seqs=1024)
    assert value("serving_max_num_batched_tokens", fs) == "1024"
    assert "at least max_num_seqs" in why("serving_max_num_batched_tokens", fs)
    # Nothing left to halve: repeating the current value would be no advice at all.
    assert value("serving_max_num_batched_tokens", facts(max_num_batched_tokens=1024, max_num_seqs=1024)) is None


def test_max_num_batched_tokens_floor_counts_the_default_max_num_seqs() -> None:
    # H200 on 0.20.0: max_num_seqs defaults to 1024, and vLLM rejects a token budget below it.
    fs = facts(vllm_version="0.20.0", max_num_batched_tokens=1536, gpu_mem_total_bytes=H200_BYTES, gpu_name="NVIDIA H200")
    assert value("serving_max_num_batched_tokens", fs) == "1024"
    assert "lower --max-num-seqs" in why("serving_max_num_batched_tokens", fs)
    fs = facts(vllm_version="0.20.0", max_num_batched_tokens=1024, gpu_mem_total_bytes=H200_BYTES, gpu_name="NVIDIA H200")
    assert value("serving_max_num_batched_tokens", fs) is None


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.8.5", "4096"), ("0.9.0", "1024"), ("0.20.0", "1024")],
)
def test_a100_80gb_stays_in_the_small_default_tier_from_0_9(version: str, expected: str) -> None:
    # vllm/engine/arg_utils.py: >= 70 GiB *and* not an A100 gets 8192 (serve); the A100 check came in 0.9.0.
    fs = facts(vllm_version=version, gpu_mem_total_bytes=80 * GIB, gpu_name="NVIDIA A100-SXM4-80GB")
    assert value("serving_max_num_batched_tokens", fs) == expected
    assert value("profile_max_num_batched_tokens", fs) == expected


def test_prompt_logprobs_step_from_vocabulary() -> None:
    # 152,064 x 10 B (measured on the H200) = 1.45 MiB per token; 2 GiB / 1.45 MiB = 1,412 -> 1,024
    fs = facts(vocab_size=152064, max_num_batched_tokens=8192)
    assert value("logprobs_batched_tokens", fs) == "1024"
    assert value("logprobs_batched_tokens", facts(vocab_size=152064, max_num_batched_tokens=512)) is None


# --- parallelism and offload -------------------------------------------------------------------


def test_tp_for_weights_from_checkpoint_size() -> None:
    fs = facts(checkpoint_gib=140.0, startup_total_gib=79.15, gpu_count=8, gpu_memory_utilization=0.9)
    # budget 79.15 x 0.9 - 2 = 69.2 GiB; 140 / 2 = 70 does not fit, 140 / 4 = 35 does
    assert value("tp_for_weights", fs) == "4"


def test_tp_for_weights_is_none_beyond_the_gpus_here() -> None:
    fs = facts(checkpoint_gib=1300.0, startup_total_gib=79.15, gpu_count=8)
    assert value("tp_for_weights", fs) is None


def test_tp_next_needs_the_gpus() -> None:
    assert value("tp_next", facts(tp=2, gpu_count=8)) == "4"
    assert value("tp_next", facts(tp=4, gpu_count=4)) is None


def test_cpu_offload_covers_the_missing_kv_cache() -> None:
    fs = facts(kv_needed_gib=24.0, kv_cache_gib=3.18)
    assert value("cpu_offload_gb_fit", fs) == "22"


def test_cpu_offload_cannot_free_more_than_this_gpus_weights() -> None:
    # 20.82 GiB missing but only 8 GiB of weights per GPU: offloading cannot get there.
    fs = facts(kv_needed_gib=24.0, kv_cache_gib=3.18, weights_gib=8.0)
    assert value("cpu_offload_gb_fit", fs) is None
    assert value("cpu_offload_gb_fit", facts(kv_needed_gib=24.0, kv_cache_gib=3.18, weights_gib=29.0)) == "22"


def test_cpu_offload_warns_when_host_ram_is_short() -> None:
    fs = facts(kv_needed_gib=24.0, kv_cache_gib=3.18, gpu_count=4, host_mem_available_bytes=64 * GIB)
    assert "Host RAM is short" in why("cpu_offload_gb_fit", fs)


# --- host memory ------------------------------------------------------------------------------


@pytest.mark.parametrize(("host_gib", "tp", "expected"), [(64, 2, "9"), (256, 8, "9"), (32, 1, "9")])
def test_swap_space_stays_under_v0s_warning(host_gib: int, tp: int, expected: str) -> None:
    assert value("swap_space_fit", facts(host_mem_total_bytes=host_gib * GIB, tp=tp)) == expected


def test_swap_space_explains_the_split_over_tp() -> None:
    text = why("swap_space_fit", facts(host_mem_total_bytes=64 * GIB, tp=4))
    assert "4 GiB each (4 x 4 = 16 GiB in all)" in text


def test_kv_offloading_takes_half_the_available_ram() -> None:
    assert value("kv_offloading_fit", facts(host_mem_available_bytes=100 * GIB)) == "50"


def test_unified_memory_leaves_the_host_its_share() -> None:
    # GB10: the GPU and the host report the same ~120 GiB pool
    fs = facts(startup_total_gib=119.67, host_mem_total_bytes=int(119.67 * GIB), vllm_version="0.27.0")
    # keep max(16, 0.15 x 119.67 = 17.95) GiB: (119.67 - 17.95) / 119.67 = 0.85
    assert value("gpu_util_unified_memory", fs) == "0.85"


def test_unified_memory_calc_stays_out_of_discrete_gpus() -> None:
    fs = facts(gpu_mem_total_bytes=H200_BYTES, host_mem_total_bytes=2048 * GIB)
    assert value("gpu_util_unified_memory", fs) is None


def test_util_cover_non_kv_from_a_negative_kv_figure() -> None:
    # gpt-oss-120b on an H100: "Available KV cache memory: -2.14 GiB" at 0.9, no DEBUG breakdown
    fs = facts(kv_cache_gib=-2.14, gpu_memory_utilization=0.9, startup_total_gib=79.19, vllm_version="0.10.1")
    # 0.9 + (1 + 2.14 + 0.25) / 79.19 = 0.9428 -> 0.95
    assert value("gpu_util_cover_non_kv", fs) == "0.95"
    assert "-2.14" in why("gpu_util_cover_non_kv", fs)


def test_util_cover_non_kv_never_lowers_a_share_that_failed() -> None:
    # 0.27.0 folds non-torch memory into "consumed"; only the weights are known, and the KV cache came
    # out at -3 GiB at 0.92. Weights alone would say 0.78; the printed deficit says what is really missing.
    fs = facts(vllm_version="0.27.0", weights_gib=60.0, kv_cache_gib=-3.0, startup_total_gib=79.19, gpu_memory_utilization=0.92)
    # 0.92 + (1 + 3 + 0.25) / 79.19 = 0.9737 -> 0.98
    assert value("gpu_util_cover_non_kv", fs) == "0.98"
    # without the deficit, a breakdown that lands below the failed share gives no answer
    partial = facts(vllm_version="0.27.0", weights_gib=60.0, startup_total_gib=79.19, gpu_memory_utilization=0.92)
    assert value("gpu_util_cover_non_kv", partial) is None


def test_prompt_logprobs_step_never_above_the_default_nor_below_max_num_seqs() -> None:
    # A 32K vocabulary fits 4,096 tokens in 2 GiB, more than the 2,048 default of a 24 GiB GPU: no advice.
    small_gpu = facts(vocab_size=32000, vllm_version="0.20.0", gpu_mem_total_bytes=24 * GIB)
    assert value("logprobs_batched_tokens", small_gpu) is None
    # Gemma's 262,144 entries fit 512 tokens, but an H200 runs 1,024 sequences by default.
    gemma = facts(vocab_size=262144, vllm_version="0.20.0", gpu_mem_total_bytes=H200_BYTES, gpu_name="NVIDIA H200")
    assert value("logprobs_batched_tokens", gemma) == "1024"
    assert "lower --max-num-seqs" in why("logprobs_batched_tokens", gemma)
    assert value("logprobs_batched_tokens", facts(vocab_size=262144, max_num_seqs=256, max_num_batched_tokens=8192)) == "512"


def test_util_cover_non_kv_never_offers_a_share_below_0_05() -> None:
    # A 0.5B model on an H200 needs about 1% of it; the answer is still a usable setting.
    fs = facts(weights_gib=0.5, startup_total_gib=139.8, vllm_version="0.20.0")
    assert value("gpu_util_cover_non_kv", fs) == "0.05"
    assert "= 0.02, raised to the 0.05 floor" in why("gpu_util_cover_non_kv", fs)
