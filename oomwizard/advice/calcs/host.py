"""Numbers for host memory: V0's CPU swap space, KV offloading, and machines whose GPU memory is host RAM.

Host RAM is read from the machine (``host_mem_total_bytes``, ``host_mem_available_bytes``). Where
the GPU and the host report the same pool (GB10, Jetson, GH200 in some modes), every GiB the KV
cache takes is a GiB the operating system loses, so the utilization leaves the system a reserve.
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import msg
from ...text.units import GIB
from ..numbers import Computed, calc, explain, floor2, num, said, src, total_gib
from .readings import current_util

SWAP_SHARE = 0.3
"""Share of host RAM offered as swap space: under the 40 % at which V0 warns and the 70 % it refuses."""

SWAP_WARN = 0.4
SWAP_REFUSE = 0.7

@calc(
    "swap_space_fit",
    msg("calc.host.swap_space.title"),
    "<GIB>",
)
def swap_space_fit(facts: FactSet) -> Computed | None:
    """V0 warns above 40% and refuses above 70% of host RAM for swap_space x GPUs per node."""
    host = num(facts, "host_mem_total_bytes")
    if not host:
        return None
    gpus = int(num(facts, "tp") or 1)
    gib = host / GIB
    val = math.floor(gib * SWAP_SHARE / gpus)
    return explain(
        val,
        said("calc.host.swap_space", host=gib, source=src(facts, "host_mem_total_bytes"), gpus=gpus, share=SWAP_SHARE,
             val=val, all=val * gpus, warn=SWAP_WARN, refuse=SWAP_REFUSE),
        ("host_mem_total_bytes", "tp"),
    )


@calc(
    "kv_offloading_fit",
    msg("calc.host.kv_offloading.title"),
    "<GIB>",
)
def kv_offloading_fit(facts: FactSet) -> Computed | None:
    avail = num(facts, "host_mem_available_bytes")
    if not avail:
        return None
    val = math.floor(avail / GIB * 0.5)
    if val < 1:
        return None
    return explain(
        val,
        said("calc.host.kv_offloading", avail=avail / GIB, source=src(facts, "host_mem_available_bytes"), val=val),
        ("host_mem_available_bytes",),
    )


UNIFIED_HOST_RESERVE_GIB = 16.0
"""Kept for the operating system when GPU memory is the host RAM (GB10, Jetson, GH200 in some modes)."""


@calc(
    "gpu_util_unified_memory",
    msg("calc.host.unified.title"),
    "<FRACTION>",
)
def gpu_util_unified_memory(facts: FactSet) -> Computed | None:
    """Only when GPU memory and host RAM are the same pool (their totals within 15%)."""
    total, host = total_gib(facts), num(facts, "host_mem_total_bytes")
    if total is None or not host:
        return None
    host_gib = host / GIB
    if abs(total[0] - host_gib) > 0.15 * host_gib:
        return None
    keep = max(UNIFIED_HOST_RESERVE_GIB, 0.15 * total[0])
    util = floor2((total[0] - keep) / total[0])
    cur, basis = current_util(facts)
    if util >= cur or util <= 0.05:
        return None
    names = (total[1], "host_mem_total_bytes")
    return explain(
        f"{util:.2f}",
        said("calc.host.unified", total=total[0], host=host_gib, source=src(facts, *names), keep=keep, util=util,
             cur=cur, basis=basis),
        names,
    )
