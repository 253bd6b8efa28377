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
from ...i18n import Text, msg
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
    said,
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

UTIL_MARGIN_GIB = 0.5
"""Given back on top of the warm-up's shortfall, for what else allocates next to it."""

UTIL_STEP = 0.05
"""Given back when the OOM message's figures are missing."""

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
        return n, said("calc.sampler.ran", n=n, source=basis), ("sampler_dummy_requests",)
    seqs, seqs_why, _ = seqs_clause(facts)
    tokens = _int(facts, "max_num_batched_tokens") or (default_max_num_batched_tokens(facts) or (2048, ""))[0]
    if facts.value("model_runner") == "v2":
        # gpu/warmup.py@0.25.0: prompts of decode_query_len + 1 = 2 + k tokens (k draft tokens); the
        # KV-block cap is left out, it binds only on a nearly empty KV cache.
        per = 2 + max(0, _int(facts, "num_speculative_tokens") or 0)
        n = max(1, min(seqs, tokens // per))
        return (
            n,
            said("calc.sampler.runs_v2", seqs_why=seqs_why, tokens=tokens, per=per, n=n),
            ("max_num_seqs", "max_num_batched_tokens", "model_runner"),
        )
    n = min(seqs, tokens)
    return n, said("calc.sampler.runs", seqs_why=seqs_why, tokens=tokens, n=n), ("max_num_seqs", "max_num_batched_tokens")


def vocabulary(facts: FactSet) -> tuple[int, Text] | None:
    """The model's vocabulary, or the family's typical one (said so), or None."""
    v = _int(facts, "vocab_size")
    if v:
        s = _src(facts, "vocab_size")
        return v, said("calc.sampler.vocab", vocab=v, source=s)
    family = facts.value("model_family")
    if family in FAMILY_VOCAB:
        v = FAMILY_VOCAB[str(family)]
        return v, said("calc.sampler.vocab_family", vocab=v, family=family)
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
    if flashinfer_samples(facts):
        vocab_why = said("calc.sampler.bound_flashinfer", vocab_why=vocab_why, source=_origin(facts, "sampler_flashinfer"))
    elif not sorts_every_row(facts):
        vocab_why = said("calc.sampler.bound_kernel", vocab_why=vocab_why)
    fields = {"requests": requests, "vocab": vocab, "bytes": BYTES_PER_ELEMENT, "peak": _gib(peak), "vocab_why": vocab_why}
    return peak, said("calc.sampler.peak_rows", rows=rows, **fields) if rows > 1 else said("calc.sampler.peak", **fields)


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
    return held, said("calc.sampler.held", asked=_mib(asked), requests=requests, vocab=voc[0], index=INDEX_BYTES,
                      per=HELD_BEFORE_SORT_ORDER, held=_mib(held))


# --- the calculations ------------------------------------------------------------------------------


@calc(
    "sampler_max_num_seqs",
    msg("calc.sampler.max_num_seqs.title"),
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
        fit = int(room * SAFETY // per_request)
        if fit < n:
            new = max(1, pow2_floor(fit)) if fit >= 1 else 1
            fields = {"n_why": n_why, "rows": rows_per_request(facts), "vocab": vocab, "bytes": BYTES_PER_ELEMENT,
                      "per_request": _mib(per_request), "vocab_why": vocab_why, "free": _mib(free),
                      "source": _src(facts, "oom_free_bytes"), "safety": SAFETY, "room": _mib(room), "fit": fit,
                      "new": new}
            why = said("calc.sampler.fit_held", held=held[1], **fields) if held else said("calc.sampler.fit", **fields)
            if new < MIN_USEFUL_SEQS:
                small = said("calc.sampler.fit_small", least=MIN_USEFUL_SEQS)
                why = Text(f"{why.en} {small.en}", f"{why.zh} {small.zh}")
            return explain(new, why, (*n_inputs, "oom_free_bytes", "vocab_size") + (("oom_requested_bytes",) if held else ()))
    new = half_pow2(n)
    return explain(new, said("calc.sampler.halved", n_why=n_why, new=new), n_inputs)


@calc(
    "sampler_halved_max_num_seqs",
    msg("calc.sampler.halved_max_num_seqs.title"),
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
    return explain(new, said("calc.sampler.halved_profiled", n_why=n_why, new=new), n_inputs)


@calc(
    "halved_max_num_seqs",
    msg("calc.sampler.halved_seqs.title"),
    "<N>",
)
def halved_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half of max_num_seqs (the flag, else the default) as a power of two, for profiles that run
    max_num_seqs dummy sequences (the V0 engine) and have no per-request byte model of their own."""
    seqs, seqs_why, _ = seqs_clause(facts)
    new = half_pow2(seqs)
    return explain(new, said("calc.sampler.halved_seqs", seqs_why=seqs_why, new=new), ("max_num_seqs",))


@calc(
    "sampler_gpu_util",
    msg("calc.sampler.gpu_util.title"),
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
    margin = int(UTIL_MARGIN_GIB * GIB)
    if total:
        peak = warmup_peak_bytes(facts, n)
        if not sorts_every_row(facts) and requested is not None:
            peak = None  # 0.17.0+: no sort, so the 38 B model overstates; the failed request is the better guide
        if peak is not None and free is not None:
            held = held_by_the_warmup(facts, n)
            room = free + (held[0] if held else 0)
            need = max(0, peak[0] - room) + margin
            basis = (said("calc.sampler.basis_peak_held", n_why=n_why, peak=peak[1], free=_gib(free), held=held[1],
                          room=_gib(room)) if held
                     else said("calc.sampler.basis_peak", n_why=n_why, peak=peak[1], free=_gib(free)))
        elif requested is not None and free is not None:
            need = max(0, requested - free) + margin
            basis = said("calc.sampler.basis_request", requested=_gib(requested), free=_gib(free))
        else:
            need = None
        if need is not None:
            drop = math.ceil(round(need / total * 100, 6)) / 100
            new = round(util - drop, 2)
            if new <= MIN_UTIL:
                return None
            return explain(
                f"{new:.2f}",
                said("calc.sampler.gpu_util", basis=basis, margin=f"{UTIL_MARGIN_GIB:g} GiB", total=_gib(total),
                     drop=drop, util=util, util_source=util_why, new=new),
                ("gpu_memory_utilization", "oom_total_bytes", "oom_free_bytes"),
            )
    new = round(util - UTIL_STEP, 2)
    if new <= MIN_UTIL:
        return None
    return explain(
        f"{new:.2f}",
        said("calc.sampler.gpu_util_step", util=util, util_source=util_why, step=UTIL_STEP, new=new),
        ("gpu_memory_utilization",),
    )
