"""Every rule that turns log text into a scenario, in one place.

* :data:`SIGNATURES` — messages that name their cause (``… when warming up sampler …``,
  ``Workspace is locked …``). Each carries the scenario, a score, the failure phase it implies,
  the reason shown to the operator, and the numbers its groups hold.
* :data:`FRAME_PHASES` — which traceback frames say which start-up phase was running.
* :data:`FRAME_FLAGS` — frames that add context (LoRA, speculative decoding, sort/top-k, model
  runner V2, multimodal encoders, custom all-reduce, DeepGEMM).
* :data:`TIMELINE` — ordinary start-up lines that tell how far the engine got, for failures
  that come without a traceback.

Every trigger of these rules is also what the reader searches each byte of a log for
(``collect.scanner``), so a rule added here is found wherever it sits in the input.

Message wording follows vLLM's sources per release (``vllm-facts.md`` §4); patterns tolerate
the variations between releases and the spaces a terminal wrap can swallow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..i18n import Text

# Scores: a message that names its cause, then that message refined by context, then the phase
# read from a traceback, then the phase guessed from how far start-up got.
MESSAGE = 0.95
REFINED = 0.97
PHASE = 0.8
NEIGHBOUR = 0.72
"""The phase another worker's traceback or method names for an error that has no frames of its own."""
TIMELINE_PHASE = 0.62
WEAK = 0.4
CUT = 0.35
"""A traceback the input stops inside: its frames name the phase, but nothing says it was memory."""
CUT_PHASES: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("_initialize_kv_caches", "profile_run", frozenset({"initialize_from_config", "initialize_cache"})),
)
"""``(frame, phase, unless)`` for a traceback cut short whose deepest known frame is a step that
runs several phases: ``_initialize_kv_caches`` (V0 and V1) profiles first, then allocates and
captures, so with nothing below it (and none of ``unless``, which come after the profile) the
excerpt stopped on the way into the profiling run. Only cut tracebacks use this: a whole one
names its phase by a deeper frame."""
EARLIER_RUN = 0.8
"""Factor for evidence from an earlier start of the engine than the last one that failed."""
CONFIDENT = 0.5
"""Below this the best match is shown but does not pre-answer the wizard's first question."""
SLEEP_MODE = "sleep-mode"
"""The scenario of vLLM's sleep mode and its cumem allocator (``rank`` refines it by frames)."""


def phrase(text: str) -> str:
    """A literal phrase as a regex where every space may have been lost or doubled by a wrap."""
    return r"\s*".join(re.escape(w) for w in text.split(" "))


_NUM = r"(\d+(?:\.\d+)?)"
_INT = r"(\d[\d,_]*)"
_SIZE = r"(\d+(?:\.\d+)?\s*(?:bytes|B|KiB|MiB|GiB|TiB|KB|MB|GB|TB))"


@dataclass(frozen=True)
class Signature:
    """A message whose words identify a scenario."""

    id: str
    triggers: tuple[str, ...]
    """Plain substrings; a line holding none of them is never tried against the regex."""
    pattern: re.Pattern[str]
    scenario: str
    score: float
    reason: Text
    """Shown to the operator; ``{name}`` is filled from the regex's named groups."""
    phase: str | None = None
    facts: dict[str, str] = field(default_factory=dict)
    """Named group -> fact name (converted to the fact's type by the caller)."""
    oom: bool = False
    """The message reports a GPU out-of-memory error (so phase and context apply)."""
    frames: re.Pattern[str] | None = None
    """When set, the message counts only at the end of a traceback with a frame (path or
    function) matching this: a bare CUDA error says nothing without the code that raised it."""


def _sig(id: str, trigger: str | tuple[str, ...], pattern: str, scenario: str, score: float, en: str, zh: str,
         phase: str | None = None, facts: dict[str, str] | None = None, oom: bool = False,
         frames: str | None = None) -> Signature:
    triggers = (trigger,) if isinstance(trigger, str) else trigger
    return Signature(id, triggers, re.compile(pattern), scenario, score, Text(en, zh), phase, facts or {}, oom,
                     re.compile(frames) if frames else None)


SIGNATURES: tuple[Signature, ...] = (
    _sig(
        "sampler-warmup-message", "warming up sampler",
        phrase("out of memory occurred when warming up sampler with") + r"\s*(?P<n>\d+)\s*" + phrase("dummy requests"),
        "sampler-warmup", MESSAGE,
        "vLLM says it ran out of memory warming up the sampler with {n} dummy requests (max_num_seqs).",
        "vLLM 报告用 {n} 个虚拟请求（max_num_seqs）预热 sampler 时显存不足。",
        phase="sampler_warmup", facts={"n": "sampler_dummy_requests"}, oom=True,
    ),
    _sig(
        "pooler-warmup-message", "warming up pooler",
        phrase("out of memory occurred when warming up pooler") + r"(?:\s*\([^)]*\))?\s*with\s*(?P<n>\d+)",
        "sampler-warmup", 0.9,
        "vLLM ran out of memory warming up the pooler with {n} dummy requests (same mechanism as the sampler warm-up).",
        "vLLM 用 {n} 个虚拟请求预热 pooler 时显存不足（与 sampler 预热同一机制）。",
        phase="sampler_warmup", facts={"n": "sampler_dummy_requests"}, oom=True,
    ),
    _sig(
        "custom-allreduce-invalid-argument", "invalid argument",
        r"custom_all_reduce[\w.]*(?::(?P<cline>\d+))?\s*'?invalid\s*argument",
        "custom-allreduce-ipc", MESSAGE,
        "custom all-reduce failed with CUDA 'invalid argument' (cudaIpcGetMemHandle on a buffer it cannot share).",
        "custom all-reduce 报 CUDA 'invalid argument'（对无法共享的缓冲区调用 cudaIpcGetMemHandle）。",
        phase="graph_capture",
    ),
    _sig(
        "custom-allreduce-ipc-error", "invalid argument",
        r"(?:CUDA|Cuda|HIP|hip)\s*error:?\s*'?invalid\s*argument",
        "custom-allreduce-ipc", MESSAGE - 0.03,
        "CUDA 'invalid argument' raised while custom all-reduce registered its CUDA graph buffers.",
        "custom all-reduce 注册 CUDA graph 缓冲区时抛出 CUDA 'invalid argument'。",
        phase="graph_capture", frames=r"custom_all_reduce|register_graph_buffers|get_graph_buffer_ipc_meta",
    ),
    _sig(
        "workspace-locked", "Workspace is locked",
        phrase("Workspace is locked but")
        + r"\s*(?:allocation\s*from\s*'(?P<site>[^']*)'\s*requires\s*" + _NUM.replace("(", "(?P<req>", 1)
        + r"\s*MB,\s*current\s*size\s*is\s*" + _NUM.replace("(", "(?P<cur>", 1) + r"\s*MB|.{0,120})",
        "workspace-locked", MESSAGE,
        "vLLM's shared workspace was locked after warm-up and a later call asked it to grow.",
        "vLLM 的共享 workspace 在预热后已锁定，之后的调用又要求扩容。",
        facts={"req": "workspace_required_mb", "cur": "workspace_current_mb"},
    ),
    _sig(
        "no-available-memory", "No available memory for the cache",
        phrase("No available memory for the cache blocks"),
        "no-kv-cache-memory", MESSAGE,
        "vLLM found no memory left for the KV cache after the weights and the profiling run.",
        "扣除权重和内存分析占用后，vLLM 找不到留给 KV cache 的显存。",
        phase="kv_cache_alloc",
    ),
    _sig(
        "kv-cache-too-small-v1", "To serve at least one request",
        phrase("To serve at least one request with the")
        + r"\s*models?'?s?'?s?\s*" + phrase("max seq len") + r"\s*\((?P<mml>\d+)\),?\s*\(?\s*"
        + r"(?P<need>\d+(?:\.\d+)?)\s*Gi?B\s*" + phrase("KV cache is needed, which is larger than the available KV cache memory")
        + r"\s*\((?P<avail>-?\d+(?:\.\d+)?)\s*Gi?B\)"
        # The estimate's clause, also when a retyped report shortened what precedes it ("(0.64 GiB). ... estimated").
        + r"(?:.{0,60}?" + phrase("estimated maximum model length is") + r"\s*(?P<est>\d+))?",
        "kv-cache-too-small", MESSAGE,
        "max_model_len {mml} needs {need} GiB of KV cache per request; only {avail} GiB is available.",
        "max_model_len {mml} 每个请求需要 {need} GiB KV cache，可用的只有 {avail} GiB。",
        phase="kv_cache_alloc",
        facts={"mml": "max_model_len", "need": "kv_needed_gib", "avail": "kv_cache_gib", "est": "estimated_max_model_len"},
    ),
    _sig(
        "kv-cache-too-small-v0", "is larger than the maximum number of tokens",
        phrase("max seq len") + r"\s*\((?P<mml>\d+)\)\s*" + phrase("is larger than the maximum number of tokens that can be stored in KV cache")
        + r"\s*\((?P<tokens>\d+)\)",
        "kv-cache-too-small", MESSAGE,
        "max_model_len {mml} is more than the {tokens} tokens the KV cache can hold.",
        "max_model_len {mml} 超过了 KV cache 能容纳的 {tokens} 个 token。",
        phase="kv_cache_alloc", facts={"mml": "max_model_len", "tokens": "kv_cache_tokens"},
    ),
    # 0.20.0+ (config/compilation.py): a hybrid model with FULL CUDA graphs needs one Mamba cache
    # block per decode sequence; 0.18.0-0.19.0 shrank the capture sizes without a word instead.
    _sig(
        "mamba-cache-blocks", "available Mamba cache",
        phrase("max_num_seqs") + r"\s*\(\s*(?P<seqs>\d[\d,]*)\s*\)\s*" + phrase("exceeds available Mamba cache blocks")
        + r"\s*\(\s*(?P<blocks>\d[\d,]*)\s*\)",
        "mamba-cache-blocks", MESSAGE,
        "max_num_seqs {seqs} is more than the {blocks} Mamba cache blocks the KV budget holds; "
        "FULL CUDA graphs need one block per decode sequence.",
        "max_num_seqs {seqs} 超过了 KV 预算能容纳的 {blocks} 个 Mamba cache 块；FULL CUDA graph 要求每个解码序列占一个块。",
        phase="kv_cache_alloc", facts={"seqs": "max_num_seqs", "blocks": "mamba_cache_blocks"},
    ),
    _sig(
        "free-memory-at-startup", "on startup is less than",
        phrase("Free memory on device") + r"(?:\s*(?P<dev>[\w:]+))?\s*\(\s*(?P<free>\d+(?:\.\d+)?)\s*/\s*(?P<total>\d+(?:\.\d+)?)\s*GiB\)\s*"
        + phrase("on startup is less than") + r"\s*(?:desired\s*GPU\s*memory\s*utilization|the\s*engine's\s*budget[^(]*)"
        + r"\s*\((?P<util>\d+(?:\.\d+)?),\s*(?P<req>\d+(?:\.\d+)?)\s*GiB\)",
        "insufficient-free-memory-at-startup", MESSAGE,
        "Only {free} of {total} GiB was free at start-up; gpu_memory_utilization {util} asks for {req} GiB.",
        "启动时 {total} GiB 中只有 {free} GiB 空闲；gpu_memory_utilization {util} 需要 {req} GiB。",
        phase="startup_check",
        facts={"free": "startup_free_gib", "total": "startup_total_gib", "util": "gpu_memory_utilization", "req": "requested_gib"},
    ),
    _sig(
        "memory-profiling-error", "Error in memory profiling",
        phrase("Error in memory profiling") + r"(?:\.\s*" + phrase("Initial free memory") + r"\s*(?P<a>\d+(?:\.\d+)?)"
        + r"(?:\s*GiB)?,?\s*" + phrase("current free memory") + r"\s*(?P<b>\d+(?:\.\d+)?))?",
        "insufficient-free-memory-at-startup", 0.88,
        "Free GPU memory changed while vLLM was profiling: another process on the same GPU started or stopped.",
        "vLLM 做内存分析期间空闲显存发生变化：同一 GPU 上有其他进程启动或退出。",
        phase="profile_run",
    ),
    _sig(
        "weights-load-message", "not enough GPU memory",
        phrase("Failed to load model - not enough GPU memory"),
        "weights-load-oom", MESSAGE,
        "vLLM says loading the model's weights ran out of GPU memory.",
        "vLLM 报告加载模型权重时显存不足。",
        phase="load_weights", oom=True,
    ),
    # V0 prints the block count and the budget before it raises "No available memory for the cache
    # blocks"; V1 raises the same error for a budget of zero or less. A paste cut before the message
    # still shows the cause.
    _sig(
        "kv-blocks-zero", "blocks: 0",
        r"#\s*(?!(?i:cpu)\b)[A-Za-z]+\s*blocks:\s*0\b(?![.\d])",
        "no-kv-cache-memory", 0.9,
        "vLLM found room for no KV cache block on the GPU (0 blocks); it stops with 'No available memory for the cache blocks'.",
        "vLLM 在 GPU 上一个 KV cache 块也放不下（0 块），随后会以 'No available memory for the cache blocks' 退出。",
        phase="kv_cache_alloc",
    ),
    _sig(
        "kv-budget-negative", ("KV cache memory: -", "KV Cache is -"),
        r"Available\s*KV\s*cache\s*memory:\s*(?P<kv>-\d+(?:\.\d+)?)|reserved\s*for\s*KV\s*Cache\s*is\s*(?P<kv0>-\d+(?:\.\d+)?)",
        "no-kv-cache-memory", 0.9,
        "The memory left for the KV cache after weights and activations is negative.",
        "扣除权重和激活后，留给 KV cache 的显存为负数。",
        phase="kv_cache_alloc",
    ),
    # --- sleep mode (vLLM's cumem allocator) ------------------------------------------------------
    # The allocator's C++ side reports a failed cuMemCreate/cuMemMap with its own wording and source
    # position (the line differs per release; ROCm builds keep the word CUDA). Sleep mode is its
    # main user: wake_up() maps the weights and the KV cache back through it.
    _sig(
        "sleep-cumem-oom", "cumem_allocator",
        # A report retypes it in lower case ("cuda error: out of memory at …"), often as its title.
        r"(?P<plat>(?i:CUDA|HIP))\s*(?i:error):\s*(?i:out\s*of\s*memory)\s*at\s*\S*cumem_allocator\.(?:cpp|cu)"
        r"(?::(?P<cline>\d+))?",
        SLEEP_MODE, MESSAGE,
        "vLLM's cumem allocator (sleep mode's memory pool) could not get GPU memory back from the driver.",
        "vLLM 的 cumem 分配器（sleep mode 的内存池）无法从驱动重新取得显存。",
        oom=True,
    ),
    # 0.8.0-0.20.0 refuse expandable segments when the cumem pool is created (vllm#14189).
    _sig(
        "sleep-expandable-segments", "compatible with memory pool",
        phrase("Expandable segments are not compatible with memory pool"),
        SLEEP_MODE, MESSAGE,
        "Sleep mode's memory pool refused PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (vLLM 0.8.0-0.20.0).",
        "sleep mode 的内存池拒绝 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True（vLLM 0.8.0-0.20.0）。",
    ),
    # 0.21.0+: a KV connector with expandable segments is refused unless the cumem pool (sleep mode,
    # or the cumem allocator from 0.22.0) holds the KV cache.
    _sig(
        "kv-connector-expandable-segments", "is incompatible with PYTORCH",
        r"KV\s*connector\s*(?P<connector>\w+)?\s*is\s*incompatible\s*with\s*PYTORCH_(?:CUDA_)?ALLOC_CONF\s*=\s*"
        r"expandable_segments:True\s*unless\s*(?P<needs>enable_\w+)",
        SLEEP_MODE, 0.9,
        "vLLM refused the KV connector {connector} with expandable_segments:True unless {needs} is on (vLLM 0.21.0+).",
        "vLLM 拒绝在 expandable_segments:True 下使用 KV connector {connector}，除非开启 {needs}（vLLM 0.21.0 起）。",
    ),
    # --- host memory ---------------------------------------------------------------------------
    _sig(
        "oom-killer", ("Killed process", "Kill process"),
        r"(?:Out of memory|Memory cgroup out of memory):\s*Kill(?:ed)?\s*process\s*(?P<pid>\d+)(?:\s*\((?P<comm>[^)]*)\))?",
        "host-memory", MESSAGE,
        "The kernel's OOM killer ended process {pid}: host RAM ran out, not GPU memory.",
        "内核 OOM killer 杀掉了进程 {pid}：耗尽的是主机内存，不是显存。",
        phase="host_memory",
    ),
    # The same kernel line retyped without its pid ("Killed process (VLLM::Worker_TP)").
    _sig(
        "oom-killer-named", ("Killed process", "Kill process"),
        r"(?:Out of memory|Memory cgroup out of memory):\s*Kill(?:ed)?\s*process\s*\((?P<comm>[^)]+)\)",
        "host-memory", MESSAGE,
        "The kernel's OOM killer ended {comm}: host RAM ran out, not GPU memory.",
        "内核 OOM killer 杀掉了 {comm}：耗尽的是主机内存，不是显存。",
        phase="host_memory",
    ),
    # Ray's memory monitor kills a worker before the kernel does, and says so in its own words
    # (the raylet's summary, the task's error, the node's usage against the threshold).
    _sig(
        "ray-memory-monitor", ("running low on memory", "memory usage threshold", "killed due to memory pressure"),
        phrase("Task was killed due to the node running low on memory")
        + r"|" + phrase("which exceeds the memory usage threshold of") + r"\s*(?P<threshold>\d+(?:\.\d+)?)"
        + r"|" + phrase("killed due to memory pressure (OOM)"),
        "host-memory", MESSAGE,
        "Ray's memory monitor killed a worker because the node's host RAM was nearly full (not GPU memory).",
        "Ray 的内存监控因节点主机内存将满而杀掉了一个 worker（不是显存）。",
        phase="host_memory",
    ),
    _sig(
        "oom-killer-invoked", "oom-kill",
        r"invoked oom-killer|oom-kill:|oom_kill_process",
        "host-memory", 0.9,
        "The kernel's OOM killer ran: host RAM ran out.",
        "内核 OOM killer 被触发：主机内存耗尽。",
        phase="host_memory",
    ),
    _sig(
        "oom-killed-container", "OOMKilled",
        r"\bOOMKilled\b",
        "host-memory", 0.9,
        "The container was OOMKilled: it went over its host memory limit.",
        "容器被 OOMKilled：超出了主机内存限制。",
        phase="host_memory",
    ),
    _sig(
        "shell-killed", "Killed",
        r"^(?:.*\s)?(?:\d+\s+)?Killed(?:\s+(?:python\S*|vllm|\S*python\S*|\S*vllm\S*)\b.*)?\s*$",
        "host-memory", 0.85,
        "The process was killed by signal 9 with no Python error, which is what the OOM killer does.",
        "进程被信号 9 杀死且没有 Python 报错，这正是 OOM killer 的表现。",
        phase="host_memory",
    ),
    _sig(
        "cannot-allocate-memory", "Cannot allocate memory",
        r"Cannot allocate memory",
        "host-memory", 0.88,
        "The system refused a host memory allocation (ENOMEM).",
        "系统拒绝了一次主机内存分配（ENOMEM）。",
        phase="host_memory",
    ),
    _sig(
        "bad-alloc", "bad_alloc",
        r"std::bad_alloc",
        "host-memory", 0.85,
        "A C++ host allocation failed (std::bad_alloc).",
        "C++ 主机内存分配失败（std::bad_alloc）。",
        phase="host_memory",
    ),
    _sig(
        "python-memoryerror", "MemoryError",
        r"(?:^|[\s.])MemoryError\b",
        "host-memory", 0.8,
        "Python raised MemoryError: host RAM ran out.",
        "Python 抛出 MemoryError：主机内存耗尽。",
        phase="host_memory",
    ),
    _sig(
        "swap-space-warning", "swap space",
        phrase("Possibly too large swap space.") + r"\s*(?P<swap>\d+(?:\.\d+)?)\s*GiB\s*" + phrase("out of the")
        + r"\s*(?P<ram>\d+(?:\.\d+)?)\s*GiB",
        "host-memory", 0.55,
        "vLLM warned that the CPU swap space ({swap} GiB) is a large share of host RAM ({ram} GiB).",
        "vLLM 警告 CPU swap space（{swap} GiB）占主机内存（{ram} GiB）的比例过大。",
        facts={"swap": "swap_space_gb"},
    ),
    _sig(
        "sigkill-exit", ("exitcode", "exit code", "exit status", "signal 9", "SIGKILL"),
        r"(?:exit(?:ed)?\s*(?:with\s*)?(?:code|status)\s*[:=]?\s*(?:137|-9)\b|exitcode\s*=?\s*-9\b|signal\s*9\b|SIGKILL)",
        "host-memory", 0.55,
        "A worker process ended with signal 9 (SIGKILL), usually the OOM killer.",
        "一个 worker 进程以信号 9（SIGKILL）结束，通常是 OOM killer 所为。",
        phase="host_memory",
    ),
)
"""Messages that name their cause."""

WARMUP_RAISERS = frozenset({"_dummy_sampler_run", "_dummy_pooler_run"})
WARMUP_CUT = Signature(
    "sampler-warmup-cut", (), re.compile(r"RuntimeError"), "sampler-warmup", 0.9,
    Text("A RuntimeError raised by the sampler warm-up itself, whose only error is out of memory (the message is cut).",
         "由 sampler 预热本身抛出的 RuntimeError，它只会因显存不足而抛出（信息被截断）。"),
    phase="sampler_warmup", oom=True,
)
"""The warm-up's ``RuntimeError`` when the log was cut inside its message (an issue body over
GitHub's length limit, a truncated paste): the frame that raised it is enough."""

KV_BLOCKS_SHORT = Signature(
    "kv-blocks-short", (), re.compile(r"blocks:"), "kv-cache-too-small", 0.9,
    Text("vLLM found room for {tokens} tokens of KV cache ({blocks} blocks of {block_size}), fewer than max_model_len "
         "{mml}; it stops with 'max seq len … is larger than the maximum number of tokens that can be stored in KV cache'.",
         "vLLM 只放得下 {tokens} 个 token 的 KV cache（{blocks} 块，每块 {block_size}），少于 max_model_len {mml}；"
         "随后会以 'max seq len … is larger than the maximum number of tokens that can be stored in KV cache' 退出。"),
    phase="kv_cache_alloc",
)
"""V0 prints the block count before it checks it against max_model_len, and the check raises
whenever ``blocks x block_size < max_model_len``: a paste cut before that error still shows it."""
BLOCK_SIZE = 16
"""V0's default KV cache block size, when the log does not state another."""
GPU_BLOCKS_RE = re.compile(r"#\s*(?!(?i:cpu)\b)[A-Za-z]+\s*blocks:\s*(?P<n>\d+)\b(?![.\d])")

# A GPU out-of-memory error without a cause of its own: PyTorch's message (CUDA, ROCm, Intel),
# the old parenthesised form, a raw CUDA error, or vLLM's engine-level text.
OOM_RE = re.compile(
    r"(?P<plat>CUDA|HIP|XPU|NPU|MPS)\s*out\s*of\s*memory\.?\s*(?:Tried|Allocation)"
    # Runtime and driver API errors: "CUDA error: out of memory", "CUDA driver error: out of memory"
    # (a kernel's own allocation), "CUDA Error: out of memory at …cumem_allocator.cpp" (sleep mode).
    r"|(?P<plat2>CUDA|HIP|XPU)\s*(?:driver\s*)?[Ee]rror:\s*out\s*of\s*memory"
    # PyTorch's exception, not another library's of the same name (Ray's is about host memory).
    r"|(?<![\w.])(?:torch\.(?:cuda\.)?)?OutOfMemoryError\b"
    # The caching allocator asks NVML who holds the memory before it raises the OOM; where NVML is
    # restricted (MIG partitions, Jetson) that query fails first and this assertion replaces the OOM.
    r"|NVML_SUCCESS\s*==\s*r\s*INTERNAL\s*ASSERT\s*FAILED\s*at\s*\S*CUDACachingAllocator"
    r"|\b(?:hipErrorOutOfMemory|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED)\b"
    # PyTorch's old layout behind a platform's own sentence (IPEX: "Current platform can NOT allocate
    # memory block …"): the numbers say it is a device allocation that failed.
    r"|Tried\s*to\s*allocate\s*\d+(?:\.\d+)?\s*[KMGT]i?B\s*\((?:GPU|XPU|NPU)\s*\d+;\s*\d+(?:\.\d+)?\s*[KMGT]i?B\s*total(?:\s*capacity)?\s*[;)]"
)
OOM_TRIGGERS = ("out of memory", "OutOfMemory", "ErrorOutOfMemory", "MemoryAllocation", "ALLOC_FAILED", "outofmemory",
                "total capacity;", "NVML_SUCCESS")

# --- traceback frames ---------------------------------------------------------------------------
FRAME_RE = re.compile(r"File \"(?P<path>[^\"]+)\", line (?P<line>\d+), in (?P<func>[\w<>.]+)")
METHOD_RE = re.compile(r"(?:while processing method|Error executing method)\s*'?(?P<func>\w+)")
"""The worker method that failed, as vLLM's executors name it before the traceback."""


@dataclass(frozen=True)
class FramePhase:
    phase: str
    funcs: frozenset[str]
    path: re.Pattern[str] | None = None
    func_re: re.Pattern[str] | None = None
    """For runners whose function names are not listed (model runner V2, plugins)."""
    ctor: re.Pattern[str] | None = None
    """A constructor (``__init__``) frame in a file matching this: building the model allocates
    its parameters, so an OOM there happens while the weights are being set up."""


# Most specific first: the first phase any frame of a traceback matches wins.
FRAME_PHASES: tuple[FramePhase, ...] = (
    FramePhase("sampler_warmup", frozenset({"_dummy_sampler_run", "_dummy_pooler_run"}),
               func_re=re.compile(r"(?:dummy|warm\w*)_?(?:sampler|pooler)|(?:sampler|pooler)_?(?:dummy|warm)", re.I)),
    FramePhase(
        "graph_capture",
        frozenset({"capture_model", "_capture_cudagraphs", "capture_graphs", "profile_cudagraph_memory",
                   "_warm_up_model", "capture_begin", "capture_end", "_capture_graph", "capture",
                   "compile_or_warm_up_model"}),
        re.compile(r"(?:cudagraph_utils|cuda_graph|cuda/graphs)\.py$"),
    ),
    FramePhase(
        "kv_cache_alloc",
        frozenset({"initialize_kv_cache", "_allocate_kv_cache_tensors", "initialize_kv_cache_tensors",
                   "_allocate_kv_cache", "_init_cache_engine", "initialize_cache", "_reshape_kv_cache_tensors",
                   "reshape_kv_cache_tensors", "allocate_kv_cache", "init_kv_cache"}),
        re.compile(r"cache_engine\.py$"),
    ),
    FramePhase(
        "profile_run",
        frozenset({"profile_run", "determine_available_memory", "determine_num_available_blocks", "_dummy_run",
                   "dummy_run", "profile"}),
    ),
    FramePhase(
        "load_weights",
        frozenset({"load_model", "load_weights", "initialize_model", "_initialize_model", "process_weights_after_loading",
                   "weight_loader", "load_weights_and_postprocess", "_load_weights", "download_model"}),
        re.compile(r"model_loader[/\\]"),
        # Repacking weights into a kernel's layout (Marlin, AWQ, GPTQ) happens only after they are loaded.
        func_re=re.compile(r"repack", re.I),
        ctor=re.compile(r"model_executor[/\\](?:models|layers)[/\\]"),
    ),
    FramePhase("startup_check", frozenset({"init_device", "request_memory"})),
    FramePhase(
        "serving",
        frozenset({"execute_model", "sample_tokens", "_bookkeeping_sync", "_get_prompt_logprobs_dict",
                   "run_engine_loop", "engine_step", "step_async", "start_worker_execution_loop",
                   "compute_logprobs", "execute_dummy_batch", "step", "_run_engine", "generate",
                   "execute_model_with_error_logging", "_process_engine_step", "run_busy_loop"}),
    ),
)
"""A multimodal encoder is not a phase of its own: it runs inside the profiling pass (start-up) or
inside ``execute_model`` (serving); the ``mm_encoder`` flag tells which."""


@dataclass(frozen=True)
class FrameFlag:
    name: str
    func: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    code: re.Pattern[str] | None = None
    """Matched against the source lines a traceback shows under its frames."""


FRAME_FLAGS: tuple[FrameFlag, ...] = (
    FrameFlag("lora", re.compile(r"lora|punica", re.I), re.compile(r"[/\\]lora[/\\]|punica")),
    FrameFlag("spec_decode", re.compile(r"^(?:propose\w*|_run_drafter|draft\w*|_prepare_spec\w*)$|eagle|medusa|mtp", re.I),
              re.compile(r"spec_decode|[/\\](?:eagle|medusa|mtp\w*|draft_model|ngram_proposer)\.py")),
    FrameFlag("sort", re.compile(r"^(?:apply_top_k_top_p\w*|top_k_top_p\w*|random_sample|flashinfer_sample|"
                                 r"apply_min_p|sort\w*|topk\w*|_apply_top_k\w*|apply_top_k_only|top_p\w*)$"),
              None, re.compile(r"\.sort\(|torch\.sort|\.topk\(|torch\.topk|logits_sort|top_k_top_p|argsort")),
    FrameFlag("mrv2", None, re.compile(r"v1[/\\]worker[/\\]gpu[/\\]")),
    FrameFlag("mm_encoder",
              re.compile(r"^(?:get_dummy_mm_data|_get_mm_dummy_batch|get_multimodal_embeddings|embed_multimodal|"
                         r"_execute_mm_encoder|profile_encoder|get_dummy_encoder_data|_get_dummy_mm_inputs|"
                         r"get_dummy_processor_inputs|_dummy_mm_run|get_image_features|get_audio_features)$"),
              re.compile(r"vision|visual|vit_|_vl\.py|siglip|clip\.py|pixtral|intern_vit|whisper|audio|mm_encoder",
                         re.I)),
    FrameFlag("custom_allreduce", re.compile(r"register_graph_buffers|get_graph_buffer_ipc_meta|custom_all_reduce"),
              re.compile(r"custom_all_reduce")),
    FrameFlag("deep_gemm", re.compile(r"deep_gemm|deepgemm", re.I), re.compile(r"deep_gemm|deepgemm", re.I)),
    FrameFlag("flashinfer", re.compile(r"flashinfer", re.I), re.compile(r"flashinfer", re.I)),
    # Waking from sleep mode: vLLM's wake_up at every layer (LLM, engine, executor, worker,
    # allocator), the allocator mapping memory back, or a framework's line that calls it.
    FrameFlag("sleep_wake", re.compile(r"^(?:wake_up|create_and_map|python_create_and_map)$"),
              re.compile(r"device_allocator[/\\]cumem\.py$"),
              re.compile(r"\.wake_up\(|CuMemAllocator")),
)

# --- how far start-up got -------------------------------------------------------------------------
# (trigger, regex or None, phase that is running *after* this line)
TIMELINE: tuple[tuple[str, re.Pattern[str] | None, str], ...] = (
    ("Starting to load model", None, "load_weights"),
    ("Loading safetensors checkpoint", None, "load_weights"),
    ("Loading pt checkpoint", None, "load_weights"),
    ("loading took", re.compile(r"(?:Model|Weights?)\s*loading took"), "profile_run"),
    ("weights took", re.compile(r"Loading (?:model )?weights took"), "profile_run"),
    ("Memory profiling takes", None, "kv_cache_alloc"),
    ("Available KV cache memory", None, "kv_cache_alloc"),
    ("KV cache size:", None, "kv_cache_alloc"),
    ("blocks:", re.compile(r"# (?:GPU|cuda|CUDA|rocm|xpu) blocks:"), "kv_cache_alloc"),
    ("Capturing", re.compile(r"Capturing (?:CUDA graph|cudagraphs|the model for CUDA graphs)"), "graph_capture"),
    ("Graph capturing finished", None, "sampler_warmup"),
    ("init engine (profile", None, "serving"),
    ("Starting vLLM API server", None, "serving"),
    ("Application startup complete", None, "serving"),
    ("Avg prompt throughput", None, "serving"),
    ("Added request", None, "serving"),
    ("Received request", None, "serving"),
    ("Processed prompts", None, "serving"),
    ("POST /v1/", None, "serving"),  # an HTTP access line: a request reached the server
    # The layer that answers requests reports the engine's death: it was serving.
    ("output_handler failed", None, "serving"),
    ("Engine background task failed", None, "serving"),
    ("EngineDeadError", None, "serving"),
    ("Engine loop is not running", None, "serving"),
    ("Background loop has errored", None, "serving"),
    ("stream generator", re.compile(r"Error in (?:chat )?completion stream generator"), "serving"),
)
REQUEST_LAYER_DEATH = ("output_handler failed", "Engine background task failed", "EngineDeadError",
                       "Engine loop is not running", "Background loop has errored")
"""What the layer answering requests prints when the engine under it dies: only an engine that
was serving has such a layer waiting on it, so these lines place an error printed just before."""
SERVING_LOOPS = frozenset({"start_worker_execution_loop", "run_engine_loop", "engine_step", "step_async",
                           "run_busy_loop", "_process_engine_step"})
"""Functions that only run once the engine serves: a traceback through any of them shows it got there."""
SERVING_SOURCES = ("serving_", "api_server.py", "async_llm.py", "async_llm_engine.py", "launcher.py")
"""Logger files of the request layer: an error they log means requests were being served."""
SLEEP_MARKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("Sleep mode freed", re.compile(r"Sleep mode freed\s*-?\d"), "asleep"),
    ("fall asleep", re.compile(r"It took\s*\d+(?:\.\d+)?\s*seconds to fall asleep"), "asleep"),
    ("sleep freed", re.compile(r"(?:CuMem|XpuMem)Allocator:\s*sleep freed"), "asleep"),
    ("to wake up", re.compile(r"It took\s*\d+(?:\.\d+)?\s*seconds to wake up(?:\s*tags\s*(?P<tags>\[[^\]]*\]|None))?"),
     "awake"),
)
"""What vLLM prints when it has fallen asleep (0.7.0+: "Sleep mode freed X GiB memory, Y GiB memory
is still in use", 0.7.3+: "It took … seconds to fall asleep", 0.11.0+: "CuMemAllocator: sleep freed
…") and when it has woken ("It took … seconds to wake up", with "tags [...]" from 0.8.3). An error
between the two happened while vLLM slept: the trainer ran out beside what sleep left behind, or
the weights were being synced between a weights-only and a KV-cache wake-up."""
SLEEP_PARTIAL_TAGS = ("'weights'", '"weights"')
"""A wake-up of the weights alone (``tags ['weights']``): the KV cache is still asleep."""
MM_PROFILE_RE = re.compile(r"profile run for multi-?modal models|too short to hold the multi-?modal embeddings")
"""Lines that say the profiling pass runs on multimodal inputs (V0's encoder-decoder runner, the
profiler's warning about the worst-case embeddings)."""
MM_PROFILE_TRIGGERS = ("multi-modal", "multimodal")
PROGRESS_RE = re.compile(r"(?:\|\s*|\s)(?P<done>\d+)/(?P<total>\d+)\s*\[")
"""A tqdm bar's ``k/n [``: below ``n`` the stage it counts had not finished."""
NEAR_LINES = 60
"""How far (physical lines) a worker's method or a flushed progress bar may sit from an OOM that
has no frames of its own and still say what was running."""

# --- context ---------------------------------------------------------------------------------------
LARGE_VOCAB = 200_000
"""A vocabulary this large makes the sampler's sort over (requests x vocabulary) expensive."""
MRV2_ZERO = ">=0.18,<0.29"
"""Releases where model runner V2 reserves no CUDA graph memory (``vllm-facts.md`` §1)."""
DEEPSEEK_V32_RE = re.compile(r"DeepseekV32|DeepSeek-V3\.2|deepseek-v3\.2|GlmMoeDsa", re.I)
FRAGMENTATION_MIN = 512 << 20
"""Reserved-but-unallocated memory below this is too small to call fragmentation."""
