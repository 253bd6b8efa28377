"""Planning from an earlier start's log, and the bundled GPU table against a real reading.

The log figures are those of a real pair of starts of one model on one machine (vLLM 0.6.x,
Llama-3.1-8B, RTX 3090, max_model_len 20000 then 29000; benchmarks/plan_cases.json): the
activation peak of the profiling pass is one layer's tensors, one row per token, so moving it
to another batch scales it by the token ratio.
"""

from __future__ import annotations

import json
from pathlib import Path

from oomwizard.plan.inputs import Inputs
from oomwizard.plan.planner import plan

GIB = 1 << 30
FIRST = {"weights_gib": 14.9888, "activation_peak_gib": 2.07, "non_torch_gib": 0.35, "kv_cache_gib": 3.81,
         "gpu_memory_utilization": 0.9, "max_model_len": 20000, "vllm_version": "0.6.6", "tp": 1}


def _second(**kw):
    base = {"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu_memory_gib": 23.58, "max_model_len": 29000,
            "gpu_memory_utilization": 0.9, "vllm_version": "0.6.6", "log_facts": FIRST, "log_name": "first.log"}
    return plan(Inputs(**{**base, **kw}))


def test_activation_from_the_log_scales_with_the_profiled_tokens():
    p = _second()
    assert p.value("activation_peak_bytes") == int(2.07 * GIB) * 29000 // 20000
    # requested - weights - activation - non-torch, each from the first log (V0 profiles max_model_len tokens)
    want = int(23.58 * GIB * 0.9) - int(14.9888 * GIB) - int(2.07 * GIB) * 29000 // 20000 - int(0.35 * GIB)
    assert p.value("available_kv_bytes") == want
    assert abs(want / GIB - 2.89) / 2.89 < 0.01  # the second start printed 2.89 GiB


def test_same_settings_reuse_the_log_without_rescaling():
    p = _second(max_model_len=20000)
    assert p.value("activation_peak_bytes") == int(2.07 * GIB)
    assert abs(p.value("available_kv_bytes") / GIB - 3.81) < 0.006


def test_the_failed_start_plans_the_smaller_one():
    """The same pair the other way round: --log of the 29k start (which failed), planning 20k."""
    failed = {**FIRST, "activation_peak_gib": 2.99, "kv_cache_gib": 2.89, "max_model_len": 29000}
    p = _second(max_model_len=20000, log_facts=failed)
    assert p.value("activation_peak_bytes") == int(2.99 * GIB) * 20000 // 29000
    assert p.numbers["activation_peak_bytes"]["basis"] == "estimated"
    assert abs(p.value("available_kv_bytes") / GIB - 3.81) / 3.81 < 0.01  # the 20k start printed 3.81 GiB


def test_a_v1_log_with_only_its_kv_line_moves_with_the_utilization():
    """V1 logs at INFO print the load and the KV line only: the non-KV part they imply
    (requested - KV) is kept, so another utilization moves the KV by the requested difference."""
    log = {"kv_cache_gib": 20.0, "gpu_memory_utilization": 0.9, "max_model_len": 32768, "vllm_version": "0.11.0",
           "tp": 1}
    base = {"model": "Qwen/Qwen3-8B", "gpu_memory_gib": 79.18, "max_model_len": 32768, "vllm_version": "0.11.0",
            "log_facts": log, "log_name": "v1.log"}
    same = plan(Inputs(**base, gpu_memory_utilization=0.9))
    more = plan(Inputs(**base, gpu_memory_utilization=0.95))
    assert same.value("available_kv_bytes") == int(20.0 * GIB)
    assert same.numbers["available_kv_bytes"]["basis"] == "calibrated"
    total = int(79.18 * GIB)
    assert more.value("available_kv_bytes") - same.value("available_kv_bytes") == int(total * 0.95) - int(total * 0.9)


def test_h200_total_in_the_table_is_what_cuda_reports_on_a_real_h200():
    probe = json.loads((Path(__file__).parent / "fixtures/machine/h200_probe.json").read_text("utf-8"))
    cuda_total = probe["torch"]["mem_get_info"][1]
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu="H200", vllm_version="0.20.0"))
    assert abs(p.gpu["total_bytes"] - cuda_total) < 0.01 * GIB
    assert p.gpu["total_bytes"] < 140 * GIB  # the marketed "141 GB" read as GiB would be 1.2 GiB too many


def test_mxfp4_experts_are_padded_for_marlin_below_sm90():
    # gpt-oss-20b: 24 layers x 32 experts, hidden 2880 -> 3072 (x256), intermediate 2880 -> 2944 (x128)
    values = 3 * 2944 * 3072
    padded = 24 * 32 * (values // 2 + values // 32 + (2 * 2944 + 3072) * 2)
    base = {"model": "openai/gpt-oss-20b", "gpu_memory_gib": 79.15, "vllm_version": "0.19.0", "max_model_len": 131072}
    a100 = plan(Inputs(gpu="A100 80GB", **base))
    h100 = plan(Inputs(gpu="H100", **base))
    unpadded = 24 * 32 * 3 * 2880 * 2880 * (0.5 + 1 / 32)
    # the same checkpoint: only the experts' layout differs (Hopper runs unpadded Triton kernels)
    assert abs(a100.value("weights_bytes_per_gpu") - (h100.value("weights_bytes_per_gpu") - unpadded + padded)) <= 1
    # vLLM printed 13.72 GiB for the load on an A100 (benchmarks/plan_cases.json, gpt-oss-20b-a100-0190)
    assert abs(a100.value("weights_bytes_per_gpu") / GIB - 13.72) / 13.72 < 0.01


def test_hopper_pads_mxfp4_experts_for_marlin_in_0_10_1_whose_torch_is_2_7():
    # 0.10.1.x pins torch 2.7.1: _should_use_marlin picks Marlin on SM90 too (mxfp4.py @0.10.1);
    # 0.10.2 pins torch 2.8.0 and Hopper runs the Triton kernels where they are installed
    base = {"model": "openai/gpt-oss-120b", "gpu": "H100", "max_model_len": 131072}
    old = plan(Inputs(vllm_version="0.10.1", **base)).numbers["weights_bytes_per_gpu"]
    new = plan(Inputs(vllm_version="0.10.2", **base)).numbers["weights_bytes_per_gpu"]
    assert "padded for Marlin" in old["formula"] and "padded for Marlin" not in new["formula"]
    # 36 layers x 128 experts: hidden 2880 -> 3072, intermediate 2880 -> 2944
    values = 3 * 2944 * 3072
    padded = 36 * 128 * (values // 2 + values // 32 + (2 * 2944 + 3072) * 2)
    unpadded = 36 * 128 * 3 * 2880 * 2880 * (0.5 + 1 / 32)
    assert abs(old["value"] - (new["value"] - unpadded + padded)) <= 1  # the same as below SM90
    # vLLM 0.10.1 printed "Model loading took 65.9651 GiB" on one H100 (vllm#23278)
    assert abs(old["value"] / GIB - 65.9651) / 65.9651 < 0.005


def test_bundled_tables_say_what_each_entry_was_checked_against():
    from oomwizard.plan.sources import bundled_gpus, bundled_models

    for g in bundled_gpus():
        assert g.get("verified"), g["name"]
        if g.get("total_gib_seen"):
            assert g["total_gib_seen"] < g["memory_gb"], g["name"]  # CUDA sees less than the marketed size
    for name in ("Qwen/Qwen3-Next-80B-A3B-Instruct", "nvidia/NVIDIA-Nemotron-Nano-9B-v2"):
        assert "huggingface.co/" in bundled_models()[name]["_source"]


def test_v0_activation_is_the_live_set_of_the_forward():
    """Without a log, V0's profiling peak for Llama is three hidden-sized and three intermediate-sized
    rows per token (the loop's previous output, the residual, the MLP input; gate/up and the
    activation's output): vLLM printed 2.07 GiB at 20,000 tokens and 2.99 GiB at 29,000 (vllm#10517)."""
    from oomwizard.plan.budget import v0_activation

    for tokens, printed in ((20000, 2.07), (29000, 2.99)):
        p = _second(max_model_len=tokens, log_facts={})
        assert abs(p.value("activation_peak_bytes") / GIB - printed) / printed < 0.01
        assert "V0 (eager) peak" in p.numbers["activation_peak_bytes"]["formula"]
        two_rows = tokens * (2 * 4096 + 3 * 14336) * 2  # without the loop's previous output: 8 % low
        assert abs(two_rows / GIB - printed) / printed > 0.05
    layer, sampler, _ = v0_activation("qwen2", hidden=3584, inter_gpu=18944, vocab=152064, batched_tokens=8192,
                                      max_num_seqs=256, dtype_bytes=2)
    assert layer == 8192 * (4 * 3584 + 3 * 18944) * 2  # Qwen2MLP keeps gate_up until it returns
    assert sampler == 256 * 152064 * 32 + 8192 * 3584 * 2
    assert v0_activation("gemma", hidden=1, inter_gpu=1, vocab=1, batched_tokens=1, max_num_seqs=1, dtype_bytes=2) is None
    v1 = _second(vllm_version="0.11.0", log_facts={})
    assert "V0" not in v1.numbers["activation_peak_bytes"]["formula"]
