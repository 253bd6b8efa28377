"""The figures vLLM prints while it starts: weights, profiling, KV cache, CUDA graphs, free memory.

The line shapes and the facts each carries are data (``numbers.yaml`` ``startup_numbers``, with
examples checked when the rules load); this reads them, in order, on a line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .message_facts import values_of
from .signatures import STARTUP_NUMBERS

Setter = Callable[[str, Any], None]
TRIGGERS: tuple[str, ...] = tuple(sorted({t for triggers, _, _ in STARTUP_NUMBERS for t in triggers}))
"""Substrings a line must hold for :func:`numbers` to look at it."""


def numbers(text: str, put: Setter) -> None:
    """The start-up figures ``text`` holds (an optional group that did not match is skipped)."""
    for triggers, rx, facts in STARTUP_NUMBERS:
        if not any(t in text for t in triggers):
            continue
        m = rx.search(text)
        if m is None:
            continue
        for fact, value in values_of(facts, {k: v for k, v in m.groupdict().items() if v is not None}):
            put(fact, value)
