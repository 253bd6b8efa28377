"""Allocator options that vLLM 0.21.0-0.30.0 silently drops once the weights are loaded.

Those releases wrap ``load_model()`` in ``_scoped_allocator_max_split``
(``vllm/v1/worker/gpu_worker.py@0.21.0``, same code ``@0.30.0``): on CUDA it writes
``max_split_size_mb:20`` through ``torch._C._accelerator_setAllocatorSettings`` and, after loading,
``max_split_size_mb:<N>`` with N taken from ``PYTORCH_CUDA_ALLOC_CONF`` only (unlimited when that
variable has none). Torch parses such a string as a whole configuration: ``garbage_collection_threshold``
and ``roundup_power2_divisions`` go back to their defaults (vLLM's own fix says so:
``vllm/device_allocator/alloc_conf.py@0.31.0``); ``expandable_segments`` is not reset. From 0.31.0
the scope writes the whole live setting back (``vllm/v1/worker/gpu_worker.py@0.31.0``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..i18n import both
from ..versions import Version, VersionSpec
from .notes import note

RANGE = VersionSpec.parse(">=0.21,<0.31")
RESET_KEYS = ("garbage_collection_threshold", "roundup_power2_divisions")
"""Options the post-load write returns to torch's defaults wherever they were set."""
_CUDA_VAR = "PYTORCH_CUDA_ALLOC_CONF"
_CUDA_MAX_SPLIT = re.compile(r"max_split_size_mb:(\d+)")
"""The regex vLLM 0.21-0.30 uses to find the value it restores."""


def in_range(vllm_version: str | Version | None) -> bool:
    vv = Version.try_parse(vllm_version) if vllm_version is not None else None
    return vv is not None and RANGE.contains(vv)


def lost_after_load(fields: Mapping[str, Any], env: Mapping[str, str], platform: str | None = "cuda") -> tuple[str, ...]:
    """The options of torch's setting (``fields``) that do not survive loading on 0.21-0.30.

    ``max_split_size_mb`` survives only when PYTORCH_CUDA_ALLOC_CONF itself spells it; the scope
    does nothing off CUDA (``current_platform.is_cuda()``)."""
    if platform not in (None, "cuda"):
        return ()
    lost = [k for k in RESET_KEYS if k in fields]
    if "max_split_size_mb" in fields and not _CUDA_MAX_SPLIT.search(env.get(_CUDA_VAR, "")):
        lost.insert(0, "max_split_size_mb")
    return tuple(lost)


def reset_note(lost: tuple[str, ...], vllm_version: str | Version | None) -> dict[str, str] | None:
    """A warning when the detected vLLM is one of the releases that drops ``lost``."""
    if not lost or not in_range(vllm_version):
        return None
    names = ", ".join(lost)
    return note(
        "alloc_reset_after_load",
        *both("facts.alloc_reset.note", version=vllm_version, names=names),
        "warning",
    )
