"""Hybrid models (Mamba2 / gated delta net state layers next to attention) against vLLM's arithmetic.

Expected numbers are worked by hand from the released code, not taken from the planner:
state shapes ``MambaStateShapeCalculator`` (vllm/model_executor/layers/mamba/mamba_utils.py),
the block size ``16 x cdiv(state page, 16 x attention page per token)`` and the padding
(HybridAttentionMambaModelConfig in vllm/model_executor/models/config.py @0.10.2-0.19.0;
Platform._align_hybrid_block_size in vllm/platforms/interface.py @0.20.0-0.32.0), grouping
and the KV lines (vllm/v1/core/kv_cache_utils.py), mamba_cache_mode (MambaModelConfig and
MambaSpec.max_memory_usage_bytes @0.26.0-0.32.0), the Mamba block check
(vllm/config/compilation.py @0.20.0).
"""

from __future__ import annotations

import pytest

from oomwizard.plan.arch import describe
from oomwizard.plan.errors import PlanError
from oomwizard.plan.inputs import Inputs
from oomwizard.plan.planner import plan
from oomwizard.plan.sources import bundled_models, load_model

GIB = 1 << 30
NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
QNEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def _plan(model: str, release: str, **kw):
    base = {"model": model, "gpu_memory_gib": 139.8, "vllm_version": release, "max_model_len": 131072}
    return plan(Inputs(**{**base, **kw}))


def test_nemotron_nano_block_size_matches_vllm_and_follows_the_ssm_dtype_per_release():
    # conv (3, 128*80 + 2*8*128) and temporal (128, 80, 128): bf16 -> 73,728 + 2,621,440 B.
    bf16_state = 3 * 12288 * 2 + 128 * 80 * 128 * 2
    assert bf16_state == 2_695_168
    attn_token = 2 * 8 * 128 * 2  # one attention layer, one token: 4096 B
    for rel, ssm_bytes in (("0.10.2", 2), ("0.13.0", 2), ("0.19.0", 2), ("0.20.0", 4), ("0.25.0", 4)):
        p = _plan(NANO, rel)
        state = 3 * 12288 * 2 + 128 * 80 * 128 * ssm_bytes
        block = 16 * cdiv(state, 16 * attn_token)
        assert p.settings["block_size"] == block, rel
        assert {g["page_size_bytes"] for g in p.groups} == {block * attn_token}
        assert p.groups[0]["state_bytes"] == state
    # vLLM printed "Setting attention block size to 672 tokens" for this model (vllm-project/vllm#24280)
    assert _plan(NANO, "0.10.2").settings["block_size"] == 672
    assert _plan(NANO, "0.20.0").settings["block_size"] == 1312  # float32 state from 0.20.0


def test_qwen3_next_tp4_groups_blocks_tokens_concurrency():
    # TP 4: conv (3, (128*16*2 + 128*32) / 4) = 3 x 2048, temporal (32/4, 128, 128), bf16.
    state = 3 * 2048 * 2 + 8 * 128 * 128 * 2
    attn_token = 2 * 1 * 256 * 2  # 2 KV heads / TP 4 -> 1 head per rank
    block = 16 * cdiv(state, 16 * attn_token)
    page = block * attn_token
    assert (state, block, page) == (274_432, 272, 278_528)
    avail = 10 * GIB
    for rel in ("0.10.2", "0.11.0", "0.19.0"):
        p = _plan(QNEXT, rel, tp=4, max_model_len=262144, kv_cache_memory_bytes=avail)
        # 36 gated-delta-net layers and 12 attention layers: group size 12 -> 3 state groups + 1 attention group
        assert [(g["kind"], g["layers"]) for g in p.groups] == [("state", 12)] * 3 + [("full", 12)]
        blocks = avail // (12 * page)
        assert p.value("num_blocks") == blocks
        assert p.value("kv_tokens") == blocks // 4 * 272  # num_blocks // num_groups x min block size
        per_request = 3 * 1 + cdiv(262144, 272)  # one state page per state group
        assert p.value("max_concurrency") == round(blocks / per_request, 4)
    p = _plan(QNEXT, "0.21.0", tp=4, max_model_len=262144, kv_cache_memory_bytes=avail)
    blocks = avail // (12 * page)
    assert p.value("kv_tokens") == int(blocks / (3 + cdiv(262144, 272)) * 262144)  # 0.21.0+: concurrency x length


def test_qwen3_next_parameter_count_is_the_published_one():
    m = load_model(QNEXT)
    total = m.params["embed"] + m.params["head"] + m.params["linear"] + m.params["other"]
    assert abs(total - 79_674_391_296) / 79_674_391_296 < 1e-6  # published total (model card)


def test_mamba_blocks_below_max_num_seqs_refuse_to_start_from_0_20_0():
    kw = {"tp": 4, "max_model_len": 32768, "kv_cache_memory_bytes": 2 * GIB, "max_num_seqs": 1024}
    p = _plan(QNEXT, "0.20.0", **kw)
    blocks = 2 * GIB // (12 * 278_528)
    assert p.value("num_blocks") == blocks < 1024
    assert not p.fits
    assert p.error.startswith(f"max_num_seqs (1024) exceeds available Mamba cache blocks ({blocks}).")
    assert _plan(QNEXT, "0.19.0", **kw).fits  # 0.18-0.19 cap the capture sizes instead
    assert _plan(QNEXT, "0.20.0", enforce_eager=True, **kw).fits  # no FULL graphs to capture
    assert _plan(QNEXT, "0.20.0", **{**kw, "max_num_seqs": blocks}).fits


def test_hybrids_outside_the_modelled_range_fail_closed():
    with pytest.raises(PlanError, match="mamba_cache_mode 'all'"):
        _plan(NANO, "0.26.0")  # Nemotron-H caches prefixes in chunk-aligned "all" mode in 0.26-0.27
    with pytest.raises(PlanError, match=r"up to 0\.32"):
        _plan(QNEXT, "0.33.0", tp=4)
    with pytest.raises(PlanError, match=r"prefill checkpoint alignment \(64 tokens"):
        _plan(QNEXT, "0.33.0", tp=4)  # _align_hybrid_block_size @0.33.0: lcm with the checkpoint alignment
    with pytest.raises(PlanError, match=r"up to 0\.32"):
        _plan(NANO, "0.33.0")  # Mamba2 too: the 0.33 KV cache plan (kv_cache_planning.py) is not modelled
    with pytest.raises(PlanError, match=r"0\.10\.2"):
        _plan(NANO, "0.9.2")
    with pytest.raises(PlanError, match="pipeline"):
        _plan(NANO, "0.11.0", pp=2)
    cfg = dict(bundled_models()[NANO])
    cfg["hybrid_override_pattern"] = cfg["hybrid_override_pattern"][:-1]
    with pytest.raises(PlanError, match="hybrid_override_pattern"):
        describe(cfg, "broken", "test")
    with pytest.raises(PlanError, match="state-space"):
        describe({"model_type": "lfm2", "num_hidden_layers": 16}, "lfm2", "test")


def test_cli_json_of_a_hybrid_plan_validates(capsys):
    import json

    from schemas import validate_output

    from oomwizard.cli import main

    code = main(["plan", "--model", QNEXT, "--gpu-memory", "139.8", "--tp", "4", "--vllm-version", "0.25.0",
                 "--max-model-len", "262144", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert validate_output(doc) == "plan"
    assert doc["state_page_bytes"]["value"] == 278_528
    assert doc["settings"]["block_size"] == 272
    assert [g["kind"] for g in doc["kv_groups"]] == ["state"] * 3 + ["full"]
    assert code == (0 if doc["fits"] else 8)


def test_block_alignment_rules_per_release():
    # Qwen3-Next TP 4: 274,432 B state, 1,024 B attention per token.
    state, tok = 274_432, 1024
    cases = [  # (release, gpu, --block-size, expected block)
        ("0.11.0", "NVIDIA B200", None, 16 * cdiv(state, 16 * tok)),   # 32-alignment arrives in 0.11.1
        ("0.11.1", "NVIDIA B200", None, 32 * cdiv(state, 32 * tok)),   # Blackwell, head size 256: 32
        ("0.17.0", "NVIDIA H100", None, 16 * cdiv(state, 16 * tok)),
        ("0.18.0", "NVIDIA B200", None, 16 * cdiv(state, 16 * tok)),   # the Blackwell rule is gone in 0.18
        ("0.19.0", "NVIDIA H100", 512, 512),                           # a larger --block-size is kept
        ("0.20.0", "NVIDIA H100", 64, 64 * cdiv(state, 64 * tok)),     # 0.20+: the block size is the alignment
        ("0.25.0", "NVIDIA H100", None, 272),
    ]
    for rel, gpu, user, want in cases:
        p = _plan(QNEXT, rel, tp=4, gpu=gpu, block_size=user)
        assert p.settings["block_size"] == want, (rel, gpu, user)
        assert p.value("state_page_bytes") == want * tok


def test_benchmark_checks_the_block_size_vllm_printed_for_a_hybrid():
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_plan.py"
    spec = importlib.util.spec_from_file_location("bench_plan", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cases = {c["id"]: c for c in json.loads(bench.CASES.read_text("utf-8"))["cases"]}
    case = cases["nemotron-nano-9b-v2-block"]
    assert bench.kv_check(case)["kv_ok"]
    assert not bench.kv_check({**case, "release": "0.20.0"})["kv_ok"]  # float32 state from 0.20.0: 1312 tokens
    assert not bench.kv_check({**case, "kv_cache_dtype": "fp8"})["kv_ok"]  # half the attention page: 1328 tokens


QWEN35_9B_TEXT = {  # the text part of a Qwen3.5 9B config.json
    "model_type": "qwen3_5_text", "num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 12288,
    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 248320,
    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 8, "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32", "dtype": "bfloat16",
    "max_position_embeddings": 262144,
}


def test_qwen3_5_takes_the_state_dtype_from_its_config_from_0_17_0(tmp_path):
    import json

    cfg = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
           "text_config": QWEN35_9B_TEXT}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    conv = 3 * (128 * 16 * 2 + 128 * 32) * 2  # bf16 conv state
    attn_token = 2 * 4 * 256 * 2
    f32 = conv + 32 * 128 * 128 * 4  # Qwen3_5ForConditionalGenerationConfig: mamba_ssm_dtype float32
    for rel in ("0.17.0", "0.20.0", "0.25.0"):
        p = _plan(str(path), rel, max_model_len=32768)
        assert p.settings["block_size"] == 16 * cdiv(f32, 16 * attn_token) == 528
        assert [(g["kind"], g["layers"]) for g in p.groups] == [("state", 8)] * 3 + [("full", 8)]
    # another architecture name is not in vLLM's config map: the state follows the model dtype
    path.write_text(json.dumps({**cfg, "architectures": ["Qwen3_5ForCausalLM"]}))
    assert _plan(str(path), "0.20.0", max_model_len=32768).settings["block_size"] == 16 * cdiv(
        conv + 32 * 128 * 128 * 2, 16 * attn_token) == 272
    with pytest.raises(PlanError, match=r"Qwen3\.5"):
        _plan(str(path), "0.16.0")


def test_align_mode_from_0_26_keeps_two_state_pages_per_request():
    # prefix caching is on for hybrids from 0.26.0; Qwen3-Next gets mamba_cache_mode "align":
    # the same 272-token block, and cdiv(2 x page, page) = 2 blocks per state group per request.
    page, avail = 278_528, 10 * GIB
    blocks = avail // (12 * page)
    for rel in ("0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.32.0"):
        p = _plan(QNEXT, rel, tp=4, max_model_len=262144, kv_cache_memory_bytes=avail)
        assert p.settings["block_size"] == 272
        per_request = 3 * 2 + cdiv(262144, 272)
        assert p.value("max_concurrency") == round(blocks / per_request, 4)
        assert p.value("kv_tokens") == int(blocks / per_request * 262144)
        assert p.value("kv_bytes_needed_one_request") == 12 * page * per_request  # _max_memory_usage_bytes_from_groups
    before = _plan(QNEXT, "0.25.0", tp=4, max_model_len=262144, kv_cache_memory_bytes=avail)
    assert before.value("max_concurrency") == round(blocks / (3 + cdiv(262144, 272)), 4)
    # Nemotron-H keeps "all" mode (refused) in 0.26-0.27 and goes to "align" in 0.28
    p = _plan(NANO, "0.28.0", kv_cache_memory_bytes=avail)
    assert p.settings["block_size"] == 1312


def test_cli_text_shows_the_state_page_and_suggests_fewer_sequences(capsys):
    from oomwizard.cli import main

    # 8 GiB TP 4 Qwen3-Next at 32k on 0.20: vLLM needs 1024 state blocks for max_num_seqs 1024
    code = main(["plan", "--model", QNEXT, "--gpu-memory", "139.8", "--tp", "4", "--vllm-version", "0.20.0",
                 "--max-model-len", "32768", "--kv-cache-memory-bytes", str(2 * GIB), "--max-num-seqs", "1024"])
    out = capsys.readouterr().out
    blocks = 2 * GIB // (12 * 278_528)
    assert code == 8
    assert "state page per layer and request" in out and "278,528 B" in out
    assert f"max_num_seqs (1024) exceeds available Mamba cache blocks ({blocks})" in out
    assert f"--max-num-seqs {blocks}" in out


def test_real_hybrid_log_kv_size_and_concurrency_match_in_align_mode():
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_plan.py"
    spec = importlib.util.spec_from_file_location("bench_plan", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    cases = {c["id"]: c for c in json.loads(bench.CASES.read_text("utf-8"))["cases"]}
    for cid in ("qwen3.6-35b-a3b-5090-0240a", "qwen3.6-35b-a3b-5090-0240b"):
        case = cases[cid]  # Qwen3.6-35B-A3B, 0.24.0, fp8 KV, prefix caching on: 569,878 tokens at 4.35x
        assert bench.kv_check(case)["kv_ok"], cid
        assert not bench.kv_check({**case, "enable_prefix_caching": False})["kv_ok"]  # one state page: other numbers
        assert not bench.kv_check({**case, "kv_cache_dtype": "auto"})["kv_ok"]
    # by hand: state 3 x 8192 x 2 B + 32 x 128 x 128 x 4 B (float32) = 2,146,304 B; 1,024 B of fp8 KV per token
    p = _plan("Qwen/Qwen3.6-35B-A3B", "0.24.0", kv_cache_dtype="fp8", enable_prefix_caching=True,
              kv_cache_memory_bytes=int(6.01 * GIB))
    block = 16 * cdiv(3 * 8192 * 2 + 32 * 128 * 128 * 4, 16 * 1024)
    blocks = int(6.01 * GIB) // (10 * block * 1024)
    assert (block, blocks) == (2096, 300)
    assert p.settings["mamba_cache_mode"] == "align"
    assert p.value("kv_tokens") == int(blocks / (3 * 2 + cdiv(131072, 2096)) * 131072) == 569_878
