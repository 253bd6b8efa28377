"""Numbers and settings read from start-up lines, in the wording of each release (vllm-facts §4.2)."""

from __future__ import annotations

import pytest

from oomwizard.logs.diagnose import diagnose_text

GIB = 1 << 30


def facts(text: str) -> dict[str, object]:
    return {f.name: f.value for f in diagnose_text(text).facts}


def test_free_memory_info_line_with_suggested_kv_cache_memory() -> None:
    line = (
        "(EngineCore pid=9) INFO 08-01 10:00:00 [gpu_worker.py:420] Free memory on device cuda:0 (78.52/79.19 GiB) on "
        "startup. Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 15.08 GiB for weight, 4.32 GiB for "
        "peak activation, 0.61 GiB for non-torch memory, and 1.47 GiB for CUDAGraph memory. Replace gpu_memory_utilization "
        "config with `--kv-cache-memory=52580466483` (48.97 GiB) to fit into requested memory, or "
        "`--kv-cache-memory=60282380083` (56.14 GiB) to fully utilize gpu memory. Current kv cache memory in use is "
        "49.68 GiB.\n"
    )
    f = facts(line)
    assert f["startup_free_gib"] == 78.52 and f["startup_total_gib"] == 79.19
    assert f["gpu_memory_utilization"] == 0.9 and f["requested_gib"] == 71.27
    assert f["weights_gib"] == 15.08 and f["activation_peak_gib"] == 4.32 and f["non_torch_gib"] == 0.61
    assert f["cudagraph_estimate_gib"] == 1.47
    assert f["suggested_kv_cache_bytes"] == 52580466483
    assert f["suggested_kv_cache_full_bytes"] == 60282380083
    assert f["kv_cache_gib"] == 49.68
    assert "diagnosis" not in f  # an INFO line is not a failure


def test_free_memory_info_line_027_wording() -> None:
    line = (
        "INFO 09-01 10:00:00 [gpu_worker.py:431] Free memory on device cuda:0 (139.29/139.80 GiB) on startup. Desired GPU "
        "memory utilization is (0.92, 128.62 GiB). Actual usage is 68.31 GiB for consumed memory (weights + non-torch), "
        "5.02 GiB for peak activation, and 2.10 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with "
        "`--kv-cache-memory=57445380505` (53.50 GiB) to fit into requested memory, or `--kv-cache-memory=68703727206` "
        "(63.98 GiB) to fully utilize gpu memory. Current kv cache memory in use is 53.19 GiB.\n"
    )
    f = facts(line)
    assert "weights_gib" not in f  # consumed memory is weights and non-torch together
    assert f["activation_peak_gib"] == 5.02 and f["cudagraph_estimate_gib"] == 2.1
    assert f["suggested_kv_cache_bytes"] == 57445380505


def test_v1_debug_profile_and_graph_lines() -> None:
    text = "\n".join([
        "DEBUG 07-01 10:00:00 [utils.py:2716] Memory profiling takes 6.11 seconds. Total non KV cache memory: 19.82GiB; "
        "torch peak memory increase: 3.05GiB; non-torch forward increase memory: 0.12GiB; weights memory: 16.65GiB.",
        "INFO 07-01 10:00:01 [gpu_model_runner.py:4301] Estimated CUDA graph memory: 1.87 GiB total",
        "INFO 07-01 10:00:30 [gpu_worker.py:466] CUDA graph pool memory: 1.93 GiB (actual), 1.87 GiB (estimated), "
        "difference: 0.06 GiB (3.2%).",
        "INFO 07-01 10:00:31 [kv_cache_utils.py:1301] GPU KV cache size: 487,104 tokens, Maximum concurrency for 32,768 "
        "tokens per request: 14.87x",
    ])
    f = facts(text + "\n")
    assert f["activation_peak_gib"] == 3.05 and f["non_torch_gib"] == 0.12 and f["weights_gib"] == 16.65
    assert f["cudagraph_actual_gib"] == 1.93 and f["cudagraph_estimate_gib"] == 1.87
    assert f["kv_cache_tokens"] == 487104 and f["max_concurrency"] == 14.87 and f["max_model_len"] == 32768


def test_v0_blocks_and_old_weights_wording() -> None:
    f = facts("INFO 12-01 10:00:00 model_runner.py:1099] Loading model weights took 14.9888 GB\n"
              "INFO 12-01 10:00:05 worker.py:241] the current vLLM instance can use total_gpu_memory (79.15GiB) x "
              "gpu_memory_utilization (0.90) = 71.24GiB\n")
    assert f["weights_gib"] == 14.9888
    assert f["gpu_mem_total_bytes"] == round(79.15 * GIB)
    assert f["requested_gib"] == 71.24


@pytest.mark.parametrize(
    ("mode", "expected"),
    [('"cudagraph_mode":[2,1]', "FULL_AND_PIECEWISE"), ('"cudagraph_mode": [2, 0]', "FULL_DECODE_ONLY"),
     ("'cudagraph_mode': <CUDAGraphMode.PIECEWISE: 1>", "PIECEWISE"), ('"cudagraph_mode":"NONE"', "NONE"),
     ('"cudagraph_mode":2', "FULL")],
)
def test_cudagraph_mode_spellings(mode: str, expected: str) -> None:
    line = (f"INFO 01-01 00:00:00 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
            f"enforce_eager=False, compilation_config={{{mode}}}\n")
    assert facts(line)["cudagraph_mode"] == expected


def test_environment_settings_and_not_the_hint() -> None:
    text = "\n".join([
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:256",
        "VLLM_USE_V1=0",
        "VLLM_USE_DEEP_GEMM=1",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. If reserved but unallocated memory is "
        "large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
    ])
    f = facts(text + "\n")
    assert f["alloc_conf_var"] == "PYTORCH_CUDA_ALLOC_CONF"  # the hint in the OOM text is not a setting
    assert f["expandable_segments"] is True and f["max_split_size_mb"] == 256
    assert f["env_vllm_use_v1"] == "0" and f["env_vllm_use_deep_gemm"] == "1" and f["use_deep_gemm"] is True


def test_the_hint_alone_sets_nothing() -> None:
    f = facts("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. If reserved but unallocated "
              "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
    assert "expandable_segments" not in f and "alloc_conf" not in f


def test_gpu_from_nvidia_smi_table() -> None:
    f = facts("|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |                    0 |\n")
    assert f["gpu_name"] == "NVIDIA H200"


def test_the_cumem_line_says_sleep_mode_is_on_and_an_unplaced_oom_is_read_beside_it() -> None:
    log = ("INFO 07-30 09:12:01 [model.py:671] Enabling cumem allocator because sleep mode requires it.\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.38 GiB. GPU 1 has a total capacity of "
           "184.31 GiB of which 191.50 MiB is free.\n")
    d = diagnose_text(log)
    assert d.facts.value("sleep_mode") is True and d.facts.get("sleep_mode").line == 1
    assert d.matches[0].scenario == "sleep-mode"
