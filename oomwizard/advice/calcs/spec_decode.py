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
from ...i18n import Text
from ...text.units import gib as _gib
from ..commands import ServeCommand
from ..numbers import Computed, calc, ceil2, explain, floor2, half_pow2, num, origin
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
    Text("Fewer speculative tokens per step", "更少的每步推测 token 数"),
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
        f"num_speculative_tokens = {k} ({basis}); each step verifies k + 1 tokens per request, so {k} -> {new} "
        f"shrinks that batch from {k + 1} to {new + 1} tokens per request.",
        f"num_speculative_tokens = {k}（{basis}）；每步每个请求要验证 k + 1 个 token，{k} -> {new} "
        f"使其从每请求 {k + 1} 个降到 {new + 1} 个。",
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
        return explain(
            json.dumps(out),
            f"your --speculative-config from the recorded command line ({origin(facts, 'serve_command')}) with "
            f"num_speculative_tokens {k} -> {new}; every other key kept.",
            f"取记录到的命令行中的 --speculative-config（{origin(facts, 'serve_command')}），"
            f"只把 num_speculative_tokens 从 {k} 改为 {new}，其余键保持不变。",
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
        f"speculative_method = {method} ({origin(facts, 'speculative_method')}), num_speculative_tokens {k} -> {new} ({basis}); "
        "the command line was not recorded, so add back any other keys you pass (draft model, tensor parallel size).",
        f"speculative_method = {method}（{origin(facts, 'speculative_method')}），num_speculative_tokens {k} -> {new}（{basis}）；"
        "没有记录到启动命令，请把你原来传的其他键（draft 模型、张量并行数）补回去。",
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
    util, util_why, util_names = util_clause(facts)
    found = _spec_tokens(facts)
    vocab = num(facts, "vocab_size")
    total = total_bytes(facts)
    if found is None or not vocab or total is None:
        new = round(util - FALLBACK_UTIL_STEP, 2)
        if new <= MIN_UTIL:
            return None
        return explain(
            f"{new:.2f}",
            f"{util_why.en}; without the speculative token count, the vocabulary size and the GPU size we cannot size "
            f"the sampler's copy, so we lower it by {FALLBACK_UTIL_STEP} to {new:.2f}.",
            f"{util_why.zh}；不知道推测 token 数、词表大小或显存大小，无法计算 sampler 副本的大小，"
            f"因此先降低 {FALLBACK_UTIL_STEP} 到 {new:.2f}。",
            util_names,
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
        f"{seqs_why.en}; num_speculative_tokens = {k} ({k_basis}); vocab_size = {int(vocab):,} ({vocab_basis}). "
        f"One float32 copy of the verification logits is {seqs} x ({k} + 1) x {int(vocab):,} x 4 bytes = {_gib(need)}; "
        f"/ {_gib(total_b)} = {drop:.2f}; {util_why.en} - {drop:.2f} = {new:.2f}. The profile already sampled about two rows "
        f"per request (one draft token plus the bonus), so only ({k} - 1) rows are uncounted: the rest is a margin.",
        f"{seqs_why.zh}；num_speculative_tokens = {k}（{k_basis}）；vocab_size = {int(vocab):,}（{vocab_basis}）。"
        f"验证批 logits 的一份 float32 副本为 {seqs} x ({k} + 1) x {int(vocab):,} x 4 字节 = {_gib(need)}；"
        f"/ {_gib(total_b)} = {drop:.2f}；{util_why.zh} - {drop:.2f} = {new:.2f}。内存分析已为每个请求采样约两行"
        f"（一个 draft token 加 bonus token），真正未计入的只有 ({k} - 1) 行：其余部分是余量。",
        util_names + seqs_names + ("num_speculative_tokens", "vocab_size", total_name),
    )


@calc(
    "spec_max_num_seqs",
    Text("max_num_seqs halved for speculative decoding", "为推测解码减半的 max_num_seqs"),
    "<N>",
)
def _spec_max_num_seqs(facts: FactSet) -> Computed | None:
    seqs, seqs_why, names = seqs_clause(facts)
    new = half_pow2(seqs)
    found = _spec_tokens(facts)
    if found is None:
        tail_en = "the verification batch (requests x (k + 1) tokens) halves with it."
        tail_zh = "验证批（请求数 x (k + 1) 个 token）随之减半。"
    else:
        k = found[0]
        tail_en = f"the verification batch goes from {seqs} x {k + 1} = {seqs * (k + 1):,} to {new} x {k + 1} = {new * (k + 1):,} tokens."
        tail_zh = f"验证批从 {seqs} x {k + 1} = {seqs * (k + 1):,} 降到 {new} x {k + 1} = {new * (k + 1):,} 个 token。"
    return explain(
        new,
        f"{seqs_why.en}; half of it, as a power of two, is {new}; {tail_en}",
        f"{seqs_why.zh}；减半并取 2 的幂为 {new}；{tail_zh}",
        names + (("num_speculative_tokens",) if found else ()),
    )
