"""The figures vLLM prints while it starts: weights, profiling, KV cache, CUDA graphs, free memory.

A table of line shapes and the facts each carries (``_NUMBER_RULES``), read in order, so a new
start-up line is one entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..text.units import GIB
from .signatures import phrase

Setter = Callable[[str, Any], None]
_F = r"(\d+(?:\.\d+)?)"


def _num(s: str) -> float:
    return float(s.replace(",", "").replace("_", ""))


def _gib_to_bytes(s: str) -> int:
    return round(float(s) * GIB)


_V0_TOTAL_RE = re.compile(r"total_gpu_memory\s*\(\s*" + _F + r"\s*GiB\)\s*x\s*gpu_memory_utilization\s*\(\s*" + _F
                          + r"\s*\)\s*=\s*" + _F + r"\s*GiB")
_V0_BREAKDOWN_RE = re.compile(
    r"model weights take\s*" + _F + r"\s*GiB;\s*non_torch_memory takes\s*" + _F + r"\s*GiB;\s*"
    r"PyTorch activation peak memory takes\s*" + _F + r"\s*GiB;\s*the rest of the memory reserved for KV Cache is\s*"
    + r"(-?\d+(?:\.\d+)?)\s*GiB"
)
_V1_PROFILE_RE = re.compile(
    r"torch peak memory increase:\s*" + _F + r"\s*GiB;\s*non-torch forward increase memory:\s*" + _F + r"\s*GiB;"
    r"(?:.*?)weights memory:\s*" + _F + r"\s*GiB"
)
_FREE_INFO_RE = re.compile(
    phrase("Free memory on device") + r"(?:\s*[\w:]+)?\s*\(\s*" + _F + r"\s*/\s*" + _F + r"\s*GiB\)\s*on\s*startup\.\s*"
    + phrase("Desired GPU memory utilization is") + r"\s*\(\s*" + _F + r",\s*" + _F + r"\s*GiB\)"
)
_ACTUAL_RE = re.compile(
    r"Actual usage is\s*" + _F + r"\s*GiB for (?:weight|consumed memory[^,]*),\s*" + _F + r"\s*GiB for peak activation,"
    r"(?:\s*" + _F + r"\s*GiB for non-torch memory,)?\s*(?:and\s*)?" + _F + r"\s*GiB for CUDAGraph memory"
)
_SUGGEST_RE = re.compile(r"--kv-cache-memory=(\d+)`?\s*\(\s*" + _F + r"\s*GiB\)\s*to fit into requested memory,\s*or\s*"
                         r"`?--kv-cache-memory=(\d+)")
_CURRENT_KV_RE = re.compile(r"Current kv cache memory in use is\s*" + _F + r"\s*GiB")


def _tokens(g: str) -> int:
    return int(_num(g))


def _true(_: str) -> bool:
    return True


_NumberField = tuple[str, int, Callable[[str], Any], str | None]


def _fld(fact: str, group: int, conv: Callable[[str], Any] = float, needs: str | None = None) -> _NumberField:
    """``fact`` from the match's ``group`` through ``conv``, only when the line holds ``needs``."""
    return fact, group, conv, needs


_NUMBER_RULES: tuple[tuple[re.Pattern[str], tuple[_NumberField, ...]], ...] = (
    (re.compile(r"(?:Model loading|Loading model weights|Loading weights|Weights loading) took\s*" + _F + r"\s*G"),
     (_fld("weights_gib", 1),)),
    (re.compile(r"Available KV cache memory:\s*(-?\d+(?:\.\d+)?)\s*GiB"), (_fld("kv_cache_gib", 1),)),
    (re.compile(r"KV cache size:\s*([\d,]+)\s*tokens"), (_fld("kv_cache_tokens", 1, _tokens),)),
    (re.compile(r"Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*" + _F + r"\s*x"),
     (_fld("max_model_len", 1, _tokens), _fld("max_concurrency", 2))),
    (re.compile(r"Estimated CUDA graph memory:\s*" + _F + r"\s*GiB"), (_fld("cudagraph_estimate_gib", 1),)),
    (re.compile(r"Graph capturing finished in\s*\d+(?:\.\d+)?\s*secs?,\s*took\s*(-?\d+(?:\.\d+)?)\s*GiB"),
     (_fld("cudagraph_actual_gib", 1),)),
    (re.compile(r"CUDA graph pool memory:\s*(-?\d+(?:\.\d+)?)\s*GiB \(actual\),"
                r"\s*(-?\d+(?:\.\d+)?)\s*GiB \(estimated\)"),
     (_fld("cudagraph_actual_gib", 1), _fld("cudagraph_estimate_gib", 2))),
    (_V0_TOTAL_RE, (_fld("gpu_mem_total_bytes", 1, _gib_to_bytes), _fld("gpu_memory_utilization", 2),
                    _fld("requested_gib", 3))),
    (_V0_BREAKDOWN_RE, (_fld("weights_gib", 1), _fld("non_torch_gib", 2), _fld("activation_peak_gib", 3),
                        _fld("kv_cache_gib", 4))),
    (_V1_PROFILE_RE, (_fld("activation_peak_gib", 1), _fld("non_torch_gib", 2), _fld("weights_gib", 3))),
    (_FREE_INFO_RE, (_fld("startup_free_gib", 1), _fld("startup_total_gib", 2),
                     _fld("gpu_mem_total_bytes", 2, _gib_to_bytes), _fld("gpu_memory_utilization", 3),
                     _fld("requested_gib", 4))),
    (_ACTUAL_RE, (_fld("weights_gib", 1, needs="for weight"), _fld("activation_peak_gib", 2),
                  _fld("non_torch_gib", 3), _fld("cudagraph_estimate_gib", 4))),
    (_SUGGEST_RE, (_fld("suggested_kv_cache_bytes", 1, int), _fld("suggested_kv_cache_full_bytes", 3, int))),
    (_CURRENT_KV_RE, (_fld("kv_cache_gib", 1),)),
    (re.compile(r"max_num_batched_tokens\s*=\s*(\d+)"),
     (_fld("max_num_batched_tokens", 1, int, "Chunked prefill"), _fld("chunked_prefill", 1, _true, "Chunked prefill"))),
    (re.compile(r"Using max model len\s*(\d+)"), (_fld("max_model_len", 1, int),)),
)
"""Start-up lines and the figures they carry, in the order they are read (an optional group that
did not match is skipped)."""
_GMU_EQUIVALENT_RE = re.compile(r"is equivalent to --gpu-memory-utilization=\s*" + _F)
_GMU_CURRENT_RE = re.compile(r"current --gpu-memory-utilization=\s*" + _F)


def numbers(text: str, put: Setter) -> None:
    """The start-up figures ``text`` holds."""
    for rx, fields in _NUMBER_RULES:
        m = rx.search(text)
        if not m:
            continue
        for fact, group, conv, needs in fields:
            raw = m.group(group)
            if raw is not None and (needs is None or needs in text):
                put(fact, conv(raw))
    if _GMU_EQUIVALENT_RE.search(text):
        cur = _GMU_CURRENT_RE.search(text)
        if cur:
            put("gpu_memory_utilization", float(cur.group(1)))
