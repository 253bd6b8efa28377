"""Facts a vLLM log states in passing: versions, engine arguments, memory numbers, environment.

Each rule is a trigger substring (cheap to test on every line) and a function that reads the
line. Later lines overwrite earlier ones: the last start of the engine is the one that failed.
The collector (``collect``) calls :func:`extract` on every logical line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import args as argparse_repr
from . import gpu_size
from .model_family import derive_model_facts
from .startup_numbers import TRIGGERS as STARTUP_TRIGGERS
from .startup_numbers import numbers as _numbers

__all__ = ["RULES", "TRIGGERS", "Setter", "derive_model_facts", "extract", "quoted_with_release"]

Setter = Callable[[str, Any], None]
"""``set(fact_name, raw_value)``; the collector converts and records the source line."""


_VERSION_RES = (
    re.compile(r"vLLM API server version\s*v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"vLLM [Vv]ersion\s*(?::|=|\bis\b|\bwas\b)?\s*v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"(?:^|[\s\[\]'\"(`])vllm\s*==\s*v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"^vllm\s{2,}v?(\d+\.\d+[\w.+-]*)"),
    re.compile(r"vllm/vllm-openai(?:-rocm)?:v?(\d+\.\d+\.\d+[\w.+-]*)"),
    # The start-up banner (0.1x): an ASCII-art logo with "version X" beside it.
    re.compile(r"[█▀▄]\s+version\s+v?(\d+\.\d+[\w.+-]*)"),
    # Prose in a report: "on vLLM 0.21.0", "vLLM v0.22.0 image", "- vLLM: 0.20.1" (three numbers, so
    # "vLLM 2" is not one).
    re.compile(r"\bvLLM:?\s+v?(\d+\.\d+\.\d+(?:\.post\d+|rc\d+|\.dev\w+|\+\w+)*)(?![\w.])"),
)
_BANNER_MODEL_RE = re.compile(r"[█▀▄]\s+model\s+(\S+)")
_LORA_UPDATING_RE = re.compile(r"\bVLLM_ALLOW_RUNTIME_LORA_UPDATING[\"']?\s*[=:]\s*[\"']?(?:true|True|TRUE|1)\b")
_TORCH_RES = (
    re.compile(r"PyTorch version\s*:\s*(\d+\.\d+[\w.+-]*)"),
    re.compile(r"(?:^|[\s\[\]'\"(])torch\s*==\s*(\d+\.\d+[\w.+-]*)"),
    re.compile(r"^torch\s{2,}(\d+\.\d+[\w.+-]*)"),
)
_ALLOC_RE = re.compile(r"\b(PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF)\b[\"']?\s*[=:]\s*[\"']?([^\s\"';]+)")
_ALLOC_QUOTED_RE = re.compile(r"(?:try setting|incompatible with|compatible with)\s*$")
_ENV_RES = {
    "env_vllm_use_v1": re.compile(r"\bVLLM_USE_V1[\"']?\s*[=:]\s*[\"']?(\d)"),
    "env_vllm_use_v2_model_runner": re.compile(r"\bVLLM_USE_V2_MODEL_RUNNER[\"']?\s*[=:]\s*[\"']?(\d)"),
    "env_vllm_use_deep_gemm": re.compile(r"\bVLLM_USE_DEEP_GEMM[\"']?\s*[=:]\s*[\"']?(\d)"),
}
_GPU_NAME_RES = (
    re.compile(r"\bGPU\s*(\d+):\s*((?:NVIDIA|AMD|Intel|Tesla|Quadro)[^(\n|]*?)\s*(?:\(UUID|\||$)"),
    re.compile(r"^\s*\|?\s*(\d+)\s+((?:NVIDIA|Tesla|Quadro)\s[\w .-]+?)\s{2,}(?:On|Off)\b"),
    re.compile(r"\bDevice name\s*:\s*((?:NVIDIA|AMD|Intel)[^\n,]*)"),
)
_CUDAGRAPH_MODE_RE = re.compile(
    r"cudagraph_mode[\"']?\s*[:=]\s*(?:<CUDAGraphMode\.([A-Z_]+)|[\"']?([A-Z_]{4,})|(\[\s*\d\s*,\s*\d\s*\]|\d))"
)
_MODE_CODES = {"0": "NONE", "1": "PIECEWISE", "2": "FULL", "[2,0]": "FULL_DECODE_ONLY", "[2,1]": "FULL_AND_PIECEWISE",
               "[1,1]": "PIECEWISE", "[0,0]": "NONE"}

def _apply_args(a: dict[str, Any], put: Setter) -> None:
    """Facts from an argument dict (``non-default args`` or ``Namespace``)."""
    simple = {
        "tensor_parallel_size": "tp", "pipeline_parallel_size": "pp", "data_parallel_size": "dp",
        "max_model_len": "max_model_len", "gpu_memory_utilization": "gpu_memory_utilization",
        "max_num_seqs": "max_num_seqs", "max_num_batched_tokens": "max_num_batched_tokens",
        "enforce_eager": "enforce_eager", "kv_cache_dtype": "kv_cache_dtype", "quantization": "quantization",
        "max_loras": "max_loras", "max_lora_rank": "max_lora_rank", "enable_prefix_caching": "prefix_caching",
        "enable_chunked_prefill": "chunked_prefill", "disable_custom_all_reduce": "custom_all_reduce_disabled",
        "enable_sleep_mode": "sleep_mode", "cpu_offload_gb": "cpu_offload_gb", "swap_space": "swap_space_gb",
        "enable_expert_parallel": "ep", "num_speculative_tokens": "num_speculative_tokens",
        "kv_cache_memory_bytes": "kv_cache_memory_bytes",
    }
    for key, fact in simple.items():
        v = a.get(key)
        if v is not None and not (isinstance(v, str) and v.startswith(("<", "("))):
            put(fact, v)
    if isinstance(a.get("block_size"), int):
        put("_block_size", a["block_size"])
    model = a.get("model_tag") or a.get("model")
    if isinstance(model, str) and model:
        put("model", model)
    dtype = a.get("dtype")
    if isinstance(dtype, str) and dtype not in ("auto", ""):
        put("dtype", dtype.replace("torch.", ""))
    if a.get("enable_lora") is not None:
        put("lora_enabled", bool(a.get("enable_lora")))
    mm = a.get("limit_mm_per_prompt")
    if mm:
        put("limit_mm_per_prompt", mm if isinstance(mm, str) else str(mm))
    spec = a.get("speculative_config")
    if isinstance(spec, dict):
        method = spec.get("method") or ("draft_model" if spec.get("model") else None)
        if method:
            put("speculative_method", str(method))
        n = spec.get("num_speculative_tokens")
        if n is not None:
            put("num_speculative_tokens", n)
    elif a.get("speculative_model"):
        put("speculative_method", "draft_model")
    cc = a.get("compilation_config")
    if cc is not None:
        mode = _cudagraph_mode(str(cc) if not isinstance(cc, dict) else repr(cc))
        if mode:
            put("cudagraph_mode", mode)


def _cudagraph_mode(text: str) -> str | None:
    m = _CUDAGRAPH_MODE_RE.search(text)
    if not m:
        return None
    if m.group(1) or m.group(2):
        return m.group(1) or m.group(2)
    code = re.sub(r"\s+", "", m.group(3))
    return _MODE_CODES.get(code)


def _engine_config(text: str, put: Setter) -> None:
    parsed = argparse_repr.parse_engine_config(text)
    if parsed is None:
        return
    engine, version, cfg = parsed
    if version:
        put("vllm_version", version)
    if engine == "V1":
        put("engine", "v1")
    elif engine == "V0" or "an LLM engine" in text:
        put("engine", "v0")
    mapping = {
        "tensor_parallel_size": "tp", "pipeline_parallel_size": "pp", "data_parallel_size": "dp",
        "max_seq_len": "max_model_len", "enforce_eager": "enforce_eager", "kv_cache_dtype": "kv_cache_dtype",
        "disable_custom_all_reduce": "custom_all_reduce_disabled", "enable_prefix_caching": "prefix_caching",
        "chunked_prefill_enabled": "chunked_prefill",
    }
    for key, fact in mapping.items():
        v = cfg.get(key)
        if v is not None and v != "None":
            put(fact, v)
    model = cfg.get("model")
    if isinstance(model, str) and model:
        put("model", model)
    q = cfg.get("quantization")
    if isinstance(q, str) and q not in ("None", ""):
        put("quantization", q)
    d = cfg.get("dtype")
    if isinstance(d, str):
        put("dtype", d.replace("torch.", ""))
    spec = cfg.get("speculative_config")
    if isinstance(spec, str) and spec not in ("None", ""):
        m = re.search(r"method=['\"]?(\w+)", spec)
        if m:
            put("speculative_method", m.group(1))
        m = re.search(r"num_spec(?:ulative)?_tokens=(\d+)", spec)
        if m:
            put("num_speculative_tokens", int(m.group(1)))
    cc = cfg.get("compilation_config")
    mode = _cudagraph_mode(repr(cc) if isinstance(cc, dict) else str(cc or text))
    if mode:
        put("cudagraph_mode", mode)


def _versions(text: str, put: Setter) -> None:
    for rx in _VERSION_RES:
        m = rx.search(text)
        if m:
            put("vllm_version", m.group(1).rstrip(".,"))
            return


def _torch(text: str, put: Setter) -> None:
    for rx in _TORCH_RES:
        m = rx.search(text)
        if m:
            version = m.group(1).rstrip(".,")
            put("torch_version", version)
            cu = re.search(r"\+cu(\d+)(\d)\b", version)
            if cu:
                put("torch_cuda", f"{cu.group(1)}.{cu.group(2)}")
            return


def _alloc(text: str, put: Setter) -> None:
    for m in _ALLOC_RE.finditer(text):
        before = text[max(0, m.start() - 24):m.start()]
        if _ALLOC_QUOTED_RE.search(before) or "unless" in text[m.end():m.end() + 12]:
            continue  # PyTorch's hint or vLLM quoting the setting, not the setting itself
        var, value = m.group(1), m.group(2).rstrip(",")
        put("alloc_conf", value)
        put("alloc_conf_var", var)
        put("expandable_segments", bool(re.search(r"expandable_segments\s*:\s*(?:True|true|1)", value)))
        split = re.search(r"max_split_size_mb\s*:\s*(\d+)", value)
        if split:
            put("max_split_size_mb", int(split.group(1)))


def _env(text: str, put: Setter) -> None:
    if _LORA_UPDATING_RE.search(text):
        put("lora_enabled", True)
    for fact, rx in _ENV_RES.items():
        m = rx.search(text)
        if m:
            put(fact, m.group(1))
            if fact == "env_vllm_use_deep_gemm":
                put("use_deep_gemm", m.group(1) == "1")


def _gpu(text: str, put: Setter) -> None:
    for rx in _GPU_NAME_RES:
        m = rx.search(text)
        if m:
            name = m.group(m.lastindex or 1).strip()
            if len(name) >= 4:
                put("gpu_name", name)
                if m.lastindex and m.lastindex >= 2:
                    put("_gpu_index", int(m.group(1)))
            return


def _misc(text: str, put: Setter) -> None:
    m = re.search(r"Automatically detected platform\s*(cuda|rocm|xpu|cpu)\b", text)
    if m:
        put("platform", m.group(1))
    if "Using V2 Model Runner" in text:
        put("model_runner", "v2")
    # vllm/v1/sample/ops/topk_topp_sampler.py (0.9.0-0.25.0) says which top-k/top-p path it took:
    # FlashInfer's sampling kernels, or the PyTorch one (which sorts before 0.17.0).
    if "Using FlashInfer for top-p & top-k sampling" in text:
        put("sampler_flashinfer", True)
    elif "native implementation of top-p & top-k sampling" in text:
        put("sampler_flashinfer", False)
    elif "using the V1 model runner instead" in text:
        put("model_runner", "v1")
    m = re.search(r"Resolved architecture:\s*([A-Za-z_]\w*)", text)
    if m:
        put("model_arch", m.group(1))
    m = re.search(r"Starting to load model\s+(\S+?)\.{0,3}$", text)
    if m:
        put("model", m.group(1))
    if "Encoder cache will be initialized" in text:
        put("is_multimodal", True)
    if re.search(r"Using DeepGemm|DeepGEMM (?:is )?enabled|deep_gemm warmup|DeepGEMM warmup", text, re.I):
        put("use_deep_gemm", True)
    if "Expandable segments are not compatible with memory pool" in text:
        put("expandable_segments", True)
    if re.search(r"[Cc]ustom all-?reduce is disabled|disable_custom_all_reduce=True", text):
        put("custom_all_reduce_disabled", True)
    m = re.search(r"vocab(?:ulary)?_size[\"']?\s*[:=]\s*(\d{4,7})", text)
    if m:
        put("vocab_size", int(m.group(1)))


_SLEEP_FREED_RE = re.compile(r"Sleep mode freed\s*(-?\d+(?:\.\d+)?)\s*GiB memory,\s*(\d+(?:\.\d+)?)\s*GiB memory is still in use")
_SLEEP_LINE_RE = re.compile(r"seconds to fall asleep|seconds to wake up|(?:CuMem|XpuMem)Allocator:\s*sleep freed")


def _sleep(text: str, put: Setter) -> None:
    """Sleep mode is on when vLLM says it fell asleep or woke up; the amounts it freed and left."""
    m = _SLEEP_FREED_RE.search(text)
    if m:
        put("sleep_mode", True)
        put("sleep_freed_gib", float(m.group(1)))
        put("sleep_in_use_gib", float(m.group(2)))
    elif _SLEEP_LINE_RE.search(text):
        put("sleep_mode", True)
    if "is incompatible with PYTORCH" in text and "expandable_segments:True" in text:
        put("expandable_segments", True)
    if "Expandable segments are not compatible with memory pool" in text:
        put("sleep_mode", True)  # only sleep mode creates that pool in 0.8.0-0.20.0


def _banner(text: str, put: Setter) -> None:
    m = _BANNER_MODEL_RE.search(text)
    if m:
        put("model", m.group(1))


def _llm_call(text: str, put: Setter) -> None:
    call = argparse_repr.llm_call_args(text)
    if call:
        _apply_args(call, put)
        put("_quoted_call", text)


def _args(text: str, put: Setter) -> None:
    nd = argparse_repr.parse_non_default_args(text)
    if nd is not None:
        _apply_args(nd, put)
        cmd = argparse_repr.serve_command(nd)
        if cmd:
            put("_serve_command_from_args", cmd)
        return
    ns = argparse_repr.parse_namespace(text)
    if ns is not None:
        _apply_args(ns, put)
        put("_namespace", ns)


def _command(text: str, put: Setter) -> None:
    cmd = argparse_repr.find_command(text)
    if cmd:
        put("_serve_command_literal", cmd)
        put("_quoted_command", text)
        _apply_args(argparse_repr.command_args(cmd), put)
        _alloc(text, put)
        _env(text, put)


RULES: tuple[tuple[tuple[str, ...], Callable[[str, Setter], None]], ...] = (
    (("LLM engine (", "LLM engine with config"), _engine_config),
    (("version", "Version", "vllm==", "vllm ", "vllm/vllm-openai", "vLLM ", "vLLM:"), _versions),
    (("PyTorch version", "torch==", "torch "), _torch),
    (("ALLOC_CONF",), _alloc),
    (("VLLM_USE_", "VLLM_ALLOW_RUNTIME_LORA"), _env),
    (("NVIDIA", "AMD ", "Intel", "Tesla", "Quadro", "Device name"), _gpu),
    (gpu_size.TRIGGERS, gpu_size.stated_size),
    (STARTUP_TRIGGERS, _numbers),
    (("platform", "Model Runner", "model runner", "Resolved architecture", "Starting to load model",
      "Encoder cache", "DeepGemm", "DeepGEMM", "deep_gemm", "Expandable segments", "ustom all", "custom_all_reduce",
      "vocab", "top-p & top-k sampling"), _misc),
    (("non-default args", "Namespace("), _args),
    (("LLM(",), _llm_call),
    (("█",), _banner),
    (("Sleep mode freed", "fall asleep", "sleep freed", "to wake up", "is incompatible with PYTORCH",
      "Expandable segments are not compatible"), _sleep),
    (("vllm serve", "vllm.entrypoints"), _command),
)
TRIGGERS: tuple[str, ...] = tuple(sorted({t for ts, _ in RULES for t in ts}))


def extract(text: str, put: Setter) -> None:
    """Run every rule whose trigger occurs in ``text``."""
    for triggers, rule in RULES:
        for t in triggers:
            if t in text:
                rule(text, put)
                break


def quoted_with_release(text: str, call: bool, version: str, put: Setter) -> str | None:
    """A command line (or ``LLM(...)`` call) quoted in the log, read again as ``version``'s parser
    reads it: the facts that reading changes (``-O``, short aliases), and the command line itself."""
    if call:
        before, after = argparse_repr.llm_call_args(text) or {}, argparse_repr.llm_call_args(text, version) or {}
        cmd = None
    else:
        cmd = argparse_repr.find_command(text, version)
        if cmd is None:
            return None
        before, after = argparse_repr.command_args(cmd), argparse_repr.command_args(cmd, version)
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    if changed:
        _apply_args(changed, put)
    return cmd
