"""The smallest changes that make a plan start, each re-planned with the same arithmetic, with its cost."""

from __future__ import annotations

from typing import Any

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
                f"at most {n} sequences run at once (was {was}); each holds a state block",
                f"最多同时运行 {n} 个序列（原为 {was}）；每个序列占一个状态块")


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
                f"requests longer than {n} tokens are refused (was {s['max_model_len']})",
                f"超过 {n} 个 token 的请求会被拒绝（原为 {s['max_model_len']}）")


def _util_for_free(p: Plan, free: int) -> dict[str, Any] | None:
    """The largest utilization, from what is free now downwards, with which the plan fits."""
    u = int(free / p.gpu["total_bytes"] * 100) / 100
    while u > 0.05:
        q = _try(p, gpu_memory_utilization=u)
        if q and q.fits:
            return _fix("--gpu-memory-utilization", u, q,
                        f"vLLM then uses {u * p.gpu['total_bytes'] / GIB:.2f} GiB: what other processes "
                        "leave free now, so the KV cache is smaller",
                        f"vLLM 只用 {u * p.gpu['total_bytes'] / GIB:.2f} GiB（其他进程现在留出的空闲），"
                        "KV cache 随之变小")
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
                        f"{(u - util) * p.gpu['total_bytes'] / GIB:.2f} GiB more of each GPU for vLLM; "
                        "other processes there must fit in what is left",
                        f"vLLM 每卡多用 {(u - util) * p.gpu['total_bytes'] / GIB:.2f} GiB；"
                        "同卡的其他进程只能用剩下的")
    return None


def _fp8_kv_cache(p: Plan) -> dict[str, Any] | None:
    s = p.settings
    if not (s["kv_cache_dtype"] == "auto" and s["dtype"] != "float32"):
        return None
    q = _try(p, kv_cache_dtype="fp8")
    if not (q and q.fits):
        return None
    return _fix("--kv-cache-dtype", "fp8", q,
                "half the KV bytes per token; a small accuracy loss, and attention backends without "
                "fp8 KV fall back or refuse",
                "每 token 的 KV 字节减半；精度略降，不支持 fp8 KV 的注意力后端会回退或拒绝")


def _more_tp(p: Plan) -> dict[str, Any] | None:
    """The smallest larger tensor-parallel size (2, 4, 8) that divides the heads and fits."""
    tp = p.settings["tp"]
    for n in (2, 4, 8):
        if n <= tp or p.model.num_attention_heads % n:
            continue
        q = _try(p, tp=n)
        if q and q.fits:
            return _fix("--tensor-parallel-size", n, q,
                        f"{n} GPUs instead of {tp}, with all-reduce traffic between them",
                        f"需要 {n} 块 GPU（原为 {tp}），并有卡间 all-reduce 通信")
    return None


def _fp8_weights(p: Plan) -> dict[str, Any] | None:
    s = p.settings
    if s["quantization"] or s["dtype"] not in ("bfloat16", "float16"):
        return None
    q = _try(p, quantization="fp8")
    if not (q and q.fits):
        return None
    return _fix("--quantization", "fp8", q,
                "weights stored in fp8 (online quantization): some accuracy loss; fast kernels "
                "need Ada/Hopper or newer",
                "权重以 fp8 存放（在线量化）：精度有损；快速内核需要 Ada/Hopper 或更新的 GPU")
