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
from ...i18n import Text
from ...text.units import MIB
from ..numbers import Computed, calc, default_max_num_batched_tokens, explain, floor_to, total_gib
from ..numbers import as_int as _int
from ..numbers import src as _src
from .readings import current_max_num_seqs, runs_v0

MIN_TOKENS = 512
"""Below this the pass no longer fits a useful prefill chunk; the problem is elsewhere (weights, TP)."""

SAFETY = 0.8
"""Scale the failing allocation to 80 % of the free memory: other tensors of the pass shrink too,
but the one that failed is rarely the only one alive."""

QWEN_VL_PIXELS_PER_TOKEN = 28 * 28
"""Qwen2-VL / Qwen2.5-VL: 14-pixel patches merged 2 x 2, so one vision token covers 28 x 28 pixels."""

TARGET_TOKENS_PER_IMAGE = 4096
"""About 3.2 megapixels (1792 x 1792) for Qwen-VL: larger than most real inputs, a quarter of the
16,384-token worst case that start-up profiles per Qwen2.5-VL image by default (its profiling
warning says so). Operators with bigger images raise it."""


def current_batched_tokens(facts: FactSet) -> tuple[int, Text] | None:
    """The profiling pass's token count: the flag, else the engine's default for this GPU."""
    n = _int(facts, "max_num_batched_tokens")
    if n:
        s = _src(facts, "max_num_batched_tokens")
        return n, Text(f"max_num_batched_tokens = {n:,} ({s})", f"max_num_batched_tokens = {n:,}（{s}）")
    if facts.value("engine") == "v0":
        mml = _int(facts, "max_model_len")
        if not mml:
            return None
        n = max(mml, 2048)
        return n, Text(
            f"V0 without chunked prefill profiles max(max_model_len, 2048) = {n:,} tokens",
            f"V0 未开启分块 prefill 时按 max(max_model_len, 2048) = {n:,} 个 token 做分析",
        )
    total = total_gib(facts)
    if total is None:
        return None
    default = default_max_num_batched_tokens(facts)
    if default is None:
        return None
    n, _ = default
    name = str(facts.value("gpu_name") or "")
    gpu = f"{name}, {total[0]:.0f} GiB" if name else f"{total[0]:.0f} GiB"
    return n, Text(
        f"max_num_batched_tokens = {n:,} (vLLM's V1 default on this GPU, {gpu})",
        f"max_num_batched_tokens = {n:,}（vLLM 在这张 GPU 上的 V1 默认值，{gpu}）",
    )


@calc(
    "profile_max_num_batched_tokens",
    Text("A token budget whose profiling pass fits", "内存分析放得下的 token 预算"),
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
            f"{tokens_why.en}; the pass asked for {requested / MIB:,.0f} MiB with {free / MIB:,.0f} MiB free "
            f"({_src(facts, 'oom_requested_bytes', 'oom_free_bytes')}); activations scale with tokens, so "
            f"{tokens:,} x {SAFETY:.0%} x free / requested = {tokens * ratio:,.0f}, rounded down to {new:,} "
            f"(never below {floor_at}).",
            f"{tokens_why.zh}；分析时申请 {requested / MIB:,.0f} MiB，空闲 {free / MIB:,.0f} MiB"
            f"（{_src(facts, 'oom_requested_bytes', 'oom_free_bytes')}）；激活随 token 数线性变化，因此 "
            f"{tokens:,} x {SAFETY:.0%} x 空闲 / 申请 = {tokens * ratio:,.0f}，向下取整为 {new:,}（不低于 {floor_at}）。",
            ("max_num_batched_tokens", "oom_requested_bytes", "oom_free_bytes"),
        )
    new = max(floor_at, floor_to(tokens // 2, 256))
    if new >= tokens:
        return None
    return explain(
        new,
        f"{tokens_why.en}; without the OOM's figures, halve it: {new:,} (never below {floor_at}).",
        f"{tokens_why.zh}；缺少 OOM 报错中的数字，先减半：{new:,}（不低于 {floor_at}）。",
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
    Text("Images per prompt to keep in limit_mm_per_prompt", "limit_mm_per_prompt 中保留的每个 prompt 图片数"),
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
                f"limit_mm_per_prompt = {text} ({source}); the V0 engine profiles every dummy sequence with "
                f"{n} maximum-size images, so half as many, {new}, halves that part of the pass.",
                f"limit_mm_per_prompt = {text}（{source}）；V0 引擎的每条虚拟序列都带 {n} 张最大尺寸的图片做分析，"
                f"减半为 {new} 张，这部分开销也减半。",
                ("limit_mm_per_prompt",),
            )
        if cur is None:
            return explain(
                "1",
                "no limit_mm_per_prompt was given, and the V0 engine's default is one image per prompt.",
                "没有设置 limit_mm_per_prompt，V0 引擎的默认值是每个 prompt 一张图片。",
                ("limit_mm_per_prompt",),
            )
        return None
    if cur is None:
        return None
    n, text = cur
    return explain(
        n,
        f"limit_mm_per_prompt = {text} ({source}), kept: on the V1 engine the image count does not size the "
        "encoder's profiling pass (the encoder budget does), so keep the number your largest request carries "
        "and shrink the image size or drop unused modalities instead.",
        f"limit_mm_per_prompt = {text}（{source}），保持不变：在 V1 引擎上，图片数量并不决定编码器分析的规模"
        "（决定它的是 encoder 预算），所以保留你最大请求实际携带的数量，改为缩小图片尺寸或去掉不用的模态。",
        ("limit_mm_per_prompt",),
    )


@calc(
    "mm_max_pixels",
    Text("A max_pixels that bounds each image's tokens (Qwen-VL processors)", "限制每张图 token 数的 max_pixels（Qwen-VL 处理器）"),
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
        f"max_model_len = {mml:,} shared by {images} image(s) and at least as much text: "
        f"{mml:,} / ({images} + 1) = {mml // (images + 1):,} tokens per image, {tokens:,} after rounding and the "
        f"{TARGET_TOKENS_PER_IMAGE:,}-token cap (about 3.2 megapixels; raise it if your images are larger); "
        f"x 28 x 28 pixels per token = {pixels:,}.",
        f"max_model_len = {mml:,}，由 {images} 张图片和至少同样多的文本共享：{mml:,} / ({images} + 1) = "
        f"{mml // (images + 1):,} 个 token 每张图，取整并限制在 {TARGET_TOKENS_PER_IMAGE:,} 以内（约 320 万像素；"
        f"如果你的图片更大可以调高）为 {tokens:,}；"
        f"每个 token 28 x 28 像素，得 {pixels:,}。",
        ("max_model_len", "limit_mm_per_prompt"),
    )


@calc(
    "pp_stages",
    Text("Pipeline stages, one per GPU", "流水线 stage 数（每张 GPU 一个）"),
    "<GPUS>",
)
def pp_stages(facts: FactSet) -> Computed | None:
    """One stage per GPU on the machine; unknown without a GPU count (the placeholder stays)."""
    n = _int(facts, "gpu_count")
    if not n or n < 2:
        return None
    return Computed(str(n), Text(f"{n} GPUs, one stage each", f"{n} 张 GPU，每张一个 stage"), ("gpu_count",))


@calc(
    "pp_layer_partition",
    Text("One layer count per pipeline stage, to fill in", "每个流水线 stage 的层数（待填写）"),
    "<LAYERS_ON_GPU0>,<LAYERS_ON_GPU1>",
)
def pp_layer_partition(facts: FactSet) -> Computed | None:
    """A placeholder per stage, so the list has as many entries as --pipeline-parallel-size."""
    n = _int(facts, "gpu_count")
    if not n or n < 2:
        return None
    slots = ",".join(f"<LAYERS_ON_GPU{i}>" for i in range(n))
    return Computed(slots, Text(f"one entry per stage ({n})", f"每个 stage 一项（共 {n} 项）"), ("gpu_count",))
