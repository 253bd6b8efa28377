"""Numbers for the serving leaves: fewer sequences per step, a smaller step, a step whose logits fit.

While serving, what one scheduler step holds grows with ``max_num_seqs`` and
``max_num_batched_tokens``; with prompt logprobs every prompt token of the step keeps a row of
logits. Each value here halves a limit (as a power of two) or sizes the step for a fixed logits
budget, and never goes below what vLLM accepts: ``max_num_batched_tokens`` may not be smaller than
``max_num_seqs``, the default included.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import msg
from ...text.units import GIB, MIB
from ..numbers import Computed, calc, default_max_num_batched_tokens, explain, half_pow2, num, pow2_floor, said, src
from .readings import current_max_num_seqs

LOGITS_BUDGET_GIB = 2.0
"""Memory we let one step's prompt logits take."""

LOGITS_BYTES_PER_ELEMENT = 10
"""Per (prompt token x vocabulary element): the logits in bf16 (2 B), their float32 copy (4 B) and the
float32 log-softmax (4 B). Measured on our H200: benchmarks/results/prompt_logprobs_memory_h200.json."""

MIN_STEP_TOKENS = 512
"""A halved step budget stays at least this large."""

MIN_LOGPROBS_TOKENS = 256
"""A step sized for the prompt logits stays at least this large."""


@calc(
    "serving_max_num_seqs",
    msg("calc.concurrency.max_num_seqs.title"),
    "<N>",
)
def serving_max_num_seqs(facts: FactSet) -> Computed | None:
    n, basis = current_max_num_seqs(facts)
    new = half_pow2(n)
    return explain(new, said("calc.concurrency.max_num_seqs", n=n, basis=basis, new=new), ("max_num_seqs",))


@calc(
    "serving_max_num_batched_tokens",
    msg("calc.concurrency.batched_tokens.title"),
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
    new = max(MIN_STEP_TOKENS, pow2_floor(n / 2))
    seqs, seqs_basis = current_max_num_seqs(facts)
    floored = new < seqs
    if floored:
        # vLLM refuses max_num_batched_tokens below max_num_seqs (the default counts too).
        new = int(seqs)
    if new >= n:
        return None
    fields = {"n": n, "basis": basis, "least": MIN_STEP_TOKENS, "new": new}
    why = (said("calc.concurrency.batched_tokens_floor", seqs=int(seqs), seqs_basis=seqs_basis, **fields) if floored
           else said("calc.concurrency.batched_tokens", **fields))
    return explain(new, why, ("max_num_batched_tokens",))


@calc(
    "logprobs_batched_tokens",
    said("calc.concurrency.logprobs.title", budget=LOGITS_BUDGET_GIB),
    "<TOKENS>",
)
def logprobs_batched_tokens(facts: FactSet) -> Computed | None:
    vocab = num(facts, "vocab_size")
    if not vocab:
        return None
    per_token = vocab * LOGITS_BYTES_PER_ELEMENT
    raw = LOGITS_BUDGET_GIB * GIB / per_token
    new = max(MIN_LOGPROBS_TOKENS, pow2_floor(raw))
    cur = num(facts, "max_num_batched_tokens")
    if not cur:
        default = default_max_num_batched_tokens(facts)
        cur = default[0] if default is not None and facts.value("engine") != "v0" else None
    seqs, seqs_basis = current_max_num_seqs(facts)
    pow2 = new
    floored = new < seqs
    if floored:
        # vLLM refuses a step budget below max_num_seqs (the default counts too).
        new = seqs
    if cur and new >= cur:
        # The step is already this small (or the default is): a smaller budget is not the fix.
        return None
    fields = {"vocab": int(vocab), "source": src(facts, "vocab_size"), "bytes": LOGITS_BYTES_PER_ELEMENT,
              "per_token": per_token / MIB, "budget": LOGITS_BUDGET_GIB, "raw": int(raw), "pow2": pow2}
    why = (said("calc.concurrency.logprobs_floor", seqs=seqs, seqs_basis=seqs_basis, new=new, **fields) if floored
           else said("calc.concurrency.logprobs", **fields))
    return explain(new, why, ("vocab_size",))
