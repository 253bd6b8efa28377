"""Numbers for the sampler warm-up leaves: how many dummy requests fit, how much to give back.

The V1 model runner warms the sampler up with ``min(max_num_seqs, max_num_batched_tokens)``
dummy requests after the KV cache and the CUDA graphs took their memory, with top-p 0.9 and top-k
just below the vocabulary size; before 0.17.0 the PyTorch path sorts every row of the logits.
Its ``profile_run()`` samples the same rows before the KV cache is sized, so lowering
max_num_seqs there also grows the KV cache (``sampler_halved_max_num_seqs``); the fit from the
free memory (``sampler_max_num_seqs``) is for warm-ups the profile did not cover (model runner
V2 before 0.33.0) and for OOMs inside the profile itself. Its peak is
proportional to requests x vocabulary: on our H200 (torch 2.11, ``benchmarks/sampler_sort_memory.py``)
the sort-based top-k/top-p step took 36 bytes per (request, token) element beyond the model's
bf16 logits, for every vocabulary from 128K to 262K and 256 requests or more (48 at 64 requests,
where fixed sort scratch weighs more). We count 38 bytes: those 36 plus the 2-byte logits
themselves. Every rank of a tensor-parallel group gathers the full-vocabulary logits, so TP does
not divide this memory.

Each calculation returns the value to paste with a sentence showing the arithmetic and the facts
it used, or ``None`` when an input is missing (the command then keeps a visible placeholder).
"""

from __future__ import annotations

import math

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB
from ...text.units import gib as _gib
from ...text.units import mib as _mib
from ...versions import Version
from ..numbers import (
    Computed,
    calc,
    default_gpu_memory_utilization,
    default_max_num_batched_tokens,
    explain,
    half_pow2,
    pow2_floor,
)
from ..numbers import as_int as _int
from ..numbers import origin as _origin
from ..numbers import src as _src
from .readings import seqs_clause

SORT_BYTES_PER_ELEMENT = 36
"""Measured on an H200 with torch 2.11: float32 copy, sorted values, int64 order, softmax/cumsum,
masks and sort scratch, per (request x vocabulary) element, at 256 requests or more."""

LOGITS_BYTES_PER_ELEMENT = 2
"""The model's own bf16/fp16 logits, which stay allocated while the sampler runs."""

BYTES_PER_ELEMENT = SORT_BYTES_PER_ELEMENT + LOGITS_BYTES_PER_ELEMENT

SAFETY = 0.9
"""Use at most this share of the memory the OOM message reported free."""

MIN_USEFUL_SEQS = 16
"""Below this, capping max_num_seqs costs more throughput than giving back some KV cache."""

HELD_BEFORE_SORT_ORDER = 6
"""Bytes per element the warm-up already holds when the sort's int64 order fails to allocate: the
model's bf16 logits (2) and their float32 copy (4). The order is the sort's first allocation (our
H200, torch 2.11, ``benchmarks/sampler_sort_oom_point.py``: 6.0 B held for every case, the failed
request 298 MiB for 256 x 151,936 and 304 MiB for 256 x 154,880, the figures of vllm#24436 and
vllm#33920). That memory comes back to a smaller warm-up, so it counts as room."""

INDEX_BYTES = 8
"""The sort's int64 order, the allocation that usually fails first."""

MIN_UTIL = 0.10
"""No utilization below this is offered: the model itself would not fit."""

FAMILY_VOCAB: dict[str, int] = {
    "deepseek_v3": 163840,
    "deepseek_v32": 129280,
    "kimi": 163840,
    "qwen": 152064,
    "llama": 128256,
    "gpt_oss": 201088,
    "glm": 151552,
    "gemma": 262208,
}
"""Vocabulary sizes typical of a family (the largest common one: DeepseekV3ForCausalLM also carries
Kimi K2's 163,840 next to DeepSeek-V3's 129,280), used only when the model's own
``vocab_size`` is unknown; the explanation says so."""


TRITON_TOPK_TOPP = Version.parse("0.17.0")
"""From this release ``apply_top_k_top_p`` sends batches of 8 rows or more to a Triton kernel that
works in place on the float32 logits with a num_SMs x vocabulary scratch buffer: no sort, no int64
order (``vllm/v1/sample/ops/topk_topp_sampler.py@0.17.0``). The 38 B model is then an upper bound."""


# --- reading facts ---------------------------------------------------------------------------------


def sorts_every_row(facts: FactSet) -> bool:
    """Whether the warm-up's top-k/top-p sorts the logits: before 0.17.0, or when the release is unknown."""
    v = Version.try_parse(facts.value("vllm_version"))
    return v is None or v < TRITON_TOPK_TOPP


def flashinfer_samples(facts: FactSet) -> bool:
    """Whether the log says FlashInfer's kernels sample top-k/top-p, which do not sort the logits
    (``vllm/v1/sample/ops/topk_topp_sampler.py@0.11.0``: ``forward_cuda`` hands both to
    ``flashinfer_sample`` when no request has its own generator, as in the warm-up)."""
    return facts.value("sampler_flashinfer") is True


def warmup_requests(facts: FactSet) -> tuple[int, Text, tuple[str, ...]]:
    """How many dummy requests the warm-up ran: the log's own number, else the formula."""
    n = _int(facts, "sampler_dummy_requests")
    if n:
        basis = _src(facts, "sampler_dummy_requests")
        return n, Text(f"the warm-up ran {n} dummy requests ({basis})", f"预热使用了 {n} 个虚拟请求（{basis}）"), (
            "sampler_dummy_requests",
        )
    seqs, seqs_why, _ = seqs_clause(facts)
    tokens = _int(facts, "max_num_batched_tokens") or (default_max_num_batched_tokens(facts) or (2048, ""))[0]
    if facts.value("model_runner") == "v2":
        # gpu/warmup.py@0.25.0: prompts of decode_query_len + 1 = 2 + k tokens (k draft tokens); the
        # KV-block cap is left out, it binds only on a nearly empty KV cache.
        per = 2 + max(0, _int(facts, "num_speculative_tokens") or 0)
        n = max(1, min(seqs, tokens // per))
        return (
            n,
            Text(
                f"model runner V2's warm-up samples min({seqs_why.en}, "
                f"max_num_batched_tokens = {tokens} // {per}) = {n} requests",
                f"Model Runner V2 的预热采样 min({seqs_why.zh}，"
                f"max_num_batched_tokens = {tokens} // {per}) = {n} 个请求",
            ),
            ("max_num_seqs", "max_num_batched_tokens", "model_runner"),
        )
    n = min(seqs, tokens)
    return (
        n,
        Text(
            f"the warm-up runs min({seqs_why.en}, max_num_batched_tokens = {tokens}) = {n} dummy requests",
            f"预热运行 min({seqs_why.zh}，max_num_batched_tokens = {tokens}) = {n} 个虚拟请求",
        ),
        ("max_num_seqs", "max_num_batched_tokens"),
    )


def vocabulary(facts: FactSet) -> tuple[int, Text] | None:
    """The model's vocabulary, or the family's typical one (said so), or None."""
    v = _int(facts, "vocab_size")
    if v:
        s = _src(facts, "vocab_size")
        return v, Text(f"vocabulary {v:,} ({s})", f"词表 {v:,}（{s}）")
    family = facts.value("model_family")
    if family in FAMILY_VOCAB:
        v = FAMILY_VOCAB[str(family)]
        return v, Text(
            f"vocabulary about {v:,}, typical of the {family} family (set vocab_size for this model's own)",
            f"词表约 {v:,}，为 {family} 系列的常见值（可用 vocab_size 给出本模型的实际值）",
        )
    return None


def rows_per_request(facts: FactSet) -> int:
    """Rows sampled per request under real traffic: 1 + k with speculative decoding.

    The V1 runner's warm-up itself gives each dummy request a single draft token (vllm#37521), but a
    full batch verifying k draft tokens per request needs the larger figure, so we size for that.
    """
    k = _int(facts, "num_speculative_tokens")
    return 1 + k if k and k > 0 else 1


def warmup_peak_bytes(facts: FactSet, requests: int) -> tuple[int, Text] | None:
    """requests x rows x vocabulary x 38 B, with the arithmetic."""
    voc = vocabulary(facts)
    if voc is None:
        return None
    vocab, vocab_why = voc
    rows = rows_per_request(facts)
    peak = requests * rows * vocab * BYTES_PER_ELEMENT
    rows_en = f" x {rows} rows (1 + num_speculative_tokens, as a full batch verifies them)" if rows > 1 else ""
    rows_zh = f" x {rows} 行（1 + num_speculative_tokens，满批次验证时的行数）" if rows > 1 else ""
    if flashinfer_samples(facts):
        where = _origin(facts, "sampler_flashinfer")
        vocab_why = Text(
            f"{vocab_why.en}; an upper bound, as the log says FlashInfer samples top-k/top-p ({where}), "
            "which does not sort",
            f"{vocab_why.zh}；这是上限，因为日志表明由 FlashInfer 执行 top-k/top-p 采样（{where}），不做排序",
        )
    elif not sorts_every_row(facts):
        vocab_why = Text(
            f"{vocab_why.en}; an upper bound, as from 0.17.0 the top-k/top-p kernel does not sort",
            f"{vocab_why.zh}；这是上限，因为 0.17.0 起 top-k/top-p kernel 不再排序",
        )
    return peak, Text(
        f"{requests}{rows_en} x {vocab:,} x {BYTES_PER_ELEMENT} B = {_gib(peak)} ({vocab_why.en})",
        f"{requests}{rows_zh} x {vocab:,} x {BYTES_PER_ELEMENT} B = {_gib(peak)}（{vocab_why.zh}）",
    )


def held_by_the_warmup(facts: FactSet, requests: int) -> tuple[int, Text] | None:
    """Memory the warm-up itself held when it failed, when the failed request is the sort's int64 order.

    PyTorch rounds allocations up to 2 MiB, and the vocabulary may be the family's typical one, so
    the request must match requests x vocabulary x 8 B within 5 %.
    """
    asked = _int(facts, "oom_requested_bytes")
    voc = vocabulary(facts)
    if (asked is None or voc is None or rows_per_request(facts) != 1 or not sorts_every_row(facts)
            or flashinfer_samples(facts)):
        return None
    elements = requests * voc[0]
    if abs(asked - elements * INDEX_BYTES) > 0.05 * elements * INDEX_BYTES:
        return None
    held = elements * HELD_BEFORE_SORT_ORDER
    return held, Text(
        f"the {_mib(asked)} that failed is the sort's int64 order ({requests} x {voc[0]:,} x {INDEX_BYTES} B), so the warm-up "
        f"already held its logits and their float32 copy ({HELD_BEFORE_SORT_ORDER} B per element, {_mib(held)}), "
        "which count as room for the warm-up",
        f"失败的 {_mib(asked)} 正是排序的 int64 下标（{requests} x {voc[0]:,} x {INDEX_BYTES} B），因此预热当时已占着 logits 及"
        f"其 float32 副本（每项 {HELD_BEFORE_SORT_ORDER} B，共 {_mib(held)}），这些也算作预热可用的空间",
    )


# --- the calculations ------------------------------------------------------------------------------


@calc(
    "sampler_max_num_seqs",
    Text("A max_num_seqs whose sampler warm-up fits in the memory left", "sampler 预热放得下的 max_num_seqs"),
    "<N>",
)
def sampler_max_num_seqs(facts: FactSet) -> Computed | None:
    """The largest power of two of requests whose sort fits in the free memory the OOM reported.

    Without the OOM's free figure or a vocabulary, halve the warm-up count: each halving halves
    the sampler's peak.
    """
    n, n_why, n_inputs = warmup_requests(facts)
    free = _int(facts, "oom_free_bytes")
    voc = vocabulary(facts)
    if free is not None and voc is not None and n > 1:
        vocab, vocab_why = voc
        per_request = rows_per_request(facts) * vocab * BYTES_PER_ELEMENT
        held = held_by_the_warmup(facts, n)
        room = free + (held[0] if held else 0)
        held_en = f"; {held[1].en}" if held else ""
        held_zh = f"；{held[1].zh}" if held else ""
        fit = int(room * SAFETY // per_request)
        if fit < n:
            new = max(1, pow2_floor(fit)) if fit >= 1 else 1
            small_en = (
                f" That is below {MIN_USEFUL_SEQS}: lower --gpu-memory-utilization instead, or as well."
                if new < MIN_USEFUL_SEQS
                else ""
            )
            small_zh = (
                f" 低于 {MIN_USEFUL_SEQS}：应改为（或同时）降低 --gpu-memory-utilization。" if new < MIN_USEFUL_SEQS else ""
            )
            return explain(
                new,
                f"{n_why.en}; each request costs {rows_per_request(facts)} x {vocab:,} x {BYTES_PER_ELEMENT} B = "
                f"{_mib(per_request)} ({vocab_why.en}); {_mib(free)} was free at the OOM ({_src(facts, 'oom_free_bytes')})"
                f"{held_en}; {SAFETY:.0%} of {_mib(room)} holds {fit} requests, {new} as a power of two.{small_en}",
                f"{n_why.zh}；每个请求需要 {rows_per_request(facts)} x {vocab:,} x {BYTES_PER_ELEMENT} B = "
                f"{_mib(per_request)}（{vocab_why.zh}）；OOM 时空闲 {_mib(free)}（{_src(facts, 'oom_free_bytes')}）"
                f"{held_zh}；{_mib(room)} 的 {SAFETY:.0%} 可容纳 {fit} 个请求，取 2 的幂为 {new}。{small_zh}",
                (*n_inputs, "oom_free_bytes", "vocab_size") + (("oom_requested_bytes",) if held else ()),
            )
    new = half_pow2(n)
    return explain(
        new,
        f"{n_why.en}; the sampler's memory is proportional to that count, so half of it as a power of two is {new}.",
        f"{n_why.zh}；sampler 的显存与该数量成正比，减半并取 2 的幂为 {new}。",
        n_inputs,
    )


@calc(
    "sampler_halved_max_num_seqs",
    Text(
        "A halved max_num_seqs for a sampler warm-up that ran after the KV cache was sized",
        "KV cache 定好大小之后才运行的 sampler 预热所用的减半 max_num_seqs",
    ),
    "<N>",
)
def sampler_halved_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half the warm-up count as a power of two, with no promise that the freed memory stays free.

    From 0.8.0 the V1 runner's ``profile_run()`` samples the same ``min(max_num_seqs,
    max_num_batched_tokens)`` rows with the same top-k/top-p settings, so the sampler's peak is
    already inside the profiled peak the KV cache was sized around: fewer sequences shrink the
    profile too and the KV cache grows by about what they save. A fit computed from the free memory
    at the OOM would cut concurrency and could still fail, so none is offered here.
    """
    n, n_why, n_inputs = warmup_requests(facts)
    new = half_pow2(n)
    return explain(
        new,
        f"{n_why.en}; half of it as a power of two is {new}. The profiling run samples the same number of requests, "
        "so the KV cache grows by about what this saves: it helps mainly through fewer CUDA graph sizes (0.10.0+, "
        "below 256 sequences), so lower --gpu-memory-utilization first.",
        f"{n_why.zh}；减半并取 2 的幂为 {new}。显存分析阶段采样的请求数与此相同，因此省下的显存大致会被 KV cache 吃回去："
        "它主要通过减少 CUDA graph 尺寸起作用（0.10.0 起，且低于 256 个序列时），所以应先降低 --gpu-memory-utilization。",
        n_inputs,
    )


@calc(
    "halved_max_num_seqs",
    Text("max_num_seqs halved", "减半后的 max_num_seqs"),
    "<N>",
)
def halved_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half of max_num_seqs (the flag, else the default) as a power of two, for profiles that run
    max_num_seqs dummy sequences (the V0 engine) and have no per-request byte model of their own."""
    seqs, seqs_why, _ = seqs_clause(facts)
    new = half_pow2(seqs)
    return explain(
        new,
        f"{seqs_why.en}; half of it as a power of two is {new}.",
        f"{seqs_why.zh}；减半并取 2 的幂为 {new}。",
        ("max_num_seqs",),
    )


@calc(
    "sampler_gpu_util",
    Text(
        "gpu_memory_utilization lowered enough to leave room for the sampler warm-up",
        "为 sampler 预热留出空间而降低的 gpu_memory_utilization",
    ),
    "<FRACTION>",
)
def sampler_gpu_util(facts: FactSet) -> Computed | None:
    """current - (warm-up peak - free at the OOM + 0.5 GiB) / total, rounded down to 0.01.

    The KV cache takes total x utilization minus what profiling saw; everything allocated after it
    (graphs, the warm-up) lives in the rest, so each 0.01 given back is 1 % of the GPU more room.
    """
    util = facts.value("gpu_memory_utilization")
    if util is not None:
        util = float(util)
        util_why = _src(facts, "gpu_memory_utilization")
    else:
        util, util_why = default_gpu_memory_utilization(facts)
    total = _int(facts, "oom_total_bytes") or _int(facts, "gpu_mem_total_bytes")
    n, n_why, _ = warmup_requests(facts)
    free = _int(facts, "oom_free_bytes")
    requested = _int(facts, "oom_requested_bytes")
    margin = GIB // 2
    if total:
        peak = warmup_peak_bytes(facts, n)
        if not sorts_every_row(facts) and requested is not None:
            peak = None  # 0.17.0+: no sort, so the 38 B model overstates; the failed request is the better guide
        if peak is not None and free is not None:
            held = held_by_the_warmup(facts, n)
            room = free + (held[0] if held else 0)
            need = max(0, peak[0] - room) + margin
            basis_en = f"{n_why.en}; its peak is {peak[1].en}; {_gib(free)} was free at the OOM"
            basis_zh = f"{n_why.zh}；其峰值为 {peak[1].zh}；OOM 时空闲 {_gib(free)}"
            if held:
                basis_en += f"; {held[1].en}, so the room was {_gib(room)}"
                basis_zh += f"；{held[1].zh}，因此可用空间为 {_gib(room)}"
        elif requested is not None and free is not None:
            need = max(0, requested - free) + margin
            basis_en = f"the failed allocation asked for {_gib(requested)} with {_gib(free)} free"
            basis_zh = f"失败的分配申请 {_gib(requested)}，空闲 {_gib(free)}"
        else:
            need = None
        if need is not None:
            drop = math.ceil(round(need / total * 100, 6)) / 100
            new = round(util - drop, 2)
            if new <= MIN_UTIL:
                return None
            return explain(
                f"{new:.2f}",
                f"{basis_en}; (shortfall + 0.5 GiB) / {_gib(total)} = {drop:.2f}; {util} ({util_why}) - {drop:.2f} = {new:.2f}.",
                f"{basis_zh}；（缺口 + 0.5 GiB）/ {_gib(total)} = {drop:.2f}；{util}（{util_why}）- {drop:.2f} = {new:.2f}。",
                ("gpu_memory_utilization", "oom_total_bytes", "oom_free_bytes"),
            )
    new = round(util - 0.05, 2)
    if new <= MIN_UTIL:
        return None
    return explain(
        f"{new:.2f}",
        f"now {util} ({util_why}); without the OOM's figures, give back 0.05 of the GPU: {new:.2f}.",
        f"当前为 {util}（{util_why}）；缺少 OOM 报错中的数字，先让出 0.05 的显存：{new:.2f}。",
        ("gpu_memory_utilization",),
    )
