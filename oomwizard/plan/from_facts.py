"""The planner's numbers for the wizard's leaves: what the log does not say, from the model it names.

A leaf knows facts (what the log printed, what the operator stated). When the log names a model
the planner can describe (a directory on this machine or a bundled one), the planner supplies
what the log lacks: the weights of a start that died while loading, or vLLM's own longest
context for the KV memory the log printed. Anything it cannot do exactly or honestly is ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..text.units import GIB, gib
from .arch import DTYPE_BYTES, ModelDesc
from .errors import PlanError
from .inputs import LATEST, Inputs
from .sources import load_model
from .weights import estimated_bytes


@dataclass(frozen=True)
class Planned:
    value: int
    how: str
    inputs: tuple[str, ...]


def _model(facts: Any) -> ModelDesc | None:
    name = facts.value("model")
    if not isinstance(name, str) or not name.strip():
        return None
    try:
        return load_model(name.strip())
    except PlanError:
        return None


def weights_total(facts: Any) -> Planned | None:
    """All GPUs' weight bytes: the checkpoint's headers when the model directory is here, else its
    parameter count x bytes per parameter (dtype and quantization from the facts or the config)."""
    m = _model(facts)
    if m is None:
        return None
    quant = facts.value("quantization") or m.quantization
    if m.weight_file_bytes and (not facts.value("quantization") or facts.value("quantization") == m.quantization):
        return Planned(m.weight_file_bytes, f"{m.name}: {gib(m.weight_file_bytes)} in {m.weight_file_source}",
                       ("model",))
    dtype = str(facts.value("dtype") or m.dtype).replace("torch.", "")
    total, how = estimated_bytes(m.params, DTYPE_BYTES.get(dtype, 2), quant)
    return Planned(int(total), f"{m.name} ({m.source}): {how} = {gib(total)} (estimated from the "
                               "architecture)", ("model",))


def max_model_len_fit(facts: Any) -> Planned | None:
    """The longest ``--max-model-len`` vLLM's own start-up check accepts for the KV memory the log
    printed (its lower rounding edge), with this release's grouping, blocks and sliding windows."""
    from .planner import plan

    m = _model(facts)
    kv_gib, mml = facts.value("kv_cache_gib"), facts.value("max_model_len")
    if m is None or not isinstance(kv_gib, (int, float)) or kv_gib <= 0 or not mml:
        return None
    version = str(facts.value("vllm_version") or LATEST)
    total = facts.value("gpu_mem_total_bytes")
    base = Inputs(model=m.name, gpu_memory_gib=total / GIB if isinstance(total, (int, float)) and total > 0 else 80.0, tp=int(facts.value("tp") or 1), pp=int(facts.value("pp") or 1),
                  kv_cache_dtype=str(facts.value("kv_cache_dtype") or "auto"), vllm_version=version,
                  max_num_batched_tokens=facts.value("max_num_batched_tokens"),
                  logged_kv_bytes=int((float(kv_gib) - 0.005) * GIB))
    try:
        first = plan(base.but(max_model_len=int(mml)), model=m)
        if first.fits or (first.error or "").startswith("The weights"):
            return None  # it already fits (the shortfall is elsewhere), or the weights alone do not
        lo, hi, best = 1, int(mml) - 1, 0
        while lo <= hi:
            mid = (lo + hi) // 2
            if plan(base.but(max_model_len=mid), model=m).fits:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
    except PlanError:
        return None
    if best <= 0:
        return None
    return Planned(best, f"{m.name}: with {kv_gib} GiB of KV cache, vLLM {version}'s start-up check accepts up to "
                         f"{best:,} tokens (its blocks and layer groups, as the planner computes them)",
                   ("model", "kv_cache_gib", "max_model_len", "vllm_version"))
