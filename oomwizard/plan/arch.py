"""A model's cache layout and parameter count, read from its ``config.json`` the way vLLM reads it.

Only architectures whose KV cache layout is known exactly are accepted: standard attention
(MHA/GQA/MQA), per-layer sliding windows, MLA, and the hybrids whose state layers vLLM sizes from
the config alone (Qwen3-Next and Qwen3.5 gated delta net, Nemotron-H and Granite 4.0-H Mamba2). Other
state-space and linear-attention layers, chunked local attention and anything unrecognised fail
closed with a message naming the file or option to provide, because a guessed layout would make
every "exact" number wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..i18n import both
from .errors import PlanError
from .hybrid import StateLayer, gdn, mamba2

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "half": 2, "float": 4, "fp32": 4, "fp16": 2, "bf16": 2}

STANDARD = {"llama", "mistral", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "gemma", "gemma2", "gemma3",
            "gemma3_text", "gpt_oss", "phi3", "granite", "olmo2", "deepseek_v2", "deepseek_v3", "kimi_k2", "minimax_m2"}
"""``model_type`` values whose attention layers this module maps to vLLM's specs."""

MLA_TYPES = {"deepseek_v2", "deepseek_v3", "kimi_k2"}
HYBRID_TYPES = {"jamba", "falcon_h1", "bamba", "zamba2", "mamba", "mamba2", "lfm2", "minimax_text_01", "minimax_m1",
                "plamo2", "kimi_linear"}
"""Hybrids whose state layers are not modelled (Mamba1, short conv, MiniMax linear attention, KDA)."""
QWEN35_TYPES = {"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
STATE_HYBRIDS = {"qwen3_next", "nemotron_h", "granitemoehybrid", *QWEN35_TYPES}
"""Hybrids modelled: the state shapes follow from the config (``get_mamba_state_shape_from_config``)."""
CHUNKED_TYPES = {"llama4", "llama4_text"}


@dataclass(frozen=True)
class Layer:
    """One attention layer's cache, before tensor parallelism: ``kind`` is full, sliding or mla."""

    kind: str
    num_kv_heads: int
    head_size: int
    window: int | None = None
    state: StateLayer | None = None


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
    config_ssm_dtype: str | None = None
    """``mamba_ssm_cache_dtype`` the config asks for (Nemotron-H), if any."""

    @property
    def use_mla(self) -> bool:
        return any(layer.kind == "mla" for layer in self.layers)

    @property
    def is_hybrid(self) -> bool:
        return any(layer.kind == "state" for layer in self.layers)


def _text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs keep the language model under ``text_config`` (vLLM's hf_text_config)."""
    text = cfg.get("text_config")
    if isinstance(text, dict) and text.get("num_hidden_layers"):
        merged = dict(text)
        merged.setdefault("model_type", cfg.get("model_type"))
        if cfg.get("architectures"):
            merged.setdefault("architectures", cfg["architectures"])
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
    if mt in HYBRID_TYPES or (mt not in STATE_HYBRIDS and (cfg.get("layers_block_type")
                                                           or cfg.get("hybrid_override_pattern"))):
        raise PlanError(
            *both("plan.arch.hybrid", name=name, value=mt or arch))
    if mt in CHUNKED_TYPES or cfg.get("attention_chunk_size"):
        raise PlanError(*both("plan.arch.chunked_local", name=name, mt=mt))
    if mt not in STANDARD and mt not in STATE_HYBRIDS:
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
    if mt in STATE_HYBRIDS:
        layers = _hybrid_layers(cfg, mt, n, int(kv_heads), int(head_dim), name)
    elif mt in MLA_TYPES:
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
        config_ssm_dtype=str(cfg.get("mamba_ssm_cache_dtype") or cfg.get("mamba_ssm_dtype") or "") or None,
    )
    desc.params = count_params(cfg, mt)
    return desc


def _hybrid_layers(cfg: dict[str, Any], mt: str, n: int, kv_heads: int, head_dim: int, name: str) -> list[Layer]:
    """Attention and state layers in model order; layers without a cache (MLP, MoE) are left out.

    Qwen3-Next and Qwen3.5: ``layer_types`` or every 4th layer full attention (their configuration classes);
    Nemotron-H: ``hybrid_override_pattern`` (M Mamba2, * attention, - MLP, E MoE); Granite 4.0-H:
    ``layer_types`` (mamba / attention). Shapes: ``get_mamba_state_shape_from_config`` of each model.
    """
    def need(key: str) -> int:
        return _int(cfg, key, "state layer shape")

    if mt == "qwen3_next" or mt in QWEN35_TYPES:
        interval = int(cfg.get("full_attention_interval") or 4)
        kinds = cfg.get("layer_types") or ["linear_attention" if (i + 1) % interval else "full_attention"
                                           for i in range(n)]
        state = gdn(need("linear_num_key_heads"), need("linear_num_value_heads"), need("linear_key_head_dim"),
                    need("linear_value_head_dim"), need("linear_conv_kernel_dim"))
        table = {"linear_attention": "state", "full_attention": "full"}
    elif mt == "nemotron_h":
        pattern = str(cfg.get("hybrid_override_pattern") or "")
        if len(pattern) != n:
            raise PlanError(*both("plan.arch.pattern_length", name=name, n=n))
        kinds = list(pattern)
        heads, hd = need("mamba_num_heads"), need("mamba_head_dim")
        state = mamba2(heads * hd, need("n_groups"), heads, hd, need("ssm_state_size"), need("conv_kernel"))
        table = {"M": "state", "*": "full", "-": "", "E": ""}
    else:
        kinds = cfg.get("layer_types") or []
        if len(kinds) != n:
            raise PlanError(*both("plan.arch.layer_types_incomplete", name=name, n=n))
        heads = need("mamba_n_heads")
        state = mamba2(need("mamba_expand") * need("hidden_size"), need("mamba_n_groups"), heads, need("mamba_d_head"),
                       need("mamba_d_state"), need("mamba_d_conv"))
        table = {"mamba": "state", "attention": "full"}
    table_: dict[str, str | None] = dict(table)
    out: list[Layer] = []
    for k in kinds:
        if k not in table:
            raise PlanError(*both("plan.arch.layer_type_unknown", name=name, kind=repr(k)))
        kind = table_[k]
        if kind == "state":
            out.append(Layer("state", 0, 0, state=state))
        elif kind == "full":
            out.append(Layer("full", kv_heads, head_dim))
    return out
