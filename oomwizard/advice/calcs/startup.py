"""Numbers for the start-up profiling leaves: a token budget that fits, multimodal limits.

vLLM sizes the KV cache after one dummy forward pass of ``max_num_batched_tokens`` tokens (V1), and
for multimodal models after running the encoder on the largest inputs the processor allows: on V1
as many items of one modality as fill the encoder budget, on V0 ``limit_mm_per_prompt`` items per
dummy sequence. When that pass itself runs out of memory, what scales with it must shrink; each
calculation shows its arithmetic from the facts it used.
"""

from __future__ import annotations

import re

from ... import safejson
from ...facts.model import FactSet
from ...i18n import Text, msg
from ...text.units import MIB
from ..numbers import Computed, calc, default_max_num_batched_tokens, explain, floor_to, said, total_gib
from ..numbers import as_int as _int
from ..numbers import src as _src
from .readings import current_max_num_seqs, runs_v0

MIN_TOKENS = 512
"""Below this the pass no longer fits a useful prefill chunk; the problem is elsewhere (weights, TP)."""

SAFETY = 0.8
"""Scale the failing allocation to 80 % of the free memory: other tensors of the pass shrink too,
but the one that failed is rarely the only one alive."""

QWEN_VL_TOKEN_SIDE = 28
QWEN_VL_PIXELS_PER_TOKEN = QWEN_VL_TOKEN_SIDE * QWEN_VL_TOKEN_SIDE
"""Qwen2-VL / Qwen2.5-VL: 14-pixel patches merged 2 x 2, so one vision token covers 28 x 28 pixels."""

V0_MIN_PROFILE_TOKENS = 2048
"""V0 without chunked prefill profiles max(max_model_len, this) tokens."""

TARGET_TOKENS_PER_IMAGE = 4096
"""About 3.2 megapixels (1792 x 1792) for Qwen-VL: larger than most real inputs, a quarter of the
16,384-token worst case that start-up profiles per Qwen2.5-VL image by default (its profiling
warning says so). Operators with bigger images raise it."""


def current_batched_tokens(facts: FactSet) -> tuple[int, Text] | None:
    """The profiling pass's token count: the flag, else the engine's default for this GPU."""
    n = _int(facts, "max_num_batched_tokens")
    if n:
        s = _src(facts, "max_num_batched_tokens")
        return n, said("calc.startup.tokens_given", n=n, source=s)
    if facts.value("engine") == "v0":
        mml = _int(facts, "max_model_len")
        if not mml:
            return None
        n = max(mml, V0_MIN_PROFILE_TOKENS)
        return n, said("calc.startup.tokens_v0", least=V0_MIN_PROFILE_TOKENS, n=n)
    total = total_gib(facts)
    if total is None:
        return None
    default = default_max_num_batched_tokens(facts)
    if default is None:
        return None
    n, _ = default
    name = str(facts.value("gpu_name") or "")
    gpu = f"{name}, {total[0]:.0f} GiB" if name else f"{total[0]:.0f} GiB"
    return n, said("calc.startup.tokens_default", n=n, gpu=gpu)


@calc(
    "profile_max_num_batched_tokens",
    msg("calc.startup.profile_tokens.title"),
    "<TOKENS>",
)
def profile_max_num_batched_tokens(facts: FactSet) -> Computed | None:
    """Scale the token count so the allocation that failed fits in 80 % of what was free.

    Activations of the dummy pass grow linearly with its tokens, so the failed tensor shrinks by
    the same factor. Without the OOM's numbers, halve. Never below max_num_seqs or 512.
    """
    cur = current_batched_tokens(facts)
    if cur is None:
        return None
    tokens, tokens_why = cur
    requested = _int(facts, "oom_requested_bytes")
    free = _int(facts, "oom_free_bytes")
    # vLLM refuses a token budget below max_num_seqs, and the hardware default counts too.
    floor_at = max(MIN_TOKENS, current_max_num_seqs(facts)[0])
    if requested and free is not None and requested > free:
        ratio = free * SAFETY / requested
        new = max(floor_at, floor_to(tokens * ratio, 256))
        if new >= tokens:
            return None
        return explain(
            new,
            said("calc.startup.profile_tokens", tokens_why=tokens_why, requested=requested / MIB, free=free / MIB,
                 source=_src(facts, "oom_requested_bytes", "oom_free_bytes"), tokens=tokens, safety=SAFETY,
                 scaled=tokens * ratio, new=new, floor=floor_at),
            ("max_num_batched_tokens", "oom_requested_bytes", "oom_free_bytes"),
        )
    new = max(floor_at, floor_to(tokens // 2, 256))
    if new >= tokens:
        return None
    return explain(
        new,
        said("calc.startup.profile_tokens_halved", tokens_why=tokens_why, new=new, floor=floor_at),
        ("max_num_batched_tokens",),
    )


def image_limit(facts: FactSet) -> tuple[int, str] | None:
    """The image count in limit_mm_per_prompt, in any of its spellings (JSON, dotted, key=value)."""
    raw = facts.value("limit_mm_per_prompt")
    if raw is None:
        return None
    text = str(raw).strip()
    try:
        data = safejson.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "image" in data:
        value = data["image"]
        if isinstance(value, dict):
            value = value.get("count")
        if isinstance(value, int) and not isinstance(value, bool):
            return value, text
        return None
    m = re.search(r"image\s*[=:]\s*(\d+)", text)
    return (int(m.group(1)), text) if m else None


@calc(
    "mm_image_limit",
    msg("calc.startup.image_limit.title"),
    "<IMAGES>",
)
def mm_image_limit(facts: FactSet) -> Computed | None:
    """V0: half the limit (each profiled sequence carries that many images). V1: the limit you have.

    V1 runs the encoder on as many worst-case items of one modality as fill its encoder budget
    (max(max_num_batched_tokens, the largest item)), so the per-prompt count does not size that
    pass; only what the operator really sends belongs there. Unknown on V1 stays a placeholder.
    """
    cur = image_limit(facts)
    fact = facts.get("limit_mm_per_prompt")
    source = fact.source if cur is not None and fact is not None else ""
    if runs_v0(facts):
        if cur is not None and cur[0] > 1:
            n, text = cur
            new = max(1, n // 2)
            return explain(
                new,
                said("calc.startup.image_limit_v0", text=text, source=source, n=n, new=new),
                ("limit_mm_per_prompt",),
            )
        if cur is None:
            return explain("1", said("calc.startup.image_limit_v0_default"), ("limit_mm_per_prompt",))
        return None
    if cur is None:
        return None
    n, text = cur
    return explain(n, said("calc.startup.image_limit_v1", text=text, source=source), ("limit_mm_per_prompt",))


@calc(
    "mm_max_pixels",
    msg("calc.startup.max_pixels.title"),
    "<PIXELS>",
)
def mm_max_pixels(facts: FactSet) -> Computed | None:
    """Pixels such that the allowed images plus some text fit in max_model_len: tokens x 28 x 28."""
    mml = _int(facts, "max_model_len")
    if not mml:
        return None
    cur = image_limit(facts)
    images = cur[0] if cur is not None and cur[0] > 0 else 1
    tokens = min(TARGET_TOKENS_PER_IMAGE, mml // (images + 1))
    tokens = floor_to(tokens, 64) if tokens >= 64 else tokens
    if tokens < 4:
        return None
    pixels = tokens * QWEN_VL_PIXELS_PER_TOKEN
    return explain(
        pixels,
        said("calc.startup.max_pixels", mml=mml, images=images, share=mml // (images + 1), tokens=tokens,
             cap=TARGET_TOKENS_PER_IMAGE, side=QWEN_VL_TOKEN_SIDE, pixels=pixels),
        ("max_model_len", "limit_mm_per_prompt"),
    )


@calc(
    "pp_stages",
    msg("calc.startup.pp_stages.title"),
    "<GPUS>",
)
def pp_stages(facts: FactSet) -> Computed | None:
    """One stage per GPU on the machine; unknown without a GPU count (the placeholder stays)."""
    n = _int(facts, "gpu_count")
    if not n or n < 2:
        return None
    return Computed(str(n), said("calc.startup.pp_stages", n=n), ("gpu_count",))


@calc(
    "pp_layer_partition",
    msg("calc.startup.pp_layers.title"),
    "<LAYERS_ON_GPU0>,<LAYERS_ON_GPU1>",
)
def pp_layer_partition(facts: FactSet) -> Computed | None:
    """A placeholder per stage, so the list has as many entries as --pipeline-parallel-size."""
    n = _int(facts, "gpu_count")
    if not n or n < 2:
        return None
    slots = ",".join(f"<LAYERS_ON_GPU{i}>" for i in range(n))
    return Computed(slots, said("calc.startup.pp_layers", n=n), ("gpu_count",))
