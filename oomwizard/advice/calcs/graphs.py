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
from ...i18n import Text, msg
from ...text.units import GIB, MIB
from ...text.units import gib as _gib
from ...versions import Version
from ..numbers import Computed, calc, ceil2, explain, floor2, num, origin, said, src
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
    found: list[tuple[int, Text, tuple[str, ...]]] = []
    actual = num(facts, "cudagraph_actual_gib")
    if actual and actual > 0:
        b = int(actual * GIB)
        basis = origin(facts, "cudagraph_actual_gib")
        found.append((b, said("calc.graphs.took", need=_gib(b), source=basis), ("cudagraph_actual_gib",)))
    pools = num(facts, "oom_private_pools_bytes")
    if pools and pools > 0:
        asked = num(facts, "oom_requested_bytes") or 0
        b = int(pools + asked)
        basis = origin(facts, "oom_private_pools_bytes")
        found.append((b, said("calc.graphs.pools", pools=_gib(pools), asked=_gib(asked), source=basis),
                      ("oom_private_pools_bytes", "oom_requested_bytes")))
    estimate = num(facts, "cudagraph_estimate_gib")
    if estimate and estimate > 0:
        b = int(estimate * GIB)
        basis = origin(facts, "cudagraph_estimate_gib")
        found.append((b, said("calc.graphs.estimated", need=_gib(b), source=basis), ("cudagraph_estimate_gib",)))
    if not found:
        return None
    best = max(found, key=lambda x: x[0])
    sep = msg("calc.clause_separator")
    measured = Text(*(sep(lang).join(x[1](lang) for x in found) for lang in ("en", "zh")))
    names = tuple(n for x in found for n in x[2])
    return best[0], said("calc.graphs.largest", measured=measured, need=_gib(best[0])), names


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
    return b, said("calc.graphs.reserved", estimate=_gib(b), source=f.source)


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
    why = said("calc.graphs.shortfall", measured=m_why, reserved=r_why, need=_gib(m_b), kept=_gib(r_b),
               missing=_gib(extra))
    return extra, why, (*m_names, "cudagraph_estimate_gib")


# --- CUDA graph memory ----------------------------------------------------------------------


@calc(
    "cudagraph_gpu_util",
    msg("calc.graphs.gpu_util.title"),
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
        fields = {"util": util_why, "step": FALLBACK_UTIL_STEP, "new": new}
        why = (said("calc.graphs.gpu_util_step_reserved", reserved=reserved[1], **fields) if reserved
               else said("calc.graphs.gpu_util_step", **fields))
        return explain(f"{new:.2f}", why, util_names)
    need_b, need_why, need_names = need
    total_b, total_name = total
    drop = ceil2((need_b + GRAPH_MARGIN_BYTES) / total_b)
    new = floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    basis = src(facts, total_name)
    return explain(
        f"{new:.2f}",
        said("calc.graphs.gpu_util", need_why=need_why, need=_gib(need_b), margin=_gib(GRAPH_MARGIN_BYTES),
             total=_gib(total_b), source=basis, drop=drop, util=util_why, new=new),
        util_names + need_names + (total_name,),
    )


@calc(
    "cudagraph_kv_cache_bytes",
    msg("calc.graphs.kv_cache_bytes.title"),
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
        said("calc.graphs.kv_cache_bytes", kv=_gib(kv_b), source=basis, need_why=need_why, need=_gib(need_b),
             margin=_gib(GRAPH_MARGIN_BYTES), bytes=new, gib=_gib(new)),
        ("kv_cache_gib", *need_names),
    )
