"""The smallest changes that make a plan start, each re-planned with the same arithmetic, with its cost."""

from __future__ import annotations

from typing import Any

from ..i18n import both
from ..text.units import GIB
from .errors import PlanError
from .planner import Plan, plan

UTIL_MAX = 0.98


def _try(p: Plan, **changes: Any) -> Plan | None:
    try:
        return plan(p.inputs.but(**changes), model=p.model, gpu=p.gpu)
    except PlanError:
        return None


def suggestions(p: Plan) -> list[dict[str, Any]]:
    """Fixes for a plan that does not fit (or has less than one request of KV cache), cheapest first."""
    if p.fits:
        return []
    free = p.gpu.get("free_bytes")
    if free is not None and p.error and p.error.startswith("Free memory on device"):
        # The start-up check refused the free memory: only a share that fits in it helps.
        return [f for f in (_mamba_blocks(p), _shorter_context(p), _util_for_free(p, free)) if f is not None]
    found = (_mamba_blocks(p), _shorter_context(p), _more_util(p), _fp8_kv_cache(p), _more_tp(p), _fp8_weights(p))
    return [f for f in found if f is not None]


def _fix(flag: str, value: Any, q: Plan, cost: str, cost_zh: str) -> dict[str, Any]:
    change = f"{flag} {value}"
    return {"change": change, "flag": flag, "value": value, "cost": cost, "cost_zh": cost_zh, "kv_tokens": q.value("kv_tokens")}


def _mamba_blocks(p: Plan) -> dict[str, Any] | None:
    """vLLM refused more sequences than state blocks (0.20+): as many sequences as there are blocks."""
    if not (p.error and "exceeds available Mamba cache blocks" in p.error):
        return None
    n = p.value("num_blocks")
    q = _try(p, max_num_seqs=n)
    if not (q and q.fits):
        return None
    was = p.settings["max_num_seqs"]
    return _fix("--max-num-seqs", n, q,
                *both("plan.suggest.cost.mamba_blocks", n=n, was=was))


def _shorter_context(p: Plan) -> dict[str, Any] | None:
    """The largest --max-model-len that fits, when the weights leave any KV cache at all."""
    s = p.settings
    if not (p.value("available_kv_bytes") > 0 and p.value("weights_bytes_per_gpu") < p.gpu["total_bytes"]):
        return None
    lo, hi, best = 1, s["max_model_len"] - 1, None
    while lo <= hi:  # the same check vLLM runs, so the answer is the largest length it accepts
        mid = (lo + hi) // 2
        q = _try(p, max_model_len=mid)
        if q and q.fits:
            best, lo = q, mid + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    n = best.settings["max_model_len"]
    return _fix("--max-model-len", n, best,
                *both("plan.suggest.cost.max_model_len", n=n, max_model_len=s["max_model_len"]))


def _util_for_free(p: Plan, free: int) -> dict[str, Any] | None:
    """The largest utilization, from what is free now downwards, with which the plan fits."""
    u = int(free / p.gpu["total_bytes"] * 100) / 100
    while u > 0.05:
        q = _try(p, gpu_memory_utilization=u)
        if q and q.fits:
            return _fix("--gpu-memory-utilization", u, q,
                        *both("plan.suggest.cost.less_util", value=u * p.gpu["total_bytes"] / GIB))
        u = round(u - 0.01, 2)
    return None


def _more_util(p: Plan) -> dict[str, Any] | None:
    """The smallest utilization above the current one (up to 0.98) with which the plan fits."""
    util = p.settings["gpu_memory_utilization"]
    for step in range(1, 100):
        u = round(util + step * 0.01, 2)
        if u > UTIL_MAX:
            break
        q = _try(p, gpu_memory_utilization=u)
        if q and q.fits:
            return _fix("--gpu-memory-utilization", u, q,
                        *both("plan.suggest.cost.more_util", value=(u - util) * p.gpu["total_bytes"] / GIB))
    return None


def _fp8_kv_cache(p: Plan) -> dict[str, Any] | None:
    s = p.settings
    if not (s["kv_cache_dtype"] == "auto" and s["dtype"] != "float32"):
        return None
    q = _try(p, kv_cache_dtype="fp8")
    if not (q and q.fits):
        return None
    return _fix("--kv-cache-dtype", "fp8", q,
                *both("plan.suggest.cost.fp8_kv"))


def _more_tp(p: Plan) -> dict[str, Any] | None:
    """The smallest larger tensor-parallel size (2, 4, 8) that divides the heads and fits."""
    tp = p.settings["tp"]
    for n in (2, 4, 8):
        if n <= tp or p.model.num_attention_heads % n:
            continue
        q = _try(p, tp=n)
        if q and q.fits:
            return _fix("--tensor-parallel-size", n, q,
                        *both("plan.suggest.cost.tp", n=n, tp=tp))
    return None


def _fp8_weights(p: Plan) -> dict[str, Any] | None:
    s = p.settings
    if s["quantization"] or s["dtype"] not in ("bfloat16", "float16"):
        return None
    q = _try(p, quantization="fp8")
    if not (q and q.fits):
        return None
    return _fix("--quantization", "fp8", q,
                *both("plan.suggest.cost.fp8_weights"))
