"""Every fact name the program knows, defined once.

Detection, the log reader, the decision tree's conditions, the command templates and the CLI's
``--set`` all use these names; ``oomwizard lint`` rejects a name that is not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..i18n import Text, TextError, msg
from ..text.units import GIB, KIB, MIB, TIB
from ..versions import Version, VersionError

TYPES = ("str", "int", "float", "bool", "version", "bytes", "enum", "list")


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: str
    values: tuple[str, ...] = ()
    """For ``enum`` facts: the allowed values (questions bound to the fact must use these ids)."""
    unit: str = ""

    @property
    def title(self) -> Text:
        """The fact's label: the catalogue key ``fact.<name>`` (lint checks every fact has one)."""
        return msg(f"fact.{self.name}")


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
    FactSpec("diagnosis", "str"),
    FactSpec("leading_scenario", "str"),
    FactSpec("failure_phase", "enum", FAILURE_PHASES),
    FactSpec("failed_rank", "int"),
    FactSpec("error_platform", "enum", ("cuda", "rocm", "xpu")),
    # --- answers that only the tree uses ---------------------------------------------------------
    FactSpec("symptom", "str"),
    FactSpec("changed_recently", "str"),
    FactSpec("v0_v1_choice", "str"),
    FactSpec("serving_feature", "str"),
    FactSpec("checkpoint_gib", "float", unit="GiB"),
    FactSpec("speculative_decoding", "bool"),
    # --- software -------------------------------------------------------------------------------
    FactSpec("vllm_version", "version"),
    FactSpec("torch_version", "version"),
    FactSpec("torch_cuda", "str"),
    FactSpec("triton_version", "version"),
    FactSpec("flashinfer_version", "version"),
    FactSpec("deep_gemm_version", "version"),
    FactSpec("transformers_version", "version"),
    FactSpec("nccl_version", "version"),
    FactSpec("python_version", "version"),
    FactSpec("engine", "enum", ("v0", "v1")),
    FactSpec("model_runner", "enum", ("v1", "v2")),
    FactSpec("sampler_flashinfer", "bool"),
    FactSpec("platform", "enum", ("cuda", "rocm", "xpu", "cpu")),
    # --- machine --------------------------------------------------------------------------------
    FactSpec("gpu_name", "str"),
    FactSpec("gpu_count", "int"),
    FactSpec("gpu_cc", "str"),
    FactSpec("gpu_sm", "str"),
    FactSpec("gpu_arch", "enum", GPU_ARCHS),
    FactSpec("gpu_mem_total_bytes", "bytes", unit="B"),
    FactSpec("gpu_mem_stated_bytes", "bytes", unit="B"),
    FactSpec("gpu_mem_free_bytes", "bytes", unit="B"),
    FactSpec("gpu_mem_used_by_others_bytes", "bytes", unit="B"),
    FactSpec("gpu_mixed_sizes", "bool"),
    FactSpec("gpu_link", "enum", ("nvlink", "pcie", "single")),
    FactSpec("mig_enabled", "bool"),
    FactSpec("driver_version", "str"),
    FactSpec("cuda_driver_version", "str"),
    FactSpec("in_container", "bool"),
    FactSpec("vllm_leftover_processes", "int"),
    FactSpec("vllm_leftover_gpu_bytes", "bytes", unit="B"),
    FactSpec("host_mem_total_bytes", "bytes", unit="B"),
    FactSpec("host_mem_available_bytes", "bytes", unit="B"),
    # --- allocator ------------------------------------------------------------------------------
    FactSpec("alloc_conf", "str"),
    FactSpec("alloc_conf_var", "str"),
    FactSpec("expandable_segments", "bool"),
    FactSpec("max_split_size_mb", "int"),
    FactSpec("alloc_reset_after_load", "str"),
    FactSpec("alloc_conf_shadowed", "str"),
    FactSpec("env_vllm_use_v1", "str"),
    FactSpec("env_vllm_use_v2_model_runner", "str"),
    FactSpec("env_vllm_use_deep_gemm", "str"),
    # --- the model ------------------------------------------------------------------------------
    FactSpec("model", "str"),
    FactSpec("model_arch", "str"),
    FactSpec("model_family", "enum", MODEL_FAMILIES),
    FactSpec("is_moe", "bool"),
    FactSpec("is_hybrid", "bool", ),
    FactSpec("is_multimodal", "bool"),
    FactSpec("kv_transfer_config", "str"),
    FactSpec("quantization", "str"),
    FactSpec("dtype", "str"),
    FactSpec("vocab_size", "int"),
    # --- engine arguments -----------------------------------------------------------------------
    FactSpec("serve_command", "str"),
    FactSpec("tp", "int"),
    FactSpec("pp", "int"),
    FactSpec("dp", "int"),
    FactSpec("ep", "bool"),
    FactSpec("max_model_len", "int", unit="tokens"),
    FactSpec("gpu_memory_utilization", "float"),
    FactSpec("max_num_seqs", "int"),
    FactSpec("max_num_batched_tokens", "int"),
    FactSpec("enforce_eager", "bool"),
    FactSpec("cudagraph_mode", "str"),
    FactSpec("kv_cache_dtype", "str"),
    FactSpec("speculative_method", "str"),
    FactSpec("num_speculative_tokens", "int"),
    FactSpec("lora_enabled", "bool"),
    FactSpec("max_loras", "int"),
    FactSpec("max_lora_rank", "int"),
    FactSpec("prefix_caching", "bool"),
    FactSpec("chunked_prefill", "bool"),
    FactSpec("custom_all_reduce_disabled", "bool"),
    FactSpec("sleep_mode", "bool"),
    FactSpec("cpu_offload_gb", "float"),
    FactSpec("swap_space_gb", "float"),
    FactSpec("limit_mm_per_prompt", "str"),
    FactSpec("use_deep_gemm", "bool"),
    FactSpec("kv_cache_memory_bytes", "bytes", unit="B"),
    # --- numbers from the log ---------------------------------------------------------------------
    FactSpec("weights_gib", "float", unit="GiB"),
    FactSpec("kv_cache_gib", "float", unit="GiB"),
    FactSpec("kv_cache_tokens", "int", unit="tokens"),
    FactSpec("max_concurrency", "float", unit="x"),
    FactSpec("kv_needed_gib", "float", unit="GiB"),
    FactSpec("estimated_max_model_len", "int", unit="tokens"),
    FactSpec("suggested_kv_cache_bytes", "bytes", unit="B"),
    FactSpec("suggested_kv_cache_full_bytes", "bytes", unit="B"),
    FactSpec("cudagraph_estimate_gib", "float", unit="GiB"),
    FactSpec("cudagraph_actual_gib", "float", unit="GiB"),
    FactSpec("activation_peak_gib", "float", unit="GiB"),
    FactSpec("non_torch_gib", "float", unit="GiB"),
    FactSpec("startup_free_gib", "float", unit="GiB"),
    FactSpec("startup_total_gib", "float", unit="GiB"),
    FactSpec("requested_gib", "float", unit="GiB"),
    FactSpec("sampler_dummy_requests", "int"),
    FactSpec("mamba_cache_blocks", "int", unit="blocks",
    ),
    FactSpec("workspace_required_mb", "float", unit="MB"),
    FactSpec("workspace_current_mb", "float", unit="MB"),
    FactSpec("sleep_freed_gib", "float", unit="GiB"),
    FactSpec("sleep_in_use_gib", "float", unit="GiB"),
    FactSpec("oom_requested_bytes", "bytes", unit="B"),
    FactSpec("oom_total_bytes", "bytes", unit="B"),
    FactSpec("oom_free_bytes", "bytes", unit="B"),
    FactSpec("oom_process_bytes", "bytes", unit="B"),
    FactSpec("oom_other_processes_bytes", "bytes", unit="B"),
    FactSpec("oom_allocated_bytes", "bytes", unit="B"),
    FactSpec("oom_reserved_unallocated_bytes", "bytes", unit="B"),
    FactSpec("oom_fragmented", "bool", ),
    FactSpec("oom_private_pools_bytes", "bytes", unit="B"),
    FactSpec("oom_gpu_index", "int"),
]

CATALOG: dict[str, FactSpec] = {s.name: s for s in _SPECS}


class FactValueError(TextError, ValueError):
    """A value that does not fit its fact's type; ``text`` says why in both languages (``str()``: English)."""


_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": KIB,
    "kb": 1000,
    "kib": KIB,
    "m": MIB,
    "mb": 1000**2,
    "mib": MIB,
    "g": GIB,
    "gb": 1000**3,
    "gib": GIB,
    "t": TIB,
    "tb": 1000**4,
    "tib": TIB,
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
