"""Numbers for the CUDA graph, custom all-reduce, workspace and speculative-decoding leaves.

CUDA graphs are captured after the KV cache has taken its share of ``--gpu-memory-utilization``,
so the graphs' memory pool must fit in what the budget left over. How much they need is read from
what the logs measured, best first: a capture that finished (``Graph capturing finished in S secs,
took G GiB`` / ``CUDA graph pool memory: A GiB (actual)``), the OOM message of the failed capture
(``… with P allocated in private pools (e.g., CUDA Graphs)`` plus the allocation that failed), and
the V1 runner's estimate (``Estimated CUDA graph memory: E GiB total``, 0.18.0+). Model runner V2
reports 0 there in 0.18.0-0.28.0, so a zero estimate is never used as a measurement.

Speculative decoding adds a verification batch of ``max_num_seqs x (num_speculative_tokens + 1)``
tokens whose logits the rejection sampler copies to float32 (vllm#48037 measured ~4 GiB for a
Qwen3-8B DFlash drafter with 7 tokens; vllm#38220 worked the same product for 200 requests x 6
positions x 131072 tokens); the start-up profile sized it for one draft token per request at most.

Each calculation returns the value to paste with a sentence showing the arithmetic and the facts
it used, or ``None`` when an input is missing (the command then keeps a visible placeholder).
"""

from __future__ import annotations

import json

from ... import safejson
from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB, MIB
from ...text.units import gib as _gib
from ...versions import Version
from ..commands import ServeCommand
from ..numbers import (
    Computed,
    calc,
    default_gpu_memory_utilization,
    default_max_num_seqs,
    pow2_floor,
)
from ..numbers import ceil2 as _ceil2
from ..numbers import floor2 as _floor2
from ..numbers import num as _num
from ..numbers import origin as _origin
from ..numbers import src as _src

GRAPH_MARGIN_BYTES = GIB // 2
"""Added to the graph memory we measured: the real capture runs next to a full KV cache and
allocates a little more than a capture next to a small one (vllm#57475 needed about 0.01 of a
24 GiB GPU more than the estimate)."""

FALLBACK_UTIL_STEP = 0.05
"""When no number in the logs tells how much the graphs need, lower the utilization by this much
and say so; the next start-up log then prints the measured figure."""

MIN_UTIL = 0.10
"""Below this the model itself no longer fits next to the graphs: other fixes must come first."""

DEFAULT_MAX_CAPTURE = 512
"""The V1 engine's automatic largest capture size: 512 up to 0.9.x, min(2 x max_num_seqs, 512) from
0.10.0 (vllm#20628); the V0 engine captures up to max_num_seqs instead."""

MAX_CAPTURE_FOLLOWS_SEQS = Version.parse("0.10.0")
"""First release whose default capture list follows max_num_seqs on the V1 engine (vllm#20628)."""

ESTIMATE_APPLIED_BY_DEFAULT = Version.parse("0.20.0")
"""From this release the V1 runner's CUDA graph estimate is kept out of the KV cache by default."""

MRV2_ESTIMATE_REAL = Version.parse("0.29.0")
"""Model runner V2 measures its graphs from this release (vllm#53306); before, it reported 0."""

SPEC_LOGITS_BYTES = 4
"""The rejection sampler's float32 copy of the expanded logits: 4 bytes per element."""

METHODS_WITHOUT_DRAFT_MODEL = ("ngram", "mtp", "deepseek_mtp", "suffix")
"""--speculative-config methods that need no separate ``model`` key."""


# --- reading facts ---------------------------------------------------------------------------


def total_bytes(facts: FactSet) -> tuple[int, str] | None:
    """Memory of one GPU: what vLLM read at start-up, then NVML, then the OOM message."""
    gib = _num(facts, "startup_total_gib")
    if gib:
        return int(gib * GIB), "startup_total_gib"
    for name in ("gpu_mem_total_bytes", "oom_total_bytes"):
        b = _num(facts, name)
        if b:
            return int(b), name
    return None


def current_util(facts: FactSet) -> tuple[float, Text, tuple[str, ...]]:
    """The utilization of the failing run: given on the command line, else vLLM's default."""
    util = _num(facts, "gpu_memory_utilization")
    if util:
        basis = _origin(facts, "gpu_memory_utilization")
        return util, Text(f"gpu_memory_utilization = {util} ({basis})", f"gpu_memory_utilization = {util}（{basis}）"), (
            "gpu_memory_utilization",
        )
    util, why = default_gpu_memory_utilization(facts)
    return util, Text(f"gpu_memory_utilization = {util} ({why})", f"gpu_memory_utilization = {util}（{why}）"), ("vllm_version",)


def graph_need_bytes(facts: FactSet) -> tuple[int, Text, tuple[str, ...]] | None:
    """The largest of the measurements of CUDA graph memory the logs give, with how it was read."""
    found: list[tuple[int, str, str, tuple[str, ...]]] = []
    actual = _num(facts, "cudagraph_actual_gib")
    if actual and actual > 0:
        b = int(actual * GIB)
        basis = _origin(facts, "cudagraph_actual_gib")
        found.append((b, f"a capture took {_gib(b)} ({basis})", f"一次捕获占用 {_gib(b)}（{basis}）", ("cudagraph_actual_gib",)))
    pools = _num(facts, "oom_private_pools_bytes")
    if pools and pools > 0:
        asked = _num(facts, "oom_requested_bytes") or 0
        b = int(pools + asked)
        basis = _origin(facts, "oom_private_pools_bytes")
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
    estimate = _num(facts, "cudagraph_estimate_gib")
    if estimate and estimate > 0:
        b = int(estimate * GIB)
        basis = _origin(facts, "cudagraph_estimate_gib")
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
    estimate = _num(facts, "cudagraph_estimate_gib")
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
    util, util_why, util_names = current_util(facts)
    total = total_bytes(facts)
    need = _shortfall(facts)
    if need is None or total is None:
        new = round(util - FALLBACK_UTIL_STEP, 2)
        if new <= MIN_UTIL:
            return None
        reserved = reserved_estimate_bytes(facts)
        already_en = f"; {reserved[1].en} and the capture still failed" if reserved else ""
        already_zh = f"；{reserved[1].zh}，而捕获仍然失败" if reserved else ""
        return Computed(
            f"{new:.2f}",
            Text(
                f"{util_why.en}{already_en}; no log line measured what the graphs need, so we lower it by {FALLBACK_UTIL_STEP} "
                f"to {new:.2f}; the next start-up prints the real figure ('Graph capturing finished … took X GiB').",
                f"{util_why.zh}{already_zh}；日志中没有测得 graph 所需显存的数字，因此先降低 {FALLBACK_UTIL_STEP} 到 {new:.2f}；"
                "下次启动会打印实际值（“Graph capturing finished … took X GiB”）。",
            ),
            util_names,
        )
    need_b, need_why, need_names = need
    total_b, total_name = total
    drop = _ceil2((need_b + GRAPH_MARGIN_BYTES) / total_b)
    new = _floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    basis = _src(facts, total_name)
    return Computed(
        f"{new:.2f}",
        Text(
            f"{need_why.en}. ({_gib(need_b)} + {_gib(GRAPH_MARGIN_BYTES)} margin) / {_gib(total_b)} per GPU ({basis}) = {drop:.2f}; "
            f"{util_why.en} - {drop:.2f} = {new:.2f}.",
            f"{need_why.zh}。({_gib(need_b)} + {_gib(GRAPH_MARGIN_BYTES)} 余量) / 单卡 {_gib(total_b)}（{basis}）= {drop:.2f}；"
            f"{util_why.zh} - {drop:.2f} = {new:.2f}。",
        ),
        util_names + need_names + (total_name,),
    )


@calc(
    "cudagraph_kv_cache_bytes",
    Text("A KV cache size that leaves room for the CUDA graphs", "为 CUDA graph 留出空间的 KV cache 大小"),
    "<BYTES>",
)
def _cudagraph_kv_cache_bytes(facts: FactSet) -> Computed | None:
    """The failing run's KV cache minus the missing graph memory and a margin, in whole MiB."""
    kv = _num(facts, "kv_cache_gib")
    need = _shortfall(facts)
    if not kv or need is None:
        return None
    need_b, need_why, need_names = need
    kv_b = int(kv * GIB)
    new = (kv_b - need_b - GRAPH_MARGIN_BYTES) // MIB * MIB
    if new < GIB:
        return None
    basis = _origin(facts, "kv_cache_gib")
    return Computed(
        str(new),
        Text(
            f"the failing run gave the KV cache {_gib(kv_b)} ({basis}); {need_why.en}; "
            f"{_gib(kv_b)} - {_gib(need_b)} - {_gib(GRAPH_MARGIN_BYTES)} margin = {new:,} bytes ({_gib(new)}).",
            f"失败的那次运行给 KV cache 分配了 {_gib(kv_b)}（{basis}）；{need_why.zh}；"
            f"{_gib(kv_b)} - {_gib(need_b)} - {_gib(GRAPH_MARGIN_BYTES)} 余量 = {new:,} 字节（{_gib(new)}）。",
        ),
        ("kv_cache_gib", *need_names),
    )


def _max_num_seqs(facts: FactSet) -> tuple[int, Text, tuple[str, ...]]:
    n = _num(facts, "max_num_seqs")
    if n:
        basis = _origin(facts, "max_num_seqs")
        return int(n), Text(f"max_num_seqs = {int(n)} ({basis})", f"max_num_seqs = {int(n)}（{basis}）"), ("max_num_seqs",)
    n_default, why = default_max_num_seqs(facts)
    return n_default, Text(f"max_num_seqs = {n_default} ({why})", f"max_num_seqs = {n_default}（{why}）"), ()


def _runs_v0(facts: FactSet) -> bool:
    """The V0 engine: said so, or a release before 0.8.0 without VLLM_USE_V1=1."""
    engine = facts.value("engine")
    v = Version.try_parse(facts.value("vllm_version"))
    return engine == "v0" or (engine != "v1" and v is not None and v < Version.parse("0.8.0"))


def capture_follows_max_num_seqs(facts: FactSet) -> bool:
    """Whether lowering max_num_seqs shortens the default capture list on this engine and release."""
    v = Version.try_parse(facts.value("vllm_version"))
    return _runs_v0(facts) or v is None or v >= MAX_CAPTURE_FOLLOWS_SEQS


def _round_up8(n: int) -> int:
    return max(8, -(-n // 8) * 8)


def capture_size_limit(facts: FactSet) -> tuple[int, int, Text, tuple[str, ...]]:
    """(current automatic largest capture size, half of it as a multiple of 8, the arithmetic).

    The V0 engine captures batch sizes up to max_num_seqs; the V1 engine up to 512 before 0.10.0 and
    up to min(2 x max_num_seqs, 512) from 0.10.0 (vllm#20628).
    """
    seqs, seqs_why, names = _max_num_seqs(facts)
    v = Version.try_parse(facts.value("vllm_version"))
    if _runs_v0(facts):
        current = _round_up8(seqs)
        rule_en = f"the V0 engine captures batch sizes up to max_num_seqs, {current} (rounded up to a multiple of 8)"
        rule_zh = f"V0 引擎捕获的批大小最大到 max_num_seqs，即 {current}（向上取 8 的倍数）"
    elif v is not None and v < MAX_CAPTURE_FOLLOWS_SEQS:
        current = DEFAULT_MAX_CAPTURE
        rule_en = f"the V1 engine of vLLM {v} captures batch sizes up to {current} whatever max_num_seqs is"
        rule_zh = f"vLLM {v} 的 V1 引擎无论 max_num_seqs 是多少都捕获到 {current}"
    else:
        current = min(2 * seqs, DEFAULT_MAX_CAPTURE)
        rule_en = f"vLLM captures batch sizes up to min(2 x {seqs}, {DEFAULT_MAX_CAPTURE}) = {current}"
        rule_zh = f"vLLM 捕获的批大小上限为 min(2 x {seqs}, {DEFAULT_MAX_CAPTURE}) = {current}"
    new = max(8, current // 2 // 8 * 8)
    return current, new, Text(
        f"{seqs_why.en}; {rule_en}; half of that (a multiple of 8) is {new}. If you set the sizes yourself, or run "
        "speculative decoding (which scales the default), halve the largest size in your log's compilation config instead.",
        f"{seqs_why.zh}；{rule_zh}；减半（取 8 的倍数）为 {new}。如果你自己设置过捕获大小，或启用了推测解码（它会放大默认值），"
        "请把日志中编译配置里的最大尺寸减半。",
    ), names


@calc(
    "cudagraph_max_capture_size",
    Text("Largest batch size to capture as a CUDA graph", "捕获为 CUDA graph 的最大批大小"),
    "<N>",
)
def _cudagraph_max_capture_size(facts: FactSet) -> Computed | None:
    _, new, why, names = capture_size_limit(facts)
    return Computed(str(new), why, names)


@calc(
    "cudagraph_capture_sizes_config",
    Text("Compilation config listing fewer CUDA graph sizes", "列出更少 CUDA graph 大小的编译配置"),
    "<JSON>",
)
def _cudagraph_capture_sizes_config(facts: FactSet) -> Computed | None:
    """The same pattern vLLM uses ([1, 2, 4] then steps of 8), up to half the current largest size."""
    _, new, why, names = capture_size_limit(facts)
    sizes = [1, 2, 4, *range(8, new + 1, 8)]
    value = json.dumps({"cudagraph_capture_sizes": sizes})
    return Computed(
        value,
        Text(why.en + f" Listed as [1, 2, 4, 8, 16, …, {new}] ({len(sizes)} graphs).", why.zh + f" 列为 [1, 2, 4, 8, 16, …, {new}]（共 {len(sizes)} 个 graph）。"),
        names,
    )


@calc(
    "cudagraph_max_num_seqs",
    Text("max_num_seqs halved, which also shortens the capture list", "减半的 max_num_seqs，同时缩短捕获列表"),
    "<N>",
)
def _cudagraph_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half the current max_num_seqs as a power of two; says whether this release's capture list follows it."""
    seqs, seqs_why, names = _max_num_seqs(facts)
    new = max(1, pow2_floor(seqs / 2))
    current, _, _, _ = capture_size_limit(facts)
    v = Version.try_parse(facts.value("vllm_version"))
    if capture_follows_max_num_seqs(facts):
        tail_en = f"the capture list, now up to {current}, shrinks with it."
        tail_zh = f"捕获列表（目前最大 {current}）随之缩短。"
    else:
        tail_en = (
            f"on the V1 engine of vLLM {v} the capture list stays at {current} whatever max_num_seqs is, so this only "
            "lowers concurrency: use the capture-size fix instead."
        )
        tail_zh = f"vLLM {v} 的 V1 引擎无论 max_num_seqs 多少都捕获到 {current}，因此这一步只会降低并发：请改用缩小捕获尺寸的修复。"
    return Computed(
        str(new),
        Text(f"{seqs_why.en}; half of it, as a power of two, is {new}; {tail_en}", f"{seqs_why.zh}；减半并取 2 的幂为 {new}；{tail_zh}"),
        names,
    )


# --- speculative decoding ----------------------------------------------------------------------


def _spec_tokens(facts: FactSet) -> tuple[int, str] | None:
    k = _num(facts, "num_speculative_tokens")
    if k and k >= 1:
        return int(k), _origin(facts, "num_speculative_tokens")
    cfg = speculative_config_from_command(facts)
    if cfg is not None:
        raw = cfg.get("num_speculative_tokens")
        if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
            return raw, "--speculative-config in serve_command"
    return None


def fewer_spec_tokens(k: int) -> int:
    """Half as many draft tokens, at least one: the later positions are accepted least often."""
    return max(1, k // 2)


@calc(
    "spec_tokens_fewer",
    Text("Fewer speculative tokens per step", "更少的每步推测 token 数"),
    "<K>",
)
def _spec_tokens_fewer(facts: FactSet) -> Computed | None:
    found = _spec_tokens(facts)
    if found is None:
        return None
    k, basis = found
    new = fewer_spec_tokens(k)
    return Computed(
        str(new),
        Text(
            f"num_speculative_tokens = {k} ({basis}); each step verifies k + 1 tokens per request, so {k} -> {new} "
            f"shrinks that batch from {k + 1} to {new + 1} tokens per request.",
            f"num_speculative_tokens = {k}（{basis}）；每步每个请求要验证 k + 1 个 token，{k} -> {new} "
            f"使其从每请求 {k + 1} 个降到 {new + 1} 个。",
        ),
        ("num_speculative_tokens",),
    )


def speculative_config_from_command(facts: FactSet) -> dict[str, object] | None:
    """The JSON object given to --speculative-config / -sc on the recorded command line, if any."""
    cmd = facts.value("serve_command")
    if not cmd:
        return None
    value = ServeCommand.parse(str(cmd)).value("--speculative-config")
    if value is None:
        return None
    try:
        parsed = safejson.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


@calc(
    "spec_config_fewer_tokens",
    Text("--speculative-config with fewer speculative tokens", "推测 token 更少的 --speculative-config"),
    "<SPECULATIVE_CONFIG_JSON>",
)
def _spec_config_fewer_tokens(facts: FactSet) -> Computed | None:
    """Your own --speculative-config with only num_speculative_tokens changed; built from facts otherwise."""
    found = _spec_tokens(facts)
    if found is None:
        return None
    k, basis = found
    new = fewer_spec_tokens(k)
    cfg = speculative_config_from_command(facts)
    if cfg is not None:
        out = dict(cfg)
        out["num_speculative_tokens"] = new
        return Computed(
            json.dumps(out),
            Text(
                f"your --speculative-config from the recorded command line ({_origin(facts, 'serve_command')}) with "
                f"num_speculative_tokens {k} -> {new}; every other key kept.",
                f"取记录到的命令行中的 --speculative-config（{_origin(facts, 'serve_command')}），"
                f"只把 num_speculative_tokens 从 {k} 改为 {new}，其余键保持不变。",
            ),
            ("serve_command",),
        )
    method = facts.value("speculative_method")
    if not method:
        return None
    built: dict[str, object] = {"method": str(method)}
    if str(method) not in METHODS_WITHOUT_DRAFT_MODEL:
        built["model"] = "<DRAFT_MODEL>"
    built["num_speculative_tokens"] = new
    return Computed(
        json.dumps(built),
        Text(
            f"speculative_method = {method} ({_origin(facts, 'speculative_method')}), num_speculative_tokens {k} -> {new} ({basis}); "
            "the command line was not recorded, so add back any other keys you pass (draft model, tensor parallel size).",
            f"speculative_method = {method}（{_origin(facts, 'speculative_method')}），num_speculative_tokens {k} -> {new}（{basis}）；"
            "没有记录到启动命令，请把你原来传的其他键（draft 模型、张量并行数）补回去。",
        ),
        ("speculative_method", "num_speculative_tokens"),
    )


def spec_logits_bytes(seqs: int, k: int, vocab: int) -> int:
    """One float32 copy of the logits of a full verification batch: seqs x (k + 1) x vocab x 4."""
    return seqs * (k + 1) * vocab * SPEC_LOGITS_BYTES


@calc(
    "spec_gpu_util",
    Text(
        "gpu_memory_utilization that leaves room for the rejection sampler",
        "为 rejection sampler 留出空间的 gpu_memory_utilization",
    ),
    "<FRACTION>",
)
def _spec_gpu_util(facts: FactSet) -> Computed | None:
    """current - (max_num_seqs x (k + 1) x vocab x 4 bytes) / total, rounded up to 0.01.

    The V1 profile's dummy sampler run already verifies one draft token per request
    (``vllm/v1/worker/gpu_model_runner.py@0.10.2``, ``[[0] for _ in range(num_reqs)]``), so about
    (k - 1) rows per request are really missing; the full copy is kept as a margin and said so.
    """
    util, util_why, util_names = current_util(facts)
    found = _spec_tokens(facts)
    vocab = _num(facts, "vocab_size")
    total = total_bytes(facts)
    if found is None or not vocab or total is None:
        new = round(util - FALLBACK_UTIL_STEP, 2)
        if new <= MIN_UTIL:
            return None
        return Computed(
            f"{new:.2f}",
            Text(
                f"{util_why.en}; without the speculative token count, the vocabulary size and the GPU size we cannot size "
                f"the sampler's copy, so we lower it by {FALLBACK_UTIL_STEP} to {new:.2f}.",
                f"{util_why.zh}；不知道推测 token 数、词表大小或显存大小，无法计算 sampler 副本的大小，"
                f"因此先降低 {FALLBACK_UTIL_STEP} 到 {new:.2f}。",
            ),
            util_names,
        )
    k, k_basis = found
    seqs, seqs_why, seqs_names = _max_num_seqs(facts)
    total_b, total_name = total
    need = spec_logits_bytes(seqs, k, int(vocab))
    drop = _ceil2(need / total_b)
    new = _floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    vocab_basis = _origin(facts, "vocab_size")
    return Computed(
        f"{new:.2f}",
        Text(
            f"{seqs_why.en}; num_speculative_tokens = {k} ({k_basis}); vocab_size = {int(vocab):,} ({vocab_basis}). "
            f"One float32 copy of the verification logits is {seqs} x ({k} + 1) x {int(vocab):,} x 4 bytes = {_gib(need)}; "
            f"/ {_gib(total_b)} = {drop:.2f}; {util_why.en} - {drop:.2f} = {new:.2f}. The profile already sampled about two rows "
            f"per request (one draft token plus the bonus), so only ({k} - 1) rows are uncounted: the rest is a margin.",
            f"{seqs_why.zh}；num_speculative_tokens = {k}（{k_basis}）；vocab_size = {int(vocab):,}（{vocab_basis}）。"
            f"验证批 logits 的一份 float32 副本为 {seqs} x ({k} + 1) x {int(vocab):,} x 4 字节 = {_gib(need)}；"
            f"/ {_gib(total_b)} = {drop:.2f}；{util_why.zh} - {drop:.2f} = {new:.2f}。内存分析已为每个请求采样约两行"
            f"（一个 draft token 加 bonus token），真正未计入的只有 ({k} - 1) 行：其余部分是余量。",
        ),
        util_names + seqs_names + ("num_speculative_tokens", "vocab_size", total_name),
    )


@calc(
    "spec_max_num_seqs",
    Text("max_num_seqs halved for speculative decoding", "为推测解码减半的 max_num_seqs"),
    "<N>",
)
def _spec_max_num_seqs(facts: FactSet) -> Computed | None:
    seqs, seqs_why, names = _max_num_seqs(facts)
    new = max(1, pow2_floor(seqs / 2))
    found = _spec_tokens(facts)
    if found is None:
        tail_en = "the verification batch (requests x (k + 1) tokens) halves with it."
        tail_zh = "验证批（请求数 x (k + 1) 个 token）随之减半。"
    else:
        k = found[0]
        tail_en = f"the verification batch goes from {seqs} x {k + 1} = {seqs * (k + 1):,} to {new} x {k + 1} = {new * (k + 1):,} tokens."
        tail_zh = f"验证批从 {seqs} x {k + 1} = {seqs * (k + 1):,} 降到 {new} x {k + 1} = {new * (k + 1):,} 个 token。"
    return Computed(
        str(new),
        Text(f"{seqs_why.en}; half of it, as a power of two, is {new}; {tail_en}", f"{seqs_why.zh}；减半并取 2 的幂为 {new}；{tail_zh}"),
        names + (("num_speculative_tokens",) if found else ()),
    )

