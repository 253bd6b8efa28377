"""From failures to ranked scenarios, each with the lines and the reasons behind it.

Order of trust (``signatures`` holds the numbers): a message that names its cause; that message
refined by context (expandable segments for custom all-reduce, a large-vocabulary sort for the
sampler); the phase read from a traceback's frames, refined by context (model runner V2 for
graph capture, LoRA or speculative-decoding frames while serving, a multimodal encoder while
profiling, fragmentation when reserved-but-unallocated memory would have covered the request);
for an error without frames of its own, the phase its neighbours tell (the traceback printed
right below it, the method the other workers were running, a progress bar left unfinished right
after it, the request layer reporting the engine dead right after it); then the phase guessed
from how far start-up had got. Other processes holding most of the GPU point at the memory that
was never free, whatever the phase. The last start of the engine
that failed is the one being diagnosed; evidence from earlier starts still counts, for less.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..facts.catalog import FAILURE_PHASES
from ..facts.model import Fact
from ..i18n import Text
from ..text.units import GIB, gib
from ..versions import Version, VersionSpec
from .collect import Collector, Failure, Frame
from .mechanisms import evaluate, numbers_of
from .model import Evidence, Match, where
from .rules import rules as _rules
from .signatures import (
    CUT,
    CUT_PHASES,
    CUT_TIMELINE,
    DEEPSEEK_V32_RE,
    EARLIER_RUN,
    FRAME_FLAGS,
    FRAME_PHASES,
    LARGE_VOCAB,
    MESSAGE,
    MRV2_ZERO,
    NEIGHBOUR,
    PHASE,
    REFINED,
    SLEEP_MODE,
    TIMELINE_PHASE,
    WEAK,
    Signature,
)

STARTUP_PHASES = ("load_weights", "profile_run", "cudagraph_profile", "kv_cache_alloc", "kernel_warmup", "graph_capture",
                  "sampler_warmup")
"""Phases a start-up mark can leave the engine in, where a cut traceback without frames of its own is placed."""
MAX_EVIDENCE = 6
MAX_REASONS = 5

PHASE_NAMES = {
    "load_weights": Text("loading the weights", "加载权重"),
    "startup_check": Text("the start-up memory check", "启动时的显存检查"),
    "profile_run": Text("the profiling run", "内存分析（profile run）"),
    "kv_cache_alloc": Text("sizing and allocating the KV cache", "确定并分配 KV cache"),
    "graph_capture": Text("CUDA graph capture", "CUDA graph 捕获"),
    "sampler_warmup": Text("the sampler warm-up", "sampler 预热"),
    "cudagraph_profile": Text("the CUDA graph memory profile (before the KV cache)", "CUDA graph 显存分析（KV cache 之前）"),
    "kernel_warmup": Text("the kernel warm-up (DeepGEMM, FlashInfer autotune)", "kernel 预热（DeepGEMM、FlashInfer autotune）"),
    "serving": Text("serving requests", "处理请求"),
    "host_memory": Text("host memory", "主机内存"),
}



def _gib(n: int | float | None) -> str:
    return gib(n, unit=False)


def frame_phase(frames: list[Frame]) -> str | None:
    """The most specific start-up phase any frame shows (``FRAME_PHASES`` order)."""
    if not frames:
        return None
    funcs = {f.func for f in frames}
    for fp in FRAME_PHASES:
        if (funcs & fp.funcs
                or (fp.path is not None and any(fp.path.search(f.path) for f in frames))
                or (fp.func_re is not None and any(fp.func_re.search(f.func) for f in frames))
                or (fp.ctor is not None and any(f.func == "__init__" and fp.ctor.search(f.path) for f in frames))):
            return fp.phase
    return None


def frame_flags(frames: list[Frame], code: list[str]) -> set[str]:
    out: set[str] = set()
    for flag in FRAME_FLAGS:
        if ((flag.func is not None and any(flag.func.search(f.func) for f in frames))
                or (flag.path is not None and any(flag.path.search(f.path) for f in frames))
                or (flag.code is not None and any(flag.code.search(c) for c in code))):
            out.add(flag.name)
    return out


@dataclass
class Candidate:
    scenario: str
    score: float
    reason: Text
    context: list[Fact] = field(default_factory=list)
    """Facts whose lines support the candidate (shown as evidence too)."""


@dataclass
class Context:
    """What the whole log says that refines a failure's scenario."""

    facts: dict[str, Fact]
    version: Version | None

    def fact(self, name: str) -> Fact | None:
        return self.facts.get(name)

    def value(self, name: str) -> Any:
        f = self.facts.get(name)
        return None if f is None else f.value

    def in_versions(self, spec: str) -> bool | None:
        if self.version is None:
            return None
        return VersionSpec.parse(spec).contains(self.version)


def _facts_present(ctx: Context, *names: str) -> list[Fact]:
    return [f for f in (ctx.fact(n) for n in names) if f is not None]


def _sampler(ctx: Context, flags: set[str], top: float, second: float, how: Text) -> list[Candidate]:
    """Sampler warm-up, refined to the large-vocabulary sort when the context says so."""
    why: list[tuple[Text, list[Fact]]] = []
    if "sort" in flags:
        why.append((Text("the traceback goes through the sampler's sort / top-k / top-p",
                         "traceback 经过 sampler 的 sort / top-k / top-p"), []))
    model = f"{ctx.value('model') or ''} {ctx.value('model_arch') or ''}"
    if DEEPSEEK_V32_RE.search(model):
        why.append((Text("the model is DeepSeek-V3.2 (sparse attention, large warm-up tensors)",
                         "模型是 DeepSeek-V3.2（稀疏注意力，预热张量大）"), _facts_present(ctx, "model_arch", "model")))
    if ctx.value("use_deep_gemm") is True or "deep_gemm" in flags:
        why.append((Text("DeepGEMM is in use and keeps its own GPU memory", "使用了 DeepGEMM，其自身占用显存"),
                    _facts_present(ctx, "use_deep_gemm", "env_vllm_use_deep_gemm")))
    vocab = ctx.value("vocab_size")
    if isinstance(vocab, int) and vocab >= LARGE_VOCAB:
        why.append((Text(f"the vocabulary is large ({vocab:,} tokens)", f"词表很大（{vocab:,} 个 token）"),
                    _facts_present(ctx, "vocab_size")))
    if "flashinfer" in flags and ("mrv2" in flags or ctx.value("model_runner") == "v2"):
        why.append((Text("the FlashInfer sampler ran under model runner V2", "在 Model Runner V2 下运行 FlashInfer sampler"),
                    _facts_present(ctx, "model_runner")))
    if why:
        refined = REFINED if top >= MESSAGE else top + 0.04
        out = [Candidate("sampler-sort-large-vocab", refined, w, fs) for w, fs in why]
        out.append(Candidate("sampler-warmup", second, how))
        return out
    return [Candidate("sampler-warmup", top, how)]


def _capture(ctx: Context, flags: set[str], base: float, how: Text) -> list[Candidate]:
    mrv2 = "mrv2" in flags or ctx.value("model_runner") == "v2" or ctx.value("env_vllm_use_v2_model_runner") == "1"
    out: list[Candidate] = []
    if "custom_allreduce" in flags:
        out.extend(_allreduce(ctx, base))
    if mrv2:
        in_range = ctx.in_versions(MRV2_ZERO)
        support = _facts_present(ctx, "model_runner", "env_vllm_use_v2_model_runner", "vllm_version")
        if in_range is True:
            out.append(Candidate("mrv2-cudagraph-profile-zero", min(REFINED, base + 0.1),
                                 Text(f"model runner V2 in vLLM {ctx.version}: it reserves no CUDA graph memory",
                                      f"vLLM {ctx.version} 的 Model Runner V2：不为 CUDA graph 预留显存"), support))
            out.append(Candidate("cudagraph-capture", base - 0.05, how))
            return out
        if in_range is None:
            out.append(Candidate("mrv2-cudagraph-profile-zero", base - 0.05,
                                 Text("model runner V2 was in use (vLLM version unknown; 0.18-0.28 reserve no graph memory)",
                                      "使用了 Model Runner V2（版本未知；0.18-0.28 不预留 graph 显存）"), support))
    out.append(Candidate("cudagraph-capture", base, how))
    return out


def _allreduce(ctx: Context, base: float) -> list[Candidate]:
    exp = ctx.fact("expandable_segments")
    if exp is not None and exp.value is True:
        return [
            Candidate("expandable-segments-custom-allreduce", REFINED,
                      Text(f"expandable_segments is on ({exp.source}): CUDA IPC cannot export that memory",
                           f"expandable_segments 已开启（{exp.source}）：CUDA IPC 无法导出这类显存"), [exp]),
            Candidate("custom-allreduce-ipc", 0.7,
                      Text("custom all-reduce needs CUDA IPC between the GPUs", "custom all-reduce 需要 GPU 间 CUDA IPC")),
        ]
    if exp is not None and exp.value is False:
        return [
            Candidate("custom-allreduce-ipc", base,
                      Text("expandable_segments is off, so CUDA IPC itself is refused between these GPUs",
                           "expandable_segments 未开启，说明是这些 GPU 之间的 CUDA IPC 本身被拒绝"), [exp]),
            Candidate("expandable-segments-custom-allreduce", 0.45,
                      Text("the same error with expandable_segments on has a known cause",
                           "开启 expandable_segments 时同样的报错有已知原因")),
        ]
    return [
        Candidate("custom-allreduce-ipc", min(base, 0.9),
                  Text("no expandable_segments setting in the log: CUDA IPC between the GPUs is refused",
                       "日志中没有 expandable_segments 设置：GPU 之间的 CUDA IPC 被拒绝")),
        Candidate("expandable-segments-custom-allreduce", 0.72,
                  Text("check PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF: with expandable_segments:True this is the cause",
                       "请检查 PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF：若含 expandable_segments:True 即为此原因")),
    ]


_OWN_SCENARIO = {"kernel_warmup": "kernel-warmup-oom", "cudagraph_profile": "cudagraph-profile-oom"}
"""Phases with one scenario and no refinement of their own."""


def _by_phase(ctx: Context, phase: str, flags: set[str], base: float, how: Text) -> list[Candidate]:
    if phase == "sampler_warmup":
        return _sampler(ctx, flags, base, base - 0.06, how)
    if phase == "graph_capture":
        return _capture(ctx, flags, base, how)
    if phase in _OWN_SCENARIO:
        return [Candidate(_OWN_SCENARIO[phase], base, how)]
    if phase == "profile_run":
        out: list[Candidate] = []
        if "mm_encoder" in flags:
            out.append(Candidate("multimodal-profile", base + 0.08,
                                 Text("the traceback runs the multimodal encoder on dummy inputs",
                                      "traceback 显示在虚拟输入上运行多模态编码器")))
        elif ctx.value("is_multimodal") is True:
            out.append(Candidate("multimodal-profile", base - 0.08,
                                 Text("the model is multimodal: profiling runs its encoder on the largest inputs",
                                      "模型是多模态的：内存分析会以最大输入运行编码器"),
                                 _facts_present(ctx, "is_multimodal", "model_arch")))
        out.extend(_features(ctx, flags, base))
        out.append(Candidate("profile-run-oom", base, how))
        return out
    if phase == "kv_cache_alloc":
        return [
            Candidate("insufficient-free-memory-at-startup", base - 0.08,
                      Text("the KV cache was sized for memory that was no longer free when it was allocated",
                           "KV cache 按某个空闲量确定大小，但分配时这些显存已不再空闲")),
            Candidate("no-kv-cache-memory", base - 0.18, how),
        ]
    if phase == "load_weights":
        out = []
        if "spec_decode" in flags:
            out.append(Candidate("speculative-decoding", base + 0.05,
                                 Text("the draft model's weights were loading", "正在加载 draft 模型的权重")))
        out.append(Candidate("weights-load-oom", base, how))
        return out
    if phase == "startup_check":
        return [Candidate("insufficient-free-memory-at-startup", base, how)]
    if phase == "serving":
        out = _features(ctx, flags, base, enabled=0.02)
        out.append(Candidate("runtime-oom", base, how))
        return out
    return []


def _features(ctx: Context, flags: set[str], base: float, enabled: float = -0.12) -> list[Candidate]:
    """LoRA and speculative decoding: from the traceback (``base + 0.05``), or only because the log
    shows them enabled (``base + enabled``). Once start-up succeeded, an enabled feature is the
    likeliest extra consumer: the start-up profile under-counts both (adapter buffers that grow
    with the step's tokens, the draft model's KV cache and logits), so serving and phase-less
    errors rank them just above the generic runtime OOM; during profiling they rank below it."""
    out: list[Candidate] = []
    if "lora" in flags:
        out.append(Candidate("lora", base + 0.05, Text("the traceback goes through LoRA code", "traceback 经过 LoRA 代码")))
    elif ctx.value("lora_enabled") is True:
        out.append(Candidate("lora", base + enabled, Text("LoRA is enabled", "启用了 LoRA"), _facts_present(ctx, "lora_enabled")))
    if "spec_decode" in flags:
        out.append(Candidate("speculative-decoding", base + 0.05,
                             Text("the traceback goes through the speculative-decoding drafter",
                                  "traceback 经过推测解码的 drafter")))
    elif ctx.value("speculative_method"):
        out.append(Candidate("speculative-decoding", base + enabled,
                             Text(f"speculative decoding ({ctx.value('speculative_method')}) is enabled",
                                  f"启用了推测解码（{ctx.value('speculative_method')}）"),
                             _facts_present(ctx, "speculative_method")))
    return out


def _fragmentation(f: Failure) -> list[Candidate]:
    oom = f.oom
    if oom is None or oom.reserved_unallocated is None or oom.requested is None:
        return []
    r, q = oom.reserved_unallocated, oom.requested
    reason = Text(
        f"PyTorch held {_gib(r)} GiB reserved but unallocated when it failed to allocate {_gib(q)} GiB",
        f"分配 {_gib(q)} GiB 失败时，PyTorch 持有 {_gib(r)} GiB 已保留但未分配的显存",
    )
    if oom.fragmented:
        return [Candidate("fragmentation", 0.82, reason)]
    if r >= GIB and r * 2 >= q:
        return [Candidate("fragmentation", 0.55, reason)]
    return []


# --- sleep mode ----------------------------------------------------------------------------------
ASLEEP = 0.88
"""An error printed while vLLM slept: what ran out shared the GPU with what sleep left behind."""
SLEEP_ON = 0.6
"""An error nothing places, in a log whose engine has sleep mode on: the colocation is the likeliest
cause, so it ranks above the generic runtime OOM (``WEAK``) but below any placed phase."""
_WAKE_REASON = Text(
    "the traceback runs through vLLM's wake_up and its cumem allocator: the memory to map the weights or the "
    "KV cache back was not free",
    "traceback 经过 vLLM 的 wake_up 及其 cumem 分配器：重新映射权重或 KV cache 所需的显存不是空闲的",
)


def _sleep_line(f: Failure) -> list[Fact]:
    """The sleep or wake line that tells where sleep mode stood, as supporting evidence."""
    if f.sleep_mark is None:
        return []
    file, line, text = f.sleep_mark
    return [Fact("sleep_mode", True, where(file, line), kind="log", detail=text, file=file, line=line)]


def _sleep_state(f: Failure) -> Candidate | None:
    if f.sleep_state == "asleep":
        return Candidate(SLEEP_MODE, ASLEEP, Text(
            "vLLM was asleep when it happened: the trainer ran out beside what sleep left on the GPU",
            "发生时 vLLM 正处于休眠：训练进程在 sleep 留下的显存旁边耗尽了显存"), _sleep_line(f))
    if f.sleep_state == "waking":
        return Candidate(SLEEP_MODE, ASLEEP, Text(
            "only vLLM's weights were awake (tags ['weights']): it happened during the weight sync, before the "
            "KV cache woke",
            "当时只唤醒了 vLLM 的权重（tags ['weights']）：发生在权重同步期间、KV cache 唤醒之前"), _sleep_line(f))
    return None


WEIGHTS_OUTSIDE_POOL = ">=0.14,<0.17"
"""Releases whose worker loads the weights outside the sleep pool (vllm#32714, fixed by vllm#34021)."""


def _with_release(ctx: Context, out: list[Candidate]) -> list[Candidate]:
    """Sleep mode's candidates, plus the release's own defect as a reason when it has one."""
    best = max((c.score for c in out if c.scenario == SLEEP_MODE), default=None)
    if best is not None and ctx.in_versions(WEIGHTS_OUTSIDE_POOL):
        out.append(Candidate(SLEEP_MODE, best, Text(
            f"vLLM {ctx.version} is one of 0.14.0-0.16.x, whose sleep leaves the weights on the GPU",
            f"vLLM {ctx.version} 属于 0.14.0-0.16.x，这些版本休眠时权重仍留在 GPU 上"),
            _facts_present(ctx, "vllm_version")))
    return out


def _sleep_signature(ctx: Context, f: Failure, sig: Signature, reason: Text, by_frames: str | None,
                     flags: set[str]) -> tuple[list[Candidate], str | None]:
    """Sleep mode's own messages. The cumem allocator's OOM is refined by where it happened: waking
    up (the usual case), or a start-up phase (the pool also holds the weights and the KV cache
    while they are first allocated; that phase's advice comes first)."""
    if sig.id != "sleep-cumem-oom":
        return [Candidate(SLEEP_MODE, sig.score, reason)], None
    if "sleep_wake" in flags:
        out = [Candidate(SLEEP_MODE, REFINED, reason), Candidate(SLEEP_MODE, REFINED, _WAKE_REASON)]
        state = _sleep_state(f)
        if state is not None and f.sleep_state == "waking":
            out.append(Candidate(SLEEP_MODE, REFINED, state.reason, state.context))
        return _with_release(ctx, out), None
    if by_frames is not None and by_frames not in ("serving", "host_memory"):
        how = Text(f"the cumem allocator failed during {PHASE_NAMES[by_frames].en}, at start-up",
                   f"cumem 分配器在启动时的{PHASE_NAMES[by_frames].zh}阶段失败")
        out = _by_phase(ctx, by_frames, flags, PHASE, how)
        out.append(Candidate(SLEEP_MODE, PHASE - 0.08, Text(
            "sleep mode's cumem pool holds the weights and the KV cache from start-up: a trainer sharing the GPU "
            "leaves it less than gpu_memory_utilization assumes",
            "sleep mode 的 cumem 内存池从启动时就承载权重和 KV cache：共用 GPU 的训练进程会让它得到的比 "
            "gpu_memory_utilization 设想的少")))
        return out, by_frames
    out = [Candidate(SLEEP_MODE, sig.score, reason)]
    state = _sleep_state(f)
    if state is not None:
        out.append(Candidate(SLEEP_MODE, sig.score, state.reason, state.context))
    return _with_release(ctx, out), None


def _sleep_context(ctx: Context, f: Failure, flags: set[str], base: float, placed: bool) -> list[Candidate]:
    """A GPU OOM without sleep mode's wording, in a log that shows sleep mode: through wake_up (the
    OOM of a tensor mapped back), while vLLM slept (the trainer's OOM), or with sleep mode merely on
    (a colocated trainer is the likeliest extra consumer)."""
    if "sleep_wake" in flags:
        return _with_release(ctx, [Candidate(SLEEP_MODE, max(base, PHASE) + 0.12, _WAKE_REASON)])
    state = _sleep_state(f)
    if state is not None:
        return _with_release(ctx, [state])
    on = ctx.fact("sleep_mode")
    if on is None or on.value is not True:
        return []
    return _with_release(ctx, [Candidate(SLEEP_MODE, base - 0.1 if placed else SLEEP_ON, Text(
        "sleep mode is on: vLLM shares the GPU with a trainer or another engine that wakes and sleeps beside it",
        "已开启 sleep mode：vLLM 与训练进程或另一个轮流休眠/唤醒的引擎共用 GPU"), [on])])


OTHERS_SHARE = 0.4
"""Share of the GPU that other processes must hold for them to be the cause of an OOM."""


def _held_by_others(f: Failure, base: float) -> list[Candidate]:
    """Other processes holding most of the GPU (PyTorch names each one, and this process apart):
    the memory vLLM counted on was never free, whatever phase ran out."""
    oom = f.oom
    if oom is None or not oom.other_processes or not oom.total or oom.this_process is None:
        return []
    if oom.other_processes < OTHERS_SHARE * oom.total or oom.other_processes <= oom.this_process:
        return []
    return [Candidate("insufficient-free-memory-at-startup", max(base, PHASE) + 0.02,
                      Text(f"other processes held {_gib(oom.other_processes)} of the GPU's {_gib(oom.total)} GiB "
                           f"(this process {_gib(oom.this_process)} GiB)",
                           f"其他进程占用了该 GPU {_gib(oom.total)} GiB 中的 {_gib(oom.other_processes)} GiB"
                           f"（本进程 {_gib(oom.this_process)} GiB）"))]


def classify(f: Failure, ctx: Context) -> tuple[list[Candidate], str | None]:
    """Candidates for one failure, and the failure phase it shows."""
    flags = frame_flags(f.frames or f.next_frames, f.code) | f.hints
    by_frames = frame_phase(f.frames)
    sig = f.signature
    if sig is not None:
        reason = Text(sig.reason.en.format_map(_Default(f.groups)), sig.reason.zh.format_map(_Default(f.groups)))
        phase: str | None = sig.phase or by_frames or f.timeline
        if sig.by_phase and sig.phase is not None:
            return _by_phase(ctx, sig.phase, flags, sig.score, reason), sig.phase
        if sig.scenario == "custom-allreduce-ipc":
            return _allreduce(ctx, sig.score), phase
        if sig.scenario == SLEEP_MODE:
            return _sleep_signature(ctx, f, sig, reason, by_frames, flags)
        if sig.scenario == "sampler-warmup":
            return _sampler(ctx, flags, sig.score, sig.score - 0.06, reason), phase
        return [Candidate(sig.scenario, sig.score, reason)], phase
    if f.cut:
        funcs = {fr.func for fr in f.frames}
        by_frames = by_frames or next((phase for func, phase, unless in CUT_PHASES
                                       if func in funcs and not funcs & unless), None)
        if by_frames is None and f.timeline in STARTUP_PHASES:
            # No frame names a phase: how far start-up had got (the whole log's marks) does.
            how = Text(f"the log ends inside a traceback with no frame of a known phase, while start-up was in "
                       f"{PHASE_NAMES[f.timeline].en}; the error itself is not in the excerpt",
                       f"日志在一个没有已知阶段帧的 traceback 中途结束，当时启动进行到{PHASE_NAMES[f.timeline].zh}；"
                       "摘录中没有错误本身")
            return _by_phase(ctx, f.timeline, flags, CUT_TIMELINE, how), f.timeline
        if by_frames is None:
            return [], None
        how = Text(f"the log ends inside a traceback through {PHASE_NAMES[by_frames].en}, before its exception: "
                   "the error itself is not in the excerpt",
                   f"日志在一个经过{PHASE_NAMES[by_frames].zh}的 traceback 中途结束，缺少异常行：摘录中没有错误本身")
        return _by_phase(ctx, by_frames, flags, CUT, how), by_frames
    if not f.is_oom:
        return [], None
    if f.exc_type and "invalid argument" in f.text and "custom_allreduce" in flags:
        return _allreduce(ctx, MESSAGE - 0.05), "graph_capture"
    out: list[Candidate] = []
    by_next = frame_phase(f.next_frames) if by_frames is None else None
    by_method = frame_phase([Frame("", m) for m in f.near_methods]) if by_frames is None else None
    if by_frames is not None:
        phase = by_frames
        base = PHASE
        how = Text(f"the traceback shows the OOM during {PHASE_NAMES[by_frames].en}",
                   f"traceback 显示 OOM 发生在 {PHASE_NAMES[by_frames].zh} 阶段")
    elif by_next is not None:
        phase = by_next
        base = NEIGHBOUR
        how = Text(f"the traceback printed right below the message shows {PHASE_NAMES[by_next].en}",
                   f"紧随该信息打印的 traceback 显示当时正在{PHASE_NAMES[by_next].zh}")
    elif by_method is not None:
        phase = by_method
        base = NEIGHBOUR
        how = Text(f"its own traceback is not in the log, but the workers beside it were running "
                   f"{PHASE_NAMES[by_method].en} ({', '.join(f.near_methods[:2])})",
                   f"日志中没有它自己的 traceback，但相邻的 worker 当时正在 {PHASE_NAMES[by_method].zh}"
                   f"（{', '.join(f.near_methods[:2])}）")
    elif f.after is not None:
        phase = f.after[0]
        base = TIMELINE_PHASE
        how = Text(f"a progress bar printed right after the error stopped unfinished: {PHASE_NAMES[phase].en} was running",
                   f"错误之后打印的进度条停在中途：当时正在{PHASE_NAMES[phase].zh}")
    elif f.reported:
        phase = "serving"
        base = NEIGHBOUR
        how = Text("right after the error the layer that answers requests reported the engine dead: it was serving",
                   "错误之后，处理请求的一层随即报告引擎已死：当时正在处理请求")
    elif f.timeline is not None:
        phase = f.timeline
        base = TIMELINE_PHASE
        how = Text(f"no traceback places it, but start-up had reached {PHASE_NAMES[phase].en}",
                   f"没有 traceback 可定位，但启动已进行到 {PHASE_NAMES[phase].zh} 阶段")
    else:
        phase = None
        base = WEAK
        how = Text("a GPU out-of-memory error with nothing in the log to say when it happened",
                   "GPU 显存不足，但日志中没有信息说明发生在哪个阶段")
    if phase is not None:
        out.extend(_by_phase(ctx, phase, flags, base, how))
    else:
        out.extend(_features(ctx, flags, base + 0.1, enabled=-0.08))
        out.append(Candidate("runtime-oom", base, how))
    out.extend(_fragmentation(f))
    out.extend(_held_by_others(f, base))
    r = _rules()
    for mech, why in evaluate(r.mechanisms, r.mechanism_params, numbers_of(f.oom, ctx.value, flags, phase is not None)):
        out.append(Candidate(mech.scenario, mech.score, why))
    out.extend(_sleep_context(ctx, f, flags, base, phase is not None))
    if phase == "serving" and f.sleep_state in ("asleep", "waking"):
        phase = None  # vLLM was not serving while it slept: the trainer's own step ran out
    return out, phase


class _Default(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass
class Ranked:
    matches: list[Match]
    primary: Failure | None
    phase: str | None
    first_rank: int | None


def rank(col: Collector) -> Ranked:
    if not col.failures:
        return Ranked([], None, None, None)
    version_fact = col.facts.get("vllm_version")
    ctx = Context(col.facts, Version.try_parse(version_fact.value) if version_fact else None)
    classified = [(f, *classify(f, ctx)) for f in col.failures]
    # The start of the engine being diagnosed: the last one with a clear failure.
    runs = [f.run for f, cands, _ in classified if cands]
    strong = [f.run for f, cands, _ in classified if cands and max(c.score for c in cands) >= 0.6]
    focus = max(strong or runs or [0])
    order = {name: i for i, name in reversed(list(enumerate(col.files)))}
    best: dict[str, Match] = {}
    reasons: dict[str, dict[Text, float]] = {}
    per_kind: dict[tuple[str, str], int] = {}
    counts: dict[str, int] = {}
    first_line: dict[str, int] = {}
    primary: tuple[float, int, Failure, str | None] | None = None

    def add_evidence(m: Match, ev: Evidence, kind: str) -> None:
        # Eight ranks print the same error: two lines of each kind leave room for the rest.
        key = (m.scenario, kind)
        if ev in m.evidence or len(m.evidence) >= MAX_EVIDENCE or per_kind.get(key, 0) >= 2:
            return
        per_kind[key] = per_kind.get(key, 0) + 1
        m.evidence.append(ev)

    for f, cands, phase in classified:
        factor = 1.0 if f.run == focus else EARLIER_RUN
        kind = f.signature.id if f.signature else "oom"
        for c in cands:
            score = round(c.score * factor, 3)
            m = best.get(c.scenario)
            if m is None:
                m = best[c.scenario] = Match(c.scenario, score)
                first_line[c.scenario] = f.line
            m.score = max(m.score, score)
            counts[c.scenario] = counts.get(c.scenario, 0) + 1
            add_evidence(m, Evidence(f.file, f.line, f.text), kind)
            for fact in c.context:
                if fact.line:
                    add_evidence(m, Evidence(fact.file or f.file, fact.line, fact.detail or ""), "fact:" + fact.name)
            rs = reasons.setdefault(c.scenario, {})
            rs[c.reason] = max(rs.get(c.reason, 0.0), score)
            better = primary is None or score > primary[0] or (score == primary[0] and f.line < primary[1])
            if f.run == focus and better:
                primary = (score, f.line, f, phase)
    matches = sorted(best.values(), key=lambda m: (-m.score, -counts[m.scenario], first_line[m.scenario]))
    for m in matches:
        m.evidence.sort(key=lambda e: (order.get(e.file, -1), e.line))
        ordered = sorted(reasons[m.scenario].items(), key=lambda kv: -kv[1])
        m.reasons = [t for t, _ in ordered[:MAX_REASONS]]
    ranks = [f for f, cands, _ in classified if f.run == focus and cands and f.rank is not None]
    first_rank = min(ranks, key=lambda f: (order.get(f.file, -1), f.line)).rank if ranks else None
    if primary is None:
        return Ranked(matches, None, None, first_rank)
    phase = primary[3] if primary[3] in FAILURE_PHASES else None
    return Ranked(matches, primary[2], phase, first_rank)
