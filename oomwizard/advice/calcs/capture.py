"""Numbers for capturing fewer CUDA graphs: a smaller largest capture size, or fewer sequences.

The V0 engine captures batch sizes up to ``max_num_seqs``; the V1 engine up to 512 before 0.10.0
and up to ``min(2 x max_num_seqs, 512)`` from 0.10.0 (vllm#20628), so lowering ``max_num_seqs``
shortens the capture list only on the V0 engine and from 0.10.0. Each list follows vLLM's own
pattern: 1, 2, 4, then steps of 8.
"""

from __future__ import annotations

import json

from ...facts.model import FactSet
from ...i18n import Text, msg
from ...versions import Version
from ..numbers import Computed, calc, explain, half_pow2, said
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
        rule = said("calc.capture.rule_v0", current=current)
    elif v is not None and v < MAX_CAPTURE_FOLLOWS_SEQS:
        current = DEFAULT_MAX_CAPTURE
        rule = said("calc.capture.rule_fixed", version=v, current=current)
    else:
        current = min(2 * seqs, DEFAULT_MAX_CAPTURE)
        rule = said("calc.capture.rule_follows", seqs=seqs, most=DEFAULT_MAX_CAPTURE, current=current)
    new = max(8, current // 2 // 8 * 8)
    return current, new, said("calc.capture.limit", seqs=seqs_why, rule=rule, new=new), names


@calc(
    "cudagraph_max_capture_size",
    msg("calc.capture.max_size.title"),
    "<N>",
)
def _cudagraph_max_capture_size(facts: FactSet) -> Computed | None:
    _, new, why, names = capture_size_limit(facts)
    return Computed(str(new), why, names)


@calc(
    "cudagraph_capture_sizes_config",
    msg("calc.capture.sizes_config.title"),
    "<JSON>",
)
def _cudagraph_capture_sizes_config(facts: FactSet) -> Computed | None:
    """The same pattern vLLM uses ([1, 2, 4] then steps of 8), up to half the current largest size."""
    _, new, why, names = capture_size_limit(facts)
    sizes = [1, 2, 4, *range(8, new + 1, 8)]
    value = json.dumps({"cudagraph_capture_sizes": sizes})
    listed = said("calc.capture.listed", new=new, count=len(sizes))
    return explain(value, Text(f"{why.en} {listed.en}", f"{why.zh} {listed.zh}"), names)


@calc(
    "cudagraph_max_num_seqs",
    msg("calc.capture.max_num_seqs.title"),
    "<N>",
)
def _cudagraph_max_num_seqs(facts: FactSet) -> Computed | None:
    """Half the current max_num_seqs as a power of two; says whether this release's capture list follows it."""
    seqs, seqs_why, names = seqs_clause(facts)
    new = half_pow2(seqs)
    current, _, _, _ = capture_size_limit(facts)
    v = Version.try_parse(facts.value("vllm_version"))
    if capture_follows_max_num_seqs(facts):
        why = said("calc.capture.max_num_seqs", seqs=seqs_why, new=new, current=current)
    else:
        why = said("calc.capture.max_num_seqs_fixed", seqs=seqs_why, new=new, version=v, current=current)
    return explain(new, why, names)
