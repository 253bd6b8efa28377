"""The automatic checks of the memory-budget leaves, against each release's real message wording.

A check that never matches what vLLM prints can never pass, and one that matches too much can never
fail: both are defects. The lines below follow the message formats of vllm-facts §4, each release's
variant, with the prefixes real logs carry (process tags, levels, file:line).
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase


@lru_cache(maxsize=1)
def kb() -> KnowledgeBase:
    base, _ = load_kb(strict=False)
    return base


def pattern(leaf_id: str, kind: str, contains: str) -> re.Pattern[str]:
    """The log_present / log_absent pattern of the check whose English text contains ``contains``."""
    for check in kb().leaves[leaf_id].checks:
        if contains in check.text.en and check.auto is not None:
            pat = check.auto.log_present if kind == "present" else check.auto.log_absent
            assert pat, f"{leaf_id}: check {contains!r} has no log_{kind}"
            return re.compile(pat)
    raise AssertionError(f"{leaf_id}: no automatic check mentioning {contains!r}")


ERR = "(EngineCore_DP0 pid=1094) ERROR 02-08 11:32:07 [core.py:866] "
INFO = "(EngineCore pid=5120) INFO 09-22 08:01:44 [gpu_worker.py:412] "

KV_TOO_SMALL_V1 = {
    "0.8.0": ERR + "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GB KV cache is "
    "needed, which is larger than the available KV cache memory (5.37 GB). Try increasing `gpu_memory_utilization` or "
    "decreasing `max_model_len` when initializing the engine.",
    "0.15.2": ERR + "ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is "
    "needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated "
    "maximum model length is 34736. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    "0.22.0": ERR + "ValueError: To serve at least one request with the model's max seq len (262144), (24.00 GiB KV cache is "
    "needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated "
    "maximum model length is 34736. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU "
    "backend) or decreasing `max_model_len` when initializing the engine.",
}
KV_TOO_SMALL_V0 = (
    "(VllmWorkerProcess pid=2144910) ERROR 01-12 08:36:38 multiproc_worker_utils.py:233] ValueError: The model's max seq "
    "len (131072) is larger than the maximum number of tokens that can be stored in KV cache (86432). Try increasing "
    "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
)
CONCURRENCY = {
    "0.6.6 V0": "INFO 02-26 09:54:05 executor_base.py:116] Maximum concurrency for 4096 tokens per request: 3.21x",
    "0.9.2": INFO + "Maximum concurrency for 32,768 tokens per request: 4.84x",
    "0.28.0": INFO + "GPU KV cache size: 1,234,560 tokens, Maximum concurrency for 32,768 tokens per request: 37.68x",
    "0.30.0": INFO + "GPU KV cache size: 1,234,560 tokens, Maximum concurrency for 32,768 tokens per request: 37.68x",
}


@pytest.mark.parametrize("release", sorted(KV_TOO_SMALL_V1))
def test_kv_too_small_check_sees_the_v1_error_in_every_spelling(release: str) -> None:
    assert pattern("kv-cache-too-small", "absent", "no longer says").search(KV_TOO_SMALL_V1[release])


def test_kv_too_small_check_sees_the_v0_error() -> None:
    assert pattern("kv-cache-too-small", "absent", "no longer says").search(KV_TOO_SMALL_V0)


@pytest.mark.parametrize("release", sorted(CONCURRENCY))
def test_concurrency_line_matches_in_every_release(release: str) -> None:
    for leaf_id, text in (
        ("kv-cache-too-small", "Maximum concurrency for N tokens"),
        ("runtime-oom", "Maximum concurrency for N tokens"),
        ("v1-migration", "Maximum concurrency for N tokens"),
    ):
        assert pattern(leaf_id, "present", text).search(CONCURRENCY[release]), (leaf_id, release)


POSITIVE_KV = [
    INFO + "Available KV cache memory: 8.11 GiB",  # 0.9.2+
    "INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens",  # V1 0.8.x prints no GiB figure
    "INFO 12-27 10:00:01 distributed_gpu_executor.py:57] # GPU blocks: 2000, # CPU blocks: 512",  # 0.6.6
    "INFO 02-26 09:54:05 executor_base.py:111] # cuda blocks: 2000, # CPU blocks: 4681",  # V0 0.7.0+
]
NO_KV = [
    INFO + "Available KV cache memory: -2.14 GiB",
    INFO + "Available KV cache memory: 0.00 GiB",
    "INFO 02-26 09:54:05 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681",
]


@pytest.mark.parametrize("line", POSITIVE_KV)
def test_positive_kv_cache_is_recognised_in_every_engine(line: str) -> None:
    assert pattern("no-kv-cache-memory", "present", "positive KV cache").search(line)
    assert pattern("oom-triage", "present", "KV cache was sized").search(line)


@pytest.mark.parametrize("line", NO_KV)
def test_zero_or_negative_kv_cache_is_not_a_pass(line: str) -> None:
    assert not pattern("no-kv-cache-memory", "present", "positive KV cache").search(line)


@pytest.mark.parametrize(
    ("leaf_id", "text"),
    [
        ("profile-run-oom", "reaches the KV cache"),
        ("multimodal-profile", "reaches the KV cache"),
        ("lora", "Available KV cache memory"),
    ],
)
def test_kv_cache_reached_on_v1_before_and_after_0_9_2(leaf_id: str, text: str) -> None:
    pat = pattern(leaf_id, "present", text)
    assert pat.search(POSITIVE_KV[0]) and pat.search(POSITIVE_KV[1])


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        ERR + "ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    ],
)
def test_startup_check_error_is_seen_before_and_after_0_14(line: str) -> None:
    assert pattern("insufficient-free-memory-at-startup", "absent", "on startup is less than").search(line)


@pytest.mark.parametrize(
    "line",
    [
        "INFO 02-20 10:11:12 model_runner.py:1115] Loading model weights took 5.2032 GB",  # 0.6.6-0.7.3
        "INFO 04-24 16:33:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.652170 seconds",
        "(Worker_TP0 pid=812) INFO 11-01 09:00:00 [gpu_model_runner.py:3300] Model loading took 14.99 GiB memory and "
        "3.65 seconds",
    ],
)
def test_weights_loaded_marker_in_every_release(line: str) -> None:
    for leaf_id in ("weights-load-oom", "insufficient-free-memory-at-startup", "oom-triage"):
        assert pattern(leaf_id, "present", "Model loading took").search(line), leaf_id


def test_triage_graph_check_accepts_an_eager_engine() -> None:
    pat = pattern("oom-triage", "present", "CUDA graphs were captured")
    assert pat.search(INFO + "Graph capturing finished in 12 secs, took 1.38 GiB")
    eager = (
        "(EngineCore_DP0 pid=77) INFO 10-03 12:00:00 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, enforce_eager=True, "
        "kv_cache_dtype=auto"
    )
    assert pat.search(eager)
    assert not pat.search(eager.replace("enforce_eager=True", "enforce_eager=False"))


@pytest.mark.parametrize(
    "line",
    [
        "AssertionError: Expandable segments are not compatible with memory pool. Please track "
        "https://github.com/pytorch/pytorch/issues/147851 for the latest updates.",
        "ValueError: KV connector NixlConnector is incompatible with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "unless enable_sleep_mode is also enabled.",
        "ValueError: KV connector NixlConnector is incompatible with PYTORCH_ALLOC_CONF=expandable_segments:True "
        "unless enable_sleep_mode is also enabled.",
    ],
)
def test_fragmentation_refusals_are_seen_whichever_variable_named(line: str) -> None:
    assert pattern("fragmentation", "absent", "No start-up refusal").search(line)


def test_fragmentation_sees_the_custom_all_reduce_failure() -> None:
    line = "(Worker_TP1 pid=3411) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'"
    assert pattern("fragmentation", "absent", "CUDA graph capture finishes").search(line)


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Too large swap space. 48.00 GiB out of the 62.70 GiB total CPU memory is allocated for the swap space.",
        "OSError: unable to mmap 4986123452 bytes from file </models/qwen/model-00003-of-00017.safetensors>: Cannot "
        "allocate memory (12)",
        "node-3:512:1102 [0] include/shm.h:28 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-xU2h9K "
        "(size 9637888)",
    ],
)
def test_host_memory_failures_are_seen(line: str) -> None:
    leaf = kb().leaves["host-memory"]
    pats = [re.compile(c.auto.log_absent) for c in leaf.checks if c.auto is not None and c.auto.log_absent]
    assert any(p.search(line) for p in pats)


def test_profiling_pass_oom_traceback_is_seen_on_both_engines() -> None:
    v1 = '  File "/usr/local/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 2345, in profile_run'
    v0 = '  File "/usr/lib/python3/dist-packages/vllm/worker/worker.py", line 229, in determine_num_available_blocks'
    assert pattern("profile-run-oom", "absent", "profile_run").search(v1)
    assert pattern("profile-run-oom-v0", "absent", "profile_run").search(v0)
    ok = "INFO 02-26 09:54:05 worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch activation "
    ok += "peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is 1.05GiB."
    assert pattern("profile-run-oom-v0", "present", "V0 memory profile").search(ok)


def test_migration_checks_see_a_leftover_switch_and_any_platforms_oom() -> None:
    warn = "(APIServer pid=9) WARNING 03-06 10:00:00 [envs.py:1711] Unknown vLLM environment variable detected: VLLM_USE_V1"
    assert pattern("v1-migration", "absent", "leftover V0 switch").search(warn)
    hip = "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 191.98 GiB"
    assert pattern("v1-migration", "absent", "CUDA out of memory").search(hip)
    assert pattern("lora", "absent", "CUDA out of memory").search(hip)
