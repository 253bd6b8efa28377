"""The capacity planner against vLLM's own arithmetic, worked by hand from each release's code.

Every expected number below was computed from the formulas in the cited files, not taken from
the planner: page_size_bytes (vllm/v1/kv_cache_interface.py), get_num_blocks / the KV size and
concurrency lines (vllm/v1/core/kv_cache_utils.py), the V0 cache engine and executor.
"""

from __future__ import annotations

import json
import math
import struct

import pytest
from schemas import validate_output

from oomwizard.cli import main
from oomwizard.plan import kv
from oomwizard.plan.arch import Layer, describe
from oomwizard.plan.errors import PlanError
from oomwizard.plan.inputs import Inputs
from oomwizard.plan.planner import plan
from oomwizard.plan.sources import bundled_models, load_model
from oomwizard.plan.weights import file_weight_bytes
from oomwizard.versions import Version

GIB = 1 << 30
V = Version.parse


def _dense(layers: int, kv_heads: int, head: int, *, tp: int = 1, dtype_bytes: int = 2, block: int = 16):
    return kv.layer_specs([Layer("full", kv_heads, head)] * layers, tp=tp, pp=1, dtype_bytes=dtype_bytes,
                          block_size=block, kv_cache_dtype="auto")


def test_llama3_8b_bytes_per_token_and_page():
    # 2 (K and V) x 8 KV heads x 128 x 2 B = 4096 B per layer per token; x 32 layers = 131072.
    specs = _dense(32, 8, 128)
    assert specs[0].page_size_bytes == 16 * 4096
    assert sum(s.bytes_per_token for s in specs) == 131072


def test_tp_splits_kv_heads_and_replicates_below_one():
    # Llama-3.1-70B, 80 layers, 8 KV heads: TP 8 -> 1 head per rank (40 KiB/token); TP 16 -> still 1.
    assert sum(s.bytes_per_token for s in _dense(80, 8, 128, tp=8)) == 80 * 2 * 1 * 128 * 2 == 40960
    assert sum(s.bytes_per_token for s in _dense(80, 8, 128, tp=16)) == 40960


def test_mla_latent_is_not_split_by_tp():
    m = describe(bundled_models()["deepseek-ai/DeepSeek-V3"], "v3", "test")
    for tp in (1, 8):
        specs = kv.layer_specs(m.layers, tp=tp, pp=1, dtype_bytes=2, block_size=64, kv_cache_dtype="auto")
        assert sum(s.bytes_per_token for s in specs) == 61 * (512 + 64) * 2 == 70272
    fp8 = kv.layer_specs(m.layers, tp=8, pp=1, dtype_bytes=1, block_size=64, kv_cache_dtype="fp8")
    assert sum(s.bytes_per_token for s in fp8) == 35136
    ds = kv.layer_specs(m.layers, tp=8, pp=1, dtype_bytes=1, block_size=64, kv_cache_dtype="fp8_ds_mla")
    assert ds[0].page_size_bytes == 64 * 656


def test_single_gpu_blocks_tokens_concurrency_0_10_2():
    # Qwen3-14B (40 layers, 8 KV heads, 128): bytes per block = 40 x 16 x 4096 = 2,621,440.
    specs = _dense(40, 8, 128)
    g = kv.group(specs, V("0.10.2"))
    assert g.bytes_per_block == 2_621_440
    cap = kv.capacity(g, 2666 * 2_621_440 + 2_621_439, 32768, 8192, V("0.10.2"), "v1")
    assert (cap.num_blocks, cap.kv_tokens) == (2666, 42656)
    assert f"{cap.max_concurrency:.2f}" == "1.30"  # 2666 / cdiv(32768, 16)


def test_tokens_line_changes_in_0_21():
    # <= 0.20: num_blocks // groups x block_size; 0.21+: int(num_blocks / cdiv(L, 16) x L).
    g = kv.group(_dense(32, 8, 128), V("0.20.0"))
    avail = 2000 * g.bytes_per_block
    old = kv.capacity(g, avail, 1000, 2048, V("0.20.0"), "v1")
    new = kv.capacity(g, avail, 1000, 2048, V("0.21.0"), "v1")
    assert old.kv_tokens == 32000
    assert new.kv_tokens == int(2000 / 63 * 1000) == 31746
    # before 0.9.1 the concurrency is tokens / max_model_len, not rounded to blocks
    assert kv.capacity(g, avail, 1000, 2048, V("0.9.0"), "v1").max_concurrency == 32.0


def test_v0_blocks_and_error():
    # V0: num_gpu_blocks = kv // (block x bytes/token); Llama-3.1-8B, 1478 blocks -> 23,648 tokens.
    specs = _dense(32, 8, 128)
    g = kv.group(specs, V("0.6.6"))
    avail = 1478 * 16 * 131072 + 5
    cap = kv.capacity(g, avail, 29000, 29000, V("0.6.6"), "v0")
    assert cap.kv_tokens == 23648 and f"{cap.max_concurrency:.2f}" == "0.82"
    msg = kv.startup_error(specs, g, avail, 29000, 29000, V("0.6.6"), "v0")
    assert "max seq len (29000)" in msg and "stored in KV cache (23648)" in msg
    assert kv.startup_error(specs, g, avail, 20000, 20000, V("0.6.6"), "v0") is None


def test_hybrid_sliding_window_groups_per_release():
    # Gemma-3-27B: 52 sliding + 10 full layers -> group size 10: 6 sliding groups + 1 full.
    m = describe(bundled_models()["google/gemma-3-27b-it"], "g3", "test")
    specs = kv.layer_specs(m.layers, tp=1, pp=1, dtype_bytes=2, block_size=16, kv_cache_dtype="auto")
    g = kv.group(specs, V("0.11.0"))
    assert g.group_size == 10 and len(g.specs) == 7 and sorted(g.sizes) == [8, 8, 9, 9, 9, 9, 10]
    cap = kv.capacity(g, 7000 * g.bytes_per_block, 131072, 8192, V("0.11.0"), "v1")
    assert cap.kv_tokens == 7000 // 7 * 16
    # sliding layers hold cdiv(min(1024 - 1 + 8192, L), 16) + 1 blocks; full ones cdiv(L, 16)
    assert cap.blocks_per_request == 6 * (cdiv(9215, 16) + 1) + 8192
    # 10 and 12 layers: 0.11 groups by 10 (3 groups), 0.12+ takes 12 as the size (2 groups, 12 < 1.25 x 10)
    mixed = [Layer("sliding", 8, 128, 4096)] * 12 + [Layer("full", 8, 128)] * 10
    mixed_specs = kv.layer_specs(mixed, tp=1, pp=1, dtype_bytes=2, block_size=16, kv_cache_dtype="auto")
    assert len(kv.group(mixed_specs, V("0.11.0")).specs) == 3
    assert len(kv.group(mixed_specs, V("0.12.0")).specs) == 2


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


@pytest.mark.parametrize(("release", "pieces", "absent"), [
    ("0.8.2", ["(16.00 GB KV cache is needed", "memory (5.00 GB). Try increasing"], ["estimated"]),
    ("0.8.5", ["(5.00 GiB). Based on the available memory,  Try increasing"], ["conserving_memory"]),
    ("0.11.0", ["models's max seq len (131072)", "the estimated maximum model length is 40960. Try"],
     ["conserving_memory"]),
    ("0.14.0", ["(16.0 GiB KV cache", "(5.0 GiB). Based", "length is 40960. Try", "conserving_memory/ for more"], []),
    ("0.29.0", ["the model's max seq len", "which also controls CPU memory", "length is 40944. "], ["models's"]),
])
def test_start_up_error_text_per_release(release, pieces, absent):
    specs = _dense(32, 8, 128)
    g = kv.group(specs, V(release))
    msg = kv.startup_error(specs, g, 5 * GIB, 131072, 2048, V(release), "v1")
    for p in pieces:
        assert p in msg
    for a in absent:
        assert a not in msg


def test_estimated_max_len_is_largest_that_fits():
    specs = _dense(32, 8, 128)
    n = kv.estimate_max_len(specs, 5 * GIB, 131072, 2048)
    assert kv.needed_bytes(specs, n, 2048) <= 5 * GIB < kv.needed_bytes(specs, n + 1, 2048)


def test_plan_defaults_and_budget_per_release():
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.19, vllm_version="0.21.0"))
    assert p.settings["gpu_memory_utilization"] == 0.92 and p.numbers["cudagraph_bytes"]["counted"]
    assert p.numbers["kv_bytes_per_token"] == {**p.numbers["kv_bytes_per_token"], "value": 131072, "basis": "exact"}
    parts = sum(p.value(k) for k in ("weights_bytes_per_gpu", "activation_peak_bytes", "non_torch_bytes", "cudagraph_bytes"))
    assert p.value("available_kv_bytes") == p.value("requested_bytes") - parts
    assert p.value("requested_bytes") == math.ceil(int(79.19 * GIB) * 0.92)  # ceil from 0.14.0
    old = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.19, vllm_version="0.19.0"))
    assert old.settings["gpu_memory_utilization"] == 0.9 and not old.numbers["cudagraph_bytes"]["counted"]
    eager = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.19, vllm_version="0.21.0",
                        enforce_eager=True))
    assert not eager.numbers["cudagraph_bytes"]["counted"]
    # no graph is captured at all, so none is shown as if it were held outside the budget
    assert eager.numbers["cudagraph_bytes"]["value"] == 0 and eager.numbers["cudagraph_bytes"]["basis"] == "exact"
    assert eager.value("available_kv_bytes") == p.value("available_kv_bytes") + p.value("cudagraph_bytes")


def test_suggestions_fit_when_applied():
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=23.58, vllm_version="0.11.0",
                    max_model_len=131072))
    from oomwizard.plan.suggest import suggestions

    assert not p.fits and p.error.startswith("To serve at least one request")
    sugs = suggestions(p)
    assert sugs, "a 24 GiB GPU can serve Llama-3.1-8B at a shorter context"
    by_flag = {s["flag"]: s for s in sugs}
    n = by_flag["--max-model-len"]["value"]
    assert plan(p.inputs.but(max_model_len=n)).fits and not plan(p.inputs.but(max_model_len=n + 1)).fits


def test_unknown_and_hybrid_architectures_fail_closed(tmp_path):
    cfg = {"model_type": "jamba", "architectures": ["JambaForCausalLM"], "num_hidden_layers": 32}
    with pytest.raises(PlanError, match="state-space or linear-attention"):
        describe(cfg, "q3n", "test")
    with pytest.raises(PlanError, match=r"config\.json"):
        describe({"model_type": "brandnew", "num_hidden_layers": 2}, "x", "test")
    with pytest.raises(PlanError, match=r"config\.json"):
        load_model(str(tmp_path))  # a directory without config.json
    with pytest.raises(PlanError, match=r"config\.json"):
        load_model("no-such-org/no-such-model-7B")


def _safetensors(path, tensors):
    header = {name: {"dtype": dt, "shape": shape, "data_offsets": [0, 0]} for name, (dt, shape) in tensors.items()}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)  # the header only: the planner never reads tensors


def test_local_directory_reads_safetensors_headers(tmp_path):
    cfg = dict(bundled_models()["Qwen/Qwen2.5-0.5B-Instruct"])
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    _safetensors(tmp_path / "model-00001-of-00002.safetensors", {"a": ("BF16", [1000, 10]), "b": ("F32", [7])})
    _safetensors(tmp_path / "model-00002-of-00002.safetensors", {"c": ("F8_E4M3", [3, 3])})
    assert file_weight_bytes(tmp_path)[0] == 1000 * 10 * 2 + 7 * 4 + 9
    m = load_model(str(tmp_path))
    assert m.weight_file_bytes == 20037
    p = plan(Inputs(model=str(tmp_path), gpu_memory_gib=24, vllm_version="0.11.0"))
    rope = cfg["max_position_embeddings"] * (cfg["hidden_size"] // cfg["num_attention_heads"]) * 2  # cos/sin cache, bf16
    assert p.value("weights_bytes_per_gpu") == 20037 + rope


def test_rotary_cache_counts_in_the_load_once_per_gpu():
    """vLLM builds one cos/sin cache (max_position x rotary_dim, model dtype) when it constructs the
    model, so it is in 'Model loading took'; it is not split by TP, and YaRN's longer cache is left out."""
    from oomwizard.plan.weights import rope_cache_elements

    cfg = dict(bundled_models()["meta-llama/Llama-3.1-8B-Instruct"])
    assert rope_cache_elements(cfg, 128) == 131072 * 128
    assert rope_cache_elements(dict(cfg, rope_scaling={"rope_type": "llama3", "factor": 8.0}), 128) == 131072 * 128
    assert rope_cache_elements(dict(cfg, rope_scaling={"rope_type": "yarn", "factor": 4.0}), 128) == 0
    assert rope_cache_elements(dict(cfg, partial_rotary_factor=0.5), 128) == 131072 * 64
    one = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.1, vllm_version="0.11.0"))
    two = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.1, vllm_version="0.11.0", tp=2))
    rope = 131072 * 128 * 2
    assert abs((one.value("weights_bytes_per_gpu") - rope) - 2 * (two.value("weights_bytes_per_gpu") - rope)) <= 1
    # 'Model loading took 14.9888 GiB' for this model (vllm#10517); without the cache it would be 14.9576
    assert round(one.value("weights_bytes_per_gpu") / 2**30, 4) == 14.9888


def test_index_total_size_when_no_shards(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(bundled_models()["Qwen/Qwen3-8B"]))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 16381470720}}))
    assert load_model(str(tmp_path)).weight_file_bytes == 16381470720


def test_log_calibrates_available_memory(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(
        "INFO 10-03 16:20:00 [api_server.py:1896] vLLM API server version 0.10.2\n"
        "INFO 10-03 16:20:00 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-14B', 'gpu_memory_utilization': 0.8}\n"
        "(EngineCore_DP0 pid=1) INFO 10-03 16:22:10 [gpu_model_runner.py:2602] Model loading took 27.5 GiB and 9.1 seconds\n"
        "(EngineCore_DP0 pid=1) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n"
        "(EngineCore_DP0 pid=1) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n"
        "(EngineCore_DP0 pid=1) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 tokens per request: 1.30x\n")
    base = Inputs(model="Qwen/Qwen3-14B", gpu_memory_gib=44.4, max_model_len=32768)
    from oomwizard.plan.command import _log_facts

    facts = _log_facts(str(log))
    same = plan(base.but(log_facts=facts, log_name="vllm.log", gpu_memory_utilization=0.8))
    assert same.numbers["available_kv_bytes"]["basis"] == "calibrated"
    assert same.value("available_kv_bytes") == int(6.51 * GIB)
    assert same.value("kv_tokens") == 42656 and "matches" in " ".join(n.en for n in same.notes)
    more = plan(base.but(log_facts=facts, log_name="vllm.log", gpu_memory_utilization=0.9))
    total = int(44.4 * GIB)
    assert more.value("available_kv_bytes") - same.value("available_kv_bytes") == int(total * 0.9) - int(total * 0.8)


def test_cli_json_validates_and_text_in_both_languages(capsys):
    code = main(["plan", "--model", "google/gemma-3-27b-it", "--gpu", "H100", "--vllm-version", "0.21.0",
                 "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert validate_output(doc) == "plan"
    assert doc["kv_bytes_per_token"]["value"] == 62 * 2 * 16 * 128 * 2
    assert code == (0 if doc["fits"] else 8)
    code = main(["plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "23.58", "--vllm-version",
                 "0.11.0", "--max-model-len", "131072", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    validate_output(doc)
    assert code == 8 and not doc["fits"] and doc["suggestions"]
    main(["plan", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "80", "--lang", "zh"])
    assert "容量规划" in capsys.readouterr().out
    assert main(["plan", "--model", "no-such/model", "--gpu-memory", "80"]) == 4
    assert "config.json" in capsys.readouterr().err


def test_every_bundled_model_plans():
    for name in bundled_models():
        p = plan(Inputs(model=name, gpu_memory_gib=141, tp=8 if "405B" in name or "V3" in name or "R1" in name else 1,
                        vllm_version="0.24.0"))
        assert p.value("kv_bytes_per_token") > 0 and p.value("weights_bytes_per_gpu") > 0


def test_kv_cache_memory_bytes_makes_capacity_exact():
    # 0.21.0, Llama-3.1-8B: 1000 blocks of 32 x 65536 B; max_model_len 8192 -> 512 blocks per request.
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=80, vllm_version="0.21.0",
                    max_model_len=8192, kv_cache_memory_bytes=1000 * 32 * 65536 + 7))
    assert p.numbers["kv_tokens"]["basis"] == "exact"
    assert p.value("num_blocks") == 1000
    assert p.value("kv_tokens") == int(1000 / 512 * 8192) == 16000
    assert p.value("max_concurrency") == round(1000 / 512, 4)


def test_benchmark_kv_check_passes_real_cases_and_fails_a_wrong_model():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_plan.py"
    spec = importlib.util.spec_from_file_location("bench_plan", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cases = {c["id"]: c for c in json.loads(bench.CASES.read_text("utf-8"))["cases"]}
    case = cases["qwen3-14b-0102"]
    assert bench.kv_check(case)["kv_ok"]
    assert not bench.kv_check({**case, "model": "Qwen/Qwen3-8B"})["kv_ok"]  # 36 layers: other page size
    assert not bench.kv_check({**case, "release": "0.21.0", "max_model_len": 32000})["kv_ok"]  # other tokens rule


def test_check_bytes_for_hybrid_models_per_release():
    # Gemma-3-27B at 131072 tokens, 8192 batched, page 16 x 8192 B: sliding groups need
    # cdiv(1023 + 8192, 16) + 1 = 577 blocks, the full group 8192 blocks; group size 10.
    m = describe(bundled_models()["google/gemma-3-27b-it"], "g3", "test")
    specs = kv.layer_specs(m.layers, tp=1, pp=1, dtype_bytes=2, block_size=16, kv_cache_dtype="auto")
    page = 16 * 8192
    at = {r: kv.needed_for_check(specs, kv.group(specs, V(r)), 131072, 8192, V(r)) for r in ("0.13.0", "0.14.0", "0.19.0")}
    assert at["0.13.0"] == 52 * 577 * page + 10 * 8192 * page  # the sum over layers
    assert at["0.14.0"] == 10 * page * 577  # the first group's blocks only
    assert at["0.19.0"] == 10 * page * (6 * 577 + 8192)  # every group's


def test_pipeline_parallel_check_covers_all_stages_in_0_14_to_0_16():
    base = Inputs(model="Qwen/Qwen3-30B-A3B", gpu_memory_gib=32, pp=2, max_model_len=262144,
                  kv_cache_memory_bytes=3 * GIB)
    # 48 layers x 8192 blocks x 16 x 2048 B = 24 GiB in 0.15; one stage's 24 layers from 0.17
    assert plan(base.but(vllm_version="0.15.0")).value("kv_bytes_needed_one_request") == 24 * GIB
    assert plan(base.but(vllm_version="0.17.0")).value("kv_bytes_needed_one_request") == 12 * GIB


def test_free_memory_check_at_start_up():
    from oomwizard.plan.budget import free_memory_error

    total, req = int(79.19 * GIB), int(79.19 * GIB * 0.9)
    msg = free_memory_error(60 * GIB, total, 0.9, req, V("0.11.0"))
    assert msg.startswith("Free memory on device (60.0/79.19 GiB) on startup is less than desired GPU memory "
                          "utilization (0.9, 71.27 GiB).")
    assert "device cuda:0 (60.0/" in free_memory_error(60 * GIB, total, 0.9, req, V("0.21.0"))
    assert free_memory_error(75 * GIB, total, 0.9, req, V("0.21.0")) is None
    assert free_memory_error(60 * GIB, total, 0.9, req, V("0.9.1")) is None  # no such check before 0.9.2
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", vllm_version="0.21.0"),
             gpu={"name": "NVIDIA H100 80GB HBM3", "total_bytes": total, "basis": "exact", "source": "NVML",
                  "free_bytes": 30 * GIB})
    assert not p.fits and p.error.startswith("Free memory on device cuda:0 (30.0/79.19 GiB)")


def test_suggestion_for_busy_gpu_lowers_utilization():
    from oomwizard.plan.suggest import suggestions

    total = int(79.19 * GIB)
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", vllm_version="0.21.0", max_model_len=8192),
             gpu={"name": "H100", "total_bytes": total, "basis": "exact", "source": "NVML", "free_bytes": 40 * GIB})
    (sug,) = suggestions(p)
    assert sug["value"] == 0.5 and 0.5 * total <= 40 * GIB  # int(40 / 79.19 x 100) / 100
    assert plan(p.inputs.but(gpu_memory_utilization=0.5), gpu=p.gpu).fits


def _facts(**values):
    from oomwizard.facts.model import Fact, FactSet

    return FactSet.of([Fact(k, v, "test") for k, v in values.items()])


def test_leaf_context_from_the_planner_uses_vllms_check():
    from oomwizard.advice.calcs.kv import max_model_len_fit

    # vllm#34076's numbers: 3.18 GiB printed; PP 2 on 0.15 checks all 48 layers: 48 x 16 x 2048 B per block
    fs = _facts(model="Qwen/Qwen3-30B-A3B", kv_cache_gib=3.18, max_model_len=262144, vllm_version="0.15.0", pp=2)
    c = max_model_len_fit(fs)
    blocks = int((3.18 - 0.005) * GIB) // (48 * 16 * 2048)
    assert c.value == "33792" and f"{blocks * 16:,} tokens" in c.why.en
    assert max_model_len_fit(_facts(model="no-such/model", kv_cache_gib=3.18, max_model_len=262144)) is None


def test_leaf_tp_for_weights_when_the_load_died_before_printing_them():
    from oomwizard.advice.calcs.weights import tp_for_weights

    fs = _facts(model="meta-llama/Llama-3.1-70B-Instruct", gpu_mem_total_bytes=int(79.19 * GIB))
    c = tp_for_weights(fs)
    assert c.value == "2" and "estimated from the architecture" in c.why.en
    assert tp_for_weights(_facts(model="Qwen/Qwen3-next-80B", gpu_mem_total_bytes=int(79.19 * GIB))) is None


def test_log_of_a_release_without_graph_reservation_calibrates_one_with_it():
    facts = {"kv_cache_gib": 50.0, "gpu_memory_utilization": 0.9, "vllm_version": "0.19.0", "weights_gib": 14.99}
    base = Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.19, gpu_memory_utilization=0.9,
                  log_facts=facts, log_name="old.log")
    same = plan(base.but(vllm_version="0.19.0"))
    newer = plan(base.but(vllm_version="0.21.0"))
    assert same.numbers["available_kv_bytes"]["basis"] == "calibrated"
    assert same.value("available_kv_bytes") == 50 * GIB  # same settings: the log's own figure
    # 0.21 reserves the graph estimate that 0.19 (default VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) did not
    graphs = newer.value("cudagraph_bytes")
    assert newer.numbers["available_kv_bytes"]["basis"] == "estimated" and graphs > 0
    assert newer.value("available_kv_bytes") == 50 * GIB - graphs
    older = plan(base.but(vllm_version="0.11.0"))  # 0.11 truncates total x util, 0.19 rounds it up
    assert older.value("available_kv_bytes") == int(int(79.19 * GIB) * 0.9) - (math.ceil(int(79.19 * GIB) * 0.9) - 50 * GIB)


@pytest.mark.parametrize(("release", "source", "context_counted"), [
    ("0.6.6", "vllm/utils.py memory_profiling @0.6.6", False),
    ("0.8.5", "gpu_worker.py determine_available_memory @0.8.5", True),
    ("0.9.1", "vllm/utils.py MemorySnapshot @0.9.1", False),
    ("0.10.2", "vllm/utils/__init__.py MemorySnapshot @0.10.2", False),
    ("0.20.0", "vllm/utils/mem_utils.py @0.20.0", False),
    ("0.27.0", "total_consumed @0.27.0", None),
])
def test_non_torch_says_what_each_release_counts(release, source, context_counted):
    """The estimate's formula names the release's own accounting: whether the CUDA context and
    torch's cached blocks are in vLLM's non-torch figure differs by release."""
    p = plan(Inputs(model="meta-llama/Llama-3.1-8B-Instruct", gpu_memory_gib=79.1, vllm_version=release))
    f = p.numbers["non_torch_bytes"]["formula"]
    assert p.numbers["non_torch_bytes"]["basis"] == "estimated"
    assert source in f
    if context_counted is not None:
        assert ("CUDA context and torch's cache excluded" in f) is (not context_counted and release != "0.6.6")
        assert ("process's CUDA context" in f) is context_counted


@pytest.mark.parametrize(("gpu", "tp", "gib_"), [
    ("L40S", 2, 0.25),        # PCIe only: NCCL over PCIe, as the public V0 starts measured
    ("RTX 4090", 4, 0.25),
    ("H100 80GB", 2, 0.9),    # SXM and PCIe forms share the name: the typical figure
    ("H200", 8, 0.9),
    ("L40S", 1, 0.25),        # one GPU: no NCCL at all
])
def test_non_torch_for_tp_follows_the_link_between_the_gpus(gpu: str, tp: int, gib_: float) -> None:
    p = plan(Inputs(model="Qwen/Qwen2.5-32B-Instruct", gpu=gpu, tp=tp, vllm_version="0.7.1"))
    assert p.value("non_torch_bytes") == int(gib_ * GIB)
    assert ("over PCIe" in p.numbers["non_torch_bytes"]["formula"]) is (tp > 1 and gib_ < 0.9)
