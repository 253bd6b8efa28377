"""The words and line shapes the collector reacts to, and the scanner that finds them in a log.

Every trigger of the rules (``decision_trees/diagnosis/``) is searched for in every byte; the
regexes here tell the collector which kind of line it holds once the scanner has found one.
"""

from __future__ import annotations

import functools
import os
import re

from . import facts as fact_rules
from .scan import Anchor, Scanner, literal
from .signatures import (
    MM_PROFILE_TRIGGERS,
    OOM_TRIGGERS,
    REQUEST_LAYER_DEATH,
    RUN_START_RE,
    RUN_START_TRIGGERS,
    SIGNATURES,
    SLEEP_MARKS,
    TIMELINE,
)

_EXC_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*(?P<type>[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure))"
    r"(?:\((?P<inner>\w+)\))?(?::\s*(?P<msg>.*))?$"
)
_RUN_START = RUN_START_TRIGGERS
_RUN_START_RE = RUN_START_RE
_CODE_RE = re.compile(r"^\s{3,}\S|^\s*[~^]+\s*$")
_CALL_RE = re.compile(r"(?:^|[\s=(.])([A-Za-z_]\w*)\s*\(")
_TRIED_RE = re.compile(r"^\s*Tried\s*to\s*allocate\s*\d")
CONTINUE_LINES = 3
"""Logical lines after a message whose numbers are missing that may still hold them (a report
retyped over indented lines, which the wrap joiner leaves apart)."""

def _alternation(words: set[str] | tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(words, key=len, reverse=True)))


_SIG_TRIGGERS = {t for s in SIGNATURES for t in s.triggers} | set(OOM_TRIGGERS) | {"Cuda failure"}
_SIG_TRIGGER_RE = _alternation(_SIG_TRIGGERS)
# Timeline lines that mark serving repeat on every request: they are only looked at while the
# engine has not reached serving yet (see ``feed``).
_SERVING_TRIGGERS = {t for t, _, phase in TIMELINE if phase == "serving"}
_TIMELINE_RE = _alternation({t for t, _, _ in TIMELINE} - _SERVING_TRIGGERS | set(_RUN_START))
_SERVING_RE = _alternation(_SERVING_TRIGGERS)
_FACT_TRIGGER_RE = _alternation(set(fact_rules.TRIGGERS))
_DEATH_RE = _alternation(REQUEST_LAYER_DEATH)
_SLEEP_RE = _alternation(tuple(t for t, _, _ in SLEEP_MARKS))
_TRACEBACK_TRIGGERS = {"Traceback", '", line ', "above exception", "Error", "Exception"}
# Starts of lines vLLM prints very long (a terminal wraps them over many lines).
_LONG_LINES = {"LLM engine (", "non-default args", "Namespace("}


def _words() -> tuple[set[str], set[str]]:
    """Every trigger the collector reacts to, and the serving marks among them."""
    words = (_SIG_TRIGGERS | ({t for t, _, _ in TIMELINE} - _SERVING_TRIGGERS) | set(fact_rules.TRIGGERS)
             | set(_RUN_START) | _TRACEBACK_TRIGGERS | set(MM_PROFILE_TRIGGERS))
    return words, set(_SERVING_TRIGGERS)


def trigger_words() -> list[str]:
    """Every string a log is searched for (to compare the reader with ``grep -F -f``)."""
    words, marks = _words()
    return sorted(words | marks)


@functools.lru_cache(maxsize=8)
def _scanner(extra: tuple[bytes, ...], engine: str) -> Scanner:
    words, marks = _words()
    anchors = [Anchor(literal(w), 1536, 32 << 10 if w in _LONG_LINES else 2048) for w in sorted(words)]
    anchors += [Anchor(p, 1536, 2048) for p in extra]
    return Scanner(anchors, [Anchor(literal(w), 512, 512) for w in sorted(marks)], engine or None)


def scanner(extra: tuple[bytes, ...] = ()) -> Scanner:
    """What a big log is searched for: every trigger the collector reacts to (the lines around a
    hit are read, enough for a wrapped message and a traceback's source lines), and ``extra``
    regex patterns (a checklist's). Serving marks repeat on every request: only the first one
    after each hit is read."""
    return _scanner(extra, os.environ.get("OOMWIZARD_SCANNER", ""))


_PHASE_ORDER = ["load_weights", "profile_run", "cudagraph_profile", "kv_cache_alloc", "kernel_warmup", "graph_capture",
                "sampler_warmup", "serving"]
_NCCL_OOM_RE = re.compile(r"Cuda failure\s*\d*\s*'out of memory'")
