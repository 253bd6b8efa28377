"""A model's cache layout and parameter count, read from its ``config.json`` the way vLLM reads it.

Only architectures whose KV cache layout is known exactly are accepted: standard attention
(MHA/GQA/MQA), per-layer sliding windows, and MLA. State-space and linear-attention layers,
chunked local attention and anything unrecognised fail closed with a message naming the file
or option to provide, because a guessed layout would make every "exact" number wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..i18n import both
from .errors import PlanError

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "half": 2, "float": 4, "fp32": 4, "fp16": 2, "bf16": 2}

STANDARD = {"llama", "mistral", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "gemma", "gemma2", "gemma3",
            "gemma3_text", "gpt_oss", "phi3", "granite", "olmo2", "deepseek_v2", "deepseek_v3", "kimi_k2", "minimax_m2"}
"""``model_type`` values whose attention layers this module maps to vLLM's specs."""

MLA_TYPES = {"deepseek_v2", "deepseek_v3", "kimi_k2"}
HYBRID_TYPES = {"qwen3_next", "jamba", "nemotron_h", "granitemoehybrid", "falcon_h1", "bamba", "zamba2", "mamba",
                "mamba2", "lfm2", "minimax_text_01", "minimax_m1", "plamo2", "kimi_linear"}
CHUNKED_TYPES = {"llama4", "llama4_text"}


@dataclass(frozen=True)
class Layer:
    """One attention layer's cache, before tensor parallelism: ``kind`` is full, sliding or mla."""

    kind: str
    num_kv_heads: int
    head_size: int
    window: int | None = None


@dataclass
class ModelDesc:
    """What the planner needs of a model; ``source`` says where it came from."""

    name: str
    model_type: str
    architecture: str
    layers: list[Layer]
    dtype: str
    max_position: int
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    params: dict[str, int] = field(default_factory=dict)
    quantization: str | None = None
    weight_file_bytes: int | None = None
    weight_file_source: str | None = None
    source: str = ""
    is_moe: bool = False

    @property
    def use_mla(self) -> bool:
        return any(layer.kind == "mla" for layer in self.layers)


def _text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs keep the language model under ``text_config`` (vLLM's hf_text_config)."""
    text = cfg.get("text_config")
    if isinstance(text, dict) and text.get("num_hidden_layers"):
        merged = dict(text)
        merged.setdefault("model_type", cfg.get("model_type"))
        merged.setdefault("torch_dtype", cfg.get("torch_dtype") or cfg.get("dtype"))
        if "quantization_config" in cfg:
            merged.setdefault("quantization_config", cfg["quantization_config"])
        return merged
    return cfg


def _int(cfg: dict[str, Any], key: str, what: str) -> int:
    v = cfg.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise PlanError(*both("plan.arch.missing_key", key=key, what=what))
    return v


def _layer_types(cfg: dict[str, Any], mt: str, n: int) -> list[str]:
    """Per-layer attention type as transformers computes it when the config does not list it."""
    lt = cfg.get("layer_types")
    if isinstance(lt, list) and len(lt) == n:
        return [str(x) for x in lt]
    if mt == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    if mt in ("gemma3", "gemma3_text"):
        pattern = int(cfg.get("sliding_window_pattern") or 6)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if mt == "gpt_oss":
        return ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n)]
    if mt in ("mistral", "mixtral") and cfg.get("sliding_window"):
        raise PlanError(*both("plan.arch.sliding_window_no_layer_types"))
    if mt in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and cfg.get("use_sliding_window"):
        raise PlanError(*both("plan.arch.use_sliding_window"))
    return ["full_attention"] * n


def describe(cfg: dict[str, Any], name: str, source: str) -> ModelDesc:
    """Turn a parsed ``config.json`` into a :class:`ModelDesc`, or raise :class:`PlanError`."""
    top_type = str(cfg.get("model_type") or "")
    cfg = _text_config(cfg)
    mt = str(cfg.get("model_type") or top_type)
    archs = cfg.get("architectures") or []
    arch = str(archs[0]) if archs else mt
    if mt in HYBRID_TYPES or cfg.get("layers_block_type") or cfg.get("hybrid_override_pattern"):
        raise PlanError(
            *both("plan.arch.hybrid", name=name, value=mt or arch))
    if mt in CHUNKED_TYPES or cfg.get("attention_chunk_size"):
        raise PlanError(*both("plan.arch.chunked_local", name=name, mt=mt))
    if mt not in STANDARD:
        raise PlanError(
            *both("plan.arch.unknown_model_type", name=name, mt=mt, arch=arch))
    n = _int(cfg, "num_hidden_layers", "number of layers")
    heads = _int(cfg, "num_attention_heads", "attention heads")
    hidden = _int(cfg, "hidden_size", "hidden size")
    kv_heads = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or hidden // heads
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16").replace("torch.", "")
    if dtype == "float32":
        dtype = "bfloat16"  # vLLM's "auto" serves float32 checkpoints in bfloat16 on GPUs that have it
    layers: list[Layer] = []
    if mt in MLA_TYPES:
        rank, rope = _int(cfg, "kv_lora_rank", "MLA latent rank"), _int(cfg, "qk_rope_head_dim", "MLA rope dim")
        layers = [Layer("mla", 1, rank + rope) for _ in range(n)]
    else:
        window = cfg.get("sliding_window")
        for t in _layer_types(cfg, mt, n):
            if t == "sliding_attention" and window:
                layers.append(Layer("sliding", int(kv_heads), int(head_dim), int(window)))
            elif t in ("full_attention", "sliding_attention"):
                layers.append(Layer("full", int(kv_heads), int(head_dim)))
            else:
                raise PlanError(*both("plan.arch.unknown_layer_type", name=name, t=t))
    from .weights import count_params, quantization_of

    desc = ModelDesc(
        name=name, model_type=mt, architecture=arch, layers=layers, dtype=dtype,
        max_position=int(cfg.get("max_position_embeddings") or 0) or 4096,
        vocab_size=_int(cfg, "vocab_size", "vocabulary"), hidden_size=hidden,
        intermediate_size=int(cfg.get("intermediate_size") or 0), num_attention_heads=heads,
        quantization=quantization_of(cfg), source=source,
        is_moe=bool(cfg.get("num_local_experts") or cfg.get("num_experts") or cfg.get("n_routed_experts")),
    )
    desc.params = count_params(cfg, mt)
    return desc
