"""The sampler and start-up calculations: values from real log numbers, the arithmetic shown, fallbacks."""

from __future__ import annotations

from kbkit import GIB, H200_BYTES, MIB, facts

from oomwizard.advice.calcs import sampler as sampler_calcs
from oomwizard.advice.numbers import resolve

# --- sampler_max_num_seqs -----------------------------------------------------------------------


def test_sampler_seqs_fit_the_free_memory_of_the_oom() -> None:
    # vllm#33920: GLM-4.7-Flash, 256 dummy requests, 212.62 MiB free at the OOM.
    fs = facts(sampler_dummy_requests=256, oom_free_bytes=int(212.62 * MIB), vocab_size=154880)
    r = resolve("sampler_max_num_seqs", fs)
    # 0.9 x 212.62 MiB / (154,880 x 38 B) = 34 requests -> 32
    assert r.value == "32"
    assert "154,880 x 38 B" in r.why.en and "34 requests" in r.why.en
    assert "取 2 的幂为 32" in r.why.zh


def test_the_warmups_own_tensors_count_as_room_when_the_sort_order_failed() -> None:
    # vllm#33920: the 304 MiB that failed is 256 x 154,880 x 8 B, the sort's int64 order, its first allocation
    # (benchmarks/results/sampler_sort_oom_point_h200.json); the logits and their float32 copy (6 B per element,
    # 227 MiB) were already held by the warm-up.
    base = dict(sampler_dummy_requests=256, oom_free_bytes=int(212.62 * MIB), vocab_size=154880)
    fs = facts(**base, oom_requested_bytes=304 * MIB)
    r = resolve("sampler_max_num_seqs", fs)
    # 0.9 x (212.62 + 226.9) MiB / (154,880 x 38 B) = 70 requests -> 64
    assert r.value == "64"
    assert "sort's int64 order" in r.why.en and "70 requests" in r.why.en
    util = facts(**base, oom_requested_bytes=304 * MIB, oom_total_bytes=int(23.52 * GIB), gpu_memory_utilization=0.9)
    # (1.40 - 0.43 + 0.5) GiB / 23.52 GiB = 0.063 -> 0.07
    assert resolve("sampler_gpu_util", util).value == "0.83"
    # a failed request of another size says nothing about what the warm-up held
    assert resolve("sampler_max_num_seqs", facts(**base, oom_requested_bytes=64 * MIB)).value == "32"


def test_sampler_util_never_raises_a_low_setting() -> None:
    assert resolve("sampler_gpu_util", facts(gpu_memory_utilization=0.4)).value == "0.35"
    assert resolve("sampler_gpu_util", facts(gpu_memory_utilization=0.12)).value is None


def test_sampler_seqs_use_the_family_vocabulary_and_say_so() -> None:
    fs = facts(sampler_dummy_requests=1024, oom_free_bytes=900 * MIB, model_family="deepseek_v32")
    r = resolve("sampler_max_num_seqs", fs)
    assert r.value == "128"  # 0.9 x 900 MiB / (129,280 x 38 B) = 172
    assert "typical of the deepseek_v32 family" in r.why.en


def test_sampler_seqs_warn_when_the_fit_is_too_small_to_be_useful() -> None:
    fs = facts(sampler_dummy_requests=1024, oom_free_bytes=20 * MIB, vocab_size=262144)
    r = resolve("sampler_max_num_seqs", fs)
    assert r.value == "1"
    assert "--gpu-memory-utilization" in r.why.en


def test_speculative_tokens_multiply_the_rows_per_request() -> None:
    plain = facts(sampler_dummy_requests=512, oom_free_bytes=2 * GIB, vocab_size=151936)
    spec = facts(sampler_dummy_requests=512, oom_free_bytes=2 * GIB, vocab_size=151936, num_speculative_tokens=3)
    assert resolve("sampler_max_num_seqs", plain).value == "256"  # 333 fit
    assert resolve("sampler_max_num_seqs", spec).value == "64"  # 83 fit with 4 rows each


def test_sampler_seqs_halve_without_the_oom_numbers() -> None:
    r = resolve("sampler_max_num_seqs", facts(max_num_seqs=512, vllm_version="0.15.0"))
    assert r.value == "256"
    assert "half" in r.why.en


def test_sampler_seqs_default_on_a_large_gpu_is_1024() -> None:
    fs = facts(vllm_version="0.15.0", gpu_mem_total_bytes=H200_BYTES, gpu_name="NVIDIA H200")
    n, why, _ = sampler_calcs.warmup_requests(fs)
    assert n == 1024
    assert "min(max_num_seqs = 1024" in why.en
    assert resolve("sampler_max_num_seqs", fs).value == "512"


def test_warmup_requests_are_capped_by_the_token_budget() -> None:
    n, _, _ = sampler_calcs.warmup_requests(facts(max_num_seqs=1024, max_num_batched_tokens=512))
    assert n == 512


def test_when_the_numbers_say_it_fits_we_still_halve() -> None:
    # 4 GiB free holds all 256 requests: the OOM had another cause; halving is the honest fallback.
    fs = facts(sampler_dummy_requests=256, oom_free_bytes=4 * GIB, vocab_size=128256)
    assert resolve("sampler_max_num_seqs", fs).value == "128"


# --- sampler_gpu_util ------------------------------------------------------------------------------


def test_sampler_util_gives_back_the_shortfall_plus_margin() -> None:
    fs = facts(
        sampler_dummy_requests=256,
        oom_free_bytes=int(212.62 * MIB),
        oom_total_bytes=int(23.52 * GIB),
        vocab_size=154880,
        gpu_memory_utilization=0.9,
    )
    r = resolve("sampler_gpu_util", fs)
    # peak 256 x 154,880 x 38 B = 1.40 GiB; (1.40 - 0.21 + 0.5) / 23.52 = 0.072 -> 0.08
    assert r.value == "0.82"
    assert "1.40 GiB" in r.why.en


def test_sampler_util_from_the_failed_allocation_when_vocab_is_unknown() -> None:
    fs = facts(oom_requested_bytes=1010 * MIB, oom_free_bytes=300 * MIB, oom_total_bytes=95 * GIB, vllm_version="0.13.0")
    r = resolve("sampler_gpu_util", fs)
    # (1010 - 300 MiB + 512 MiB) / 95 GiB = 0.0126 -> 0.02; default 0.9 on 0.13.0
    assert r.value == "0.88"


def test_sampler_util_default_step_respects_the_020_default() -> None:
    assert resolve("sampler_gpu_util", facts(vllm_version="0.21.0")).value == "0.87"
    assert resolve("sampler_gpu_util", facts(vllm_version="0.19.0")).value == "0.85"


# --- start-up ---------------------------------------------------------------------------------------


def test_profile_tokens_scale_with_the_failed_allocation() -> None:
    fs = facts(max_num_batched_tokens=131072, oom_requested_bytes=4 * GIB, oom_free_bytes=1 * GIB)
    r = resolve("profile_max_num_batched_tokens", fs)
    assert r.value == "26112"  # 131072 x 0.8 x 1/4 = 26214 -> multiple of 256
    assert "activations scale with tokens" in r.why.en


def test_profile_tokens_never_below_max_num_seqs() -> None:
    fs = facts(max_num_batched_tokens=8192, max_num_seqs=1024, oom_requested_bytes=8 * GIB, oom_free_bytes=64 * MIB)
    assert resolve("profile_max_num_batched_tokens", fs).value == "1024"


def test_profile_tokens_v0_default_is_the_context() -> None:
    r = resolve("profile_max_num_batched_tokens", facts(engine="v0", max_model_len=32768))
    assert r.value == "16384"
    assert "max(max_model_len, 2048)" in r.why.en


def test_profile_tokens_unknown_without_any_input() -> None:
    r = resolve("profile_max_num_batched_tokens", facts(vllm_version="0.20.0"))
    assert r.value is None and r.placeholder == "<TOKENS>"


def test_image_limit_reads_every_spelling() -> None:
    # V0 profiles every dummy sequence with the full image count, so halving it halves that part.
    v0 = {"engine": "v0"}
    assert resolve("mm_image_limit", facts(limit_mm_per_prompt='{"image": 10, "video": 1}', **v0)).value == "5"
    assert resolve("mm_image_limit", facts(limit_mm_per_prompt="image=12,video=0", **v0)).value == "6"
    assert resolve("mm_image_limit", facts(limit_mm_per_prompt='{"image": {"count": 8, "width": 512}}', **v0)).value == "4"


def test_image_limit_is_kept_on_v1_where_the_encoder_budget_sizes_the_pass() -> None:
    r = resolve("mm_image_limit", facts(vllm_version="0.9.0", limit_mm_per_prompt='{"image": 12, "video": 0}'))
    assert r.value == "12"
    assert "encoder budget" in r.why.en and "encoder 预算" in r.why.zh


def test_image_limit_without_a_limit_v0_default_one_v1_placeholder() -> None:
    assert resolve("mm_image_limit", facts(vllm_version="0.7.3", max_model_len=65536)).value == "1"
    r = resolve("mm_image_limit", facts(vllm_version="0.11.0", max_model_len=65536))
    assert r.value is None and r.placeholder == "<IMAGES>"


def test_max_pixels_share_the_context_between_images_and_text() -> None:
    fs = facts(max_model_len=32768, limit_mm_per_prompt='{"image": 10}')
    r = resolve("mm_max_pixels", fs)
    # 32,768 / 11 = 2,978 tokens -> 2,944 (multiple of 64) x 784 pixels
    assert r.value == str(2944 * 28 * 28)
    one = resolve("mm_max_pixels", facts(max_model_len=32768))
    assert one.value == str(4096 * 28 * 28)  # capped at 4,096 tokens per image


# --- the V1 warm-up after the KV cache: the profile already counted the sampler -----------------------


def test_halved_seqs_do_not_promise_the_freed_memory_stays_free() -> None:
    # vllm/v1/worker/gpu_model_runner.py@0.8.0: profile_run() samples the same rows, so the KV cache grows back
    fs = facts(sampler_dummy_requests=256, oom_free_bytes=int(212.62 * MIB), vocab_size=154880)
    r = resolve("sampler_halved_max_num_seqs", fs)
    assert r.value == "128"  # not the 32 a fit from the free memory would give
    assert "KV cache grows" in r.why.en and "--gpu-memory-utilization" in r.why.en
    assert "KV cache 吃回去" in r.why.zh
    assert resolve("sampler_halved_max_num_seqs", facts(max_num_seqs=1)).value == "1"


def test_halved_max_num_seqs_reads_the_flag_or_the_v0_default() -> None:
    r = resolve("halved_max_num_seqs", facts(max_num_seqs=512))
    assert r.value == "256" and "max_num_seqs = 512" in r.why.en
    assert "38 B" not in r.why.en  # no V1 warm-up byte model for a V0 profile
    assert resolve("halved_max_num_seqs", facts(engine="v0", vllm_version="0.7.3")).value == "128"


def test_from_017_the_util_calc_uses_the_failed_request_not_the_sort_model() -> None:
    # vllm/v1/sample/ops/topk_topp_sampler.py@0.17.0: batches of 8+ rows go to the Triton kernel, no sort
    base = dict(sampler_dummy_requests=256, oom_free_bytes=int(212.62 * MIB), vocab_size=154880,
                oom_requested_bytes=304 * MIB, oom_total_bytes=int(23.52 * GIB), gpu_memory_utilization=0.9)
    old = resolve("sampler_gpu_util", facts(**base, vllm_version="0.16.0"))
    new = resolve("sampler_gpu_util", facts(**base, vllm_version="0.17.0"))
    assert old.value == "0.83" and "int64 order" in old.why.en
    # (304 - 212.62) MiB + 0.5 GiB over 23.52 GiB = 0.025 -> 0.03
    assert new.value == "0.87" and "failed allocation asked for" in new.why.en
    peak = sampler_calcs.warmup_peak_bytes(facts(vocab_size=151936, vllm_version="0.17.0"), 256)
    assert peak is not None and "upper bound" in peak[1].en


def test_deepseek_v3_family_vocabulary_covers_kimi_k2() -> None:
    voc = sampler_calcs.vocabulary(facts(model_family="deepseek_v3"))
    assert voc is not None and voc[0] == 163840


def test_model_runner_v2_warmup_divides_the_token_budget_by_the_prompt_length() -> None:
    # vllm/v1/worker/gpu/warmup.py@0.25.0: num_reqs = min(max_num_seqs, tokens // (decode_query_len + 1), ...)
    n, why, _ = sampler_calcs.warmup_requests(facts(model_runner="v2", max_num_seqs=1024, max_num_batched_tokens=2048))
    assert n == 1024 and "// 2" in why.en
    n, _, _ = sampler_calcs.warmup_requests(
        facts(model_runner="v2", max_num_seqs=1024, max_num_batched_tokens=2048, num_speculative_tokens=3)
    )
    assert n == 409  # 2048 // (2 + 3)
    n, _, _ = sampler_calcs.warmup_requests(facts(model_runner="v1", max_num_seqs=1024, max_num_batched_tokens=512))
    assert n == 512
