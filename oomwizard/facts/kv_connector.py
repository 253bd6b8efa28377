"""A KV connector next to expandable segments that vLLM's own refusal cannot see.

From 0.21.0 vLLM refuses a KV connector (NIXL, Mooncake: memory registered for RDMA) together with
expandable segments, because the allocator may remap the registered pages. The check looks for the
literal ``expandable_segments:True`` in PYTORCH_CUDA_ALLOC_CONF only, through 0.33.0
(``vllm/config/vllm.py@0.21.0``, ``@0.33.0``), while torch 2.10+ also takes the option from
PYTORCH_ALLOC_CONF when PYTORCH_CUDA_ALLOC_CONF is not set. Such a server starts without the
refusal, with the very combination it exists to prevent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..i18n import both
from .notes import note

_LITERAL = "expandable_segments:True"


def unguarded(settings: Mapping[str, Any], env: Mapping[str, str], torch_expandable: bool) -> dict[str, str] | None:
    """A warning when a server has ``--kv-transfer-config`` and torch runs expandable segments that the
    refusal, reading PYTORCH_CUDA_ALLOC_CONF alone, does not see."""
    if not settings.get("kv_transfer_config") or not torch_expandable:
        return None
    if _LITERAL in env.get("PYTORCH_CUDA_ALLOC_CONF", ""):
        return None
    return note(
        "kv_connector_unguarded",
        *both("facts.kv_connector.unguarded"),
        "warning",
    )
