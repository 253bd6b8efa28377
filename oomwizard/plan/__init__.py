"""The offline capacity planner: will this model start under vLLM here, and how much KV cache will it get?

The planner repeats vLLM's own arithmetic per release where that arithmetic is deterministic
(per-token KV bytes, blocks, the ``GPU KV cache size`` and ``Maximum concurrency`` lines) and
says so; the parts vLLM measures at start-up (activation peak, non-torch memory, CUDA graphs)
are estimated, or taken from the log of an earlier start of the same model ("calibrated").
Every number carries its basis and its formula. No network, no torch, no vLLM import.
"""

from __future__ import annotations

from .errors import PlanError

__all__ = ["PlanError"]
