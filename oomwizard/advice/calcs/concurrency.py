"""Numbers for the serving leaves: fewer sequences per step, a smaller step, a step whose logits fit.

While serving, what one scheduler step holds grows with ``max_num_seqs`` and
``max_num_batched_tokens``; with prompt logprobs every prompt token of the step keeps a row of
logits. Each value here halves a limit (as a power of two) or sizes the step for a fixed logits
budget, and never goes below what vLLM accepts: ``max_num_batched_tokens`` may not be smaller than
``max_num_seqs``, the default included.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text
from ...text.units import GIB, MIB
from ..numbers import Computed, calc, default_max_num_batched_tokens, explain, half_pow2, num, pow2_floor, src
from .readings import current_max_num_seqs

LOGITS_BUDGET_GIB = 2.0
"""Memory we let one step's prompt logits take."""

LOGITS_BYTES_PER_ELEMENT = 10
"""Per (prompt token x vocabulary element): the logits in bf16 (2 B), their float32 copy (4 B) and the
float32 log-softmax (4 B). Measured on our H200: benchmarks/results/prompt_logprobs_memory_h200.json."""


@calc(
    "serving_max_num_seqs",
    Text("max_num_seqs halved", "减半的 max_num_seqs"),
    "<N>",
)
def serving_max_num_seqs(facts: FactSet) -> Computed | None:
    n, basis = current_max_num_seqs(facts)
    new = half_pow2(n)
    return explain(
        new,
        f"max_num_seqs is {n} ({basis}); half of that, as a power of two, is {new}.",
        f"max_num_seqs 为 {n}（{basis}）；减半并取 2 的幂为 {new}。",
        ("max_num_seqs",),
    )


@calc(
    "serving_max_num_batched_tokens",
    Text("max_num_batched_tokens halved", "减半的 max_num_batched_tokens"),
    "<TOKENS>",
)
def serving_max_num_batched_tokens(facts: FactSet) -> Computed | None:
    """Half the current step budget (a power of two, at least 512 and at least max_num_seqs)."""
    cur = num(facts, "max_num_batched_tokens")
    if cur:
        n, basis = int(cur), src(facts, "max_num_batched_tokens")
    else:
        d = default_max_num_batched_tokens(facts)
        if d is None:
            n, basis = 4096, "unknown on V0; 2048 after halving is a safe step with chunked prefill"
        else:
            n, basis = d
    new = max(512, pow2_floor(n / 2))
    seqs, seqs_basis = current_max_num_seqs(facts)
    floor_en = floor_zh = ""
    if new < seqs:
        # vLLM refuses max_num_batched_tokens below max_num_seqs (the default counts too).
        new = int(seqs)
        floor_en = f" vLLM requires at least max_num_seqs ({int(seqs)}, {seqs_basis}), so {new}; lower --max-num-seqs to go further."
        floor_zh = f" vLLM 要求不小于 max_num_seqs（{int(seqs)}，{seqs_basis}），因此取 {new}；要再降低请同时调低 --max-num-seqs。"
    if new >= n:
        return None
    return explain(
        new,
        f"each step may schedule {n:,} tokens ({basis}); half, as a power of two and at least 512, is {new:,}.{floor_en}",
        f"每一步最多调度 {n:,} 个 token（{basis}）；减半、取 2 的幂且不小于 512，为 {new:,}。{floor_zh}",
        ("max_num_batched_tokens",),
    )


@calc(
    "logprobs_batched_tokens",
    Text("A step size whose prompt logits fit in 2 GiB", "使 prompt logits 不超过 2 GiB 的单步 token 数"),
    "<TOKENS>",
)
def logprobs_batched_tokens(facts: FactSet) -> Computed | None:
    vocab = num(facts, "vocab_size")
    if not vocab:
        return None
    per_token = vocab * LOGITS_BYTES_PER_ELEMENT
    raw = LOGITS_BUDGET_GIB * GIB / per_token
    new = max(256, pow2_floor(raw))
    cur = num(facts, "max_num_batched_tokens")
    if not cur:
        default = default_max_num_batched_tokens(facts)
        cur = default[0] if default is not None and facts.value("engine") != "v0" else None
    seqs, seqs_basis = current_max_num_seqs(facts)
    floor_en = floor_zh = ""
    if new < seqs:
        # vLLM refuses a step budget below max_num_seqs (the default counts too).
        new = seqs
        floor_en = f" vLLM needs at least max_num_seqs ({seqs}, {seqs_basis}), so {new:,}; lower --max-num-seqs as well to go further."
        floor_zh = f" vLLM 要求不小于 max_num_seqs（{seqs}，{seqs_basis}），因此取 {new:,}；要再降低请同时调低 --max-num-seqs。"
    if cur and new >= cur:
        # The step is already this small (or the default is): a smaller budget is not the fix.
        return None
    return explain(
        new,
        f"vocabulary {int(vocab):,} ({src(facts, 'vocab_size')}): each prompt token's logits take {int(vocab):,} x {LOGITS_BYTES_PER_ELEMENT} B = "
        f"{per_token / MIB:.2f} MiB; {LOGITS_BUDGET_GIB:.0f} GiB / {per_token / MIB:.2f} MiB = {int(raw):,} tokens, "
        f"as a power of two {max(256, pow2_floor(raw)):,}.{floor_en}",
        f"词表 {int(vocab):,}（{src(facts, 'vocab_size')}）：每个 prompt token 的 logits 占 {int(vocab):,} x {LOGITS_BYTES_PER_ELEMENT} B = "
        f"{per_token / MIB:.2f} MiB；{LOGITS_BUDGET_GIB:.0f} GiB / {per_token / MIB:.2f} MiB = {int(raw):,} 个 token，"
        f"取 2 的幂为 {max(256, pow2_floor(raw)):,}。{floor_zh}",
        ("vocab_size",),
    )
