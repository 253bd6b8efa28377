"""A plan as JSON (the ``plan`` envelope body) and as text in English or Chinese."""

from __future__ import annotations

from typing import Any

from ..i18n import Text
from .planner import Plan

GIB = 1 << 30

KEYS = ("weights_bytes_per_gpu", "kv_bytes_per_token", "activation_peak_bytes", "non_torch_bytes", "cudagraph_bytes",
        "requested_bytes", "available_kv_bytes", "num_blocks", "kv_tokens", "max_concurrency",
        "kv_bytes_needed_one_request")


def body(p: Plan) -> dict[str, Any]:
    """The JSON body; every number carries ``basis`` and ``formula``."""
    m = p.model
    return {
        "model": {"name": m.name, "architecture": m.architecture, "model_type": m.model_type, "source": m.source,
                  "layers": len(m.layers), "dtype": m.dtype, "quantization": m.quantization,
                  "max_position_embeddings": m.max_position},
        "gpu": {k: p.gpu[k] for k in ("name", "total_bytes", "basis", "source")},
        "vllm_version": p.release.text,
        "settings": p.settings,
        "kv_groups": p.groups,
        **{k: p.numbers[k] for k in KEYS},
        **({"state_page_bytes": p.numbers["state_page_bytes"]} if "state_page_bytes" in p.numbers else {}),
        "fits": p.fits,
        "error": p.error,
        "suggestions": p.suggestions,
        "notes": [n.en for n in p.notes],
        "notes_zh": [n.zh for n in p.notes],
    }


T = {
    "title": Text("Capacity plan: {model} on {gpu}, vLLM {ver}", "容量规划：{model}，{gpu}，vLLM {ver}"),
    "weights_bytes_per_gpu": Text("weights per GPU", "每块 GPU 的权重"),
    "activation_peak_bytes": Text("activation peak", "激活峰值"),
    "non_torch_bytes": Text("non-torch memory", "非 torch 内存"),
    "cudagraph_bytes": Text("CUDA graphs", "CUDA 图"),
    "requested_bytes": Text("vLLM may use", "vLLM 可用"),
    "available_kv_bytes": Text("KV cache memory", "KV 缓存内存"),
    "kv_bytes_per_token": Text("KV bytes per token", "每 token KV 字节"),
    "state_page_bytes": Text("state page per layer and request", "每层每请求的状态页"),
    "kv_tokens": Text("GPU KV cache size (tokens)", "GPU KV 缓存大小（token）"),
    "max_concurrency": Text("maximum concurrency at max_model_len", "max_model_len 下的最大并发"),
    "fits": Text("Verdict: vLLM starts.", "结论：vLLM 可以启动。"),
    "no_fit": Text("Verdict: vLLM does not start. It would say:", "结论：vLLM 无法启动。它会报告："),
    "fixes": Text("Smallest changes that fit:", "能启动的最小改动："),
    "not_counted": Text("(not in this release's budget)", "（此版本不计入预算）"),
    "basis": Text("exact = vLLM's own arithmetic; calibrated = from the log; estimated = our estimate",
                  "exact = vLLM 自身算法；calibrated = 取自日志；estimated = 估算"),
}


def _fmt(key: str, value: Any) -> str:
    if key in ("kv_tokens", "num_blocks"):
        return f"{value:,}"
    if key == "max_concurrency":
        return f"{value:.2f}x"
    if key in ("kv_bytes_per_token", "state_page_bytes"):
        return f"{value:,} B"
    return f"{value / GIB:.2f} GiB"


def text(p: Plan, lang: str = "en") -> str:
    lines = [T["title"](lang).format(model=p.model.name, gpu=f"{p.gpu['name']} ({p.gpu['total_bytes'] / GIB:.2f} GiB)",
                                     ver=p.release.text)]
    s = p.settings
    lines.append(f"  TP {s['tp']}  PP {s['pp']}  dtype {s['dtype']}  kv {s['kv_cache_dtype']}  max_model_len "
                 f"{s['max_model_len']}  util {s['gpu_memory_utilization']}  batched {s['max_num_batched_tokens']}  "
                 f"seqs {s['max_num_seqs']}  block {s['block_size']}")
    lines.append("")
    for key in ("requested_bytes", "weights_bytes_per_gpu", "activation_peak_bytes", "non_torch_bytes",
                "cudagraph_bytes", "available_kv_bytes", "kv_bytes_per_token", "state_page_bytes", "kv_tokens",
                "max_concurrency"):
        if key not in p.numbers:
            continue
        n = p.numbers[key]
        extra = f" {T['not_counted'](lang)}" if key == "cudagraph_bytes" and not n.get("counted") else ""
        lines.append(f"  {T[key](lang):<38} {_fmt(key, n['value']):>16}  [{n['basis']}]{extra}")
        lines.append(f"      {n['formula']}")
    lines.append("")
    if p.fits:
        lines.append(T["fits"](lang))
    else:
        lines.append(T["no_fit"](lang))
        lines.append(f"  {p.error}")
        if p.suggestions:
            lines.append("")
            lines.append(T["fixes"](lang))
            for sug in p.suggestions:
                lines.append(f"  {sug['change']:<32} {sug['cost_zh'] if lang == 'zh' else sug['cost']}")
    for note in p.notes:
        lines.append(f"  * {note(lang)}")
    lines.append("")
    lines.append(T["basis"](lang))
    return "\n".join(lines) + "\n"
