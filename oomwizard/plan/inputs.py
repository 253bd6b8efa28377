"""What a plan is asked for: the settings of one ``vllm serve`` and where the GPU size comes from."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

LATEST = "0.33.0"
"""Release planned for when neither --vllm-version nor the log says one."""

KV_DTYPE_BYTES = {"fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1, "bfloat16": 2, "float16": 2,
                  "half": 2, "float32": 4}


@dataclass(frozen=True)
class Inputs:
    model: str
    gpu: str | None = None
    gpu_memory_gib: float | None = None
    gpus: int | None = None
    tp: int = 1
    pp: int = 1
    dp: int = 1
    dtype: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    vllm_version: str | None = None
    block_size: int | None = None
    enforce_eager: bool = False
    enable_prefix_caching: bool | None = None
    """``--[no-]enable-prefix-caching``; ``None`` is the release's default (it matters for hybrid models)."""
    kv_cache_memory_bytes: int | None = None
    logged_kv_bytes: int | None = None
    """KV memory a log printed for these very settings: the capacity is then vLLM's arithmetic on it."""
    log_facts: dict[str, Any] = field(default_factory=dict, compare=False)
    log_name: str | None = None

    def but(self, **changes: Any) -> Inputs:
        return replace(self, **changes)
