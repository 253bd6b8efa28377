"""The smallest changes that make a plan start, each re-planned with the same arithmetic, with its cost."""

from __future__ import annotations

from typing import Any

from ..i18n import ui
from .errors import PlanError
from .planner import Plan, plan

GIB = 1 << 30
UTIL_MAX = 0.98


def _try(p: Plan, **changes: Any) -> Plan | None:
    try:
        return plan(p.inputs.but(**changes), model=p.model, gpu=p.gpu)
    except PlanError:
        return None


def suggestions(p: Plan) -> list[dict[str, Any]]:
    """Fixes for a plan that does not fit (or has less than one request of KV cache)."""
    if p.fits:
        return []
    out: list[dict[str, Any]] = []
    s = p.settings
    avail = p.value("available_kv_bytes")
    if avail > 0 and p.value("weights_bytes_per_gpu") < p.gpu["total_bytes"]:
        lo, hi, best = 1, s["max_model_len"] - 1, None
        while lo <= hi:  # the same check vLLM runs, so the answer is the largest length it accepts
            mid = (lo + hi) // 2
            q = _try(p, max_model_len=mid)
            if q and q.fits:
                best, lo = q, mid + 1
            else:
                hi = mid - 1
        if best is not None:
            n = best.settings["max_model_len"]
            out.append({"change": f"--max-model-len {n}", "flag": "--max-model-len", "value": n,
                        "cost": ui("plan.suggest.cost.max_model_len", "en", n=n, max_model_len=s['max_model_len']),
                        "cost_zh": ui("plan.suggest.cost.max_model_len", "zh", n=n, max_model_len=s['max_model_len']),
                        "kv_tokens": best.value("kv_tokens")})
    util = s["gpu_memory_utilization"]
    free = p.gpu.get("free_bytes")
    if free is not None and p.error and p.error.startswith("Free memory on device"):
        u = int(free / p.gpu["total_bytes"] * 100) / 100
        while u > 0.05:
            q = _try(p, gpu_memory_utilization=u)
            if q and q.fits:
                out.append({"change": f"--gpu-memory-utilization {u}", "flag": "--gpu-memory-utilization", "value": u,
                            "cost": ui("plan.suggest.cost.less_util", "en", value=u * p.gpu['total_bytes'] / GIB),
                            "cost_zh": ui("plan.suggest.cost.less_util", "zh", value=u * p.gpu['total_bytes'] / GIB), "kv_tokens": q.value("kv_tokens")})
                break
            u = round(u - 0.01, 2)
        return out
    for step in range(1, 100):
        u = round(util + step * 0.01, 2)
        if u > UTIL_MAX:
            break
        q = _try(p, gpu_memory_utilization=u)
        if q and q.fits:
            out.append({"change": f"--gpu-memory-utilization {u}", "flag": "--gpu-memory-utilization", "value": u,
                        "cost": ui("plan.suggest.cost.more_util", "en", value=(u - util) * p.gpu['total_bytes'] / GIB),
                        "cost_zh": ui("plan.suggest.cost.more_util", "zh", value=(u - util) * p.gpu['total_bytes'] / GIB),
                        "kv_tokens": q.value("kv_tokens")})
            break
    if s["kv_cache_dtype"] == "auto" and s["dtype"] != "float32":
        q = _try(p, kv_cache_dtype="fp8")
        if q and q.fits:
            out.append({"change": "--kv-cache-dtype fp8", "flag": "--kv-cache-dtype", "value": "fp8",
                        "cost": ui("plan.suggest.cost.fp8_kv", "en"),
                        "cost_zh": ui("plan.suggest.cost.fp8_kv", "zh"),
                        "kv_tokens": q.value("kv_tokens")})
    tp = s["tp"]
    for n in (2, 4, 8):
        if n <= tp or p.model.num_attention_heads % n:
            continue
        q = _try(p, tp=n)
        if q and q.fits:
            out.append({"change": f"--tensor-parallel-size {n}", "flag": "--tensor-parallel-size", "value": n,
                        "cost": ui("plan.suggest.cost.tp", "en", n=n, tp=tp),
                        "cost_zh": ui("plan.suggest.cost.tp", "zh", n=n, tp=tp),
                        "kv_tokens": q.value("kv_tokens")})
            break
    if not s["quantization"] and s["dtype"] in ("bfloat16", "float16"):
        q = _try(p, quantization="fp8")
        if q and q.fits:
            out.append({"change": "--quantization fp8", "flag": "--quantization", "value": "fp8",
                        "cost": ui("plan.suggest.cost.fp8_weights", "en"),
                        "cost_zh": ui("plan.suggest.cost.fp8_weights", "zh"),
                        "kv_tokens": q.value("kv_tokens")})
    return out
