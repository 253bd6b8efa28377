"""Every fact name the program knows, defined once.

Detection, the log reader, the decision tree's conditions, the command templates and the CLI's
``--set`` all use these names; ``oomwizard lint`` rejects a name that is not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..i18n import Text, msg
from ..versions import Version, VersionError

TYPES = ("str", "int", "float", "bool", "version", "bytes", "enum", "list")


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: str
    title: Text
    values: tuple[str, ...] = ()
    """For ``enum`` facts: the allowed values (questions bound to the fact must use these ids)."""
    unit: str = ""


GPU_ARCHS = (
    "volta",
    "turing",
    "ampere",
    "ada",
    "hopper",
    "blackwell_sm100",
    "blackwell_sm110",
    "blackwell_sm120",
    "other",
)
FAILURE_PHASES = (
    "load_weights",
    "startup_check",
    "profile_run",
    "kv_cache_alloc",
    "graph_capture",
    "sampler_warmup",
    "serving",
    "host_memory",
    "cudagraph_profile",
    "kernel_warmup",
)
MODEL_FAMILIES = (
    "deepseek_v3",
    "deepseek_v32",
    "deepseek_v4",
    "kimi",
    "qwen",
    "llama",
    "mistral",
    "gpt_oss",
    "glm",
    "gemma",
    "other",
)

_SPECS: list[FactSpec] = [
    # --- what the log says happened -----------------------------------------------------------
    FactSpec("diagnosis", "str", msg("fact.diagnosis")),
    FactSpec("failure_phase", "enum", msg("fact.failure_phase"), FAILURE_PHASES),
    FactSpec("failed_rank", "int", msg("fact.failed_rank")),
    FactSpec("error_platform", "enum", msg("fact.error_platform"), ("cuda", "rocm", "xpu")),
    # --- answers that only the tree uses ---------------------------------------------------------
    FactSpec("symptom", "str", msg("fact.symptom")),
    FactSpec("changed_recently", "str", msg("fact.changed_recently")),
    FactSpec("v0_v1_choice", "str", msg("fact.v0_v1_choice")),
    FactSpec("serving_feature", "str", msg("fact.serving_feature")),
    FactSpec("checkpoint_gib", "float", msg("fact.checkpoint_gib"), unit="GiB"),
    FactSpec("speculative_decoding", "bool", msg("fact.speculative_decoding")),
    # --- software -------------------------------------------------------------------------------
    FactSpec("vllm_version", "version", msg("fact.vllm_version")),
    FactSpec("torch_version", "version", msg("fact.torch_version")),
    FactSpec("torch_cuda", "str", msg("fact.torch_cuda")),
    FactSpec("triton_version", "version", msg("fact.triton_version")),
    FactSpec("flashinfer_version", "version", msg("fact.flashinfer_version")),
    FactSpec("deep_gemm_version", "version", msg("fact.deep_gemm_version")),
    FactSpec("transformers_version", "version", msg("fact.transformers_version")),
    FactSpec("nccl_version", "version", msg("fact.nccl_version")),
    FactSpec("python_version", "version", msg("fact.python_version")),
    FactSpec("engine", "enum", msg("fact.engine"), ("v0", "v1")),
    FactSpec("model_runner", "enum", msg("fact.model_runner"), ("v1", "v2")),
    FactSpec("sampler_flashinfer", "bool", msg("fact.sampler_flashinfer")),
    FactSpec("platform", "enum", msg("fact.platform"), ("cuda", "rocm", "xpu", "cpu")),
    # --- machine --------------------------------------------------------------------------------
    FactSpec("gpu_name", "str", msg("fact.gpu_name")),
    FactSpec("gpu_count", "int", msg("fact.gpu_count")),
    FactSpec("gpu_cc", "str", msg("fact.gpu_cc")),
    FactSpec("gpu_sm", "str", msg("fact.gpu_sm")),
    FactSpec("gpu_arch", "enum", msg("fact.gpu_arch"), GPU_ARCHS),
    FactSpec("gpu_mem_total_bytes", "bytes", msg("fact.gpu_mem_total_bytes"), unit="B"),
    FactSpec("gpu_mem_free_bytes", "bytes", msg("fact.gpu_mem_free_bytes"), unit="B"),
    FactSpec("gpu_mem_used_by_others_bytes", "bytes", msg("fact.gpu_mem_used_by_others_bytes"), unit="B"),
    FactSpec("gpu_mixed_sizes", "bool", msg("fact.gpu_mixed_sizes")),
    FactSpec("gpu_link", "enum", msg("fact.gpu_link"), ("nvlink", "pcie", "single")),
    FactSpec("mig_enabled", "bool", msg("fact.mig_enabled")),
    FactSpec("driver_version", "str", msg("fact.driver_version")),
    FactSpec("cuda_driver_version", "str", msg("fact.cuda_driver_version")),
    FactSpec("in_container", "bool", msg("fact.in_container")),
    FactSpec("vllm_leftover_processes", "int", msg("fact.vllm_leftover_processes")),
    FactSpec("vllm_leftover_gpu_bytes", "bytes", msg("fact.vllm_leftover_gpu_bytes"), unit="B"),
    FactSpec("host_mem_total_bytes", "bytes", msg("fact.host_mem_total_bytes"), unit="B"),
    FactSpec("host_mem_available_bytes", "bytes", msg("fact.host_mem_available_bytes"), unit="B"),
    # --- allocator ------------------------------------------------------------------------------
    FactSpec("alloc_conf", "str", msg("fact.alloc_conf")),
    FactSpec("alloc_conf_var", "str", msg("fact.alloc_conf_var")),
    FactSpec("expandable_segments", "bool", msg("fact.expandable_segments")),
    FactSpec("max_split_size_mb", "int", msg("fact.max_split_size_mb")),
    FactSpec("alloc_reset_after_load", "str", msg("fact.alloc_reset_after_load")),
    FactSpec("alloc_conf_shadowed", "str", msg("fact.alloc_conf_shadowed")),
    FactSpec("env_vllm_use_v1", "str", msg("fact.env_vllm_use_v1")),
    FactSpec("env_vllm_use_v2_model_runner", "str", msg("fact.env_vllm_use_v2_model_runner")),
    FactSpec("env_vllm_use_deep_gemm", "str", msg("fact.env_vllm_use_deep_gemm")),
    # --- the model ------------------------------------------------------------------------------
    FactSpec("model", "str", msg("fact.model")),
    FactSpec("model_arch", "str", msg("fact.model_arch")),
    FactSpec("model_family", "enum", msg("fact.model_family"), MODEL_FAMILIES),
    FactSpec("is_moe", "bool", msg("fact.is_moe")),
    FactSpec(
        "is_hybrid",
        "bool",
        msg("fact.is_hybrid"),
    ),
    FactSpec("is_multimodal", "bool", msg("fact.is_multimodal")),
    FactSpec("kv_transfer_config", "str", msg("fact.kv_transfer_config")),
    FactSpec("quantization", "str", msg("fact.quantization")),
    FactSpec("dtype", "str", msg("fact.dtype")),
    FactSpec("vocab_size", "int", msg("fact.vocab_size")),
    # --- engine arguments -----------------------------------------------------------------------
    FactSpec("serve_command", "str", msg("fact.serve_command")),
    FactSpec("tp", "int", msg("fact.tp")),
    FactSpec("pp", "int", msg("fact.pp")),
    FactSpec("dp", "int", msg("fact.dp")),
    FactSpec("ep", "bool", msg("fact.ep")),
    FactSpec("max_model_len", "int", msg("fact.max_model_len"), unit="tokens"),
    FactSpec("gpu_memory_utilization", "float", msg("fact.gpu_memory_utilization")),
    FactSpec("max_num_seqs", "int", msg("fact.max_num_seqs")),
    FactSpec("max_num_batched_tokens", "int", msg("fact.max_num_batched_tokens")),
    FactSpec("enforce_eager", "bool", msg("fact.enforce_eager")),
    FactSpec("cudagraph_mode", "str", msg("fact.cudagraph_mode")),
    FactSpec("kv_cache_dtype", "str", msg("fact.kv_cache_dtype")),
    FactSpec("speculative_method", "str", msg("fact.speculative_method")),
    FactSpec("num_speculative_tokens", "int", msg("fact.num_speculative_tokens")),
    FactSpec("lora_enabled", "bool", msg("fact.lora_enabled")),
    FactSpec("max_loras", "int", msg("fact.max_loras")),
    FactSpec("max_lora_rank", "int", msg("fact.max_lora_rank")),
    FactSpec("prefix_caching", "bool", msg("fact.prefix_caching")),
    FactSpec("chunked_prefill", "bool", msg("fact.chunked_prefill")),
    FactSpec("custom_all_reduce_disabled", "bool", msg("fact.custom_all_reduce_disabled")),
    FactSpec("sleep_mode", "bool", msg("fact.sleep_mode")),
    FactSpec("cpu_offload_gb", "float", msg("fact.cpu_offload_gb")),
    FactSpec("swap_space_gb", "float", msg("fact.swap_space_gb")),
    FactSpec("limit_mm_per_prompt", "str", msg("fact.limit_mm_per_prompt")),
    FactSpec("use_deep_gemm", "bool", msg("fact.use_deep_gemm")),
    FactSpec("kv_cache_memory_bytes", "bytes", msg("fact.kv_cache_memory_bytes"), unit="B"),
    # --- numbers from the log ---------------------------------------------------------------------
    FactSpec("weights_gib", "float", msg("fact.weights_gib"), unit="GiB"),
    FactSpec("kv_cache_gib", "float", msg("fact.kv_cache_gib"), unit="GiB"),
    FactSpec("kv_cache_tokens", "int", msg("fact.kv_cache_tokens"), unit="tokens"),
    FactSpec("max_concurrency", "float", msg("fact.max_concurrency"), unit="x"),
    FactSpec("kv_needed_gib", "float", msg("fact.kv_needed_gib"), unit="GiB"),
    FactSpec("estimated_max_model_len", "int", msg("fact.estimated_max_model_len"), unit="tokens"),
    FactSpec("suggested_kv_cache_bytes", "bytes", msg("fact.suggested_kv_cache_bytes"), unit="B"),
    FactSpec("suggested_kv_cache_full_bytes", "bytes", msg("fact.suggested_kv_cache_full_bytes"), unit="B"),
    FactSpec("cudagraph_estimate_gib", "float", msg("fact.cudagraph_estimate_gib"), unit="GiB"),
    FactSpec("cudagraph_actual_gib", "float", msg("fact.cudagraph_actual_gib"), unit="GiB"),
    FactSpec("activation_peak_gib", "float", msg("fact.activation_peak_gib"), unit="GiB"),
    FactSpec("non_torch_gib", "float", msg("fact.non_torch_gib"), unit="GiB"),
    FactSpec("startup_free_gib", "float", msg("fact.startup_free_gib"), unit="GiB"),
    FactSpec("startup_total_gib", "float", msg("fact.startup_total_gib"), unit="GiB"),
    FactSpec("requested_gib", "float", msg("fact.requested_gib"), unit="GiB"),
    FactSpec("sampler_dummy_requests", "int", msg("fact.sampler_dummy_requests")),
    FactSpec(
        "mamba_cache_blocks",
        "int",
        msg("fact.mamba_cache_blocks"),
        unit="blocks",
    ),
    FactSpec("workspace_required_mb", "float", msg("fact.workspace_required_mb"), unit="MB"),
    FactSpec("workspace_current_mb", "float", msg("fact.workspace_current_mb"), unit="MB"),
    FactSpec("sleep_freed_gib", "float", msg("fact.sleep_freed_gib"), unit="GiB"),
    FactSpec("sleep_in_use_gib", "float", msg("fact.sleep_in_use_gib"), unit="GiB"),
    FactSpec("oom_requested_bytes", "bytes", msg("fact.oom_requested_bytes"), unit="B"),
    FactSpec("oom_total_bytes", "bytes", msg("fact.oom_total_bytes"), unit="B"),
    FactSpec("oom_free_bytes", "bytes", msg("fact.oom_free_bytes"), unit="B"),
    FactSpec("oom_process_bytes", "bytes", msg("fact.oom_process_bytes"), unit="B"),
    FactSpec("oom_other_processes_bytes", "bytes", msg("fact.oom_other_processes_bytes"), unit="B"),
    FactSpec("oom_allocated_bytes", "bytes", msg("fact.oom_allocated_bytes"), unit="B"),
    FactSpec("oom_reserved_unallocated_bytes", "bytes", msg("fact.oom_reserved_unallocated_bytes"), unit="B"),
    FactSpec(
        "oom_fragmented",
        "bool",
        msg("fact.oom_fragmented"),
    ),
    FactSpec("oom_private_pools_bytes", "bytes", msg("fact.oom_private_pools_bytes"), unit="B"),
    FactSpec("oom_gpu_index", "int", msg("fact.oom_gpu_index")),
]

CATALOG: dict[str, FactSpec] = {s.name: s for s in _SPECS}


class FactValueError(ValueError):
    """A value that does not fit its fact's type; ``text`` says why in both languages (``str()``: English)."""

    def __init__(self, text: Text) -> None:
        super().__init__(text.en)
        self.text = text


_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1000**4,
    "tib": 1024**4,
}


def parse_size(text: str) -> int:
    """``"1.5 GiB"``, ``"512MiB"``, ``"2G"`` (binary, as vLLM reads it), ``"1024"`` -> bytes."""
    import re

    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise FactValueError(msg("facts.value.not_size").format(text=text))
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def _to_bool(spec: FactSpec, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    s = str(raw).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise FactValueError(msg("facts.value.not_bool").format(name=spec.name, raw=raw))


def _to_enum(spec: FactSpec, raw: Any) -> str:
    s = str(raw).strip()
    if s not in spec.values:
        raise FactValueError(msg("facts.value.not_enum").format(name=spec.name, values=", ".join(spec.values), raw=raw))
    return s


_CONVERT: dict[str, Callable[[FactSpec, Any], Any]] = {
    "version": lambda spec, raw: Version.parse(str(raw)),
    "bool": _to_bool,
    "int": lambda spec, raw: int(str(raw).replace(",", "").replace("_", "")),
    "float": lambda spec, raw: float(str(raw)),
    "bytes": lambda spec, raw: raw if isinstance(raw, int) else parse_size(str(raw)),
    "enum": _to_enum,
    "list": lambda spec, raw: list(raw) if isinstance(raw, (list, tuple)) else [x.strip() for x in str(raw).split(",")],
}


def coerce(name: str, raw: Any) -> Any:
    """Turn a user-typed or JSON value into the fact's type; raises :class:`FactValueError`."""
    spec = CATALOG.get(name)
    if spec is None:
        raise FactValueError(msg("facts.value.unknown").format(name=name))
    if raw is None:
        return None
    convert = _CONVERT.get(spec.type)
    if convert is None:
        return str(raw)
    try:
        return convert(spec, raw)
    except FactValueError:
        raise
    except (ValueError, VersionError) as e:
        raise FactValueError(msg("facts.value.bad").format(name=name, error=e)) from e
