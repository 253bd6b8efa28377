"""Numbers for the KV cache itself: a context length whose KV cache fits, and the size vLLM suggests.

A context length is read, best first, from vLLM's own estimate (0.9.2+), from the planner when the
log names a model it can describe, from the proportion of what one max-length request needed to
what the KV cache got, and from the KV cache's token count. From 0.10.2 vLLM's start-up message
also suggests a KV cache size in bytes (one that fits the requested memory, one that fills the
GPU); those are pasted as printed.
"""

from __future__ import annotations

from ...facts.model import FactSet
from ...i18n import Text, msg
from ...text.units import GIB
from ..numbers import Computed, calc, explain, floor_to, num, said, src


def round_len(tokens: float) -> int:
    """A context length an operator would type: 1024-aligned above 8K, 256 above 1K, else 16."""
    t = int(tokens)
    step = 1024 if t >= 8192 else 256 if t >= 1024 else 16
    return max(16, floor_to(t, step))


@calc(
    "max_model_len_fit",
    msg("calc.kv.max_model_len.title"),
    "<MAX_MODEL_LEN>",
)
def max_model_len_fit(facts: FactSet) -> Computed | None:
    """vLLM's own estimate (0.9.2+), else a proportional estimate, else the KV cache's token count."""
    est = num(facts, "estimated_max_model_len")
    if est:
        val = round_len(est)
        return explain(
            val,
            said("calc.kv.estimated", est=int(est), source=src(facts, "estimated_max_model_len"), val=val),
            ("estimated_max_model_len",),
        )
    planned = _planned_len(facts)
    if planned is not None:
        return planned
    need, have, mml = num(facts, "kv_needed_gib"), num(facts, "kv_cache_gib"), num(facts, "max_model_len")
    if need and have is not None and mml and 0 < have < need:
        raw = mml * have / need
        val = round_len(raw)
        names = ("max_model_len", "kv_needed_gib", "kv_cache_gib")
        return explain(
            val,
            said("calc.kv.proportional", mml=int(mml), need=need, have=have, source=src(facts, *names), raw=int(raw),
                 val=val),
            names,
        )
    tokens = num(facts, "kv_cache_tokens")
    if tokens:
        val = round_len(tokens)
        return explain(
            val,
            said("calc.kv.cache_tokens", tokens=int(tokens), source=src(facts, "kv_cache_tokens"), val=val),
            ("kv_cache_tokens",),
        )
    return None


def _planned_len(facts: FactSet) -> Computed | None:
    """The planner's answer when the log names a model it can describe: vLLM's own check, run here."""
    from ...plan.from_facts import max_model_len_fit as planned

    p = planned(facts)
    if p is None:
        return None
    val = round_len(p.value)
    names = p.inputs
    # The planner words its reason in English with the model and the release; Chinese reads the catalogue's.
    how = Text(p.how, said("calc.kv.planned_how", kv=facts.value("kv_cache_gib"), tokens=p.value).zh)
    return explain(val, said("calc.kv.planned", how=how, source=src(facts, *names), val=val), names)


# --- the KV cache size vLLM itself suggests (0.10.2+) ------------------------------------------------


def _bytes_calc(facts: FactSet, name: str, full: bool) -> Computed | None:
    b = num(facts, name)
    if not b or b <= 0:
        # A start whose charges exceed the budget prints a negative "fit" figure: nothing to paste.
        return None
    fields = {"bytes": int(b), "gib": b / GIB, "source": src(facts, name)}
    why = said("calc.kv.suggested_full", **fields) if full else said("calc.kv.suggested_fit", **fields)
    return explain(int(b), why, (name,))


@calc(
    "kv_cache_memory_bytes",
    msg("calc.kv.memory_bytes.title"),
    "<BYTES>",
)
def kv_cache_memory_bytes(facts: FactSet) -> Computed | None:
    return _bytes_calc(facts, "suggested_kv_cache_bytes", full=False)


@calc(
    "kv_cache_memory_bytes_full",
    msg("calc.kv.memory_bytes_full.title"),
    "<BYTES>",
)
def kv_cache_memory_bytes_full(facts: FactSet) -> Computed | None:
    return _bytes_calc(facts, "suggested_kv_cache_full_bytes", full=True)
