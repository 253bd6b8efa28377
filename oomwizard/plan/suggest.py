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
    """Fixes for a plan that does not fit (or has less than one request of KV cache)."""
    if p.fits:
        return []
    out: list[dict[str, Any]] = []
    s = p.settings
    if p.error and "exceeds available Mamba cache blocks" in p.error:
        n = p.value("num_blocks")
        q = _try(p, max_num_seqs=n)
        if q and q.fits:
            out.append({"change": f"--max-num-seqs {n}", "flag": "--max-num-seqs", "value": n,
                        "cost": f"at most {n} sequences run at once (was {s['max_num_seqs']}); each holds a state block",
                        "cost_zh": f"最多同时运行 {n} 个序列（原为 {s['max_num_seqs']}）；每个序列占一个状态块",
                        "kv_tokens": q.value("kv_tokens")})
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
                        "cost": f"requests longer than {n} tokens are refused (was {s['max_model_len']})",
                        "cost_zh": f"超过 {n} 个 token 的请求会被拒绝（原为 {s['max_model_len']}）",
                        "kv_tokens": best.value("kv_tokens")})
    util = s["gpu_memory_utilization"]
    free = p.gpu.get("free_bytes")
    if free is not None and p.error and p.error.startswith("Free memory on device"):
        u = int(free / p.gpu["total_bytes"] * 100) / 100
        while u > 0.05:
            q = _try(p, gpu_memory_utilization=u)
            if q and q.fits:
                out.append({"change": f"--gpu-memory-utilization {u}", "flag": "--gpu-memory-utilization", "value": u,
                            "cost": f"vLLM then uses {u * p.gpu['total_bytes'] / GIB:.2f} GiB: what other processes "
                                    "leave free now, so the KV cache is smaller",
                            "cost_zh": f"vLLM 只用 {u * p.gpu['total_bytes'] / GIB:.2f} GiB（其他进程现在留出的空闲），"
                                       "KV cache 随之变小", "kv_tokens": q.value("kv_tokens")})
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
                        "cost": f"{(u - util) * p.gpu['total_bytes'] / GIB:.2f} GiB more of each GPU for vLLM; "
                                "other processes there must fit in what is left",
                        "cost_zh": f"vLLM 每卡多用 {(u - util) * p.gpu['total_bytes'] / GIB:.2f} GiB；"
                                   "同卡的其他进程只能用剩下的",
                        "kv_tokens": q.value("kv_tokens")})
            break
    if s["kv_cache_dtype"] == "auto" and s["dtype"] != "float32":
        q = _try(p, kv_cache_dtype="fp8")
        if q and q.fits:
            out.append({"change": "--kv-cache-dtype fp8", "flag": "--kv-cache-dtype", "value": "fp8",
                        "cost": "half the KV bytes per token; a small accuracy loss, and attention backends without "
                                "fp8 KV fall back or refuse",
                        "cost_zh": "每 token 的 KV 字节减半；精度略降，不支持 fp8 KV 的注意力后端会回退或拒绝",
                        "kv_tokens": q.value("kv_tokens")})
    tp = s["tp"]
    for n in (2, 4, 8):
        if n <= tp or p.model.num_attention_heads % n:
            continue
        q = _try(p, tp=n)
        if q and q.fits:
            out.append({"change": f"--tensor-parallel-size {n}", "flag": "--tensor-parallel-size", "value": n,
                        "cost": f"{n} GPUs instead of {tp}, with all-reduce traffic between them",
                        "cost_zh": f"需要 {n} 块 GPU（原为 {tp}），并有卡间 all-reduce 通信",
                        "kv_tokens": q.value("kv_tokens")})
            break
    if not s["quantization"] and s["dtype"] in ("bfloat16", "float16"):
        q = _try(p, quantization="fp8")
        if q and q.fits:
            out.append({"change": "--quantization fp8", "flag": "--quantization", "value": "fp8",
                        "cost": "weights stored in fp8 (online quantization): some accuracy loss; fast kernels "
                                "need Ada/Hopper or newer",
                        "cost_zh": "权重以 fp8 存放（在线量化）：精度有损；快速内核需要 Ada/Hopper 或更新的 GPU",
                        "kv_tokens": q.value("kv_tokens")})
    return out
