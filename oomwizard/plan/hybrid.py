"""State pages of hybrid models (Mamba2 / gated delta net layers next to attention), per release.

vLLM keeps one fixed-size state per request for each state layer (``MambaSpec``,
``vllm/v1/kv_cache_interface.py``) and makes every page the same size: the attention block
size is raised until one attention page holds a state page, then the state page is padded to
the attention page (``HybridAttentionMambaModelConfig``, ``vllm/model_executor/models/config.py``
up to 0.19; ``Platform._align_hybrid_block_size``, ``vllm/platforms/interface.py``, from 0.20.0).
State shapes are ``MambaStateShapeCalculator`` in ``vllm/model_executor/layers/mamba/mamba_utils.py``.

Modelled for 0.10.2-0.32.x. Up to 0.25 prefix caching is off by default for hybrid models
(``ModelConfig.is_prefix_caching_supported``): ``mamba_cache_mode`` "none", one state page per
request. From 0.26.0 it is on, and ``MambaModelConfig`` picks "align" (two state pages per
request, ``MambaSpec.max_memory_usage_bytes``; the same block size) or, in 0.26-0.27 for models
with Mamba prefix caching (Nemotron-H, Granite 4.0-H), "all", whose chunk-aligned blocks are not
modelled. 0.29-0.32 keep this arithmetic for these models (prefill checkpoint blocks are KDA
only; packed groups need differing page sizes, which the padding removes). 0.33.0 fails closed:
in "align" mode ``_align_hybrid_block_size`` (``vllm/platforms/interface.py`` @0.33.0) takes the lcm
of the kernel block and ``get_mamba_prefill_checkpoint_alignment`` (64 for gated delta net layers
whose prefill runs on FlashInfer, ``qwen_gdn_linear_attn.py``; that backend is chosen at start-up),
such layers add a prefill checkpoint block to their spec, and ``v1/core/kv_cache_planning.py``,
new in 0.33.0 and not modelled here, makes the KV cache plan.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..i18n import both
from ..versions import Version
from .errors import PlanError

STATE_TYPES = ("mamba2", "gdn")


def _v(text: str) -> Version:
    return Version.parse(text)


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def _divide(a: int, b: int, what: str) -> int:
    if a % b:
        raise PlanError(*both("plan.hybrid.not_divisible", what=what, a=a, b=b))
    return a // b


@dataclass(frozen=True)
class StateLayer:
    """The config numbers one state layer's shapes come from (before tensor parallelism)."""

    kind: str
    params: tuple[int, ...]


def mamba2(intermediate: int, n_groups: int, heads: int, head_dim: int, state: int, conv: int) -> StateLayer:
    return StateLayer("mamba2", (intermediate, n_groups, heads, head_dim, state, conv))


def gdn(k_heads: int, v_heads: int, k_dim: int, v_dim: int, conv: int) -> StateLayer:
    return StateLayer("gdn", (k_heads, v_heads, k_dim, v_dim, conv))


def state_shapes(layer: StateLayer, tp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(conv state, temporal state) shapes on one GPU, as ``MambaStateShapeCalculator`` builds them."""
    if layer.kind == "mamba2":
        inter, groups, heads, head_dim, state, conv = layer.params
        if groups % tp:
            groups += tp - groups  # extra_groups_for_head_shards: groups replicated to match head shards
        conv_dim = inter + 2 * groups * state
        return (conv - 1, _divide(conv_dim, tp, "the Mamba conv dimension")), \
               (_divide(heads, tp, "Mamba heads"), head_dim, state)
    k_heads, v_heads, k_dim, v_dim, conv = layer.params
    conv_dim = k_dim * k_heads * 2 + v_dim * v_heads
    return (conv - 1, _divide(conv_dim, tp, "the linear-attention conv dimension")), \
           (_divide(v_heads, tp, "linear-attention value heads"), k_dim, v_dim)


DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


QWEN35_ARCHS = {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"}


def ssm_dtype(model_type: str, architecture: str, config_ssm_dtype: str | None, model_dtype: str,
              release: Version) -> tuple[str, str]:
    """The temporal state's dtype and why: ``mamba_ssm_cache_dtype`` 'auto' follows the model dtype,
    except for Nemotron-H, which 0.13-0.19 set to the config's value or float16, 0.20+ to it or float32
    (``NemotronHForCausalLMConfig``), and Qwen3.5, set to the config's ``mamba_ssm_dtype``
    (``Qwen3_5ForConditionalGenerationConfig``, for those architectures)."""
    if model_type == "nemotron_h" and release >= _v("0.13.0"):
        default = "float32" if release >= _v("0.20.0") else "float16"
        got = config_ssm_dtype or default
        return got, f"NemotronHForCausalLMConfig @{release.text}: config's mamba_ssm_cache_dtype or {default}"
    if architecture in QWEN35_ARCHS and config_ssm_dtype:
        return config_ssm_dtype, f"Qwen3_5ForConditionalGenerationConfig @{release.text}: config's mamba_ssm_dtype"
    return model_dtype, "mamba_ssm_cache_dtype 'auto': the model dtype"


def state_bytes(layer: StateLayer, tp: int, conv_bytes: int, ssm_bytes: int) -> int:
    """``MambaSpec.page_size_bytes`` before padding: sum of prod(shape) x dtype size."""
    conv, temporal = state_shapes(layer, tp)
    n_conv, n_tmp = 1, 1
    for d in conv:
        n_conv *= d
    for d in temporal:
        n_tmp *= d
    return n_conv * conv_bytes + n_tmp * ssm_bytes


ALL_MODE_TYPES = {"nemotron_h", "granitemoehybrid"}
"""Models whose class supports Mamba prefix caching (``SupportsMambaPrefixCaching``) in 0.12-0.27."""


def cache_mode(release: Version, model_type: str, prefix_caching: bool | None = None) -> str:
    """``mamba_cache_mode`` as ``MambaModelConfig`` sets it (``prefix_caching`` ``None``: the release default).

    0.10.2-0.11.0 turn prefix caching off for hybrids; 0.11.1-0.19 keep it only for models with Mamba
    prefix caching (chunk-aligned blocks, reported as "all"); 0.20-0.27 choose "all" for those and
    "align" for the others; 0.28+ "align". Prefix caching is on by default from 0.26.0.
    """
    on = prefix_caching if prefix_caching is not None else release >= _v("0.26.0")
    if not on or release < _v("0.11.1"):
        return "none"
    if release < _v("0.20.0"):
        return "all" if model_type in ALL_MODE_TYPES else "none"
    if release < _v("0.28.0") and model_type in ALL_MODE_TYPES:
        return "all"
    return "align"


def check_release(release: Version, pp: int, model_type: str = "", prefix_caching: bool | None = None) -> None:
    if model_type.startswith("qwen3_5") and release < _v("0.17.0"):
        raise PlanError(*both("plan.hybrid.no_qwen35", version=release.text))
    if release < _v("0.10.2"):
        raise PlanError(*both("plan.hybrid.too_old", version=release.text))
    if release >= _v("0.33.0"):
        raise PlanError(*both("plan.hybrid.too_new", version=release.text))
    if cache_mode(release, model_type, prefix_caching) == "all":
        raise PlanError(*both("plan.hybrid.all_mode", version=release.text))
    if pp > 1:
        raise PlanError(*both("plan.hybrid.no_pp"))


@dataclass(frozen=True)
class Alignment:
    block_size: int
    state_page: int
    padded_page: int
    align: int
    note: str


def align(attn_bytes_per_token: int, state_page: int, user_block: int | None, release: Version,
          gpu_name: str, head_size: int) -> Alignment:
    """Attention block size and padded state page: ``align x cdiv(state_page, align x attn page per token)``.

    ``align``: 16, the smallest kernel block of FlashAttention/FlashInfer/Triton; 32 on Blackwell
    with head size 256 (FlashInfer) in 0.11.1-0.17; from 0.20.0 ``max(smallest kernel block,
    --block-size)``. Before 0.20.0 a larger ``--block-size`` is kept as it is.
    """
    blackwell = any(x in gpu_name.upper() for x in ("B200", "B100", "GB200", "B300", "GB300"))
    a = 32 if blackwell and head_size == 256 and _v("0.11.1") <= release < _v("0.18.0") else 16
    if release >= _v("0.20.0") and user_block:
        a = max(a, user_block)
    block = a * cdiv(state_page, a * attn_bytes_per_token)
    if user_block and user_block >= block:
        block = user_block
    where = ("vllm/platforms/interface.py _align_hybrid_block_size" if release >= _v("0.20.0")
             else "vllm/model_executor/models/config.py HybridAttentionMambaModelConfig")
    page = block * attn_bytes_per_token
    return Alignment(block, state_page, page, a,
                     f"attention block {block} tokens = {a} x cdiv({state_page:,} B state, {a} x {attn_bytes_per_token:,} B "
                     f"per token); state page padded to {page:,} B ({where} @{release.text})")


def mamba_blocks_error(max_num_seqs: int, num_blocks: int, release: Version, enforce_eager: bool) -> str | None:
    """0.20.0+ refuses to capture FULL decode graphs when max_num_seqs exceeds the blocks
    (``CompilationConfig``, ``vllm/config/compilation.py``): one state block per decoding sequence."""
    if release < _v("0.20.0") or enforce_eager or max_num_seqs <= num_blocks:
        return None
    return (f"max_num_seqs ({max_num_seqs}) exceeds available Mamba cache blocks ({num_blocks}). Each decode sequence "
            "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most "
            f"{num_blocks} or increase gpu_memory_utilization.")
