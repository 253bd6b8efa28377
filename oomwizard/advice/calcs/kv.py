"""Numbers for the KV cache itself: a context length whose KV cache fits, and the size vLLM suggests.

A context length is read, best first, from vLLM's own estimate (0.9.2+), from the planner when the
log names a model it can describe, from the proportion of what one max-length request needed to
what the KV cache got, and from the KV cache's token count. From 0.10.2 vLLM's start-up message
also suggests a KV cache size in bytes (one that fits the requested memory, one that fills the
GPU); those are pasted as printed.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ..numbers import Computed, calc, explain, floor_to, num, src


def round_len(tokens: float) -> int:
    """A context length an operator would type: 1024-aligned above 8K, 256 above 1K, else 16."""
    t = int(tokens)
    step = 1024 if t >= 8192 else 256 if t >= 1024 else 16
    return max(16, floor_to(t, step))


@calc(
    "max_model_len_fit",
    Text("A context length whose KV cache fits", "KV cache 放得下的上下文长度"),
    "<MAX_MODEL_LEN>",
)
def max_model_len_fit(facts: FactSet) -> Computed | None:
    """vLLM's own estimate (0.9.2+), else a proportional estimate, else the KV cache's token count."""
    est = num(facts, "estimated_max_model_len")
    if est:
        val = round_len(est)
        return explain(
            val,
            f"vLLM estimated that {int(est):,} tokens fit ({src(facts, 'estimated_max_model_len')}); rounded down to {val:,}.",
            f"vLLM 估算可容纳 {int(est):,} 个 token（{src(facts, 'estimated_max_model_len')}），向下取整为 {val:,}。",
            ("estimated_max_model_len",),
        )
    planned = _planned_len(facts)
    if planned is not None:
        return planned
    need, have, mml = num(facts, "kv_needed_gib"), num(facts, "kv_cache_gib"), num(facts, "max_model_len")
    if need and have is not None and mml and 0 < have < need:
        raw = mml * have / need
        val = round_len(raw)
        names = ("max_model_len", "kv_needed_gib", "kv_cache_gib")
        return explain(
            val,
            f"{int(mml):,} tokens need {need:.2f} GiB but {have:.2f} GiB is available ({src(facts, *names)}); "
            f"{int(mml):,} x {have:.2f} / {need:.2f} = {int(raw):,}, rounded down to {val:,}. "
            "Exact for full attention; models with sliding-window layers fit somewhat more.",
            f"{int(mml):,} 个 token 需要 {need:.2f} GiB，但可用只有 {have:.2f} GiB（{src(facts, *names)}）；"
            f"{int(mml):,} x {have:.2f} / {need:.2f} = {int(raw):,}，向下取整为 {val:,}。"
            "对全注意力模型是精确值；含滑动窗口层的模型实际能放下更多。",
            names,
        )
    tokens = num(facts, "kv_cache_tokens")
    if tokens:
        val = round_len(tokens)
        return explain(
            val,
            f"the KV cache holds {int(tokens):,} tokens ({src(facts, 'kv_cache_tokens')}); one request of {val:,} tokens fits.",
            f"KV cache 可容纳 {int(tokens):,} 个 token（{src(facts, 'kv_cache_tokens')}），单个 {val:,} token 的请求放得下。",
            ("kv_cache_tokens",),
        )
    return None


def _planned_len(facts: FactSet) -> Computed | None:
    """The planner's answer when the log names a model it can describe: vLLM's own check, run here."""
    from ...plan.from_facts import max_model_len_fit as planned

    p = planned(facts)
    if p is None:
        return None
    val = round_len(p.value)
    names = p.inputs
    return explain(
        val,
        f"{p.how} ({src(facts, *names)}); rounded down to {val:,}.",
        f"按 vLLM 的启动检查（块与层分组由规划器计算），{facts.value('kv_cache_gib')} GiB KV cache 最多容纳 "
        f"{p.value:,} 个 token（{src(facts, *names)}）；向下取整为 {val:,}。",
        names,
    )


# --- the KV cache size vLLM itself suggests (0.10.2+) ------------------------------------------------


def _bytes_calc(facts: FactSet, name: str, en: str, zh: str) -> Computed | None:
    b = num(facts, name)
    if not b or b <= 0:
        # A start whose charges exceed the budget prints a negative "fit" figure: nothing to paste.
        return None
    return explain(
        int(b),
        f"vLLM's own start-up message suggests {int(b):,} bytes ({b / GIB:.2f} GiB) {en} ({src(facts, name)}).",
        f"vLLM 启动日志建议 {int(b):,} 字节（{b / GIB:.2f} GiB）{zh}（{src(facts, name)}）。",
        (name,),
    )


@calc(
    "kv_cache_memory_bytes",
    Text("KV cache size vLLM itself suggests", "vLLM 自己建议的 KV cache 大小"),
    "<BYTES>",
)
def kv_cache_memory_bytes(facts: FactSet) -> Computed | None:
    return _bytes_calc(facts, "suggested_kv_cache_bytes", "to fit into the requested memory", "以符合申请的显存")


@calc(
    "kv_cache_memory_bytes_full",
    Text("KV cache size that fills the GPU, as vLLM suggests", "vLLM 建议的占满显存的 KV cache 大小"),
    "<BYTES>",
)
def kv_cache_memory_bytes_full(facts: FactSet) -> Computed | None:
    return _bytes_calc(facts, "suggested_kv_cache_full_bytes", "to use the whole GPU", "以占满整张卡")
