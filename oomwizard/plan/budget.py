"""The memory budget per release: what vLLM subtracts from ``total x gpu_memory_utilization``.

``determine_available_memory`` (``vllm/v1/worker/gpu_worker.py``; V0 ``vllm/worker/worker.py``):
requested = total x util (``math.ceil`` from 0.14.0, ``vllm/v1/worker/utils.py::request_memory``),
minus weights, the activation peak of the profiling pass and non-torch memory, minus (0.20.0+,
``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1`` by default) the CUDA graph estimate. Those three
are measured by vLLM at start-up; without a log we estimate them, and say so.
"""

from __future__ import annotations

import math
import re
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
NON_TORCH_TP_PCIE = int(0.25 * GIB)
"""Non-torch memory of a start (CUDA context growth, cuBLAS/NCCL workspaces; custom all-reduce buffers
when TP > 1): typical figures. Single-GPU starts in the benchmark's logs measured 0.35 GiB (RTX 3090,
0.6.4, context included) and 0.03 GiB (RTX 4060, 0.7.3). For TP > 1 the V0 profiler's figure holds
NCCL's buffers (its baseline is taken before NCCL is set up: ``Worker.init_device``,
``vllm/worker/worker.py`` @0.7.1), and public V0 starts printing ``non_torch_memory`` split by the
link between the GPUs: ten over PCIe (RTX 2080 Ti/3090/4090, L40S, A40, A100 PCIe; TP 2-16; e.g.
vllm#13061, #14447, #15815, #16570) measured 0.20-0.43 GiB, median 0.25, used for cards that have no
NVLink; two over NVLink (A100 SXM, TP 8) 0.93 and 2.10 GiB. With so few NVLink readings, 0.9 GiB stays the typical figure for those and for
a GPU whose link is not known (both PCIe and SXM forms exist)."""

_PCIE_ONLY = re.compile(r"PCIe|GeForce|\bRTX\b|\bL4\b|\bL40S?\b|\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|\bT4\b",
                        re.IGNORECASE)
"""GPU names of cards that talk to each other over PCIe only (no SXM or NVLink form)."""


def link_of(gpu_name: str) -> str | None:
    """"pcie" for a card that has no NVLink form, else None (not known: SXM, NVL and PCIe forms share names)."""
    return "pcie" if _PCIE_ONLY.search(gpu_name or "") else None


def non_torch_counts(release: Version | None) -> str:
    """What the release's profiler counts as non-torch memory (``vllm/worker/worker.py`` and
    ``vllm/utils.py`` for V0, ``vllm/v1/worker/gpu_worker.py`` for V1): which parts of the device's
    used memory land there decides how far a typical figure can be off."""
    if release is None:
        return ""
    if release < v("0.7.0"):
        return ("; used - baseline free - weights - change of torch's allocated bytes (vllm/utils.py "
                "memory_profiling @0.6.6): blocks torch still caches count")
    if engine_of(release) == "v1" and release < v("0.9.1"):
        return ("; used - torch's allocated bytes after profiling (vllm/v1/worker/gpu_worker.py "
                f"determine_available_memory @{release.text}): this process's CUDA context and other processes count")
    if release >= v("0.27.0"):
        return f"; inside the memory consumed since start, with the weights (vllm/utils/mem_utils.py total_consumed @{release.text})"
    where = "vllm/utils.py MemorySnapshot @0.7.3" if release < v("0.9.1") else (
        f"vllm/utils.py MemorySnapshot @{release.text}" if release < v("0.9.2") else
        f"vllm/utils/__init__.py MemorySnapshot @{release.text}" if release < v("0.11.1") else
        f"vllm/utils/mem_utils.py @{release.text}")
    return f"; growth of used - torch's reserved bytes since the worker started ({where}): CUDA context and torch's cache excluded"


V0_LAYER_ROWS = {"llama": (3, 3), "mistral": (3, 3), "qwen2": (4, 3)}
"""V0 (eager) live tensors at the MLP's peak, per token, as (hidden-sized, intermediate-sized) rows.

The model's loop variable keeps the previous layer's output, the decoder keeps the residual and
the MLP input, and the MLP holds gate/up (2 rows of the intermediate) and the activation's output
(``LlamaModel.forward``, ``LlamaDecoderLayer.forward``, ``LlamaMLP.forward`` in
``vllm/model_executor/models/llama.py`` @0.6.6: gate/up is released when ``x`` is rebound, so the
peak is at the activation, 3 + 3). ``Qwen2MLP.forward`` (``qwen2.py`` @0.6.6) keeps ``gate_up`` in
its own name until it returns, so the down projection's output is live with it: 4 + 3. Both
forwards, the sampler step below and the profile's sampling parameters are the same in 0.7.3."""
V0_SAMPLER_BYTES_PER_LOGIT = 32
"""The V0 profile samples with ``top_p=0.99, top_k=vocab-1`` (``profile_run``,
``vllm/worker/model_runner.py`` @0.6.6), so ``_apply_top_k_top_p`` (``vllm/model_executor/layers/
sampler.py`` @0.6.6) runs: at its scatter the bf16 logits (2 B), their float32 copy (4), the sorted
values (4) and int64 indices (8), two bool masks (2), softmax and cumsum (4 + 4) and the output (4)
are live. torch.sort's own scratch space is not counted (it is inside PyTorch)."""


def v0_activation(model_type: str, *, hidden: int, inter_gpu: int, vocab: int, batched_tokens: int,
                  max_num_seqs: int, dtype_bytes: int) -> tuple[int, int, str] | None:
    """V0's profiling peak from the code's live tensors: (layer, sampler, formula), or ``None`` for a
    model whose forward was not read (the generic estimate is used then)."""
    rows = V0_LAYER_ROWS.get(model_type)
    if rows is None:
        return None
    h_rows, i_rows = rows
    layer = batched_tokens * (h_rows * hidden + i_rows * inter_gpu) * dtype_bytes
    seqs = min(max_num_seqs, batched_tokens)
    sampler = seqs * vocab * V0_SAMPLER_BYTES_PER_LOGIT + batched_tokens * hidden * dtype_bytes
    f = (f"V0 (eager) peak = max(layer {batched_tokens} tokens x ({h_rows} x {hidden} + {i_rows} x {inter_gpu}) x "
         f"{dtype_bytes} B, sampler {seqs} rows x {vocab} x {V0_SAMPLER_BYTES_PER_LOGIT} B + the model's output "
         f"{batched_tokens} x {hidden} x {dtype_bytes} B); live tensors of {model_type}'s forward and the profile's "
         "top-k/top-p sampling in vLLM 0.6.6")
    return layer, sampler, f


def estimate(*, hidden: int, inter_gpu: int, heads_gpu: int, kv_heads_gpu: int, head_dim: int, vocab: int,
             batched_tokens: int, max_num_seqs: int, dtype_bytes: int, tp: int, layers_gpu: int,
             counted_graphs: bool, release: Version | None = None, model_type: str = "",
             is_moe: bool = False, link: str | None = None) -> Estimates:
    """Start-up measurements vLLM makes that no config states: rough, labelled *estimated*.

    Activation peak of the profiling pass: one layer's live tensors for ``max_num_batched_tokens``
    tokens (QKV, gate/up, residuals) plus the sampler's float32 logits for ``max_num_seqs`` rows;
    for V0 models whose forward was read (:func:`v0_activation`), the larger of the code's live
    set in the layer stack and in the sampler.
    """
    per_tok = (2 * inter_gpu + (heads_gpu + 2 * kv_heads_gpu) * head_dim + 4 * hidden) * dtype_bytes
    logits = min(max_num_seqs, batched_tokens) * vocab * 4 * 2
    act = int(ACT_BYTES_PER_TOKEN_FACTOR * batched_tokens * per_tok + logits)
    act_f = (f"{batched_tokens} tokens x (2 x {inter_gpu} + ({heads_gpu} + 2 x {kv_heads_gpu}) x {head_dim} + 4 x {hidden})"
             f" x {dtype_bytes} B + {min(max_num_seqs, batched_tokens)} rows x {vocab} x 4 B x 2 (logits)")
    nt = NON_TORCH_TP1 if tp == 1 else NON_TORCH_TP_PCIE if link == "pcie" else NON_TORCH_TP
    nt_f = (f"{gib(nt)} typical for TP={'1' if tp == 1 else '>1'}{' over PCIe' if tp > 1 and link == 'pcie' else ''}"
            f"{non_torch_counts(release)}")
    cg = 0
    cg_f = "not reserved by this release/setting"
    if counted_graphs:
        cg = int(layers_gpu * 0.012 * GIB + 0.25 * GIB)
        cg_f = f"{layers_gpu} layers x 0.012 GiB + 0.25 GiB (typical graph pool for the default capture sizes)"
    layer = int(ACT_BYTES_PER_TOKEN_FACTOR * batched_tokens * per_tok)
    v0 = v0_activation(model_type, hidden=hidden, inter_gpu=inter_gpu, vocab=vocab, batched_tokens=batched_tokens,
                       max_num_seqs=max_num_seqs, dtype_bytes=dtype_bytes) \
        if release is not None and engine_of(release) == "v0" and not is_moe else None
    if v0:
        layer, logits, act_f = v0
        act = max(layer, logits)
    return Estimates(act, act_f, nt, nt_f, cg, cg_f, layer, logits)
