"""Numbers for ``--gpu-memory-utilization``: a share that fits the free memory, or feeds the KV cache.

The budget formulas follow vLLM's own accounting (see the articles of the leaves that use them):
the engine may use ``total x gpu_memory_utilization``; weights, the activation peak of the
profiling pass, non-torch memory and (0.20.0+) the CUDA graph estimate come out of that, and the
KV cache gets the rest. Raising the share is capped by the start-up check (``readings.util_cap``).
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import msg
from ...versions import Version
from ..numbers import Computed, calc, ceil2, explain, floor2, num, said, src, total_gib
from .readings import STARTUP_MARGIN_GIB, UTIL_CEILING, UTIL_FLOOR, current_util, free_gib, raised_util, util_cap

LOWER_STEP = 0.05
"""How much ``gpu_util_lower`` gives back when no figure says how much is missing."""

KV_ROUNDING_GIB = 0.05
"""The log rounds both KV GiB figures to 0.01; a little more keeps the new budget above the bar."""

SLACK_GIB = 0.25
"""Kept on top of what the KV cache needs when the share is computed from what vLLM charged."""


@calc(
    "gpu_util_fit_free",
    msg("calc.utilization.fit_free.title"),
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
    fields = {"free": free[0], "total": total[0], "source": src(facts, *names), "margin": STARTUP_MARGIN_GIB,
              "util": util}
    weights = num(facts, "weights_gib")
    if weights and util * total[0] < weights + 1:
        return explain(f"{util:.2f}", said("calc.utilization.fit_free_weights", weights=weights, **fields), names)
    return explain(f"{util:.2f}", said("calc.utilization.fit_free", **fields), names)


@calc(
    "gpu_util_lower",
    said("calc.utilization.lower.title", step=LOWER_STEP),
    "<FRACTION>",
)
def gpu_util_lower(facts: FactSet) -> Computed | None:
    cur, basis = current_util(facts)
    new = round(cur - LOWER_STEP, 2)
    if new < 0.05:
        return None
    total = total_gib(facts)
    weights = num(facts, "weights_gib")
    if total is not None and weights and new * total[0] < weights + 1:
        # A budget that no longer covers the weights fails at start-up with no KV cache at all.
        return None
    if total is not None:
        why = said("calc.utilization.lower_moved", cur=cur, basis=basis, step=LOWER_STEP, moved=(cur - new) * total[0],
                   total=total[0])
    else:
        why = said("calc.utilization.lower", cur=cur, basis=basis, step=LOWER_STEP)
    return explain(f"{new:.2f}", why, ("gpu_memory_utilization",))


@calc(
    "gpu_util_for_kv",
    msg("calc.utilization.for_kv.title"),
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
    raised = raised_util(facts, cur, need - have + KV_ROUNDING_GIB, total[0])
    if raised is None:
        return None
    new, cap_why = raised
    names = ("kv_needed_gib", "kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        said("calc.utilization.for_kv", lack=need - have, source=src(facts, *names), cur=cur, basis=basis, need=need,
             have=have, rounding=KV_ROUNDING_GIB, total=total[0], new=new, cap=cap_why),
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
    msg("calc.utilization.cover_non_kv.title"),
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
    what = msg("calc.utilization.want_request") if num(facts, "kv_needed_gib") else msg("calc.utilization.want_minimal")
    exact = ceil2((used + want + SLACK_GIB) / total[0])
    new = max(UTIL_FLOOR, exact)
    cap, cap_why = util_cap(facts, total[0])
    if new > cap:
        return None
    stated = num(facts, "gpu_memory_utilization")
    if stated and new <= stated:
        # Not above the share that just failed: the figures miss something, so no answer.
        return None
    names = (*parts, total[1])
    fields = {"used": used, "source": src(facts, *names), "want": want, "what": what, "slack": SLACK_GIB,
              "total": total[0], "exact": exact, "cap": cap_why}
    if new > exact:
        return explain(f"{new:.2f}", said("calc.utilization.from_parts_floor", floor=UTIL_FLOOR, **fields), names)
    return explain(f"{new:.2f}", said("calc.utilization.from_parts", **fields), names)


def _util_from_deficit(facts: FactSet, total: tuple[float, str]) -> Computed | None:
    have = num(facts, "kv_cache_gib")
    if have is None or have > 0.5:
        return None
    cur, basis = current_util(facts)
    want = num(facts, "kv_needed_gib") or 1.0
    new = max(UTIL_FLOOR, ceil2(cur + (want - have + SLACK_GIB) / total[0]))
    cap, cap_why = util_cap(facts, total[0])
    if new > cap:
        return None
    names = ("kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        said("calc.utilization.from_deficit", have=have, source=src(facts, *names), cur=cur, basis=basis, want=want,
             slack=SLACK_GIB, total=total[0], new=new, cap=cap_why),
        names,
    )
