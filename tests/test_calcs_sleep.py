"""The sleep-mode calculations: one step of the GPU handed back to the trainer, shown in GiB, and
refused where the weights would leave no KV cache."""

from __future__ import annotations

from kbkit import GIB, H200_BYTES, facts

from oomwizard.advice.numbers import resolve


def test_util_steps_down_and_says_what_the_trainer_gets() -> None:
    fs = facts(gpu_memory_utilization=0.6, gpu_mem_total_bytes=80 * GIB, sleep_freed_gib=58.31)
    r = resolve("sleep_gpu_util", fs)
    assert r.value == "0.50"
    assert "8.00 GiB more to the trainer" in r.why.en
    assert "58.31 GiB" in r.why.en and "58.31 GiB" in r.why.zh
    assert "8.00 GiB" in r.why.zh


def test_util_needs_the_stated_value_not_vllms_default() -> None:
    """A framework passes its own utilization; vLLM's default would be a guess about another number."""
    r = resolve("sleep_gpu_util", facts(vllm_version="0.8.3", gpu_mem_total_bytes=80 * GIB))
    assert r.value is None and r.placeholder == "<FRACTION>"


def test_util_without_the_gpu_size_still_steps() -> None:
    r = resolve("sleep_gpu_util", facts(gpu_memory_utilization=0.45))
    assert r.value == "0.35"
    assert "a tenth of the GPU" in r.why.en


def test_util_is_refused_when_the_weights_would_fill_the_new_budget() -> None:
    # 0.3 x 80 GiB = 24 GiB, lower to 0.2 = 16 GiB: 15.5 GiB of weights leave less than 1 GiB of KV cache.
    fs = facts(gpu_memory_utilization=0.3, gpu_mem_total_bytes=80 * GIB, weights_gib=15.5)
    assert resolve("sleep_gpu_util", fs).value is None
    assert resolve("sleep_gpu_util", facts(gpu_memory_utilization=0.15)).value is None


def test_kv_bytes_shrink_by_the_same_step_rounded_to_256_mib() -> None:
    # H200: 140.40 GiB; 0.1 of it is 14.04 GiB; 34.29 - 14.04 = 20.2499 GiB -> 20.00 GiB in 256 MiB steps.
    fs = facts(kv_cache_gib=34.29, gpu_mem_total_bytes=H200_BYTES)
    r = resolve("sleep_kv_cache_bytes", fs)
    assert int(r.value) == 80 * (256 << 20)
    assert "34.29 - 0.1 x 140.40 GiB = 20.25 GiB" in r.why.en and "(20.00 GiB)" in r.why.en
    assert "20.00 GiB" in r.why.zh


def test_a_small_kv_cache_keeps_half_of_itself() -> None:
    # 9.5 - 8 GiB would leave 1.5 GiB; half of 9.5 GiB is 4.75 GiB = 19 x 256 MiB.
    r = resolve("sleep_kv_cache_bytes", facts(kv_cache_gib=9.5, gpu_mem_total_bytes=80 * GIB))
    assert r.value == str(19 * (256 << 20))
    assert "would leave 1.50 GiB, so half of today's: 4.75 GiB" in r.why.en
    assert "因此取当前的一半" in r.why.zh


def test_kv_bytes_need_the_kv_size_and_leave_at_least_one_gib() -> None:
    assert resolve("sleep_kv_cache_bytes", facts(gpu_mem_total_bytes=80 * GIB)).value is None
    assert resolve("sleep_kv_cache_bytes", facts(kv_cache_gib=9.5)).value is None
    assert resolve("sleep_kv_cache_bytes", facts(kv_cache_gib=1.8, gpu_mem_total_bytes=80 * GIB)).value is None
