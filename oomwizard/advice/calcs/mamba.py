"""Numbers for hybrid (Mamba / linear-attention) models whose KV pool holds fewer blocks than sequences.

With FULL CUDA graphs vLLM (0.20.0+, ``config/compilation.py``) requires one Mamba cache block per
decode sequence and prints both counts when it refuses to start. The block count is the KV budget
divided by a fixed page size (``v1/core/kv_cache_utils.py``: ``available // page_size // layers``),
so the memory per block is at most ``Available KV cache memory / blocks``: scaling the budget by
``max_num_seqs / blocks`` is enough for the blocks to cover every sequence.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import msg
from ..numbers import Computed, calc, explain, said, total_gib
from ..numbers import as_int as _int
from ..numbers import num as _num
from ..numbers import src as _src
from .readings import current_util, raised_util

ROUNDING_GIB = 0.05
"""The log rounds "Available KV cache memory" to 0.01 GiB; a little more keeps the new budget above the bar."""


@calc(
    "mamba_max_num_seqs",
    msg("calc.mamba.max_num_seqs.title"),
    "<MAX_NUM_SEQS>",
)
def mamba_max_num_seqs(facts: FactSet) -> Computed | None:
    """The block count vLLM printed: the check passes when max_num_seqs is not above it."""
    blocks = _int(facts, "mamba_cache_blocks")
    if not blocks or blocks < 1:
        return None
    seqs = _int(facts, "max_num_seqs")
    source = _src(facts, "mamba_cache_blocks")
    why = (said("calc.mamba.max_num_seqs_now", blocks=blocks, source=source, seqs=seqs) if seqs
           else said("calc.mamba.max_num_seqs", blocks=blocks, source=source))
    return explain(blocks, why, ("mamba_cache_blocks", "max_num_seqs"))


@calc(
    "gpu_util_for_mamba_blocks",
    msg("calc.mamba.gpu_util.title"),
    "<FRACTION>",
)
def gpu_util_for_mamba_blocks(facts: FactSet) -> Computed | None:
    """current + kv x (seqs / blocks - 1) / total, if that still passes the start-up check."""
    seqs, blocks = _int(facts, "max_num_seqs"), _int(facts, "mamba_cache_blocks")
    kv, total = _num(facts, "kv_cache_gib"), total_gib(facts)
    if not seqs or not blocks or blocks < 1 or not kv or kv <= 0 or total is None or seqs <= blocks:
        return None
    cur, basis = current_util(facts)
    missing = kv * (seqs / blocks - 1)
    raised = raised_util(facts, cur, missing + ROUNDING_GIB, total[0])
    if raised is None:
        return None
    new, cap_why = raised
    names = ("max_num_seqs", "mamba_cache_blocks", "kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        said("calc.mamba.gpu_util", blocks=blocks, kv=kv, seqs=seqs, source=_src(facts, *names), missing=missing,
             cur=cur, basis=basis, rounding=ROUNDING_GIB, total=total[0], new=new, cap=cap_why),
        names,
    )
