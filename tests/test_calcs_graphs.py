"""Calculations for CUDA graph memory and speculative decoding: values to paste and the arithmetic shown."""

from __future__ import annotations

import json

from kbkit import GIB, H200_BYTES, MIB, facts, value, why

from oomwizard.advice.calcs.spec_decode import fewer_spec_tokens, spec_logits_bytes
from oomwizard.advice.numbers import resolve
from oomwizard.facts.model import Fact, FactSet

# --- utilization that leaves room for the graphs -----------------------------------------------


def test_util_from_the_oom_message_of_the_failed_capture() -> None:
    # "… with 3.00 GiB allocated in private pools (e.g., CUDA Graphs)", "Tried to allocate 512.00 MiB"
    fs = facts(
        vllm_version="0.25.1",
        gpu_mem_total_bytes=H200_BYTES,
        oom_private_pools_bytes=3 * GIB,
        oom_requested_bytes=512 * MIB,
    )
    # (3.5 + 0.5) / 140.40 = 0.0285 -> 0.03; default 0.92 on 0.25 -> 0.89
    assert value("cudagraph_gpu_util", fs) == "0.89"
    text = why("cudagraph_gpu_util", fs)
    assert "3.00 GiB in private pools" in text and "0.50 GiB more" in text
    assert "0.92 (vLLM 0.25.1 default) - 0.03 = 0.89" in text
    assert "私有内存池" in text


def test_util_takes_the_largest_measurement_and_the_given_utilization() -> None:
    # Llama-3.1-70B FP8 at TP=8 on L40S: the V1 runner estimated about 9.5 GiB
    fs = facts(
        vllm_version="0.25.1",
        gpu_memory_utilization=0.9,
        gpu_mem_total_bytes=48305799168,
        cudagraph_estimate_gib=9.5,
        oom_private_pools_bytes=2 * GIB,
        oom_requested_bytes=896 * MIB,
    )
    # (9.5 + 0.5) / 44.99 = 0.2223 -> 0.23; 0.9 - 0.23 = 0.67
    assert value("cudagraph_gpu_util", fs) == "0.67"
    assert "we take the largest, 9.50 GiB" in why("cudagraph_gpu_util", fs)


def test_util_from_a_capture_that_finished_before() -> None:
    # 24 GB laptop card at 0.98; "Graph capturing finished in 1 secs, took 0.46 GiB" on the run at 0.97
    fs = facts(vllm_version="0.29.0", gpu_memory_utilization=0.98, startup_total_gib=22.36, cudagraph_actual_gib=0.46)
    # (0.46 + 0.5) / 22.36 = 0.0429 -> 0.05; 0.98 - 0.05 = 0.93
    assert value("cudagraph_gpu_util", fs) == "0.93"


def test_zero_estimate_of_model_runner_v2_is_not_a_measurement() -> None:
    fs = facts(vllm_version="0.25.0", gpu_mem_total_bytes=H200_BYTES, cudagraph_estimate_gib=0.0)
    assert value("cudagraph_gpu_util", fs) == "0.87"
    assert "no log line measured what the graphs need" in why("cudagraph_gpu_util", fs)


def test_fallback_step_uses_the_release_default() -> None:
    assert value("cudagraph_gpu_util", facts(vllm_version="0.17.0")) == "0.85"
    assert value("cudagraph_gpu_util", facts(vllm_version="0.20.0")) == "0.87"


def test_no_value_when_the_graphs_cannot_fit_next_to_the_model() -> None:
    fs = facts(gpu_memory_utilization=0.3, gpu_mem_total_bytes=48 * GIB, cudagraph_actual_gib=15.0)
    assert value("cudagraph_gpu_util", fs) is None
    assert resolve("cudagraph_gpu_util", fs).placeholder == "<FRACTION>"


# --- explicit KV cache size ----------------------------------------------------------------------


def test_kv_bytes_subtract_graphs_and_margin_in_whole_mib() -> None:
    fs = facts(kv_cache_gib=31.2, cudagraph_estimate_gib=9.5)
    b = int(value("cudagraph_kv_cache_bytes", fs) or 0)
    assert b == 22762487808  # floor((31.2 - 9.5 - 0.5) GiB to MiB)
    assert b % MIB == 0
    assert "21.20 GiB" in why("cudagraph_kv_cache_bytes", fs)


def test_kv_bytes_need_both_numbers_and_a_useful_result() -> None:
    assert value("cudagraph_kv_cache_bytes", facts(kv_cache_gib=31.2)) is None
    assert value("cudagraph_kv_cache_bytes", facts(cudagraph_estimate_gib=9.5)) is None
    assert value("cudagraph_kv_cache_bytes", facts(kv_cache_gib=2.0, cudagraph_actual_gib=1.0)) is None


# --- fewer capture sizes ---------------------------------------------------------------------------


def test_capture_size_halves_vllms_automatic_limit() -> None:
    assert value("cudagraph_max_capture_size", facts(max_num_seqs=256)) == "256"
    assert value("cudagraph_max_capture_size", facts(max_num_seqs=1024)) == "256"
    assert value("cudagraph_max_capture_size", facts(max_num_seqs=64)) == "64"
    assert value("cudagraph_max_capture_size", facts(max_num_seqs=4)) == "8"
    # no max_num_seqs: vLLM's default on a 140 GiB GPU is 1024 -> limit 512 -> 256
    fs = facts(vllm_version="0.20.0", gpu_mem_total_bytes=H200_BYTES)
    assert value("cudagraph_max_capture_size", fs) == "256"
    assert "min(2 x 1024, 512) = 512" in why("cudagraph_max_capture_size", fs)


def test_capture_limit_follows_the_engine_and_release() -> None:
    # V0 captures up to max_num_seqs: halving min(2 x 256, 512) would change nothing there
    v0 = facts(vllm_version="0.6.6", engine="v0", max_num_seqs=256)
    assert value("cudagraph_max_capture_size", v0) == "128"
    assert "V0 engine captures batch sizes up to max_num_seqs, 256" in why("cudagraph_max_capture_size", v0)
    # before 0.10.0 (vllm#20628) the V1 default list is 512 whatever max_num_seqs is
    v1_old = facts(vllm_version="0.9.2", max_num_seqs=128)
    assert value("cudagraph_max_capture_size", v1_old) == "256"
    assert "up to 512 whatever max_num_seqs is" in why("cudagraph_max_capture_size", v1_old)
    assert value("cudagraph_max_capture_size", facts(vllm_version="0.10.0", max_num_seqs=128)) == "128"


def test_capture_sizes_and_image_limits_agree_on_the_engine() -> None:
    # One reading of the engine for every subject: a stated engine wins over the release, and a
    # release before 0.8.0 without one runs V0.
    stated_v1 = facts(vllm_version="0.7.3", engine="v1", max_num_seqs=128, limit_mm_per_prompt="image=4")
    assert value("cudagraph_max_capture_size", stated_v1) == "256"  # V1 before 0.10.0: 512 halved
    assert value("mm_image_limit", stated_v1) == "4"  # V1: the image count does not size the pass
    unsaid = facts(vllm_version="0.7.3", max_num_seqs=128, limit_mm_per_prompt="image=4")
    assert value("cudagraph_max_capture_size", unsaid) == "64"  # V0: up to max_num_seqs, halved
    assert value("mm_image_limit", unsaid) == "2"  # V0: every dummy sequence carries the images


def test_fewer_sequences_say_when_the_capture_list_does_not_follow() -> None:
    assert value("cudagraph_max_num_seqs", facts(vllm_version="0.6.6", engine="v0", max_num_seqs=256)) == "128"
    assert "shrinks with it" in why("cudagraph_max_num_seqs", facts(vllm_version="0.20.0", max_num_seqs=256))
    text = why("cudagraph_max_num_seqs", facts(vllm_version="0.9.2", max_num_seqs=256))
    assert "stays at 512" in text and "capture-size fix" in text


def test_an_estimate_already_kept_out_is_not_given_back_twice() -> None:
    # 0.20.0, V1 runner by default: the log's estimate was already subtracted from the KV cache
    base = dict(
        vllm_version="0.20.0",
        gpu_mem_total_bytes=24 * GIB,
        cudagraph_estimate_gib=0.9,
        oom_private_pools_bytes=int(1.1 * GIB),
        oom_requested_bytes=200 * MIB,
    )
    # (1.30 - 0.90 + 0.5) / 24 = 0.0375 -> 0.04; 0.92 - 0.04 = 0.88
    assert value("cudagraph_gpu_util", facts(**base)) == "0.88"
    assert "1.30 GiB - 0.90 GiB = 0.40 GiB is missing" in why("cudagraph_gpu_util", facts(**base))
    # model runner V2 on 0.25 reported 0, so nothing was kept out: the whole 1.30 GiB counts
    v2 = facts(**{**base, "vllm_version": "0.25.0", "model_runner": "v2"})
    assert value("cudagraph_gpu_util", v2) == "0.84"
    # an estimate typed in from another run was not applied to the failing one
    typed = FactSet.of(
        [*(f for f in facts(**base) if f.name != "cudagraph_estimate_gib"), Fact("cudagraph_estimate_gib", 0.9, "answered", kind="answered")]
    )
    assert value("cudagraph_gpu_util", typed) == "0.84"
    # the estimate alone, already applied, measures nothing new: a fixed step, said so
    only = facts(vllm_version="0.20.0", gpu_mem_total_bytes=24 * GIB, cudagraph_estimate_gib=0.9)
    assert value("cudagraph_gpu_util", only) == "0.87"
    assert "already kept its estimate of 0.90 GiB" in why("cudagraph_gpu_util", only)
    missing = int(1.1 * GIB) + 200 * MIB - int(0.9 * GIB)
    expected = (int(3.2 * GIB) - missing - 512 * MIB) // MIB * MIB
    assert value("cudagraph_kv_cache_bytes", facts(**{**base, "kv_cache_gib": 3.2})) == str(expected)


def test_capture_sizes_config_is_valid_json_in_vllms_pattern() -> None:
    raw = value("cudagraph_capture_sizes_config", facts(max_num_seqs=64))
    assert raw is not None
    sizes = json.loads(raw)["cudagraph_capture_sizes"]
    assert sizes == [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]


# --- speculative decoding ------------------------------------------------------------------------


def test_fewer_spec_tokens_halves_but_keeps_one() -> None:
    assert [fewer_spec_tokens(k) for k in (1, 2, 3, 5, 7)] == [1, 1, 1, 2, 3]
    assert value("spec_tokens_fewer", facts(num_speculative_tokens=5)) == "2"
    assert value("spec_tokens_fewer", facts()) is None


SC = "vllm serve Qwen/Qwen3-8B --speculative-config '{\"method\": \"eagle3\", \"model\": \"org/draft\", \"num_speculative_tokens\": 7}' -tp 2"


def test_spec_config_keeps_every_other_key_of_the_command_line() -> None:
    out = value("spec_config_fewer_tokens", facts(serve_command=SC))
    assert out is not None
    assert json.loads(out) == {"method": "eagle3", "model": "org/draft", "num_speculative_tokens": 3}
    # the short alias and the = form are read the same way
    for cmd in (SC.replace("--speculative-config", "-sc"), SC.replace("--speculative-config '", "--speculative-config='")):
        out2 = value("spec_config_fewer_tokens", facts(serve_command=cmd))
        assert out2 is not None and json.loads(out2)["num_speculative_tokens"] == 3


def test_spec_config_built_from_facts_marks_the_missing_draft_model() -> None:
    out = value("spec_config_fewer_tokens", facts(speculative_method="eagle", num_speculative_tokens=4))
    assert out is not None and json.loads(out) == {"method": "eagle", "model": "<DRAFT_MODEL>", "num_speculative_tokens": 2}
    mtp = value("spec_config_fewer_tokens", facts(speculative_method="mtp", num_speculative_tokens=3))
    assert mtp is not None and json.loads(mtp) == {"method": "mtp", "num_speculative_tokens": 1}
    assert value("spec_config_fewer_tokens", facts(num_speculative_tokens=3)) is None


def test_spec_logits_copy_matches_the_worked_example_upstream() -> None:
    # vllm#38220: 200 requests, 5 draft tokens, 131072 vocabulary -> (200 x 6) x 131072 x 4 bytes
    assert spec_logits_bytes(200, 5, 131072) == 1200 * 131072 * 4


def test_spec_util_reserves_one_float32_copy_of_the_verification_logits() -> None:
    # vllm#48037: Qwen3-8B + DFlash, 7 tokens, H100 80 GB, max_num_seqs 1024 -> about 4.6 GiB
    fs = facts(vllm_version="0.24.0", max_num_seqs=1024, num_speculative_tokens=7, vocab_size=151936, startup_total_gib=79.19)
    assert value("spec_gpu_util", fs) == "0.86"
    text = why("spec_gpu_util", fs)
    assert "1024 x (7 + 1) x 151,936 x 4 bytes = 4.64 GiB" in text
    # gpu_model_runner.py@0.10.2: the profile already verified one draft token per request
    assert "only (7 - 1) rows are uncounted" in text
    given = facts(gpu_memory_utilization=0.9, max_num_seqs=1024, num_speculative_tokens=7, vocab_size=151936, startup_total_gib=79.19)
    assert value("spec_gpu_util", given) == "0.84"


def test_spec_util_falls_back_to_a_fixed_step_without_the_inputs() -> None:
    fs = facts(vllm_version="0.21.0", num_speculative_tokens=3)
    assert value("spec_gpu_util", fs) == "0.87"
    assert "lower it by 0.05" in why("spec_gpu_util", fs)


def test_spec_max_num_seqs_shows_the_verification_batch() -> None:
    fs = facts(max_num_seqs=256, num_speculative_tokens=3)
    assert value("spec_max_num_seqs", fs) == "128"
    assert "256 x 4 = 1,024 to 128 x 4 = 512 tokens" in why("spec_max_num_seqs", fs)
