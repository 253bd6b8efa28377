"""Numbers for ``--gpu-memory-utilization``: a share that fits the free memory, or feeds the KV cache.

The budget formulas follow vLLM's own accounting (see the articles of the leaves that use them):
the engine may use ``total x gpu_memory_utilization``; weights, the activation peak of the
profiling pass, non-torch memory and (0.20.0+) the CUDA graph estimate come out of that, and the
KV cache gets the rest. Raising the share is capped by the start-up check (``readings.util_cap``).
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...versions import Version
from ..numbers import Computed, calc, ceil2, explain, floor2, num, src, total_gib
from .readings import STARTUP_MARGIN_GIB, UTIL_CEILING, UTIL_FLOOR, current_util, free_gib, raised_util, util_cap


@calc(
    "gpu_util_fit_free",
    Text("The utilization that fits in the memory free at start-up", "能装进启动时空闲显存的利用率"),
    "<FRACTION>",
)
def gpu_util_fit_free(facts: FactSet) -> Computed | None:
    free, total = free_gib(facts), total_gib(facts)
    if free is None or total is None:
        return None
    util = min(UTIL_CEILING, floor2((free[0] - STARTUP_MARGIN_GIB) / total[0]))
    if util <= 0.05:
        return None
    cur, _ = current_util(facts)
    if util >= cur:
        # The GPU has what the current setting asks for (NVML read it after the culprit left):
        # there is nothing to lower; restarting on the now-free GPU is the fix.
        return None
    names = (free[1], total[1])
    extra_en = extra_zh = ""
    weights = num(facts, "weights_gib")
    if weights and util * total[0] < weights + 1:
        extra_en = f" That is barely more than the {weights:.2f} GiB of weights: free the GPU instead."
        extra_zh = f" 这几乎只够放下 {weights:.2f} GiB 的权重：应当先腾空 GPU。"
    return explain(
        f"{util:.2f}",
        f"{free[0]:.2f} GiB free of {total[0]:.2f} GiB ({src(facts, *names)}); "
        f"(free - {STARTUP_MARGIN_GIB} GiB) / total = {util:.2f}.{extra_en}",
        f"空闲 {free[0]:.2f} GiB，总量 {total[0]:.2f} GiB（{src(facts, *names)}）；"
        f"(空闲 - {STARTUP_MARGIN_GIB} GiB) / 总量 = {util:.2f}。{extra_zh}",
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
    weights = num(facts, "weights_gib")
    if total is not None and weights and new * total[0] < weights + 1:
        # A budget that no longer covers the weights fails at start-up with no KV cache at all.
        return None
    gib_en = gib_zh = ""
    if total is not None:
        moved = (cur - new) * total[0]
        gib_en = f" That moves {moved:.2f} GiB of {total[0]:.0f} GiB from the KV cache to headroom."
        gib_zh = f" 这会把 {moved:.2f} GiB（共 {total[0]:.0f} GiB）从 KV cache 挪作余量。"
    return explain(
        f"{new:.2f}",
        f"now {cur} ({basis}); 0.05 less leaves room for allocations outside vLLM's budget.{gib_en}",
        f"当前为 {cur}（{basis}）；降低 0.05，为预算外的分配留出空间。{gib_zh}",
        ("gpu_memory_utilization",),
    )


@calc(
    "gpu_util_for_kv",
    Text("The utilization that gives the KV cache what one max-length request needs", "让 KV cache 足够容纳一个最长请求的利用率"),
    "<FRACTION>",
)
def gpu_util_for_kv(facts: FactSet) -> Computed | None:
    """current + (needed - available) / total, if that still passes the start-up check."""
    need, have = num(facts, "kv_needed_gib"), num(facts, "kv_cache_gib")
    total = total_gib(facts)
    if not need or have is None or total is None or need <= have:
        return None
    cur, basis = current_util(facts)
    # The log rounds both GiB figures to 0.01; add a little so the new budget clears the bar.
    raised = raised_util(facts, cur, need - have + 0.05, total[0])
    if raised is None:
        return None
    new, cap_en, cap_zh = raised
    names = ("kv_needed_gib", "kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        f"the KV cache lacks {need - have:.2f} GiB ({src(facts, *names)}); utilization is {cur} ({basis}); "
        f"{cur} + ({need:.2f} - {have:.2f} + 0.05) / {total[0]:.2f} = {new:.2f}; {cap_en}.",
        f"KV cache 还差 {need - have:.2f} GiB（{src(facts, *names)}）；当前利用率 {cur}（{basis}）；"
        f"{cur} + ({need:.2f} - {have:.2f} + 0.05) / {total[0]:.2f} = {new:.2f}；{cap_zh}。",
        names,
    )


def non_kv_gib(facts: FactSet) -> tuple[float, list[str]] | None:
    """What vLLM charged to its budget before the KV cache: weights + activation peak + non-torch (+ graphs)."""
    parts = [n for n in ("weights_gib", "activation_peak_gib", "non_torch_gib") if num(facts, n) is not None]
    if "weights_gib" not in parts:
        return None
    total = sum(num(facts, n) or 0.0 for n in parts)
    v = Version.try_parse(facts.value("vllm_version"))
    if v is not None and v >= Version.parse("0.20.0") and num(facts, "cudagraph_estimate_gib") is not None:
        total += num(facts, "cudagraph_estimate_gib") or 0.0
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
    want = num(facts, "kv_needed_gib") or 1.0
    want_en = "one max-length request" if num(facts, "kv_needed_gib") else "a minimal 1 GiB"
    want_zh = "一个最长请求" if num(facts, "kv_needed_gib") else "最少 1 GiB"
    exact = ceil2((used + want + 0.25) / total[0])
    new = max(UTIL_FLOOR, exact)
    floor_en = f", raised to the {UTIL_FLOOR} floor" if new > exact else ""
    floor_zh = f"，提高到下限 {UTIL_FLOOR}" if new > exact else ""
    cap, cap_en, cap_zh = util_cap(facts, total[0])
    if new > cap:
        return None
    stated = num(facts, "gpu_memory_utilization")
    if stated and new <= stated:
        # Not above the share that just failed: the figures miss something, so no answer.
        return None
    names = (*parts, total[1])
    return explain(
        f"{new:.2f}",
        f"vLLM charged {used:.2f} GiB before the KV cache ({src(facts, *names)}); with {want:.2f} GiB for "
        f"{want_en} and 0.25 GiB slack: ({used:.2f} + {want:.2f} + 0.25) / {total[0]:.2f} = {exact:.2f}{floor_en}; {cap_en}.",
        f"在 KV cache 之前 vLLM 已计入 {used:.2f} GiB（{src(facts, *names)}）；再加 {want_zh}所需的 {want:.2f} GiB "
        f"和 0.25 GiB 余量：({used:.2f} + {want:.2f} + 0.25) / {total[0]:.2f} = {exact:.2f}{floor_zh}；{cap_zh}。",
        names,
    )


def _util_from_deficit(facts: FactSet, total: tuple[float, str]) -> Computed | None:
    have = num(facts, "kv_cache_gib")
    if have is None or have > 0.5:
        return None
    cur, basis = current_util(facts)
    want = num(facts, "kv_needed_gib") or 1.0
    new = max(UTIL_FLOOR, ceil2(cur + (want - have + 0.25) / total[0]))
    cap, cap_en, cap_zh = util_cap(facts, total[0])
    if new > cap:
        return None
    names = ("kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        f"the KV cache got {have:.2f} GiB ({src(facts, *names)}) at utilization {cur} ({basis}); to give it "
        f"{want:.2f} GiB: {cur} + ({want:.2f} - ({have:.2f}) + 0.25) / {total[0]:.2f} = {new:.2f}; {cap_en}.",
        f"在利用率 {cur}（{basis}）下 KV cache 只得到 {have:.2f} GiB（{src(facts, *names)}）；要让它有 {want:.2f} GiB："
        f"{cur} + ({want:.2f} - ({have:.2f}) + 0.25) / {total[0]:.2f} = {new:.2f}；{cap_zh}。",
        names,
    )
