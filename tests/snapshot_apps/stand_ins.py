"""Fixed inputs for the frontends' tests: a diagnosed sampler warm-up log and an H200 machine.

The numbers follow the real readings in the project's H200 fixtures (one NVIDIA H200 of
150754820096 bytes, driver 580.159.04) and the vLLM 0.11 message formats; nothing here depends on
the log reader or on NVML, so the screens can be tested before and independently of them.
"""

from __future__ import annotations

import threading
from pathlib import Path

from oomwizard.facts.model import Fact, FactSet
from oomwizard.frontend.inputs import InputProblem, MachineResult, Sources
from oomwizard.frontend.options import LaunchOptions
from oomwizard.i18n import Text
from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase
from oomwizard.logs.model import Diagnosis, Evidence, Match
from oomwizard.versions import Version

HERE = Path(__file__).resolve().parent
KB_FIXTURE = HERE.parent / "kb_fixture"
LOG_NAME = "vllm-serve.log"

WARMUP_LINE = (
    "(EngineCore_DP0 pid=3811) ERROR 11-29 03:12:44 [core.py:708] RuntimeError: CUDA out of memory occurred "
    "when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or "
    "`gpu_memory_utilization` when initializing the engine."
)
TORCH_LINE = (
    "(EngineCore_DP0 pid=3811) ERROR 11-29 03:12:44 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 1.16 GiB. GPU 0 has a total capacity of 139.81 GiB of which 742.00 MiB is free."
)
# A log line carrying an OSC 52 clipboard write and a colour code: must never reach the terminal raw.
HOSTILE_LINE = (
    "\x1b[0;36m(EngineCore_DP0 pid=3811)\x1b[0m INFO \x1b]52;c;cm0gLXJmIH4=\x07GPU KV cache size: 1,302,528 tokens"
)
SERVE = (
    "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 1 --max-model-len 32768 "
    "--gpu-memory-utilization 0.92 --max-num-seqs 1024 --port 8000"
)


def fixture_kb() -> KnowledgeBase:
    kb, problems = load_kb(KB_FIXTURE)
    assert not problems, problems
    return kb


def _log(name: str, value: object, line: int) -> Fact:
    return Fact(name, value, f"log line {line} ({LOG_NAME})", kind="log", file=LOG_NAME, line=line)


def sampler_diagnosis() -> Diagnosis:
    facts = FactSet.of(
        [
            _log("diagnosis", "sampler-warmup", 214),
            _log("failure_phase", "sampler_warmup", 214),
            _log("vllm_version", Version.parse("0.11.0"), 3),
            _log("model", "Qwen/Qwen3-32B", 4),
            _log("serve_command", SERVE, 4),
            _log("max_num_seqs", 1024, 4),
            _log("gpu_memory_utilization", 0.92, 4),
            _log("sampler_dummy_requests", 1024, 214),
            _log("kv_cache_tokens", 1302528, 187),
        ]
    )
    best = Match(
        "sampler-warmup",
        0.94,
        [
            Evidence(LOG_NAME, 214, WARMUP_LINE),
            Evidence(LOG_NAME, 209, TORCH_LINE),
            Evidence(LOG_NAME, 187, HOSTILE_LINE),
        ],
        [
            Text(
                "vLLM's own sampler warm-up message names 1024 dummy requests",
                "vLLM 的 sampler 预热报错指出了 1024 个虚拟请求",
            ),
            Text("the KV cache was already allocated (line 187)", "KV cache 已经分配完成（第 187 行）"),
        ],
    )
    second = Match(
        "kv-cache-too-small",
        0.18,
        [Evidence(LOG_NAME, 187, "GPU KV cache size: 1,302,528 tokens")],
        [Text("a KV cache size was printed", "日志打印了 KV cache 大小")],
    )
    return Diagnosis([best, second], facts, inputs=[LOG_NAME], warnings=[])


def h200_machine() -> MachineResult:
    def m(name: str, value: object, source: str = "NVML") -> Fact:
        return Fact(name, value, source, kind="machine")

    facts = FactSet.of(
        [
            m("gpu_name", "NVIDIA H200"),
            m("gpu_count", 1),
            m("gpu_arch", "hopper"),
            m("gpu_cc", "9.0"),
            m("gpu_mem_total_bytes", 150754820096),
            m("gpu_mem_free_bytes", 150108700672),
            m("driver_version", "580.159.04"),
            m("cuda_driver_version", "13.0"),
            m("torch_version", Version.parse("2.11.0"), "package metadata"),
            m("expandable_segments", False, "env (PYTORCH_CUDA_ALLOC_CONF not set)"),
        ]
    )
    return MachineResult(facts)


def no_gpu_machine() -> MachineResult:
    return MachineResult(
        FactSet.of([Fact("in_container", False, "/proc", kind="machine")]),
        nvml_reason=Text(
            "no NVIDIA driver here: libnvidia-ml.so.1 was not found", "这里没有 NVIDIA 驱动：找不到 libnvidia-ml.so.1"
        ),
    )


class StandIns:
    """Sources with fixed answers; ``gate`` holds machine detection until a test releases it."""

    def __init__(
        self,
        machine: MachineResult | None = None,
        diagnosis: Diagnosis | None = None,
        gate: threading.Event | None = None,
        detect_error: Exception | None = None,
    ) -> None:
        self.machine = machine or h200_machine()
        self.diagnosis = diagnosis or sampler_diagnosis()
        self.gate = gate
        self.detect_error = detect_error
        self.read_paths: list[list[str]] = []
        self.pasted: list[str] = []

    def _detect(self, python: str | None) -> MachineResult:
        if self.gate is not None:
            self.gate.wait(10)
        if self.detect_error is not None:
            raise self.detect_error
        return self.machine

    def _replay(self, path: str) -> MachineResult:
        return MachineResult(self.machine.facts, replayed_from=path)

    def _paths(self, paths: list[str], progress: object = None) -> Diagnosis:
        self.read_paths.append(list(paths))
        if any(not Path(p).exists() for p in paths):
            raise InputProblem(f"cannot read {paths[0]}: no such file")
        return self.diagnosis

    def _text(self, text: str, name: str) -> Diagnosis:
        self.pasted.append(text)
        return self.diagnosis

    def sources(self) -> Sources:
        return Sources(self._paths, self._text, self._detect, self._replay)


def make_app(
    *,
    logs: list[str] | None = None,
    lang: str = "en",
    stand_ins: StandIns | None = None,
    environ: dict[str, str] | None = None,
    machine_file: str | None = None,
):  # type: ignore[no-untyped-def]
    from oomwizard.tui.app import WizardApp

    si = stand_ins or StandIns()
    opts = LaunchOptions(logs=list(logs or []), lang=lang, machine=machine_file)
    return WizardApp(opts, kb=fixture_kb(), sources=si.sources(), environ=environ or {})
