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
from ...i18n import Text, msg
from ...text.units import GIB
from ..numbers import Computed, calc, explain, said, total_gib
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


def _with_freed(facts: FactSet, why: Text) -> Text:
    """The explanation followed by what the last sleep freed, a sentence of its own (when the log says)."""
    freed = _num(facts, "sleep_freed_gib")
    if freed is None:
        return why
    more = said("calc.sleep.freed", freed=freed, source=_src(facts, "sleep_freed_gib"))
    return Text(f"{why.en} {more.en}", f"{why.zh} {more.zh}")


@calc(
    "sleep_gpu_util",
    msg("calc.sleep.gpu_util.title"),
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
    if total is None:
        why = said("calc.sleep.gpu_util_share", cur=cur, basis=basis, step=STEP)
        return Computed(f"{new:.2f}", _with_freed(facts, why), ("gpu_memory_utilization",))
    why = said("calc.sleep.gpu_util", cur=cur, basis=basis, step=STEP, total=total[0], total_from=total[1],
               moved=STEP * total[0])
    return explain(f"{new:.2f}", _with_freed(facts, why), ("gpu_memory_utilization", total[1]))


@calc(
    "sleep_kv_cache_bytes",
    msg("calc.sleep.kv_cache_bytes.title"),
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
        how = said("calc.sleep.kv_step", kv=kv, step=STEP, total=total[0], new=new_gib)
    else:
        how = said("calc.sleep.kv_half", kv=kv, step=STEP, total=total[0], stepped=stepped, new=new_gib)
    return explain(
        new,
        said("calc.sleep.kv_cache_bytes", kv=kv, source=_src(facts, "kv_cache_gib"), how=how,
             round_mib=ROUND_BYTES >> 20, bytes=new, gib=new / GIB),
        names,
    )
