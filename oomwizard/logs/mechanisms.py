"""Numbers to mechanism: what an out-of-memory message's figures say when nothing places it.

PyTorch's message says how much was asked for and how big the GPU is; the command line says how
big the model is. A request larger than the whole GPU is one giant allocation sized by the
input (an encoder or attention buffer), not serving's gradual growth; weights larger than the
GPU share a rank holds cannot have loaded. The rules (``numbers.yaml`` ``mechanisms``) name the
conditions below; this module only evaluates them, so a rule is a data change.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..i18n import Text
from ..text.units import GIB

_PARAMS_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*[Bb](?![a-zA-Z0-9])")
"""A parameter count in a model's name (``Qwen1.5-72B-Chat``, ``llama-2-7b``); the first one wins
(``Qwen3-235B-A22B`` is 235B in all)."""
BYTES_PER_PARAM = {"float32": 4, "float": 4, "fp32": 4, "bfloat16": 2, "float16": 2, "half": 2, "fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class Mechanism:
    id: str
    when: tuple[str, ...]
    scenario: str
    score: float
    reason: Text


@dataclass
class Numbers:
    """What the conditions look at, for one failure."""

    requested: int | None
    total: int | None
    placed: bool
    multimodal: bool
    model: str | None
    dtype: str | None
    quantized: bool
    tp: int

    def weights_bytes(self) -> int | None:
        """The model's weights by its name and dtype, per tensor-parallel rank (unquantized only)."""
        if self.quantized or not self.model:
            return None
        m = _PARAMS_RE.search(self.model.rstrip("/").rsplit("/", 1)[-1])
        if m is None:
            return None
        per = BYTES_PER_PARAM.get((self.dtype or "bfloat16").lower())
        if per is None:
            return None
        return int(float(m.group(1)) * 1e9 * per / max(self.tp, 1))


CONDITIONS: dict[str, Callable[[Numbers, dict[str, Any]], bool]] = {
    "unplaced": lambda n, _: not n.placed,
    "request_over_total": lambda n, _: n.requested is not None and n.total is not None and n.requested > n.total,
    "multimodal": lambda n, _: n.multimodal,
    "weights_over_gpu": lambda n, p: (n.total is not None and (w := n.weights_bytes()) is not None
                                      and w > float(p.get("weights_share", 0.9)) * n.total),
}
"""Conditions a mechanism rule may name; ``weights_share`` is read from ``numbers.yaml``."""


def values(n: Numbers) -> dict[str, str]:
    """Fields a reason may show."""
    w = n.weights_bytes()
    return {
        "requested": "?" if n.requested is None else f"{n.requested / GIB:.2f}",
        "total": "?" if n.total is None else f"{n.total / GIB:.2f}",
        "weights": "?" if w is None else f"{w / GIB:.0f}",
        "model": n.model or "?",
        "tp": str(n.tp),
    }


def evaluate(rules: tuple[Mechanism, ...], params: dict[str, Any], n: Numbers) -> list[tuple[Mechanism, Text]]:
    """The rules whose conditions all hold, with their reasons filled in."""
    out = []
    fields = values(n)
    for m in rules:
        if all(CONDITIONS[c](n, params) for c in m.when):
            out.append((m, Text(m.reason.en.format_map(fields), m.reason.zh.format_map(fields))))
    return out


def numbers_of(oom: Any, value: Callable[[str], Any], flags: set[str], placed: bool) -> Numbers:
    """The figures of one failure (``oom``: its parsed PyTorch message) and the log's facts."""
    # The size a report or nvidia-smi states comes last: the message's own figures win.
    total = getattr(oom, "total", None) or value("gpu_mem_total_bytes") or value("gpu_mem_stated_bytes")
    tp = value("tp")
    return Numbers(
        requested=getattr(oom, "requested", None), total=total if isinstance(total, int) else None, placed=placed,
        multimodal=("mm_encoder" in flags or value("is_multimodal") is True or value("limit_mm_per_prompt") is not None),
        model=value("model") if isinstance(value("model"), str) else None,
        dtype=value("dtype") if isinstance(value("dtype"), str) else None,
        quantized=bool(value("quantization")), tp=tp if isinstance(tp, int) and tp > 0 else 1)
