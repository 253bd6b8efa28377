"""Numbers for capturing fewer CUDA graphs: a smaller largest capture size, or fewer sequences.

The V0 engine captures batch sizes up to ``max_num_seqs``; the V1 engine up to 512 before 0.10.0
and up to ``min(2 x max_num_seqs, 512)`` from 0.10.0 (vllm#20628), so lowering ``max_num_seqs``
shortens the capture list only on the V0 engine and from 0.10.0. Each list follows vLLM's own
pattern: 1, 2, 4, then steps of 8.
"""

from __future__ import annotations

import json

from ...facts.model import FactSet
from ...i18n import Text
from ...versions import Version
from ..numbers import Computed, calc, explain, half_pow2
from .readings import runs_v0, seqs_clause

DEFAULT_MAX_CAPTURE = 512
"""The V1 engine's automatic largest capture size: 512 up to 0.9.x, min(2 x max_num_seqs, 512) from
0.10.0 (vllm#20628); the V0 engine captures up to max_num_seqs instead."""

MAX_CAPTURE_FOLLOWS_SEQS = Version.parse("0.10.0")
"""First release whose default capture list follows max_num_seqs on the V1 engine (vllm#20628)."""


def capture_follows_max_num_seqs(facts: FactSet) -> bool:
    """Whether lowering max_num_seqs shortens the default capture list on this engine and release."""
    v = Version.try_parse(facts.value("vllm_version"))
    return runs_v0(facts) or v is None or v >= MAX_CAPTURE_FOLLOWS_SEQS


def _round_up8(n: int) -> int:
    return max(8, -(-n // 8) * 8)


def capture_size_limit(facts: FactSet) -> tuple[int, int, Text, tuple[str, ...]]:
    """(current automatic largest capture size, half of it as a multiple of 8, the arithmetic).

    The V0 engine captures batch sizes up to max_num_seqs; the V1 engine up to 512 before 0.10.0 and
    up to min(2 x max_num_seqs, 512) from 0.10.0 (vllm#20628).
    """
    seqs, seqs_why, names = seqs_clause(facts)
    v = Version.try_parse(facts.value("vllm_version"))
    if runs_v0(facts):
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
    return explain(
        value,
        why.en + f" Listed as [1, 2, 4, 8, 16, …, {new}] ({len(sizes)} graphs).",
        why.zh + f" 列为 [1, 2, 4, 8, 16, …, {new}]（共 {len(sizes)} 个 graph）。",
        names,
    )


@calc(
    "cudagraph_max_num_seqs",
    Text("max_num_seqs halved, which also shortens the capture list", "减半的 max_num_seqs，同时缩短捕获列表"),
    "<N>",
)
def _cudagraph_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half the current max_num_seqs as a power of two; says whether this release's capture list follows it."""
    seqs, seqs_why, names = seqs_clause(facts)
    new = half_pow2(seqs)
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
    return explain(
        new,
        f"{seqs_why.en}; half of it, as a power of two, is {new}; {tail_en}",
        f"{seqs_why.zh}；减半并取 2 的幂为 {new}；{tail_zh}",
        names,
    )
