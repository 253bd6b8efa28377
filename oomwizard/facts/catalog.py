"""Every fact name the program knows, defined once.

Detection, the log reader, the decision tree's conditions, the command templates and the CLI's
``--set`` all use these names; ``oomwizard lint`` rejects a name that is not here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..i18n import Text
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
    FactSpec("diagnosis", "str", Text("Best-matching scenario", "最匹配的场景")),
    FactSpec("failure_phase", "enum", Text("Failure phase", "失败阶段"), FAILURE_PHASES),
    FactSpec("failed_rank", "int", Text("First rank to fail", "最先失败的 rank")),
    FactSpec("error_platform", "enum", Text("Error wording (CUDA/HIP/XPU)", "报错平台"), ("cuda", "rocm", "xpu")),
    # --- answers that only the tree uses ---------------------------------------------------------
    FactSpec("symptom", "str", Text("What fails", "故障现象")),
    FactSpec("changed_recently", "str", Text("What changed since it last worked", "上次正常后改动了什么")),
    FactSpec("v0_v1_choice", "str", Text("V0 or V1 after upgrading", "升级后选 V0 还是 V1")),
    FactSpec("serving_feature", "str", Text("Feature active when a request ran out of memory", "请求 OOM 时启用的特性")),
    FactSpec("checkpoint_gib", "float", Text("Size of the model's weight files", "模型权重文件大小"), unit="GiB"),
    FactSpec("speculative_decoding", "bool", Text("Speculative decoding on", "启用了推测解码")),
    # --- software -------------------------------------------------------------------------------
    FactSpec("vllm_version", "version", Text("vLLM version", "vLLM 版本")),
    FactSpec("torch_version", "version", Text("PyTorch version", "PyTorch 版本")),
    FactSpec("torch_cuda", "str", Text("CUDA version PyTorch was built for", "PyTorch 编译所用 CUDA 版本")),
    FactSpec("triton_version", "version", Text("Triton version", "Triton 版本")),
    FactSpec("flashinfer_version", "version", Text("FlashInfer version", "FlashInfer 版本")),
    FactSpec("deep_gemm_version", "version", Text("DeepGEMM version", "DeepGEMM 版本")),
    FactSpec("transformers_version", "version", Text("Transformers version", "Transformers 版本")),
    FactSpec("nccl_version", "version", Text("NCCL version", "NCCL 版本")),
    FactSpec("python_version", "version", Text("Python version of the vLLM environment", "vLLM 环境的 Python 版本")),
    FactSpec("engine", "enum", Text("vLLM engine", "vLLM 引擎"), ("v0", "v1")),
    FactSpec("model_runner", "enum", Text("GPU model runner", "GPU Model Runner"), ("v1", "v2")),
    FactSpec("sampler_flashinfer", "bool", Text("FlashInfer samples top-k/top-p", "由 FlashInfer 执行 top-k/top-p 采样")),
    FactSpec("platform", "enum", Text("Accelerator platform", "加速器平台"), ("cuda", "rocm", "xpu", "cpu")),
    # --- machine --------------------------------------------------------------------------------
    FactSpec("gpu_name", "str", Text("GPU model", "GPU 型号")),
    FactSpec("gpu_count", "int", Text("Number of GPUs", "GPU 数量")),
    FactSpec("gpu_cc", "str", Text("Compute capability", "计算能力")),
    FactSpec("gpu_sm", "str", Text("SM architecture", "SM 架构")),
    FactSpec("gpu_arch", "enum", Text("GPU architecture", "GPU 架构"), GPU_ARCHS),
    FactSpec("gpu_mem_total_bytes", "bytes", Text("Memory per GPU", "单卡显存"), unit="B"),
    FactSpec("gpu_mem_free_bytes", "bytes", Text("Free memory now (smallest GPU)", "当前空闲显存（最少的一张卡）"), unit="B"),
    FactSpec("gpu_mem_used_by_others_bytes", "bytes", Text("Memory held by other processes", "其他进程占用的显存"), unit="B"),
    FactSpec("gpu_mixed_sizes", "bool", Text("GPUs of different memory sizes", "GPU 显存大小不一致")),
    FactSpec("gpu_link", "enum", Text("Link between GPUs", "GPU 间互联"), ("nvlink", "pcie", "single")),
    FactSpec("mig_enabled", "bool", Text("MIG mode", "MIG 模式")),
    FactSpec("driver_version", "str", Text("NVIDIA driver", "NVIDIA 驱动")),
    FactSpec("cuda_driver_version", "str", Text("CUDA version of the driver", "驱动支持的 CUDA 版本")),
    FactSpec("in_container", "bool", Text("Running in a container", "运行在容器中")),
    FactSpec("vllm_leftover_processes", "int", Text("vLLM processes left without a server", "没有对应服务的残留 vLLM 进程")),
    FactSpec("vllm_leftover_gpu_bytes", "bytes", Text("GPU memory held by leftover vLLM processes", "残留 vLLM 进程占用的显存"), unit="B"),
    FactSpec("host_mem_total_bytes", "bytes", Text("Host RAM", "主机内存"), unit="B"),
    FactSpec("host_mem_available_bytes", "bytes", Text("Host RAM available", "主机可用内存"), unit="B"),
    # --- allocator ------------------------------------------------------------------------------
    FactSpec("alloc_conf", "str", Text("Allocator setting torch will use", "torch 实际使用的分配器配置")),
    FactSpec("alloc_conf_var", "str", Text("Variable the allocator setting comes from", "分配器配置来源变量")),
    FactSpec("expandable_segments", "bool", Text("expandable_segments enabled", "已启用 expandable_segments")),
    FactSpec("max_split_size_mb", "int", Text("max_split_size_mb", "max_split_size_mb")),
    FactSpec(
        "alloc_reset_after_load",
        "str",
        Text("Allocator options vLLM 0.21-0.30 resets after loading the weights",
             "vLLM 0.21-0.30 在加载权重后重置的分配器选项"),
    ),
    FactSpec(
        "alloc_conf_shadowed",
        "str",
        Text("Allocator variable torch ignores because an empty one is set ahead of it",
             "因前面有一个已设置但为空的变量而被 torch 忽略的分配器变量"),
    ),
    FactSpec("env_vllm_use_v1", "str", Text("VLLM_USE_V1 setting", "VLLM_USE_V1 设置")),
    FactSpec("env_vllm_use_v2_model_runner", "str", Text("VLLM_USE_V2_MODEL_RUNNER setting", "VLLM_USE_V2_MODEL_RUNNER 设置")),
    FactSpec("env_vllm_use_deep_gemm", "str", Text("VLLM_USE_DEEP_GEMM setting", "VLLM_USE_DEEP_GEMM 设置")),
    # --- the model ------------------------------------------------------------------------------
    FactSpec("model", "str", Text("Model", "模型")),
    FactSpec("model_arch", "str", Text("Model architecture", "模型架构")),
    FactSpec("model_family", "enum", Text("Model family", "模型系列"), MODEL_FAMILIES),
    FactSpec("is_moe", "bool", Text("Mixture-of-experts model", "MoE 模型")),
    FactSpec(
        "is_hybrid",
        "bool",
        Text("Hybrid or attention-free model (Mamba, linear attention)", "混合架构或无注意力模型（Mamba、线性注意力）"),
    ),
    FactSpec("is_multimodal", "bool", Text("Multimodal model", "多模态模型")),
    FactSpec("kv_transfer_config", "str", Text("KV connector (--kv-transfer-config)", "KV connector（--kv-transfer-config）")),
    FactSpec("quantization", "str", Text("Quantization", "量化方式")),
    FactSpec("dtype", "str", Text("Model dtype", "模型数据类型")),
    FactSpec("vocab_size", "int", Text("Vocabulary size", "词表大小")),
    # --- engine arguments -----------------------------------------------------------------------
    FactSpec("serve_command", "str", Text("vLLM command line", "vLLM 启动命令")),
    FactSpec("tp", "int", Text("Tensor parallel size", "张量并行数")),
    FactSpec("pp", "int", Text("Pipeline parallel size", "流水线并行数")),
    FactSpec("dp", "int", Text("Data parallel size", "数据并行数")),
    FactSpec("ep", "bool", Text("Expert parallel", "专家并行")),
    FactSpec("max_model_len", "int", Text("max_model_len", "max_model_len"), unit="tokens"),
    FactSpec("gpu_memory_utilization", "float", Text("gpu_memory_utilization", "gpu_memory_utilization")),
    FactSpec("max_num_seqs", "int", Text("max_num_seqs", "max_num_seqs")),
    FactSpec("max_num_batched_tokens", "int", Text("max_num_batched_tokens", "max_num_batched_tokens")),
    FactSpec("enforce_eager", "bool", Text("enforce_eager", "enforce_eager")),
    FactSpec("cudagraph_mode", "str", Text("CUDA graph mode", "CUDA graph 模式")),
    FactSpec("kv_cache_dtype", "str", Text("KV cache dtype", "KV cache 数据类型")),
    FactSpec("speculative_method", "str", Text("Speculative decoding method", "推测解码方式")),
    FactSpec("num_speculative_tokens", "int", Text("Speculative tokens", "推测 token 数")),
    FactSpec("lora_enabled", "bool", Text("LoRA enabled", "启用 LoRA")),
    FactSpec("max_loras", "int", Text("max_loras", "max_loras")),
    FactSpec("max_lora_rank", "int", Text("max_lora_rank", "max_lora_rank")),
    FactSpec("prefix_caching", "bool", Text("Prefix caching", "前缀缓存")),
    FactSpec("chunked_prefill", "bool", Text("Chunked prefill", "分块预填充")),
    FactSpec("custom_all_reduce_disabled", "bool", Text("Custom all-reduce disabled", "已禁用 custom all-reduce")),
    FactSpec("sleep_mode", "bool", Text("Sleep mode", "休眠模式")),
    FactSpec("cpu_offload_gb", "float", Text("cpu_offload_gb", "cpu_offload_gb")),
    FactSpec("swap_space_gb", "float", Text("swap_space (GiB)", "swap_space（GiB）")),
    FactSpec("limit_mm_per_prompt", "str", Text("limit_mm_per_prompt", "limit_mm_per_prompt")),
    FactSpec("use_deep_gemm", "bool", Text("DeepGEMM in use", "使用 DeepGEMM")),
    FactSpec("kv_cache_memory_bytes", "bytes", Text("--kv-cache-memory-bytes", "--kv-cache-memory-bytes"), unit="B"),
    # --- numbers from the log ---------------------------------------------------------------------
    FactSpec("weights_gib", "float", Text("Weights per GPU", "单卡权重显存"), unit="GiB"),
    FactSpec("kv_cache_gib", "float", Text("Available KV cache memory", "可用 KV cache 显存"), unit="GiB"),
    FactSpec("kv_cache_tokens", "int", Text("KV cache size", "KV cache 容量"), unit="tokens"),
    FactSpec("max_concurrency", "float", Text("Maximum concurrency at max_model_len", "max_model_len 下最大并发"), unit="x"),
    FactSpec("kv_needed_gib", "float", Text("KV cache needed for one max-length request", "单个最长请求所需 KV cache"), unit="GiB"),
    FactSpec("estimated_max_model_len", "int", Text("vLLM's estimated maximum model length", "vLLM 估算的最大模型长度"), unit="tokens"),
    FactSpec("suggested_kv_cache_bytes", "bytes", Text("vLLM's suggested --kv-cache-memory (fits)", "vLLM 建议的 --kv-cache-memory（可容纳）"), unit="B"),
    FactSpec("suggested_kv_cache_full_bytes", "bytes", Text("vLLM's suggested --kv-cache-memory (full GPU)", "vLLM 建议的 --kv-cache-memory（占满显存）"), unit="B"),
    FactSpec("cudagraph_estimate_gib", "float", Text("Estimated CUDA graph memory", "估算的 CUDA graph 显存"), unit="GiB"),
    FactSpec("cudagraph_actual_gib", "float", Text("CUDA graph memory taken", "CUDA graph 实际显存"), unit="GiB"),
    FactSpec("activation_peak_gib", "float", Text("Peak activation memory", "峰值激活显存"), unit="GiB"),
    FactSpec("non_torch_gib", "float", Text("Non-torch memory", "非 torch 显存"), unit="GiB"),
    FactSpec("startup_free_gib", "float", Text("Free memory at start-up", "启动时空闲显存"), unit="GiB"),
    FactSpec("startup_total_gib", "float", Text("Total memory at start-up", "启动时总显存"), unit="GiB"),
    FactSpec("requested_gib", "float", Text("Memory vLLM asked for (total x utilization)", "vLLM 申请的显存（总量 x 利用率）"), unit="GiB"),
    FactSpec("sampler_dummy_requests", "int", Text("Dummy requests in sampler warm-up", "sampler 预热的虚拟请求数")),
    FactSpec(
        "mamba_cache_blocks",
        "int",
        Text("Mamba cache blocks the KV budget holds", "KV 预算能容纳的 Mamba cache 块数"),
        unit="blocks",
    ),
    FactSpec("workspace_required_mb", "float", Text("Workspace needed after lock", "锁定后所需 workspace"), unit="MB"),
    FactSpec("workspace_current_mb", "float", Text("Workspace size when it was locked", "锁定时的 workspace 大小"), unit="MB"),
    FactSpec("sleep_freed_gib", "float", Text("Memory vLLM's sleep freed", "vLLM 休眠释放的显存"), unit="GiB"),
    FactSpec("sleep_in_use_gib", "float", Text("GPU memory still in use while vLLM slept", "vLLM 休眠时仍被占用的显存"), unit="GiB"),
    FactSpec("oom_requested_bytes", "bytes", Text("OOM: tried to allocate", "OOM：尝试分配"), unit="B"),
    FactSpec("oom_total_bytes", "bytes", Text("OOM: GPU total capacity", "OOM：GPU 总容量"), unit="B"),
    FactSpec("oom_free_bytes", "bytes", Text("OOM: free on the GPU", "OOM：GPU 空闲"), unit="B"),
    FactSpec("oom_process_bytes", "bytes", Text("OOM: used by this process", "OOM：本进程占用"), unit="B"),
    FactSpec("oom_other_processes_bytes", "bytes", Text("OOM: used by other processes", "OOM：其他进程占用"), unit="B"),
    FactSpec("oom_allocated_bytes", "bytes", Text("OOM: allocated by PyTorch", "OOM：PyTorch 已分配"), unit="B"),
    FactSpec("oom_reserved_unallocated_bytes", "bytes", Text("OOM: reserved but unallocated", "OOM：已保留未分配"), unit="B"),
    FactSpec(
        "oom_fragmented",
        "bool",
        Text("OOM: reserved-but-unallocated memory would have covered the request",
             "OOM：已保留未分配的显存本可满足这次申请"),
    ),
    FactSpec("oom_private_pools_bytes", "bytes", Text("OOM: in private pools (CUDA graphs)", "OOM：私有内存池（CUDA graph）"), unit="B"),
    FactSpec("oom_gpu_index", "int", Text("OOM: GPU index", "OOM：GPU 编号")),
]

CATALOG: dict[str, FactSpec] = {s.name: s for s in _SPECS}


class FactValueError(ValueError):
    pass


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
        raise FactValueError(f"not a size: {text!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def _to_bool(spec: FactSpec, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    s = str(raw).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    raise FactValueError(f"{spec.name}: expected yes/no, got {raw!r}")


def _to_enum(spec: FactSpec, raw: Any) -> str:
    s = str(raw).strip()
    if s not in spec.values:
        raise FactValueError(f"{spec.name}: expected one of {', '.join(spec.values)}, got {raw!r}")
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
        raise FactValueError(f"unknown fact {name!r}")
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
        raise FactValueError(f"{name}: {e}") from e
