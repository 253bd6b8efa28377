"""Numbers for the kernel warm-up leaf (``kernel_warmup()`` after the KV cache, before capture).

The DeepGEMM warm-up allocates its input, scale and output buffers for up to
``max_num_batched_tokens`` rows (for MoE layers ``data_parallel_size x max_num_batched_tokens x
top_k`` rows plus the experts' alignment padding, ``model_executor/warmup/deep_gemm_warmup.py``
from 0.10.2), and FlashInfer's autotuner runs a ``max_num_batched_tokens`` dummy batch. Both sizes
fall in proportion to ``max_num_batched_tokens``. The failed allocation and the free memory that
PyTorch's message reports are the only sizes a log gives; the warm-up holds about two buffers of
that size at once (input and output), so both calculations leave room for a second one.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text, msg
from ...text.units import gib as _gib
from ..numbers import (
    Computed,
    calc,
    ceil2,
    default_gpu_memory_utilization,
    default_max_num_batched_tokens,
    default_max_num_seqs,
    floor2,
    num,
    origin,
    pow2_floor,
    said,
)

BUFFERS_HELD = 2
"""Buffers of about the failed allocation's size that the warm-up holds at once (input, output)."""

MIN_UTIL = 0.10
"""Below this the weights no longer fit beside the warm-up: another fix must come first."""


def _oom(facts: FactSet) -> tuple[int, int] | None:
    """(bytes the warm-up asked for, bytes free on the GPU) from PyTorch's message."""
    req, free = num(facts, "oom_requested_bytes"), num(facts, "oom_free_bytes")
    if not req or free is None:
        return None
    return int(req), int(free)


def _tokens(facts: FactSet) -> tuple[int, Text, tuple[str, ...]] | None:
    n = num(facts, "max_num_batched_tokens")
    if n:
        basis = origin(facts, "max_num_batched_tokens")
        return int(n), said("calc.readings.setting", name="max_num_batched_tokens", value=int(n), source=basis), (
            "max_num_batched_tokens",
        )
    default = default_max_num_batched_tokens(facts)
    if default is None:
        return None
    return default[0], said("calc.readings.setting", name="max_num_batched_tokens", value=default[0],
                            source=default[1]), ("vllm_version",)


def _seqs(facts: FactSet) -> int:
    n = num(facts, "max_num_seqs")
    return int(n) if n else default_max_num_seqs(facts)[0]


@calc(
    "kernel_warmup_max_num_batched_tokens",
    msg("calc.warmup.tokens.title"),
    "<N>",
)
def _kernel_warmup_tokens(facts: FactSet) -> Computed | None:
    """current x free / (2 x requested), as a power of two, not below max_num_seqs (vLLM refuses that)."""
    tokens, oom = _tokens(facts), _oom(facts)
    if tokens is None or oom is None:
        return None
    cur, cur_why, names = tokens
    req, free = oom
    scaled = cur * free / (BUFFERS_HELD * req)
    new = pow2_floor(scaled) if scaled >= 1 else 1
    new = min(new, cur // 2)
    seqs = _seqs(facts)
    floored = new < seqs
    if floored:
        new = seqs
    if new >= cur:
        return None
    fields = {"tokens": cur_why, "req": _gib(req), "free": _gib(free), "buffers": BUFFERS_HELD, "cur": cur,
              "scaled": scaled, "new": new}
    why = said("calc.warmup.tokens_floor", seqs=seqs, **fields) if floored else said("calc.warmup.tokens", **fields)
    return Computed(str(new), why, (*names, "oom_requested_bytes", "oom_free_bytes"))


@calc(
    "kernel_warmup_gpu_util",
    msg("calc.warmup.gpu_util.title"),
    "<FRACTION>",
)
def _kernel_warmup_util(facts: FactSet) -> Computed | None:
    """current - (2 x requested - free) / total: the KV cache gives up what the warm-up lacked."""
    oom = _oom(facts)
    total = num(facts, "oom_total_bytes") or num(facts, "gpu_mem_total_bytes")
    if oom is None or not total:
        return None
    req, free = oom
    util = num(facts, "gpu_memory_utilization")
    if util:
        util_en = f"gpu_memory_utilization = {util} ({origin(facts, 'gpu_memory_utilization')})"
    else:
        util, why = default_gpu_memory_utilization(facts)
        util_en = f"gpu_memory_utilization = {util} ({why})"
    missing = max(BUFFERS_HELD * req - free, 0)
    drop = max(ceil2(missing / total), 0.01)
    new = floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    return Computed(
        f"{new:.2f}",
        said("calc.warmup.gpu_util", util_setting=util_en, req=_gib(req), free=_gib(free), buffers=BUFFERS_HELD,
             total=_gib(int(total)), drop=drop, util=util, new=new),
        ("gpu_memory_utilization", "oom_requested_bytes", "oom_free_bytes", "oom_total_bytes"),
    )
