"""Numbers for hybrid (Mamba / linear-attention) models whose KV pool holds fewer blocks than sequences.

With FULL CUDA graphs vLLM (0.20.0+, ``config/compilation.py``) requires one Mamba cache block per
decode sequence and prints both counts when it refuses to start. The block count is the KV budget
divided by a fixed page size (``v1/core/kv_cache_utils.py``: ``available // page_size // layers``),
so the memory per block is at most ``Available KV cache memory / blocks``: scaling the budget by
``max_num_seqs / blocks`` is enough for the blocks to cover every sequence.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ..numbers import Computed, calc, explain, total_gib
from ..numbers import as_int as _int
from ..numbers import num as _num
from ..numbers import src as _src
from .readings import current_util, raised_util

ROUNDING_GIB = 0.05
"""The log rounds "Available KV cache memory" to 0.01 GiB; a little more keeps the new budget above the bar."""


@calc(
    "mamba_max_num_seqs",
    Text("The most sequences the Mamba cache blocks can hold", "Mamba cache 块能容纳的最多序列数"),
    "<MAX_NUM_SEQS>",
)
def mamba_max_num_seqs(facts: FactSet) -> Computed | None:
    """The block count vLLM printed: the check passes when max_num_seqs is not above it."""
    blocks = _int(facts, "mamba_cache_blocks")
    if not blocks or blocks < 1:
        return None
    seqs = _int(facts, "max_num_seqs")
    now_en = f"; max_num_seqs is {seqs} now" if seqs else ""
    now_zh = f"；当前 max_num_seqs 为 {seqs}" if seqs else ""
    return explain(
        blocks,
        f"the KV budget holds {blocks} Mamba cache blocks ({_src(facts, 'mamba_cache_blocks')}){now_en}; "
        f"vLLM starts when max_num_seqs <= {blocks}.",
        f"KV 预算可容纳 {blocks} 个 Mamba cache 块（{_src(facts, 'mamba_cache_blocks')}）{now_zh}；"
        f"max_num_seqs <= {blocks} 时 vLLM 即可启动。",
        ("mamba_cache_blocks", "max_num_seqs"),
    )


@calc(
    "gpu_util_for_mamba_blocks",
    Text("The utilization that gives every sequence a Mamba cache block", "让每个序列都有一个 Mamba cache 块的利用率"),
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
    new, cap_en, cap_zh = raised
    names = ("max_num_seqs", "mamba_cache_blocks", "kv_cache_gib", total[1])
    return explain(
        f"{new:.2f}",
        f"{blocks} blocks in {kv:.2f} GiB, {seqs} wanted ({_src(facts, *names)}): the KV cache lacks "
        f"{kv:.2f} x ({seqs}/{blocks} - 1) = {missing:.2f} GiB; utilization is {cur} ({basis}); "
        f"{cur} + ({missing:.2f} + {ROUNDING_GIB}) / {total[0]:.2f} = {new:.2f}; {cap_en}.",
        f"{kv:.2f} GiB 中有 {blocks} 个块，需要 {seqs} 个（{_src(facts, *names)}）：KV cache 还差 "
        f"{kv:.2f} x ({seqs}/{blocks} - 1) = {missing:.2f} GiB；当前利用率 {cur}（{basis}）；"
        f"{cur} + ({missing:.2f} + {ROUNDING_GIB}) / {total[0]:.2f} = {new:.2f}；{cap_zh}。",
        names,
    )
