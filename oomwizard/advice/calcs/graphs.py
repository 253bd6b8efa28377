"""Numbers for the CUDA graph memory leaves: how much the graphs need, and what to give up for them.

CUDA graphs are captured after the KV cache has taken its share of ``--gpu-memory-utilization``,
so the graphs' memory pool must fit in what the budget left over. How much they need is read from
what the logs measured, best first: a capture that finished (``Graph capturing finished in S secs,
took G GiB`` / ``CUDA graph pool memory: A GiB (actual)``), the OOM message of the failed capture
(``… with P allocated in private pools (e.g., CUDA Graphs)`` plus the allocation that failed), and
the V1 runner's estimate (``Estimated CUDA graph memory: E GiB total``, 0.18.0+). Model runner V2
reports 0 there in 0.18.0-0.28.0, so a zero estimate is never used as a measurement. Fewer graphs
(capture sizes) are in ``capture.py``.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB, MIB
from ...text.units import gib as _gib
from ...versions import Version
from ..numbers import Computed, calc, ceil2, explain, floor2, num, origin, src
from .readings import FALLBACK_UTIL_STEP, MIN_UTIL, total_bytes, util_clause

GRAPH_MARGIN_BYTES = GIB // 2
"""Added to the graph memory we measured: the real capture runs next to a full KV cache and
allocates a little more than a capture next to a small one (vllm#57475 needed about 0.01 of a
24 GiB GPU more than the estimate)."""

ESTIMATE_APPLIED_BY_DEFAULT = Version.parse("0.20.0")
"""From this release the V1 runner's CUDA graph estimate is kept out of the KV cache by default."""

MRV2_ESTIMATE_REAL = Version.parse("0.29.0")
"""Model runner V2 measures its graphs from this release (vllm#53306); before, it reported 0."""


def graph_need_bytes(facts: FactSet) -> tuple[int, Text, tuple[str, ...]] | None:
    """The largest of the measurements of CUDA graph memory the logs give, with how it was read."""
    found: list[tuple[int, str, str, tuple[str, ...]]] = []
    actual = num(facts, "cudagraph_actual_gib")
    if actual and actual > 0:
        b = int(actual * GIB)
        basis = origin(facts, "cudagraph_actual_gib")
        found.append((b, f"a capture took {_gib(b)} ({basis})", f"一次捕获占用 {_gib(b)}（{basis}）", ("cudagraph_actual_gib",)))
    pools = num(facts, "oom_private_pools_bytes")
    if pools and pools > 0:
        asked = num(facts, "oom_requested_bytes") or 0
        b = int(pools + asked)
        basis = origin(facts, "oom_private_pools_bytes")
        found.append(
            (
                b,
                f"the failed capture held {_gib(pools)} in private pools and asked for {_gib(asked)} more ({basis}; "
                "a lower bound, since the graphs not yet captured need a little more)",
                f"失败的捕获已在私有内存池中持有 {_gib(pools)}，又申请 {_gib(asked)}（{basis}；"
                "这是下限，尚未捕获的 graph 还需要少量显存）",
                ("oom_private_pools_bytes", "oom_requested_bytes"),
            )
        )
    estimate = num(facts, "cudagraph_estimate_gib")
    if estimate and estimate > 0:
        b = int(estimate * GIB)
        basis = origin(facts, "cudagraph_estimate_gib")
        found.append((b, f"vLLM estimated {_gib(b)} ({basis})", f"vLLM 估算为 {_gib(b)}（{basis}）", ("cudagraph_estimate_gib",)))
    if not found:
        return None
    best = max(found, key=lambda x: x[0])
    en = "; ".join(x[1] for x in found)
    zh = "；".join(x[2] for x in found)
    names = tuple(n for x in found for n in x[3])
    return best[0], Text(f"{en}; we take the largest, {_gib(best[0])}", f"{zh}；取其中最大者 {_gib(best[0])}"), names


def reserved_estimate_bytes(facts: FactSet) -> tuple[int, Text] | None:
    """The graph estimate the failing run already kept out of its KV cache, when we can tell.

    Only the V1 runner's estimate counts (model runner V2 reported 0 until 0.29.0), and only where
    vLLM subtracts it by default (0.20.0+). The "Estimated CUDA graph memory" line comes from the V1
    runner; a figure typed in from another run, or a runner we cannot name on 0.22.0-0.28.0 (where
    V2 may have been the default), is not taken as reserved: counting it twice only costs KV cache,
    counting it wrongly as reserved would leave the graphs short again.
    """
    estimate = num(facts, "cudagraph_estimate_gib")
    v = Version.try_parse(facts.value("vllm_version"))
    if not estimate or estimate <= 0 or v is None or v < ESTIMATE_APPLIED_BY_DEFAULT:
        return None
    f = facts.get("cudagraph_estimate_gib")
    if f is None or f.kind != "log":
        return None
    runner = facts.value("model_runner")
    if runner is None and facts.value("env_vllm_use_v2_model_runner") == "1":
        runner = "v2"
    if runner is None and v < Version.parse("0.22.0"):
        runner = "v1"
    if v < MRV2_ESTIMATE_REAL and runner != "v1":
        return None
    b = int(estimate * GIB)
    return b, Text(
        f"vLLM already kept its estimate of {_gib(b)} out of the KV cache ({f.source}; the default from 0.20.0 — "
        "if you set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0, use the other fix first)",
        f"vLLM 已把其估算的 {_gib(b)} 留在 KV cache 之外（{f.source}；0.20.0 起的默认行为——"
        "若你设置了 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0，请先用另一项修复）",
    )


def measured_need_bytes(facts: FactSet) -> tuple[int, Text, tuple[str, ...]] | None:
    """What the graphs were seen to need: a finished capture, or the failed capture's pools plus its request."""
    names = ("cudagraph_actual_gib", "oom_private_pools_bytes", "oom_requested_bytes")
    return graph_need_bytes(FactSet.of(f for f in (facts.get(n) for n in names) if f is not None))


def _shortfall(facts: FactSet) -> tuple[int, Text, tuple[str, ...]] | None:
    """Graph memory the KV cache must give up: all of it, or only what exceeded an estimate already kept out."""
    reserved = reserved_estimate_bytes(facts)
    if reserved is None:
        return graph_need_bytes(facts)
    measured = measured_need_bytes(facts)
    if measured is None:
        return None
    r_b, r_why = reserved
    m_b, m_why, m_names = measured
    extra = max(0, m_b - r_b)
    return extra, Text(
        f"{m_why.en}; {r_why.en}; so {_gib(m_b)} - {_gib(r_b)} = {_gib(extra)} is missing",
        f"{m_why.zh}；{r_why.zh}；因此缺少 {_gib(m_b)} - {_gib(r_b)} = {_gib(extra)}",
    ), (*m_names, "cudagraph_estimate_gib")


# --- CUDA graph memory ----------------------------------------------------------------------


@calc(
    "cudagraph_gpu_util",
    Text("gpu_memory_utilization that leaves room for the CUDA graphs", "为 CUDA graph 留出空间的 gpu_memory_utilization"),
    "<FRACTION>",
)
def _cudagraph_gpu_util(facts: FactSet) -> Computed | None:
    """current - (missing graph memory + margin) / total, rounded; a fixed step when nothing was measured."""
    util, util_why, util_names = util_clause(facts)
    total = total_bytes(facts)
    need = _shortfall(facts)
    if need is None or total is None:
        new = round(util - FALLBACK_UTIL_STEP, 2)
        if new <= MIN_UTIL:
            return None
        reserved = reserved_estimate_bytes(facts)
        already_en = f"; {reserved[1].en} and the capture still failed" if reserved else ""
        already_zh = f"；{reserved[1].zh}，而捕获仍然失败" if reserved else ""
        return explain(
            f"{new:.2f}",
            f"{util_why.en}{already_en}; no log line measured what the graphs need, so we lower it by {FALLBACK_UTIL_STEP} "
            f"to {new:.2f}; the next start-up prints the real figure ('Graph capturing finished … took X GiB').",
            f"{util_why.zh}{already_zh}；日志中没有测得 graph 所需显存的数字，因此先降低 {FALLBACK_UTIL_STEP} 到 {new:.2f}；"
            "下次启动会打印实际值（“Graph capturing finished … took X GiB”）。",
            util_names,
        )
    need_b, need_why, need_names = need
    total_b, total_name = total
    drop = ceil2((need_b + GRAPH_MARGIN_BYTES) / total_b)
    new = floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    basis = src(facts, total_name)
    return explain(
        f"{new:.2f}",
        f"{need_why.en}. ({_gib(need_b)} + {_gib(GRAPH_MARGIN_BYTES)} margin) / {_gib(total_b)} per GPU ({basis}) = {drop:.2f}; "
        f"{util_why.en} - {drop:.2f} = {new:.2f}.",
        f"{need_why.zh}。({_gib(need_b)} + {_gib(GRAPH_MARGIN_BYTES)} 余量) / 单卡 {_gib(total_b)}（{basis}）= {drop:.2f}；"
        f"{util_why.zh} - {drop:.2f} = {new:.2f}。",
        util_names + need_names + (total_name,),
    )


@calc(
    "cudagraph_kv_cache_bytes",
    Text("A KV cache size that leaves room for the CUDA graphs", "为 CUDA graph 留出空间的 KV cache 大小"),
    "<BYTES>",
)
def _cudagraph_kv_cache_bytes(facts: FactSet) -> Computed | None:
    """The failing run's KV cache minus the missing graph memory and a margin, in whole MiB."""
    kv = num(facts, "kv_cache_gib")
    need = _shortfall(facts)
    if not kv or need is None:
        return None
    need_b, need_why, need_names = need
    kv_b = int(kv * GIB)
    new = (kv_b - need_b - GRAPH_MARGIN_BYTES) // MIB * MIB
    if new < GIB:
        return None
    basis = origin(facts, "kv_cache_gib")
    return explain(
        new,
        f"the failing run gave the KV cache {_gib(kv_b)} ({basis}); {need_why.en}; "
        f"{_gib(kv_b)} - {_gib(need_b)} - {_gib(GRAPH_MARGIN_BYTES)} margin = {new:,} bytes ({_gib(new)}).",
        f"失败的那次运行给 KV cache 分配了 {_gib(kv_b)}（{basis}）；{need_why.zh}；"
        f"{_gib(kv_b)} - {_gib(need_b)} - {_gib(GRAPH_MARGIN_BYTES)} 余量 = {new:,} 字节（{_gib(new)}）。",
        ("kv_cache_gib", *need_names),
    )
