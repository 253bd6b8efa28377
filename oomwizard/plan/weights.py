"""Weight bytes: exact from safetensors headers when the files are here, else from the parameter count.

A safetensors file starts with an 8-byte little-endian header length and a JSON header that
lists every tensor's dtype and shape; that is all we read (never the tensors). Without the
files, the parameter count follows from the architecture (embeddings, attention, MLP or
experts) and bytes per parameter from the dtype and quantization method.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from ..text.units import MIB
from ..versions import Version

ST_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                  "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8, "F4": 0.5}
MAX_HEADER = 100 * MIB
"""A header over 100 MiB is not a safetensors header (the format's own limit)."""

QUANT_BYTES = {None: None, "fp8": 1.0, "fbgemm_fp8": 1.0, "modelopt": 1.0, "awq": 0.5 + 4 / 128, "gptq": 0.5 + 4 / 128,
               "awq_marlin": 0.5 + 4 / 128, "gptq_marlin": 0.5 + 4 / 128, "bitsandbytes": 0.5 + 2 / 64,
               "mxfp4": 0.5 + 1 / 32, "modelopt_fp4": 0.5 + 1 / 16, "compressed-tensors": None}
"""Bytes per quantized linear-layer weight, group scales included (estimates: group sizes vary)."""


def header_bytes(path: Path) -> int:
    """Sum of tensor sizes listed in one safetensors header."""
    with path.open("rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path.name}: too short for a safetensors file")
        (n,) = struct.unpack("<Q", raw)
        if n > MAX_HEADER:
            raise ValueError(f"{path.name}: header length {n} is not plausible")
        head = json.loads(f.read(n))
    total = 0.0
    for name, t in head.items():
        if name == "__metadata__" or not isinstance(t, dict):
            continue
        count = 1
        for d in t.get("shape", []):
            count *= int(d)
        total += count * ST_DTYPE_BYTES.get(str(t.get("dtype")), 2)
    return int(total)


def file_weight_bytes(model_dir: Path) -> tuple[int, str] | None:
    """Exact checkpoint bytes: the headers of every ``*.safetensors``, else the index's ``total_size``."""
    files = sorted(model_dir.glob("*.safetensors"))
    files = [f for f in files if not f.name.startswith("consolidated")] or files
    if files:
        try:
            return sum(header_bytes(f) for f in files), f"safetensors headers of {len(files)} file(s)"
        except (OSError, ValueError):
            pass
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        try:
            size = json.loads(index.read_text("utf-8")).get("metadata", {}).get("total_size")
        except (OSError, ValueError):
            size = None
        if isinstance(size, int) and size > 0:
            return size, "model.safetensors.index.json metadata.total_size"
    return None


def quantization_of(cfg: dict[str, Any]) -> str | None:
    q = cfg.get("quantization_config")
    if not isinstance(q, dict):
        return None
    method = str(q.get("quant_method") or "").lower() or None
    if method == "compressed-tensors":
        groups = q.get("config_groups") or {}
        for g in groups.values() if isinstance(groups, dict) else []:
            w = (g or {}).get("weights") or {}
            bits, kind = w.get("num_bits"), str(w.get("type") or "")
            if bits == 8 and kind == "float":
                return "fp8"
            if bits == 4:
                return "gptq"
    return method


def _hybrid_linear(cfg: dict[str, Any], mt: str, h: int, attn: int) -> tuple[int, int]:
    """(linear parameters, of which routed experts) of Qwen3-Next, Nemotron-H and Granite 4.0-H:
    attention or state mixer per layer plus the layer's MLP/MoE (the models' own module layout)."""
    n = int(cfg["num_hidden_layers"])
    experts = int(cfg.get("num_experts") or cfg.get("num_local_experts") or cfg.get("n_routed_experts") or 0)
    if mt == "qwen3_next" or mt.startswith("qwen3_5"):
        nk, nv = int(cfg["linear_num_key_heads"]), int(cfg["linear_num_value_heads"])
        dk, dv, k = int(cfg["linear_key_head_dim"]), int(cfg["linear_value_head_dim"]), int(cfg["linear_conv_kernel_dim"])
        gdn = h * (2 * nk * dk + 2 * nv * dv) + h * 2 * nv + (2 * nk * dk + nv * dv) * k + nv * dv * h
        full = sum(1 for i in range(n) if not (i + 1) % int(cfg.get("full_attention_interval") or 4))
        gate = int(cfg["num_attention_heads"]) * int(cfg.get("head_dim") or h // int(cfg["num_attention_heads"])) * h
        if experts:
            routed = n * experts * 3 * h * int(cfg["moe_intermediate_size"])
            mlp = routed + n * (3 * h * int(cfg.get("shared_expert_intermediate_size") or 0) + h * experts + h)
        else:  # dense Qwen3.5
            routed, mlp = 0, n * 3 * h * int(cfg.get("intermediate_size") or 0)
        return full * (attn + gate) + (n - full) * gdn + mlp, routed
    if mt == "nemotron_h":
        heads, hd = int(cfg["mamba_num_heads"]), int(cfg["mamba_head_dim"])
        groups, st, k = int(cfg["n_groups"]), int(cfg["ssm_state_size"]), int(cfg["conv_kernel"])
        inter, pattern = heads * hd, str(cfg["hybrid_override_pattern"])
    else:
        heads, hd = int(cfg["mamba_n_heads"]), int(cfg["mamba_d_head"])
        groups, st, k = int(cfg["mamba_n_groups"]), int(cfg["mamba_d_state"]), int(cfg["mamba_d_conv"])
        inter = int(cfg["mamba_expand"]) * h
        pattern = "".join("M" if t == "mamba" else "*" for t in cfg["layer_types"])
    conv_dim = inter + 2 * groups * st
    mamba = h * (2 * inter + 2 * groups * st + heads) + conv_dim * k + inter * h
    total = pattern.count("M") * mamba + pattern.count("*") * attn
    routed = 0
    if mt == "nemotron_h":
        total += (pattern.count("-") + pattern.count("E")) * 2 * h * int(cfg.get("intermediate_size") or 0)
    else:  # every Granite 4.0-H layer has a (shared) MLP after its mixer, and routed experts when MoE
        routed = n * experts * 3 * h * int(cfg.get("intermediate_size") or 0)
        total += routed + n * (3 * h * int(cfg.get("shared_intermediate_size") or 0) + h * experts)
    return total, routed


def count_params(cfg: dict[str, Any], mt: str) -> dict[str, int]:
    """Parameters by part (``embed``, ``head``, ``linear``, ``other``), as the architecture defines them."""
    h, n, v = int(cfg["hidden_size"]), int(cfg["num_hidden_layers"]), int(cfg["vocab_size"])
    heads = int(cfg["num_attention_heads"])
    kv = int(cfg.get("num_key_value_heads") or heads)
    d = int(cfg.get("head_dim") or h // heads)
    inter = int(cfg.get("intermediate_size") or 0)
    if mt in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        nope, rope, vd = int(cfg["qk_nope_head_dim"]), int(cfg["qk_rope_head_dim"]), int(cfg["v_head_dim"])
        rank, qr = int(cfg["kv_lora_rank"]), cfg.get("q_lora_rank")
        q = (h * qr + qr * heads * (nope + rope)) if qr else h * heads * (nope + rope)
        attn = q + h * (rank + rope) + rank * heads * (nope + vd) + heads * vd * h
    else:
        attn = h * heads * d + 2 * h * kv * d + heads * d * h
    if mt in ("qwen3_next", "nemotron_h", "granitemoehybrid") or mt.startswith("qwen3_5"):
        linear, routed = _hybrid_linear(cfg, mt, h, attn)
        tied = bool(cfg.get("tie_word_embeddings", False))
        return {"embed": v * h, "head": 0 if tied else v * h, "linear": linear, "other": (2 * n + 1) * h,
                "experts": routed}
    experts = int(cfg.get("num_local_experts") or cfg.get("num_experts") or cfg.get("n_routed_experts") or 0)
    moe_inter = int(cfg.get("moe_intermediate_size") or inter)
    shared = int(cfg.get("n_shared_experts") or 0) * moe_inter + int(cfg.get("shared_expert_intermediate_size") or 0)
    dense_layers = int(cfg.get("first_k_dense_replace") or 0) if experts else n
    step = int(cfg.get("decoder_sparse_step") or 1)
    if experts and mt in ("qwen2_moe", "qwen3_moe") and step > 1:
        dense_layers = n - n // step
    moe_layers = n - dense_layers
    mlp_dense = 3 * h * inter
    mlp_moe = experts * 3 * h * moe_inter + 3 * h * shared + h * experts
    linear = n * attn + dense_layers * mlp_dense + moe_layers * mlp_moe
    tied = bool(cfg.get("tie_word_embeddings", False))
    return {"embed": v * h, "head": 0 if tied else v * h, "linear": linear, "other": (2 * n + 1) * h,
            "experts": moe_layers * experts * 3 * h * moe_inter, "n_experts": experts, "moe_inter": moe_inter,
            "moe_layers": moe_layers, "hidden": h, "rope_cache": rope_cache_elements(cfg, d)}


ROPE_CACHE_TYPES = (None, "default", "llama3")
"""Rotary variants whose cache has ``max_position_embeddings`` rows (YaRN, linear and dynamic
scaling stretch it by their factor and are not counted)."""


def rope_cache_elements(cfg: dict[str, Any], head_dim: int) -> int:
    """The rotary ``cos_sin_cache`` buffer, in the model dtype: ``max_position_embeddings x rotary_dim``.

    ``RotaryEmbedding.__init__`` builds it at model construction (``cache.to(dtype)``, one
    instance shared by all layers through ``get_rope``'s ``_ROPE_DICT``), so it is part of what
    vLLM measures as the model's load (``vllm/model_executor/layers/rotary_embedding.py`` @0.6.6,
    ``rotary_embedding/base.py`` @0.10.2-0.33.0). 0 for rope types whose length differs.
    """
    scaling = cfg.get("rope_scaling")
    kind = (scaling.get("rope_type") or scaling.get("type")) if isinstance(scaling, dict) else None
    if kind not in ROPE_CACHE_TYPES:
        return 0
    rotary_dim = int(head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    return int(cfg.get("max_position_embeddings") or 0) * rotary_dim


MARLIN_GPUS = ("A100", "A800", "A10", "A30", "A40", "A6000", "L4", "L40", "RTX 30", "RTX 40", "RTX A", "RTX 6000 ADA",
               "3090", "4090", "3080", "4080")
"""GPUs below compute capability 9.0: vLLM's MXFP4 MoE runs the Marlin kernel there."""
SM90_GPUS = ("H100", "H200", "H800", "H20", "GH200")
"""Hopper (SM90): Marlin too in 0.10.1.x, whose pinned torch 2.7.1 fails the ``is_torch_equal_or_newer
("2.8.0")`` test of ``Mxfp4MoEMethod._should_use_marlin`` (``mxfp4.py`` @0.10.1, @0.10.1.1; torch
2.8.0 from 0.10.2, where Hopper uses Marlin only without the optional triton_kernels package)."""


def mxfp4_marlin_expert_bytes(params: dict[str, int], gpu_name: str,
                              release: Version | None = None) -> tuple[int, str] | None:
    """Expert weights of an MXFP4 checkpoint as vLLM allocates them for the Marlin MoE kernel (GPUs
    below SM90, and Hopper in 0.10.1.x): intermediate rounded up to 128 and hidden to 256
    (``Mxfp4MoEMethod.create_weights``, ``vllm/model_executor/layers/quantization/mxfp4.py``
    @0.10.1-0.18; ``mxfp4_round_up_hidden_size_and_intermediate_size`` in ``fused_moe/oracle/mxfp4.py``
    @0.19+), with e8m0 scales per 32 values and bf16 biases. ``None`` when no such padding applies."""
    name = gpu_name.upper()
    hopper_then = release is not None and release < Version.parse("0.10.2") and any(g in name for g in SM90_GPUS)
    if not params.get("n_experts") or not (hopper_then or any(g in name for g in MARLIN_GPUS)):
        return None
    e, layers = params["n_experts"], params["moe_layers"]
    i_pad = -(params["moe_inter"] // -128) * 128
    h_pad = -(params["hidden"] // -256) * 256
    values = 3 * i_pad * h_pad  # w13 [2I, H] and w2 [H, I]
    per_layer = e * (values // 2 + values // 32 + (2 * i_pad + h_pad) * 2)
    return layers * per_layer, (f"{layers} layers x {e} experts x 3 x {i_pad} x {h_pad} (padded for Marlin) x "
                                f"(0.5 + 1/32) B + bf16 biases")


def estimated_bytes(params: dict[str, int], dtype_bytes: int, quant: str | None,
                    experts_bytes: tuple[int, str] | None = None) -> tuple[float, str]:
    """Checkpoint bytes from the parameter count; quantized methods shrink linear layers only.

    ``experts_bytes`` replaces the experts' share when the loader lays them out differently (Marlin)."""
    if quant == "mxfp4" and experts_bytes:
        rest_params = dict(params, linear=params["linear"] - params["experts"], experts=0)
        rest, how = estimated_bytes(rest_params, dtype_bytes, None)
        return rest + experts_bytes[0], f"{how} + experts {experts_bytes[1]}"
    per = QUANT_BYTES.get(quant) if quant else None
    quantized = params["experts"] if quant == "mxfp4" else params["linear"]  # mxfp4 checkpoints quantize experts only
    lin = quantized * (per or dtype_bytes) + (params["linear"] - quantized) * dtype_bytes
    rest = (params["embed"] + params["head"] + params["other"]) * dtype_bytes
    how = (f"(embed {params['embed']:,} + head {params['head']:,} + norms {params['other']:,}"
           f" + unquantized linear {params['linear'] - quantized:,}) x {dtype_bytes} B"
           f" + {'experts' if quant == 'mxfp4' else 'linear'} {quantized:,} x {per or dtype_bytes:.4g} B")
    return lin + rest, how
