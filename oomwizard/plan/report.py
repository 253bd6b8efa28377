"""A plan as JSON (the ``plan`` envelope body) and as text in English or Chinese."""

from __future__ import annotations

from typing import Any

from ..i18n import msg
from ..text.units import gib
from .planner import Plan

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
    "title": msg("plan.report.title"),
    "weights_bytes_per_gpu": msg("plan.report.weights_bytes_per_gpu"),
    "activation_peak_bytes": msg("plan.report.activation_peak_bytes"),
    "non_torch_bytes": msg("plan.report.non_torch_bytes"),
    "cudagraph_bytes": msg("plan.report.cudagraph_bytes"),
    "requested_bytes": msg("plan.report.requested_bytes"),
    "available_kv_bytes": msg("plan.report.available_kv_bytes"),
    "kv_bytes_per_token": msg("plan.report.kv_bytes_per_token"),
    "state_page_bytes": msg("plan.report.state_page_bytes"),
    "kv_tokens": msg("plan.report.kv_tokens"),
    "max_concurrency": msg("plan.report.max_concurrency"),
    "fits": msg("plan.report.fits"),
    "no_fit": msg("plan.report.no_fit"),
    "fixes": msg("plan.report.fixes"),
    "not_counted": msg("plan.report.not_counted"),
    "basis": msg("plan.report.basis"),
}


def _fmt(key: str, value: Any) -> str:
    if key in ("kv_tokens", "num_blocks"):
        return f"{value:,}"
    if key == "max_concurrency":
        return f"{value:.2f}x"
    if key in ("kv_bytes_per_token", "state_page_bytes"):
        return f"{value:,} B"
    return gib(value)


def text(p: Plan, lang: str = "en") -> str:
    lines = [T["title"](lang).format(model=p.model.name, gpu=f"{p.gpu['name']} ({gib(p.gpu['total_bytes'])})",
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
