"""Numbers for the speculative-decoding leaves: fewer draft tokens, room for the rejection sampler.

Speculative decoding adds a verification batch of ``max_num_seqs x (num_speculative_tokens + 1)``
tokens whose logits the rejection sampler copies to float32 (vllm#48037 measured ~4 GiB for a
Qwen3-8B DFlash drafter with 7 tokens; vllm#38220 worked the same product for 200 requests x 6
positions x 131072 tokens); the start-up profile sized it for one draft token per request at most.
The draft token count is read from the log, else from ``--speculative-config`` on the recorded
command line, whose other keys a rewritten config keeps.
"""

from __future__ import annotations

import json

from ... import safejson
from ...facts.model import FactSet
from ...i18n import msg
from ...text.units import gib as _gib
from ..commands import ServeCommand
from ..numbers import Computed, calc, ceil2, explain, floor2, half_pow2, num, origin, said
from .readings import FALLBACK_UTIL_STEP, MIN_UTIL, seqs_clause, total_bytes, util_clause

SPEC_LOGITS_BYTES = 4
"""The rejection sampler's float32 copy of the expanded logits: 4 bytes per element."""

METHODS_WITHOUT_DRAFT_MODEL = ("ngram", "mtp", "deepseek_mtp", "suffix")
"""--speculative-config methods that need no separate ``model`` key."""


def _spec_tokens(facts: FactSet) -> tuple[int, str] | None:
    k = num(facts, "num_speculative_tokens")
    if k and k >= 1:
        return int(k), origin(facts, "num_speculative_tokens")
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
    msg("calc.spec_decode.tokens_fewer.title"),
    "<K>",
)
def _spec_tokens_fewer(facts: FactSet) -> Computed | None:
    found = _spec_tokens(facts)
    if found is None:
        return None
    k, basis = found
    new = fewer_spec_tokens(k)
    return explain(
        new,
        said("calc.spec_decode.tokens_fewer", k=k, source=basis, new=new, rows=k + 1, new_rows=new + 1),
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
    msg("calc.spec_decode.config.title"),
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
        return explain(
            json.dumps(out),
            said("calc.spec_decode.config_yours", source=origin(facts, "serve_command"), k=k, new=new),
            ("serve_command",),
        )
    method = facts.value("speculative_method")
    if not method:
        return None
    built: dict[str, object] = {"method": str(method)}
    if str(method) not in METHODS_WITHOUT_DRAFT_MODEL:
        built["model"] = "<DRAFT_MODEL>"
    built["num_speculative_tokens"] = new
    return explain(
        json.dumps(built),
        said("calc.spec_decode.config_built", method=method, method_source=origin(facts, "speculative_method"), k=k,
             new=new, source=basis),
        ("speculative_method", "num_speculative_tokens"),
    )


def spec_logits_bytes(seqs: int, k: int, vocab: int) -> int:
    """One float32 copy of the logits of a full verification batch: seqs x (k + 1) x vocab x 4."""
    return seqs * (k + 1) * vocab * SPEC_LOGITS_BYTES


@calc(
    "spec_gpu_util",
    msg("calc.spec_decode.gpu_util.title"),
    "<FRACTION>",
)
def _spec_gpu_util(facts: FactSet) -> Computed | None:
    """current - (max_num_seqs x (k + 1) x vocab x 4 bytes) / total, rounded up to 0.01.

    The V1 profile's dummy sampler run already verifies one draft token per request
    (``vllm/v1/worker/gpu_model_runner.py@0.10.2``, ``[[0] for _ in range(num_reqs)]``), so about
    (k - 1) rows per request are really missing; the full copy is kept as a margin and said so.
    """
    util, util_why, util_names = util_clause(facts)
    found = _spec_tokens(facts)
    vocab = num(facts, "vocab_size")
    total = total_bytes(facts)
    if found is None or not vocab or total is None:
        new = round(util - FALLBACK_UTIL_STEP, 2)
        if new <= MIN_UTIL:
            return None
        return explain(
            f"{new:.2f}", said("calc.spec_decode.gpu_util_step", util=util_why, step=FALLBACK_UTIL_STEP, new=new), util_names
        )
    k, k_basis = found
    seqs, seqs_why, seqs_names = seqs_clause(facts)
    total_b, total_name = total
    need = spec_logits_bytes(seqs, k, int(vocab))
    drop = ceil2(need / total_b)
    new = floor2(util - drop)
    if new <= MIN_UTIL:
        return None
    vocab_basis = origin(facts, "vocab_size")
    return explain(
        f"{new:.2f}",
        said("calc.spec_decode.gpu_util", seqs_why=seqs_why, k=k, k_source=k_basis, vocab=int(vocab),
             vocab_source=vocab_basis, seqs=seqs, bytes=SPEC_LOGITS_BYTES, need=_gib(need), total=_gib(total_b),
             drop=drop, util=util_why, new=new),
        util_names + seqs_names + ("num_speculative_tokens", "vocab_size", total_name),
    )


@calc(
    "spec_max_num_seqs",
    msg("calc.spec_decode.max_num_seqs.title"),
    "<N>",
)
def _spec_max_num_seqs(facts: FactSet) -> Computed | None:
    seqs, seqs_why, names = seqs_clause(facts)
    new = half_pow2(seqs)
    found = _spec_tokens(facts)
    if found is None:
        why = said("calc.spec_decode.max_num_seqs", seqs_why=seqs_why, new=new)
    else:
        rows = found[0] + 1
        why = said("calc.spec_decode.max_num_seqs_k", seqs_why=seqs_why, new=new, seqs=seqs, rows=rows,
                   tokens=seqs * rows, new_tokens=new * rows)
    return explain(new, why, names + (("num_speculative_tokens",) if found else ()))
