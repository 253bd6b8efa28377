"""Numbers for weights that do not fit one GPU: a tensor-parallel size, CPU offload of some weights.

The weights are counted, best first, from the checkpoint's size on disk, from what one GPU loaded
times the TP and PP sizes, and from the planner when the log names a model it can describe. Each GPU
may spend ``total x utilization`` less a reserve for the CUDA context, the profiling pass and a
little KV cache; what does not fit there needs more GPUs or has to live in host RAM.
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import Text, msg
from ...text.units import GIB
from ..numbers import Computed, calc, explain, num, said, src, total_gib
from .readings import current_util

WEIGHT_RESERVE_GIB = 2.0
"""Per GPU, beyond the weights: CUDA context, activations of the profiling pass, a little KV cache."""


def _weights_total(facts: FactSet) -> tuple[float, Text, tuple[str, ...]] | None:
    ck = num(facts, "checkpoint_gib")
    if ck:
        return ck, said("calc.weights.checkpoint", total=ck), ("checkpoint_gib",)
    w = num(facts, "weights_gib")
    if w:
        tp, pp = int(num(facts, "tp") or 1), int(num(facts, "pp") or 1)
        t = w * tp * pp
        return t, said("calc.weights.loaded", per_gpu=w, tp=tp, pp=pp, total=t), ("weights_gib", "tp", "pp")
    from ...plan.from_facts import weights_total

    planned = weights_total(facts)
    if planned is not None:
        t = planned.value / GIB
        # The planner's English names the model and how it counted; Chinese wraps it in the catalogue's words.
        return t, Text(planned.how, said("calc.weights.planned", total=t, how=planned.how).zh), planned.inputs
    return None


@calc(
    "tp_for_weights",
    msg("calc.weights.tp.title"),
    "<TP>",
)
def tp_for_weights(facts: FactSet) -> Computed | None:
    weights, total = _weights_total(facts), total_gib(facts)
    if weights is None or total is None:
        return None
    w, how, names = weights
    util, _ = current_util(facts)
    pp = int(num(facts, "pp") or 1)
    budget = total[0] * util - WEIGHT_RESERVE_GIB
    gpus = num(facts, "gpu_count")
    limit = int(gpus) if gpus else 8
    tp = 1
    while tp <= limit:
        if w / (tp * pp) <= budget:
            break
        tp *= 2
    if tp > limit or tp * pp > limit:
        return None
    cur_tp = int(num(facts, "tp") or 1)
    if tp <= cur_tp:
        return None
    return explain(
        tp,
        said("calc.weights.tp", how=how, source=src(facts, *names), total=total[0], util=util,
             reserve=WEIGHT_RESERVE_GIB, budget=budget, weights=w, tp=tp, pp=pp, share=w / (tp * pp)),
        (*names, total[1]),
    )


@calc(
    "tp_next",
    msg("calc.weights.tp_next.title"),
    "<TP>",
)
def tp_next(facts: FactSet) -> Computed | None:
    tp = int(num(facts, "tp") or 1)
    gpus = num(facts, "gpu_count")
    new = tp * 2
    pp = int(num(facts, "pp") or 1)
    if not gpus or new * pp > gpus:
        return None
    tp_source = src(facts, "tp") or said("calc.weights.tp_default", tp=1)
    return explain(
        new,
        said("calc.weights.tp_next", tp=tp, tp_source=tp_source, gpus=int(gpus), gpus_source=src(facts, "gpu_count"),
             new=new, pp=pp),
        ("tp", "gpu_count"),
    )


@calc(
    "cpu_offload_gb_fit",
    msg("calc.weights.offload.title"),
    "<GIB>",
)
def cpu_offload_gb_fit(facts: FactSet) -> Computed | None:
    """What the KV cache lacks, or what the weights overshoot by, rounded up with 1 GiB to spare."""
    need, have = num(facts, "kv_needed_gib"), num(facts, "kv_cache_gib")
    if need and have is not None and need > have:
        gb = math.ceil(need - have + 1)
        names: tuple[str, ...] = ("kv_needed_gib", "kv_cache_gib")
        why = said("calc.weights.offload_kv", lack=need - have, source=src(facts, *names), gb=gb)
    else:
        weights, total = _weights_total(facts), total_gib(facts)
        if weights is None or total is None:
            return None
        w, how, wnames = weights
        tp, pp = int(num(facts, "tp") or 1), int(num(facts, "pp") or 1)
        per_gpu = w / (tp * pp)
        util, _ = current_util(facts)
        budget = total[0] * util - WEIGHT_RESERVE_GIB
        if per_gpu <= budget:
            return None
        gb = math.ceil(per_gpu - budget + 1)
        names = (*wnames, total[1])
        why = said("calc.weights.offload_share", how=how, source=src(facts, *names), per_gpu=per_gpu, budget=budget,
                   total=total[0], util=util, reserve=WEIGHT_RESERVE_GIB, gb=gb)
    per_gpu_weights = num(facts, "weights_gib")
    if per_gpu_weights and gb > per_gpu_weights - 1:
        # Only weights can be offloaded: a shortfall larger than this GPU's share of them cannot be met.
        return None
    host = num(facts, "host_mem_available_bytes")
    gpus = int(num(facts, "gpu_count") or num(facts, "tp") or 1)
    if host:
        # vllm#56410: the offload takes about twice the requested host memory.
        needed = gb * gpus * 2
        if needed > host / GIB:
            short = said("calc.weights.host_short", needed=needed, avail=host / GIB)
            why = Text(f"{why.en} {short.en}", f"{why.zh}{short.zh}")
    return explain(gb, why, names)
