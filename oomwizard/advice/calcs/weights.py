"""Numbers for weights that do not fit one GPU: a tensor-parallel size, CPU offload of some weights.

The weights are counted, best first, from the checkpoint's size on disk, from what one GPU loaded
times the TP and PP sizes, and from the planner when the log names a model it can describe. Each GPU
may spend ``total x utilization`` less a reserve for the CUDA context, the profiling pass and a
little KV cache; what does not fit there needs more GPUs or has to live in host RAM.
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ..numbers import Computed, calc, explain, num, src, total_gib
from .readings import current_util

WEIGHT_RESERVE_GIB = 2.0
"""Per GPU, beyond the weights: CUDA context, activations of the profiling pass, a little KV cache."""


def _weights_total(facts: FactSet) -> tuple[float, str, str, tuple[str, ...]] | None:
    ck = num(facts, "checkpoint_gib")
    if ck:
        return ck, f"the checkpoint is {ck:.2f} GiB", f"权重文件共 {ck:.2f} GiB", ("checkpoint_gib",)
    w = num(facts, "weights_gib")
    if w:
        tp, pp = int(num(facts, "tp") or 1), int(num(facts, "pp") or 1)
        t = w * tp * pp
        return (
            t,
            f"{w:.2f} GiB per GPU x TP {tp} x PP {pp} = {t:.2f} GiB of weights",
            f"单卡 {w:.2f} GiB x TP {tp} x PP {pp} = 权重共 {t:.2f} GiB",
            ("weights_gib", "tp", "pp"),
        )
    from ...plan.from_facts import weights_total

    planned = weights_total(facts)
    if planned is not None:
        t = planned.value / GIB
        return t, planned.how, f"规划器按模型估算权重共 {t:.2f} GiB（{planned.how}）", planned.inputs
    return None


@calc(
    "tp_for_weights",
    Text("The tensor-parallel size whose weight share fits one GPU", "使每卡权重放得下的张量并行数"),
    "<TP>",
)
def tp_for_weights(facts: FactSet) -> Computed | None:
    weights, total = _weights_total(facts), total_gib(facts)
    if weights is None or total is None:
        return None
    w, how_en, how_zh, names = weights
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
        f"{how_en} ({src(facts, *names)}); each GPU may use {total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f} = {budget:.2f} GiB; "
        f"{w:.2f} / ({tp} x PP {pp}) = {w / (tp * pp):.2f} GiB fits. Assumes the checkpoint's precision is what runs on the GPU.",
        f"{how_zh}（{src(facts, *names)}）；每卡可用 {total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f} = {budget:.2f} GiB；"
        f"{w:.2f} / ({tp} x PP {pp}) = {w / (tp * pp):.2f} GiB，放得下。假设 GPU 上运行的精度与权重文件一致。",
        (*names, total[1]),
    )


@calc(
    "tp_next",
    Text("Twice the tensor-parallel size, if the GPUs are there", "张量并行数加倍（若 GPU 足够）"),
    "<TP>",
)
def tp_next(facts: FactSet) -> Computed | None:
    tp = int(num(facts, "tp") or 1)
    gpus = num(facts, "gpu_count")
    new = tp * 2
    pp = int(num(facts, "pp") or 1)
    if not gpus or new * pp > gpus:
        return None
    return explain(
        new,
        f"TP is {tp} ({src(facts, 'tp') or 'default 1'}) and this machine has {int(gpus)} GPUs ({src(facts, 'gpu_count')}); "
        f"TP {new} x PP {pp} fits.",
        f"当前 TP 为 {tp}（{src(facts, 'tp') or '默认 1'}），本机有 {int(gpus)} 张 GPU（{src(facts, 'gpu_count')}）；"
        f"TP {new} x PP {pp} 可行。",
        ("tp", "gpu_count"),
    )


@calc(
    "cpu_offload_gb_fit",
    Text("GiB of weights per GPU to keep in host RAM", "每卡放到主机内存的权重 GiB 数"),
    "<GIB>",
)
def cpu_offload_gb_fit(facts: FactSet) -> Computed | None:
    """What the KV cache lacks, or what the weights overshoot by, rounded up with 1 GiB to spare."""
    need, have = num(facts, "kv_needed_gib"), num(facts, "kv_cache_gib")
    if need and have is not None and need > have:
        gb = math.ceil(need - have + 1)
        names: tuple[str, ...] = ("kv_needed_gib", "kv_cache_gib")
        en = f"the KV cache lacks {need - have:.2f} GiB ({src(facts, *names)}); moving {gb} GiB of weights per GPU frees it"
        zh = f"KV cache 还差 {need - have:.2f} GiB（{src(facts, *names)}）；每卡移出 {gb} GiB 权重即可腾出"
    else:
        weights, total = _weights_total(facts), total_gib(facts)
        if weights is None or total is None:
            return None
        w, how_en, how_zh, wnames = weights
        tp, pp = int(num(facts, "tp") or 1), int(num(facts, "pp") or 1)
        per_gpu = w / (tp * pp)
        util, _ = current_util(facts)
        budget = total[0] * util - WEIGHT_RESERVE_GIB
        if per_gpu <= budget:
            return None
        gb = math.ceil(per_gpu - budget + 1)
        names = (*wnames, total[1])
        en = (
            f"{how_en} ({src(facts, *names)}); {per_gpu:.2f} GiB per GPU against {budget:.2f} GiB usable "
            f"({total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f}); {gb} GiB must live in host RAM"
        )
        zh = (
            f"{how_zh}（{src(facts, *names)}）；每卡 {per_gpu:.2f} GiB，可用 {budget:.2f} GiB"
            f"（{total[0]:.2f} x {util} - {WEIGHT_RESERVE_GIB:.0f}）；需要 {gb} GiB 放在主机内存"
        )
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
            en += f". Host RAM is short: about {needed} GiB needed, {host / GIB:.0f} GiB available"
            zh += f"。主机内存不足：约需 {needed} GiB，可用 {host / GIB:.0f} GiB"
    return explain(gb, en + ".", zh + "。", names)
