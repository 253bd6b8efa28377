"""Numbers for the sleep-mode leaf: how much of the GPU to hand back to the trainer beside vLLM.

When a trainer and vLLM take turns on one GPU, wake_up() maps vLLM's whole pool back (weights and a
KV cache sized from ``gpu_memory_utilization``) next to whatever the trainer still holds. What the
trainer holds at that moment is not in vLLM's log, so there is no exact figure to compute: the
calculations take one step of the size that fixed reported cases (EasyR1 went from 0.7 to 0.6; a
verl user cleared the cumem error at 0.45), and show in GiB what the step returns to the trainer. The KV cache is what shrinks;
the weights do not, so a step that would leave no room for a KV cache is refused.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ..numbers import Computed, calc, explain, total_gib
from ..numbers import num as _num
from ..numbers import src as _src

STEP = 0.1
"""Utilization handed back per step: the size of the steps that fixed reported wake-up OOMs."""
MIN_KV_GIB = 1.0
"""Below this the KV cache holds too little to be worth a rollout; lower elsewhere instead."""
ROUND_BYTES = 256 << 20
"""--kv-cache-memory-bytes is rounded down to 256 MiB, a size an operator can read back."""
KEEP_KV = 0.5
"""A fixed KV cache keeps at least this share of today's: on a small cache a tenth of the GPU
would leave too little to decode a batch of rollouts."""


def _freed(facts: FactSet) -> tuple[str, str]:
    """What the last sleep freed, as a clause of the explanation (empty when the log lacks it)."""
    freed = _num(facts, "sleep_freed_gib")
    if freed is None:
        return "", ""
    s = _src(facts, "sleep_freed_gib")
    return (f" vLLM's last sleep freed {freed:.2f} GiB ({s}), which wake_up() maps back in one go.",
            f" vLLM 上一次休眠释放了 {freed:.2f} GiB（{s}），wake_up() 会一次性把它们映射回来。")


@calc(
    "sleep_gpu_util",
    Text("gpu_memory_utilization that hands the trainer room at wake-up", "在唤醒时为训练进程让出空间的 gpu_memory_utilization"),
    "<FRACTION>",
)
def sleep_gpu_util(facts: FactSet) -> Computed | None:
    """The stated utilization lowered by one step, if the weights still leave a KV cache.

    Only a stated value counts: frameworks pass their own (0.3-0.7 is common), so vLLM's default
    would be a guess about the wrong number.
    """
    cur = _num(facts, "gpu_memory_utilization")
    if not cur:
        return None
    new = round(cur - STEP, 2)
    if new < STEP:
        return None
    total = total_gib(facts)
    weights = _num(facts, "weights_gib")
    if total is not None and weights and new * total[0] < weights + MIN_KV_GIB:
        return None
    basis = _src(facts, "gpu_memory_utilization")
    freed_en, freed_zh = _freed(facts)
    if total is None:
        return Computed(
            f"{new:.2f}",
            Text(f"now {cur} ({basis}); {STEP} less gives the trainer a tenth of the GPU at every wake-up.{freed_en}",
                 f"当前为 {cur}（{basis}）；降低 {STEP}，每次唤醒时为训练进程让出十分之一的 GPU。{freed_zh}"),
            ("gpu_memory_utilization",),
        )
    moved = STEP * total[0]
    return explain(
        f"{new:.2f}",
        f"now {cur} ({basis}); {STEP} less of {total[0]:.2f} GiB ({total[1]}) leaves {moved:.2f} GiB more to the "
        f"trainer when vLLM wakes, taken from the KV cache.{freed_en}",
        f"当前为 {cur}（{basis}）；在 {total[0]:.2f} GiB（{total[1]}）上降低 {STEP}，vLLM 唤醒时为训练进程多留出 "
        f"{moved:.2f} GiB，这部分取自 KV cache。{freed_zh}",
        ("gpu_memory_utilization", total[1]),
    )


@calc(
    "sleep_kv_cache_bytes",
    Text("A fixed KV cache size one step smaller than today's", "比当前小一档的固定 KV cache 大小"),
    "<BYTES>",
)
def sleep_kv_cache_bytes(facts: FactSet) -> Computed | None:
    """Today's KV cache less the same step of the GPU (but at least half of it), in bytes: a size
    that no longer moves with the profiling pass, the release or what else was on the GPU."""
    kv = _num(facts, "kv_cache_gib")
    total = total_gib(facts)
    if kv is None or total is None:
        return None
    moved = STEP * total[0]
    stepped = kv - moved
    new_gib = max(stepped, kv * KEEP_KV)
    if new_gib < MIN_KV_GIB:
        return None
    new = int(new_gib * GIB) // ROUND_BYTES * ROUND_BYTES
    names = ("kv_cache_gib", total[1])
    if stepped >= kv * KEEP_KV:
        how_en = f"{kv:.2f} - {STEP} x {total[0]:.2f} GiB = {new_gib:.2f} GiB"
        how_zh = how_en
    else:
        how_en = (f"{kv:.2f} - {STEP} x {total[0]:.2f} GiB would leave {stepped:.2f} GiB, so half of today's: "
                  f"{new_gib:.2f} GiB")
        how_zh = (f"{kv:.2f} - {STEP} x {total[0]:.2f} GiB 只剩 {stepped:.2f} GiB，因此取当前的一半：{new_gib:.2f} GiB")
    return explain(
        new,
        f"the KV cache is {kv:.2f} GiB ({_src(facts, 'kv_cache_gib')}); {how_en}, rounded down to 256 MiB: "
        f"{new:,} bytes ({new / GIB:.2f} GiB). vLLM then ignores gpu_memory_utilization for the KV cache, so its "
        "size no longer grows with a new release or a different profiling result.",
        f"KV cache 为 {kv:.2f} GiB（{_src(facts, 'kv_cache_gib')}）；{how_zh}，按 256 MiB 向下取整：{new:,} 字节"
        f"（{new / GIB:.2f} GiB）。此后 vLLM 不再按 gpu_memory_utilization 决定 KV cache 大小，它也就不会随新版本或"
        "不同的内存分析结果而变大。",
        names,
    )
