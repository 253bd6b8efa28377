"""Numbers for the memory-budget leaves: context length, utilization, KV size, batch limits, TP.

Every calculation reads only catalog facts (what the log printed, what NVML reported, what the
operator stated) and returns the value together with the arithmetic, so an operator can check
why we suggest ``--gpu-memory-utilization 0.87`` instead of trusting it. When an input is
missing, or the honest answer is "this knob cannot get you there", a calculation returns
``None`` and the command keeps a visible placeholder.

The budget formulas follow vLLM's own accounting (see the articles of the leaves that use them):
the engine may use ``total x gpu_memory_utilization``; weights, the activation peak of the
profiling pass, non-torch memory and (0.20.0+) the CUDA graph estimate come out of that, and the
KV cache gets the rest.
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB, MIB
from ...versions import Version
from ..numbers import (
    Computed,
    calc,
    default_gpu_memory_utilization,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    floor_to,
    pow2_floor,
    total_gib,
)
from ..numbers import ceil2 as _ceil2
from ..numbers import floor2 as _floor2
from ..numbers import num as _num
from ..numbers import src as _src

UTIL_CEILING = 0.98
"""Never suggest more: the CUDA context, NCCL and cuBLAS workspaces live outside the budget."""

UTIL_FLOOR = 0.05
"""Never suggest less: below this the share is a rounding error of the GPU, not a setting."""

STARTUP_MARGIN_GIB = 0.5
"""Kept free below what the start-up check measured, for the CUDA context of the new process."""


# --- reading facts -------------------------------------------------------------------------------


def _version(facts: FactSet) -> Version | None:
    return Version.try_parse(facts.value("vllm_version"))


def _at_least(facts: FactSet, release: str) -> bool | None:
    v = _version(facts)
    return None if v is None else v >= Version.parse(release)


def free_gib(facts: FactSet) -> tuple[float, str] | None:
    """Free memory of the fullest GPU: what vLLM measured at start-up, else what NVML sees now."""
    for name, scale in (("startup_free_gib", 1.0), ("gpu_mem_free_bytes", 1 / GIB)):
        v = _num(facts, name)
        if v is not None:
            return v * scale, name
    return None


def current_util(facts: FactSet) -> tuple[float, str]:
    v = _num(facts, "gpu_memory_utilization")
    if v:
        return v, _src(facts, "gpu_memory_utilization")
    return default_gpu_memory_utilization(facts)


def current_max_num_seqs(facts: FactSet) -> tuple[int, str]:
    v = _num(facts, "max_num_seqs")
    if v:
        return int(v), _src(facts, "max_num_seqs")
    return default_max_num_seqs(facts)


def _round_len(tokens: float) -> int:
    """A context length an operator would type: 1024-aligned above 8K, 256 above 1K, else 16."""
    t = int(tokens)
    step = 1024 if t >= 8192 else 256 if t >= 1024 else 16
    return max(16, floor_to(t, step))


# --- context length -------------------------------------------------------------------------------


@calc(
    "max_model_len_fit",
    Text("A context length whose KV cache fits", "KV cache 放得下的上下文长度"),
    "<MAX_MODEL_LEN>",
)
def max_model_len_fit(facts: FactSet) -> Computed | None:
    """vLLM's own estimate (0.9.2+), else a proportional estimate, else the KV cache's token count."""
    est = _num(facts, "estimated_max_model_len")
    if est:
        val = _round_len(est)
        return Computed(
            str(val),
            Text(
                f"vLLM estimated that {int(est):,} tokens fit ({_src(facts, 'estimated_max_model_len')}); rounded down to {val:,}.",
                f"vLLM 估算可容纳 {int(est):,} 个 token（{_src(facts, 'estimated_max_model_len')}），向下取整为 {val:,}。",
            ),
            ("estimated_max_model_len",),
        )
    planned = _planned_len(facts)
    if planned is not None:
        return planned
    need, have, mml = _num(facts, "kv_needed_gib"), _num(facts, "kv_cache_gib"), _num(facts, "max_model_len")
    if need and have is not None and mml and 0 < have < need:
        raw = mml * have / need
        val = _round_len(raw)
        names = ("max_model_len", "kv_needed_gib", "kv_cache_gib")
        return Computed(
            str(val),
            Text(
                f"{int(mml):,} tokens need {need:.2f} GiB but {have:.2f} GiB is available ({_src(facts, *names)}); "
                f"{int(mml):,} x {have:.2f} / {need:.2f} = {int(raw):,}, rounded down to {val:,}. "
                "Exact for full attention; models with sliding-window layers fit somewhat more.",
                f"{int(mml):,} 个 token 需要 {need:.2f} GiB，但可用只有 {have:.2f} GiB（{_src(facts, *names)}）；"
                f"{int(mml):,} x {have:.2f} / {need:.2f} = {int(raw):,}，向下取整为 {val:,}。"
                "对全注意力模型是精确值；含滑动窗口层的模型实际能放下更多。",
            ),
            names,
        )
    tokens = _num(facts, "kv_cache_tokens")
    if tokens:
        val = _round_len(tokens)
        return Computed(
            str(val),
            Text(
                f"the KV cache holds {int(tokens):,} tokens ({_src(facts, 'kv_cache_tokens')}); one request of {val:,} tokens fits.",
                f"KV cache 可容纳 {int(tokens):,} 个 token（{_src(facts, 'kv_cache_tokens')}），单个 {val:,} token 的请求放得下。",
            ),
            ("kv_cache_tokens",),
        )
    return None


def _planned_len(facts: FactSet) -> Computed | None:
    """The planner's answer when the log names a model it can describe: vLLM's own check, run here."""
    from ...plan.from_facts import max_model_len_fit as planned

    p = planned(facts)
    if p is None:
        return None
    val = _round_len(p.value)
    names = p.inputs
    return Computed(
        str(val),
        Text(f"{p.how} ({_src(facts, *names)}); rounded down to {val:,}.",
             f"按 vLLM 的启动检查（块与层分组由规划器计算），{facts.value('kv_cache_gib')} GiB KV cache 最多容纳 "
             f"{p.value:,} 个 token（{_src(facts, *names)}）；向下取整为 {val:,}。"),
        names,
    )


# --- gpu_memory_utilization ------------------------------------------------------------------------


def _cap(facts: FactSet, total: float) -> tuple[float, str, str]:
    """The highest utilization that passes vLLM's start-up check (free >= total x util, 0.9.1+)."""
    free = free_gib(facts)
    if free is None:
        return UTIL_CEILING, f"at most {UTIL_CEILING}", f"最多 {UTIL_CEILING}"
    cap = min(UTIL_CEILING, _floor2((free[0] - STARTUP_MARGIN_GIB) / total))
    return (
        cap,
        f"{free[0]:.2f} GiB was free ({_src(facts, free[1])}), so at most {cap:.2f}",
        f"空闲 {free[0]:.2f} GiB（{_src(facts, free[1])}），因此最多 {cap:.2f}",
    )


@calc(
    "gpu_util_fit_free",
    Text("The utilization that fits in the memory free at start-up", "能装进启动时空闲显存的利用率"),
    "<FRACTION>",
)
def gpu_util_fit_free(facts: FactSet) -> Computed | None:
    free, total = free_gib(facts), total_gib(facts)
    if free is None or total is None:
        return None
    util = min(UTIL_CEILING, _floor2((free[0] - STARTUP_MARGIN_GIB) / total[0]))
    if util <= 0.05:
        return None
    cur, _ = current_util(facts)
    if util >= cur:
        # The GPU has what the current setting asks for (NVML read it after the culprit left):
        # there is nothing to lower; restarting on the now-free GPU is the fix.
        return None
    names = (free[1], total[1])
    extra_en = extra_zh = ""
    weights = _num(facts, "weights_gib")
    if weights and util * total[0] < weights + 1:
        extra_en = f" That is barely more than the {weights:.2f} GiB of weights: free the GPU instead."
        extra_zh = f" 这几乎只够放下 {weights:.2f} GiB 的权重：应当先腾空 GPU。"
    return Computed(
        f"{util:.2f}",
        Text(
            f"{free[0]:.2f} GiB free of {total[0]:.2f} GiB ({_src(facts, *names)}); "
            f"(free - {STARTUP_MARGIN_GIB} GiB) / total = {util:.2f}.{extra_en}",
            f"空闲 {free[0]:.2f} GiB，总量 {total[0]:.2f} GiB（{_src(facts, *names)}）；"
            f"(空闲 - {STARTUP_MARGIN_GIB} GiB) / 总量 = {util:.2f}。{extra_zh}",
        ),
        names,
    )


@calc(
    "gpu_util_lower",
    Text("gpu_memory_utilization lowered by 0.05", "gpu_memory_utilization 降低 0.05"),
    "<FRACTION>",
)
def gpu_util_lower(facts: FactSet) -> Computed | None:
    cur, basis = current_util(facts)
    new = round(cur - 0.05, 2)
    if new < 0.05:
        return None
    total = total_gib(facts)
    weights = _num(facts, "weights_gib")
    if total is not None and weights and new * total[0] < weights + 1:
        # A budget that no longer covers the weights fails at start-up with no KV cache at all.
        return None
    gib_en = gib_zh = ""
    if total is not None:
        moved = (cur - new) * total[0]
        gib_en = f" That moves {moved:.2f} GiB of {total[0]:.0f} GiB from the KV cache to headroom."
        gib_zh = f" 这会把 {moved:.2f} GiB（共 {total[0]:.0f} GiB）从 KV cache 挪作余量。"
    return Computed(
        f"{new:.2f}",
        Text(
            f"now {cur} ({basis}); 0.05 less leaves room for allocations outside vLLM's budget.{gib_en}",
            f"当前为 {cur}（{basis}）；降低 0.05，为预算外的分配留出空间。{gib_zh}",
        ),
        ("gpu_memory_utilization",),
    )


@calc(
    "gpu_util_for_kv",
    Text("The utilization that gives the KV cache what one max-length request needs", "让 KV cache 足够容纳一个最长请求的利用率"),
    "<FRACTION>",
)
def gpu_util_for_kv(facts: FactSet) -> Computed | None:
    """current + (needed - available) / total, if that still passes the start-up check."""
    need, have = _num(facts, "kv_needed_gib"), _num(facts, "kv_cache_gib")
    total = total_gib(facts)
    if not need or have is None or total is None or need <= have:
        return None
    cur, basis = current_util(facts)
    # The log rounds both GiB figures to 0.01; add a little so the new budget clears the bar.
    missing = need - have + 0.05
    new = _ceil2(cur + missing / total[0])
    cap, cap_en, cap_zh = _cap(facts, total[0])
    if new > cap:
        return None
    names = ("kv_needed_gib", "kv_cache_gib", total[1])
    return Computed(
        f"{new:.2f}",
        Text(
            f"the KV cache lacks {need - have:.2f} GiB ({_src(facts, *names)}); utilization is {cur} ({basis}); "
            f"{cur} + ({need:.2f} - {have:.2f} + 0.05) / {total[0]:.2f} = {new:.2f}; {cap_en}.",
            f"KV cache 还差 {need - have:.2f} GiB（{_src(facts, *names)}）；当前利用率 {cur}（{basis}）；"
            f"{cur} + ({need:.2f} - {have:.2f} + 0.05) / {total[0]:.2f} = {new:.2f}；{cap_zh}。",
        ),
        names,
    )


def non_kv_gib(facts: FactSet) -> tuple[float, list[str]] | None:
    """What vLLM charged to its budget before the KV cache: weights + activation peak + non-torch (+ graphs)."""
    parts = [n for n in ("weights_gib", "activation_peak_gib", "non_torch_gib") if _num(facts, n) is not None]
    if "weights_gib" not in parts:
        return None
    total = sum(_num(facts, n) or 0.0 for n in parts)
    if _at_least(facts, "0.20.0") and _num(facts, "cudagraph_estimate_gib") is not None:
        total += _num(facts, "cudagraph_estimate_gib") or 0.0
        parts.append("cudagraph_estimate_gib")
    return total, parts


@calc(
    "gpu_util_cover_non_kv",
    Text("The utilization that leaves room for a KV cache", "为 KV cache 留出空间的利用率"),
    "<FRACTION>",
)
def gpu_util_cover_non_kv(facts: FactSet) -> Computed | None:
    """(everything vLLM charged before the KV cache + one max-length request) / total.

    Without the breakdown (it is a DEBUG line on 0.11.0-0.25.0), a negative "Available KV cache
    memory" gives the same answer: current utilization + (deficit + one request) / total.
    """
    total = total_gib(facts)
    base = non_kv_gib(facts)
    if total is None:
        return None
    deficit = _util_from_deficit(facts, total)
    if base is None:
        return deficit
    from_parts = _util_from_parts(facts, total, base)
    # The breakdown may miss items (non-torch memory is folded into "consumed" from 0.27.0, and the
    # activation peak is a DEBUG line on some releases); the KV figure the log printed already
    # counts everything, so the larger of the two answers is the one that is not short.
    options = [c for c in (from_parts, deficit) if c is not None]
    if not options:
        return None
    return max(options, key=lambda c: float(c.value))


def _util_from_parts(facts: FactSet, total: tuple[float, str], base: tuple[float, list[str]]) -> Computed | None:
    used, parts = base
    want = _num(facts, "kv_needed_gib") or 1.0
    want_en = "one max-length request" if _num(facts, "kv_needed_gib") else "a minimal 1 GiB"
    want_zh = "一个最长请求" if _num(facts, "kv_needed_gib") else "最少 1 GiB"
    exact = _ceil2((used + want + 0.25) / total[0])
    new = max(UTIL_FLOOR, exact)
    floor_en = f", raised to the {UTIL_FLOOR} floor" if new > exact else ""
    floor_zh = f"，提高到下限 {UTIL_FLOOR}" if new > exact else ""
    cap, cap_en, cap_zh = _cap(facts, total[0])
    if new > cap:
        return None
    stated = _num(facts, "gpu_memory_utilization")
    if stated and new <= stated:
        # Not above the share that just failed: the figures miss something, so no answer.
        return None
    names = (*parts, total[1])
    return Computed(
        f"{new:.2f}",
        Text(
            f"vLLM charged {used:.2f} GiB before the KV cache ({_src(facts, *names)}); with {want:.2f} GiB for "
            f"{want_en} and 0.25 GiB slack: ({used:.2f} + {want:.2f} + 0.25) / {total[0]:.2f} = {exact:.2f}{floor_en}; {cap_en}.",
            f"在 KV cache 之前 vLLM 已计入 {used:.2f} GiB（{_src(facts, *names)}）；再加 {want_zh}所需的 {want:.2f} GiB "
            f"和 0.25 GiB 余量：({used:.2f} + {want:.2f} + 0.25) / {total[0]:.2f} = {exact:.2f}{floor_zh}；{cap_zh}。",
        ),
        names,
    )


def _util_from_deficit(facts: FactSet, total: tuple[float, str]) -> Computed | None:
    have = _num(facts, "kv_cache_gib")
    if have is None or have > 0.5:
        return None
    cur, basis = current_util(facts)
    want = _num(facts, "kv_needed_gib") or 1.0
    new = max(UTIL_FLOOR, _ceil2(cur + (want - have + 0.25) / total[0]))
    cap, cap_en, cap_zh = _cap(facts, total[0])
    if new > cap:
        return None
    names = ("kv_cache_gib", total[1])
    return Computed(
        f"{new:.2f}",
        Text(
            f"the KV cache got {have:.2f} GiB ({_src(facts, *names)}) at utilization {cur} ({basis}); to give it "
            f"{want:.2f} GiB: {cur} + ({want:.2f} - ({have:.2f}) + 0.25) / {total[0]:.2f} = {new:.2f}; {cap_en}.",
            f"在利用率 {cur}（{basis}）下 KV cache 只得到 {have:.2f} GiB（{_src(facts, *names)}）；要让它有 {want:.2f} GiB："
            f"{cur} + ({want:.2f} - ({have:.2f}) + 0.25) / {total[0]:.2f} = {new:.2f}；{cap_zh}。",
        ),
        names,
    )


# --- the KV cache size vLLM itself suggests (0.10.2+) ------------------------------------------------


def _bytes_calc(facts: FactSet, name: str, en: str, zh: str) -> Computed | None:
    b = _num(facts, name)
    if not b or b <= 0:
        # A start whose charges exceed the budget prints a negative "fit" figure: nothing to paste.
        return None
    return Computed(
        str(int(b)),
        Text(
            f"vLLM's own start-up message suggests {int(b):,} bytes ({b / GIB:.2f} GiB) {en} ({_src(facts, name)}).",
            f"vLLM 启动日志建议 {int(b):,} 字节（{b / GIB:.2f} GiB）{zh}（{_src(facts, name)}）。",
        ),
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


# --- batch limits while serving ----------------------------------------------------------------


@calc(
    "serving_max_num_seqs",
    Text("max_num_seqs halved", "减半的 max_num_seqs"),
    "<N>",
)
def serving_max_num_seqs(facts: FactSet) -> Computed | None:
    n, basis = current_max_num_seqs(facts)
    new = max(1, pow2_floor(n / 2))
    return Computed(
        str(new),
        Text(
            f"max_num_seqs is {n} ({basis}); half of that, as a power of two, is {new}.",
            f"max_num_seqs 为 {n}（{basis}）；减半并取 2 的幂为 {new}。",
        ),
        ("max_num_seqs",),
    )


@calc(
    "serving_max_num_batched_tokens",
    Text("max_num_batched_tokens halved", "减半的 max_num_batched_tokens"),
    "<TOKENS>",
)
def serving_max_num_batched_tokens(facts: FactSet) -> Computed | None:
    """Half the current step budget (a power of two, at least 512 and at least max_num_seqs)."""
    cur = _num(facts, "max_num_batched_tokens")
    if cur:
        n, basis = int(cur), _src(facts, "max_num_batched_tokens")
    else:
        d = default_max_num_batched_tokens(facts)
        if d is None:
            n, basis = 4096, "unknown on V0; 2048 after halving is a safe step with chunked prefill"
        else:
            n, basis = d
    new = max(512, pow2_floor(n / 2))
    seqs, seqs_basis = current_max_num_seqs(facts)
    floor_en = floor_zh = ""
    if new < seqs:
        # vLLM refuses max_num_batched_tokens below max_num_seqs (the default counts too).
        new = int(seqs)
        floor_en = f" vLLM requires at least max_num_seqs ({int(seqs)}, {seqs_basis}), so {new}; lower --max-num-seqs to go further."
        floor_zh = f" vLLM 要求不小于 max_num_seqs（{int(seqs)}，{seqs_basis}），因此取 {new}；要再降低请同时调低 --max-num-seqs。"
    if new >= n:
        return None
    return Computed(
        str(new),
        Text(
            f"each step may schedule {n:,} tokens ({basis}); half, as a power of two and at least 512, is {new:,}.{floor_en}",
            f"每一步最多调度 {n:,} 个 token（{basis}）；减半、取 2 的幂且不小于 512，为 {new:,}。{floor_zh}",
        ),
        ("max_num_batched_tokens",),
    )


LOGITS_BUDGET_GIB = 2.0
"""Memory we let one step's prompt logits take."""

LOGITS_BYTES_PER_ELEMENT = 10
"""Per (prompt token x vocabulary element): the logits in bf16 (2 B), their float32 copy (4 B) and the
float32 log-softmax (4 B). Measured on our H200: benchmarks/results/prompt_logprobs_memory_h200.json."""


@calc(
    "logprobs_batched_tokens",
    Text("A step size whose prompt logits fit in 2 GiB", "使 prompt logits 不超过 2 GiB 的单步 token 数"),
    "<TOKENS>",
)
def logprobs_batched_tokens(facts: FactSet) -> Computed | None:
    vocab = _num(facts, "vocab_size")
    if not vocab:
        return None
    per_token = vocab * LOGITS_BYTES_PER_ELEMENT
    raw = LOGITS_BUDGET_GIB * GIB / per_token
    new = max(256, pow2_floor(raw))
    cur = _num(facts, "max_num_batched_tokens")
    if not cur:
        default = default_max_num_batched_tokens(facts)
        cur = default[0] if default is not None and facts.value("engine") != "v0" else None
    seqs, seqs_basis = current_max_num_seqs(facts)
    floor_en = floor_zh = ""
    if new < seqs:
        # vLLM refuses a step budget below max_num_seqs (the default counts too).
        new = seqs
        floor_en = f" vLLM needs at least max_num_seqs ({seqs}, {seqs_basis}), so {new:,}; lower --max-num-seqs as well to go further."
        floor_zh = f" vLLM 要求不小于 max_num_seqs（{seqs}，{seqs_basis}），因此取 {new:,}；要再降低请同时调低 --max-num-seqs。"
    if cur and new >= cur:
        # The step is already this small (or the default is): a smaller budget is not the fix.
        return None
    return Computed(
        str(new),
        Text(
            f"vocabulary {int(vocab):,} ({_src(facts, 'vocab_size')}): each prompt token's logits take {int(vocab):,} x {LOGITS_BYTES_PER_ELEMENT} B = "
            f"{per_token / MIB:.2f} MiB; {LOGITS_BUDGET_GIB:.0f} GiB / {per_token / MIB:.2f} MiB = {int(raw):,} tokens, "
            f"as a power of two {max(256, pow2_floor(raw)):,}.{floor_en}",
            f"词表 {int(vocab):,}（{_src(facts, 'vocab_size')}）：每个 prompt token 的 logits 占 {int(vocab):,} x {LOGITS_BYTES_PER_ELEMENT} B = "
            f"{per_token / MIB:.2f} MiB；{LOGITS_BUDGET_GIB:.0f} GiB / {per_token / MIB:.2f} MiB = {int(raw):,} 个 token，"
            f"取 2 的幂为 {max(256, pow2_floor(raw)):,}。{floor_zh}",
        ),
        ("vocab_size",),
    )


# --- parallelism and offloading ------------------------------------------------------------------

WEIGHT_RESERVE_GIB = 2.0
"""Per GPU, beyond the weights: CUDA context, activations of the profiling pass, a little KV cache."""


def _weights_total(facts: FactSet) -> tuple[float, str, str, tuple[str, ...]] | None:
    ck = _num(facts, "checkpoint_gib")
    if ck:
        return ck, f"the checkpoint is {ck:.2f} GiB", f"权重文件共 {ck:.2f} GiB", ("checkpoint_gib",)
    w = _num(facts, "weights_gib")
    if w:
        tp, pp = int(_num(facts, "tp") or 1), int(_num(facts, "pp") or 1)
        t = w * tp * pp
        return (
            t,
            f"{w:.2f} GiB per GPU x TP {tp} x PP {pp} = {t:.2f} GiB of weights",
            f"单卡 {w:.2f} GiB x TP {tp} x PP {pp} = 权重共 {t:.2f} GiB",
            ("weights_gib", "tp", "pp"),
        )
    from ...plan.from_facts import weights_total

    planned = weights_total(facts)
    if planned is not None:
        t = planned.value / GIB
        return t, planned.how, f"规划器按模型估算权重共 {t:.2f} GiB（{planned.how}）", planned.inputs
    return None


@calc(
    "tp_for_weights",
    Text("The tensor-parallel size whose weight share fits one GPU", "使每卡权重放得下的张量并行数"),
    "<TP>",
)
def tp_for_weights(facts: FactSet) -> Computed | None:
    weights, total = _weights_total(facts), total_gib(facts)
    if weights is None or total is None:
        return None
    w, how_en, how_zh, names = weights
    util, _ = current_util(facts)
    pp = int(_num(facts, "pp") or 1)
    budget = total[0] * util - WEIGHT_RESERVE_GIB
    gpus = _num(facts, "gpu_count")
    limit = int(gpus) if gpus else 8
    tp = 1
    while tp <= limit:
        if w / (tp * pp) <= budget:
            break
        tp *= 2
    if tp > limit or tp * pp > limit:
        return None
    cur_tp = int(_num(facts, "tp") or 1)
    if tp <= cur_tp:
        return None
    return Computed(
        str(tp),
        Text(
            f"{how_en} ({_src(facts, *names)}); each GPU may use {total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f} = {budget:.2f} GiB; "
            f"{w:.2f} / ({tp} x PP {pp}) = {w / (tp * pp):.2f} GiB fits. Assumes the checkpoint's precision is what runs on the GPU.",
            f"{how_zh}（{_src(facts, *names)}）；每卡可用 {total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f} = {budget:.2f} GiB；"
            f"{w:.2f} / ({tp} x PP {pp}) = {w / (tp * pp):.2f} GiB，放得下。假设 GPU 上运行的精度与权重文件一致。",
        ),
        (*names, total[1]),
    )


@calc(
    "tp_next",
    Text("Twice the tensor-parallel size, if the GPUs are there", "张量并行数加倍（若 GPU 足够）"),
    "<TP>",
)
def tp_next(facts: FactSet) -> Computed | None:
    tp = int(_num(facts, "tp") or 1)
    gpus = _num(facts, "gpu_count")
    new = tp * 2
    pp = int(_num(facts, "pp") or 1)
    if not gpus or new * pp > gpus:
        return None
    return Computed(
        str(new),
        Text(
            f"TP is {tp} ({_src(facts, 'tp') or 'default 1'}) and this machine has {int(gpus)} GPUs ({_src(facts, 'gpu_count')}); "
            f"TP {new} x PP {pp} fits.",
            f"当前 TP 为 {tp}（{_src(facts, 'tp') or '默认 1'}），本机有 {int(gpus)} 张 GPU（{_src(facts, 'gpu_count')}）；"
            f"TP {new} x PP {pp} 可行。",
        ),
        ("tp", "gpu_count"),
    )


@calc(
    "cpu_offload_gb_fit",
    Text("GiB of weights per GPU to keep in host RAM", "每卡放到主机内存的权重 GiB 数"),
    "<GIB>",
)
def cpu_offload_gb_fit(facts: FactSet) -> Computed | None:
    """What the KV cache lacks, or what the weights overshoot by, rounded up with 1 GiB to spare."""
    need, have = _num(facts, "kv_needed_gib"), _num(facts, "kv_cache_gib")
    if need and have is not None and need > have:
        gb = math.ceil(need - have + 1)
        names: tuple[str, ...] = ("kv_needed_gib", "kv_cache_gib")
        en = f"the KV cache lacks {need - have:.2f} GiB ({_src(facts, *names)}); moving {gb} GiB of weights per GPU frees it"
        zh = f"KV cache 还差 {need - have:.2f} GiB（{_src(facts, *names)}）；每卡移出 {gb} GiB 权重即可腾出"
    else:
        weights, total = _weights_total(facts), total_gib(facts)
        if weights is None or total is None:
            return None
        w, how_en, how_zh, wnames = weights
        tp, pp = int(_num(facts, "tp") or 1), int(_num(facts, "pp") or 1)
        per_gpu = w / (tp * pp)
        util, _ = current_util(facts)
        budget = total[0] * util - WEIGHT_RESERVE_GIB
        if per_gpu <= budget:
            return None
        gb = math.ceil(per_gpu - budget + 1)
        names = (*wnames, total[1])
        en = (
            f"{how_en} ({_src(facts, *names)}); {per_gpu:.2f} GiB per GPU against {budget:.2f} GiB usable "
            f"({total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f}); {gb} GiB must live in host RAM"
        )
        zh = (
            f"{how_zh}（{_src(facts, *names)}）；每卡 {per_gpu:.2f} GiB，可用 {budget:.2f} GiB"
            f"（{total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f}）；需要 {gb} GiB 放在主机内存"
        )
    per_gpu_weights = _num(facts, "weights_gib")
    if per_gpu_weights and gb > per_gpu_weights - 1:
        # Only weights can be offloaded: a shortfall larger than this GPU's share of them cannot be met.
        return None
    host = _num(facts, "host_mem_available_bytes")
    gpus = int(_num(facts, "gpu_count") or _num(facts, "tp") or 1)
    if host:
        # vllm#56410: the offload takes about twice the requested host memory.
        needed = gb * gpus * 2
        if needed > host / GIB:
            en += f". Host RAM is short: about {needed} GiB needed, {host / GIB:.0f} GiB available"
            zh += f"。主机内存不足：约需 {needed} GiB，可用 {host / GIB:.0f} GiB"
    return Computed(str(gb), Text(en + ".", zh + "。"), names)


# --- host memory -------------------------------------------------------------------------------


@calc(
    "swap_space_fit",
    Text("CPU swap space per GPU that V0's start-up check accepts", "V0 启动检查接受的每卡 CPU swap space"),
    "<GIB>",
)
def swap_space_fit(facts: FactSet) -> Computed | None:
    """V0 warns above 40% and refuses above 70% of host RAM for swap_space x GPUs per node."""
    host = _num(facts, "host_mem_total_bytes")
    if not host:
        return None
    gpus = int(_num(facts, "tp") or 1)
    gib = host / GIB
    val = math.floor(gib * 0.3 / gpus)
    return Computed(
        str(val),
        Text(
            f"host RAM is {gib:.0f} GiB ({_src(facts, 'host_mem_total_bytes')}) for {gpus} GPU worker(s) (TP); "
            f"30% of it split over them is {val} GiB each ({val} x {gpus} = {val * gpus} GiB in all), under the 40% "
            "warning and the 70% refusal that vLLM applies to swap_space x TP.",
            f"主机内存 {gib:.0f} GiB（{_src(facts, 'host_mem_total_bytes')}），{gpus} 个 GPU worker（TP）；"
            f"取其 30% 平分后每个 worker {val} GiB（{val} x {gpus} = 共 {val * gpus} GiB），低于 vLLM 对 swap_space x TP "
            "设定的 40% 警告线和 70% 拒绝线。",
        ),
        ("host_mem_total_bytes", "tp"),
    )


@calc(
    "kv_offloading_fit",
    Text("Host RAM for KV offloading that leaves the machine room", "给 KV offloading 且不挤占主机的内存量"),
    "<GIB>",
)
def kv_offloading_fit(facts: FactSet) -> Computed | None:
    avail = _num(facts, "host_mem_available_bytes")
    if not avail:
        return None
    val = math.floor(avail / GIB * 0.5)
    if val < 1:
        return None
    return Computed(
        str(val),
        Text(
            f"{avail / GIB:.0f} GiB of host RAM is available ({_src(facts, 'host_mem_available_bytes')}); half of it is {val} GiB.",
            f"主机可用内存 {avail / GIB:.0f} GiB（{_src(facts, 'host_mem_available_bytes')}）；取一半为 {val} GiB。",
        ),
        ("host_mem_available_bytes",),
    )


UNIFIED_HOST_RESERVE_GIB = 16.0
"""Kept for the operating system when GPU memory is the host RAM (GB10, Jetson, GH200 in some modes)."""


@calc(
    "gpu_util_unified_memory",
    Text("Utilization that leaves the host its RAM on unified-memory machines", "统一内存机器上为主机留出内存的利用率"),
    "<FRACTION>",
)
def gpu_util_unified_memory(facts: FactSet) -> Computed | None:
    """Only when GPU memory and host RAM are the same pool (their totals within 15%)."""
    total, host = total_gib(facts), _num(facts, "host_mem_total_bytes")
    if total is None or not host:
        return None
    host_gib = host / GIB
    if abs(total[0] - host_gib) > 0.15 * host_gib:
        return None
    keep = max(UNIFIED_HOST_RESERVE_GIB, 0.15 * total[0])
    util = _floor2((total[0] - keep) / total[0])
    cur, basis = current_util(facts)
    if util >= cur or util <= 0.05:
        return None
    names = (total[1], "host_mem_total_bytes")
    return Computed(
        f"{util:.2f}",
        Text(
            f"the GPU reports {total[0]:.2f} GiB and the host {host_gib:.2f} GiB ({_src(facts, *names)}): one shared pool. "
            f"Leaving {keep:.1f} GiB to the system: ({total[0]:.2f} - {keep:.1f}) / {total[0]:.2f} = {util:.2f} (now {cur}, {basis}).",
            f"GPU 报告 {total[0]:.2f} GiB，主机 {host_gib:.2f} GiB（{_src(facts, *names)}）：两者是同一块内存。"
            f"为系统保留 {keep:.1f} GiB：({total[0]:.2f} - {keep:.1f}) / {total[0]:.2f} = {util:.2f}（当前为 {cur}，{basis}）。",
        ),
        names,
    )
