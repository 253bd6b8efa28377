"""The memory budget per release: what vLLM subtracts from ``total x gpu_memory_utilization``.

``determine_available_memory`` (``vllm/v1/worker/gpu_worker.py``; V0 ``vllm/worker/worker.py``):
requested = total x util (``math.ceil`` from 0.14.0, ``vllm/v1/worker/utils.py::request_memory``),
minus weights, the activation peak of the profiling pass and non-torch memory, minus (0.20.0+,
``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1`` by default) the CUDA graph estimate. Those three
are measured by vLLM at start-up; without a log we estimate them, and say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..text.units import GIB, gib
from ..versions import Version
from .kv import v


def engine_of(release: Version) -> str:
    """V0 is the default engine before 0.8.0 (``VLLM_USE_V1`` default ``0``)."""
    return "v1" if release >= v("0.8.0") else "v0"


def default_util(release: Version) -> float:
    """``--gpu-memory-utilization`` default: 0.9, 0.92 from 0.20.0 (``vllm/config/cache.py``)."""
    return 0.92 if release >= v("0.20.0") else 0.9


def default_batched_tokens(release: Version, total_gib: float) -> int:
    """V1 ``vllm serve`` default ``max_num_batched_tokens`` by memory tier (``arg_utils.py``)."""
    if engine_of(release) == "v0":
        return 0  # V0 without chunked prefill profiles max_model_len tokens
    if release >= v("0.33.0") and total_gib >= 160:
        return 16384
    return 8192 if total_gib >= 70 else 2048


def default_max_num_seqs(release: Version, total_gib: float, gpu_name: str = "") -> int:
    if engine_of(release) == "v0":
        return 256
    if release < v("0.8.4"):
        return 1024
    big = total_gib >= 70 and not (release >= v("0.9.0") and "A100" in gpu_name.upper())
    return 1024 if big else 256


def requested_bytes(total: int, util: float, release: Version) -> tuple[int, str]:
    if release >= v("0.14.0"):
        return math.ceil(total * util), "ceil(total x gpu_memory_utilization)"
    return int(total * util), "total x gpu_memory_utilization"


def free_memory_error(free: int, total: int, util: float, requested: int, release: Version) -> str | None:
    """The start-up check of 0.9.2+ (``gpu_worker.py``; ``request_memory`` from 0.14.0): the GPU must
    have ``total x util`` free when vLLM starts, whatever other processes hold."""
    if engine_of(release) != "v1" or release < v("0.9.2") or free >= requested:
        return None

    def g(b: int) -> str:
        return f"{round(b / GIB, 2)}"

    device = " cuda:0" if release >= v("0.14.0") else ""
    return (f"Free memory on device{device} ({g(free)}/{g(total)} GiB) on startup is less than desired GPU memory "
            f"utilization ({util}, {g(requested)} GiB). Decrease GPU memory utilization or reduce GPU memory used by "
            "other processes.")


def mrv2_default(release: Version, arch: str, is_moe: bool, quantized: bool) -> bool:
    """Whether Model Runner V2 runs by default (``vllm/config/vllm.py`` / ``gpu_worker.py``)."""
    if release < v("0.22.0"):
        return False
    if release < v("0.24.0"):
        allowed = {"Qwen3ForCausalLM"} if release < v("0.23.0") else {"Qwen3ForCausalLM", "LlamaForCausalLM",
                                                                       "MistralForCausalLM"}
        return arch in allowed and not is_moe and not quantized
    if release < v("0.25.0"):
        return arch in {"Qwen3ForCausalLM", "LlamaForCausalLM", "MistralForCausalLM", "DeepseekV2ForCausalLM",
                        "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"}
    if release < v("0.29.0"):
        return not is_moe
    return True


def cudagraph_counted(release: Version, enforce_eager: bool, mrv2: bool) -> tuple[bool, str]:
    """Does this release subtract a CUDA graph estimate from the KV budget by default?"""
    if enforce_eager:
        return False, "--enforce-eager: no CUDA graphs, nothing reserved"
    if release < v("0.20.0"):
        return False, "before 0.20.0 graphs are captured after the KV cache and not reserved"
    if mrv2 and release < v("0.29.0"):
        return False, "Model Runner V2 returns 0 for the graph estimate before 0.29.0"
    return True, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (default from 0.20.0) subtracts the estimate"


@dataclass
class Estimates:
    activation: int
    activation_formula: str
    non_torch: int
    non_torch_formula: str
    cudagraph: int
    cudagraph_formula: str
    layer: int = 0
    """The part of ``activation`` that grows with the batch: one layer's live tensors."""
    sampler: int = 0


ACT_BYTES_PER_TOKEN_FACTOR = 1.0
"""Scale on the per-token activation estimate below; fitted on the tuning cases of the benchmark."""
NON_TORCH_TP1 = int(0.25 * GIB)
NON_TORCH_TP = int(0.9 * GIB)
"""Non-torch memory of a start (CUDA context growth, cuBLAS/NCCL workspaces; custom all-reduce buffers
when TP > 1); medians of the tuning cases."""


def estimate(*, hidden: int, inter_gpu: int, heads_gpu: int, kv_heads_gpu: int, head_dim: int, vocab: int,
             batched_tokens: int, max_num_seqs: int, dtype_bytes: int, tp: int, layers_gpu: int,
             counted_graphs: bool) -> Estimates:
    """Start-up measurements vLLM makes that no config states: rough, labelled *estimated*.

    Activation peak of the profiling pass: one layer's live tensors for ``max_num_batched_tokens``
    tokens (QKV, gate/up, residuals) plus the sampler's float32 logits for ``max_num_seqs`` rows.
    """
    per_tok = (2 * inter_gpu + (heads_gpu + 2 * kv_heads_gpu) * head_dim + 4 * hidden) * dtype_bytes
    logits = min(max_num_seqs, batched_tokens) * vocab * 4 * 2
    act = int(ACT_BYTES_PER_TOKEN_FACTOR * batched_tokens * per_tok + logits)
    act_f = (f"{batched_tokens} tokens x (2 x {inter_gpu} + ({heads_gpu} + 2 x {kv_heads_gpu}) x {head_dim} + 4 x {hidden})"
             f" x {dtype_bytes} B + {min(max_num_seqs, batched_tokens)} rows x {vocab} x 4 B x 2 (logits)")
    nt = NON_TORCH_TP1 if tp == 1 else NON_TORCH_TP
    nt_f = f"{gib(nt)} typical for TP={'1' if tp == 1 else '>1'}"
    cg = 0
    cg_f = "not reserved by this release/setting"
    if counted_graphs:
        cg = int(layers_gpu * 0.012 * GIB + 0.25 * GIB)
        cg_f = f"{layers_gpu} layers x 0.012 GiB + 0.25 GiB (typical graph pool for the default capture sizes)"
    return Estimates(act, act_f, nt, nt_f, cg, cg_f, int(ACT_BYTES_PER_TOKEN_FACTOR * batched_tokens * per_tok), logits)
