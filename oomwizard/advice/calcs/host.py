"""Numbers for host memory: V0's CPU swap space, KV offloading, and machines whose GPU memory is host RAM.

Host RAM is read from the machine (``host_mem_total_bytes``, ``host_mem_available_bytes``). Where
the GPU and the host report the same pool (GB10, Jetson, GH200 in some modes), every GiB the KV
cache takes is a GiB the operating system loses, so the utilization leaves the system a reserve.
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ..numbers import Computed, calc, explain, floor2, num, src, total_gib
from .readings import current_util


@calc(
    "swap_space_fit",
    Text("CPU swap space per GPU that V0's start-up check accepts", "V0 启动检查接受的每卡 CPU swap space"),
    "<GIB>",
)
def swap_space_fit(facts: FactSet) -> Computed | None:
    """V0 warns above 40% and refuses above 70% of host RAM for swap_space x GPUs per node."""
    host = num(facts, "host_mem_total_bytes")
    if not host:
        return None
    gpus = int(num(facts, "tp") or 1)
    gib = host / GIB
    val = math.floor(gib * 0.3 / gpus)
    return explain(
        val,
        f"host RAM is {gib:.0f} GiB ({src(facts, 'host_mem_total_bytes')}) for {gpus} GPU worker(s) (TP); "
        f"30% of it split over them is {val} GiB each ({val} x {gpus} = {val * gpus} GiB in all), under the 40% "
        "warning and the 70% refusal that vLLM applies to swap_space x TP.",
        f"主机内存 {gib:.0f} GiB（{src(facts, 'host_mem_total_bytes')}），{gpus} 个 GPU worker（TP）；"
        f"取其 30% 平分后每个 worker {val} GiB（{val} x {gpus} = 共 {val * gpus} GiB），低于 vLLM 对 swap_space x TP "
        "设定的 40% 警告线和 70% 拒绝线。",
        ("host_mem_total_bytes", "tp"),
    )


@calc(
    "kv_offloading_fit",
    Text("Host RAM for KV offloading that leaves the machine room", "给 KV offloading 且不挤占主机的内存量"),
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
        f"{avail / GIB:.0f} GiB of host RAM is available ({src(facts, 'host_mem_available_bytes')}); half of it is {val} GiB.",
        f"主机可用内存 {avail / GIB:.0f} GiB（{src(facts, 'host_mem_available_bytes')}）；取一半为 {val} GiB。",
        ("host_mem_available_bytes",),
    )


UNIFIED_HOST_RESERVE_GIB = 16.0
"""Kept for the operating system when GPU memory is the host RAM (GB10, Jetson, GH200 in some modes)."""


@calc(
    "gpu_util_unified_memory",
    Text("Utilization that leaves the host its RAM on unified-memory machines", "统一内存机器上为主机留出内存的利用率"),
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
        f"the GPU reports {total[0]:.2f} GiB and the host {host_gib:.2f} GiB ({src(facts, *names)}): one shared pool. "
        f"Leaving {keep:.1f} GiB to the system: ({total[0]:.2f} - {keep:.1f}) / {total[0]:.2f} = {util:.2f} (now {cur}, {basis}).",
        f"GPU 报告 {total[0]:.2f} GiB，主机 {host_gib:.2f} GiB（{src(facts, *names)}）：两者是同一块内存。"
        f"为系统保留 {keep:.1f} GiB：({total[0]:.2f} - {keep:.1f}) / {total[0]:.2f} = {util:.2f}（当前为 {cur}，{basis}）。",
        names,
    )
