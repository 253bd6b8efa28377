"""The rules in ``oomwizard/logs``: scenario ids that exist, facts that are in the catalog, and a
message in each release's wording for every signature."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from oomwizard.facts.catalog import CATALOG, FAILURE_PHASES
from oomwizard.kb.loader import load_kb
from oomwizard.logs.signatures import FRAME_PHASES, SIGNATURES, TIMELINE

LOGS_PKG = Path(__file__).resolve().parent.parent / "oomwizard" / "logs"


def _code_literals() -> set[str]:
    """Scenario ids written in the reader's and the ranking's code (none are left there)."""
    found: set[str] = set()
    for name in ("signatures.py", "rank.py"):
        tree = ast.parse((LOGS_PKG / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            index = {"_sig": 3, "Candidate": 0}.get(fn)
            if index is None or len(node.args) <= index:
                continue
            arg = node.args[index]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
    return found


def _scenario_literals() -> set[str]:
    """Every scenario id the log reader can put in a diagnosis: those of the refinement rules
    (``refinements.yaml``) and any still written in code."""
    from oomwizard.logs.rules import rules

    return {scenario for _, scenario, _ in rules().refinements.scenarios} | _code_literals()


def test_the_ranking_names_no_scenario_in_code() -> None:
    assert _code_literals() == set()
    text = (LOGS_PKG / "rank.py").read_text(encoding="utf-8")
    kb, _ = load_kb(strict=False)
    named = [s for s in kb.scenarios if re.search(rf"[\"']{re.escape(s)}[\"']", text)]
    assert named == []


def test_every_scenario_id_exists_in_scenarios_yaml() -> None:
    kb, _ = load_kb(strict=False)
    used = _scenario_literals()
    assert len(used) >= 15
    unknown = used - set(kb.scenarios)
    assert not unknown, f"not in decision_trees/scenarios.yaml: {unknown}"
    assert {s.scenario for s in SIGNATURES} <= set(kb.scenarios)


def test_signature_facts_and_phases_are_known() -> None:
    for sig in SIGNATURES:
        assert {mf.fact for mf in sig.facts} <= set(CATALOG), sig.id
        assert {mf.group for mf in sig.facts} <= set(sig.pattern.groupindex), sig.id
        assert sig.phase is None or sig.phase in FAILURE_PHASES, sig.id
        assert 0 < sig.score <= 1
        for field in re.findall(r"\{(\w+)\}", sig.reason.en + sig.reason.zh):
            assert field in sig.pattern.groupindex, (sig.id, field)
    assert {fp.phase for fp in FRAME_PHASES} <= set(FAILURE_PHASES)
    assert {phase for _, _, phase in TIMELINE} <= set(FAILURE_PHASES)
    assert len({s.id for s in SIGNATURES}) == len(SIGNATURES)


EXAMPLES = {
    "sampler-warmup-message": "RuntimeError: CUDA out of memory occurred when warming up sampler with 512 dummy requests. "
                              "Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
    "pooler-warmup-message": "RuntimeError: CUDA out of memory occurred when warming up pooler (task='embed') with 64 dummy "
                             "requests.",
    "custom-allreduce-invalid-argument": "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
    "custom-allreduce-ipc-error": "RuntimeError: CUDA error: invalid argument",
    "workspace-locked": "AssertionError: Workspace is locked but allocation from 'turboquant_attn.py:747:_continuation_prefill' "
                        "requires 8.12 MB, current size is 0.76 MB. Workspace growth is not allowed after locking.",
    "no-available-memory": "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                           "when initializing the engine.",
    "kv-cache-too-small-v1": "ValueError: To serve at least one request with the models's max seq len (32768), (4.00 GB KV "
                             "cache is needed, which is larger than the available KV cache memory (1.50 GB). Based on the "
                             "available memory, Try increasing `gpu_memory_utilization`",
    "kv-cache-too-small-v0": "ValueError: The model's max seq len (8192) is larger than the maximum number of tokens that can "
                             "be stored in KV cache (6528).",
    "mamba-cache-blocks": "ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (176). Each decode "
                          "sequence requires one Mamba cache block, so CUDA graph capture cannot proceed.",
    "free-memory-at-startup": "ValueError: Free memory on device cuda:1 (3.22/4.0 GiB) on startup is less than desired GPU "
                              "memory utilization (0.9, 3.6 GiB).",
    "memory-profiling-error": "AssertionError: Error in memory profiling. Initial free memory 30.1 GiB, current free memory "
                              "31.9 GiB.",
    "oom-killer": "Out of memory: Killed process 4411 (python3) total-vm:100kB",
    "oom-killer-named": "Out of memory: Killed process (VLLM::Worker_TP1)",
    "ray-memory-monitor": "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "oom-killer-invoked": "[12.0] python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0",
    "oom-killed-container": "      Reason:       OOMKilled",
    "shell-killed": "./serve.sh: line 9:  3312 Killed                  python3 -m vllm.entrypoints.openai.api_server",
    "cannot-allocate-memory": "OSError: [Errno 12] Cannot allocate memory",
    "bad-alloc": "terminate called after throwing an instance of 'std::bad_alloc'",
    "python-memoryerror": "MemoryError",
    "swap-space-warning": "WARNING 01-01 config.py:1] Possibly too large swap space. 64.00 GiB out of the 125.00 GiB total "
                          "CPU memory is allocated for the swap space.",
    "sigkill-exit": "Worker VllmWorkerProcess pid 512 died, exit code: -9",
    "weights-load-message": "ERROR 06-03 [gpu_model_runner.py:4431] Failed to load model - not enough GPU memory. Try "
                            "lowering --gpu-memory-utilization (original error: CUDA out of memory. Tried to allocate 2.00 GiB.",
    "kv-blocks-zero": "INFO 02-26 10:13:05 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681",
    "kv-budget-negative": "INFO 09-28 [gpu_worker.py:298] Available KV cache memory: -1.37 GiB",
    "sleep-cumem-oom": "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:163",
    "sleep-expandable-segments": "AssertionError: Expandable segments are not compatible with memory pool. Please track "
                                 "https://github.com/pytorch/pytorch/issues/147851 for the latest updates.",
    "kv-connector-expandable-segments": "ValueError: KV connector MooncakeConnector is incompatible with "
                                        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True unless enable_sleep_mode is "
                                        "also enabled.",
}


def test_every_signature_has_an_example() -> None:
    """Every rule carries its examples in ``messages.yaml``; the lines here stay as a second set."""
    from oomwizard.logs.rules import rules

    assert set(EXAMPLES) <= {s.id for s in SIGNATURES}
    assert {e.rule for e in rules().examples} >= {s.id for s in SIGNATURES}


@pytest.mark.parametrize("sig", [s for s in SIGNATURES if s.id in EXAMPLES], ids=lambda s: s.id)
def test_signature_matches_its_example(sig) -> None:  # type: ignore[no-untyped-def]
    text = EXAMPLES[sig.id]
    assert any(t in text for t in sig.triggers)
    assert sig.pattern.search(text), sig.id


@pytest.mark.parametrize(
    "text",
    [
        "CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing "
        "`gpu_memory_utilization` or enforcing eager mode.",
        "If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization`.",
        "INFO 01-01 [core.py:1] Killed 3 stale requests",
        "GPU KV cache usage: 97.1%, Prefix cache hit rate: 31.0%",
        "INFO 01-01 [executor_base.py:111] # cuda blocks: 2048, # CPU blocks: 0",
        "INFO 01-01 [cpu_executor.py:111] # cpu blocks: 0",
        "INFO 01-01 [executor_base.py:111] # GPU blocks: 0.5",
        "INFO 01-01 [gpu_worker.py:298] Available KV cache memory: 12.40 GiB",
        "(raylet) INFO 01-01 memory_monitor.cc:47] Ray memory usage threshold is 0.95",
        "INFO 01-01 [ray_env.py:66] Ray will not kill workers: memory monitor is disabled",
        "INFO 01-01 [cumem.py:214] CuMemAllocator: sleep freed 9.69 GiB memory in total, of which 0.00 GiB is "
        "backed up in CPU and the rest 9.69 GiB is discarded directly.",
        "INFO 01-01 [gpu_worker.py:128] Sleep mode freed 0.00 GiB memory, 63.15 GiB memory is still in use.",
    ],
)
def test_benign_lines_match_nothing(text: str) -> None:
    from oomwizard.logs.signatures import OOM_RE

    assert not OOM_RE.search(text)
    for sig in SIGNATURES:
        if sig.id == "python-memoryerror":
            continue
        assert not sig.pattern.search(text), sig.id


@pytest.mark.parametrize(
    ("text", "oom"),
    [
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", False),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.", True),
        ("RuntimeError: CUDA driver error: out of memory", True),
        ("RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62", True),
        ('RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/CUDACachingAllocator.cpp":1165, '
         "please report a bug to PyTorch.", True),
        ('RuntimeError: NVML_SUCCESS == DriverAPI::get()->nvmlInit_v2_() INTERNAL ASSERT FAILED at '
         '"../c10/cuda/CUDACachingAllocator.cpp":813', False),
        ("Tried to allocate 23.04 GiB (GPU 0; 23.52 GiB total; 0 bytes free)", True),
    ],
)
def test_what_counts_as_a_gpu_oom(text: str, oom: bool) -> None:
    """PyTorch's exception and the runtime's, driver's and sleep-mode allocator's errors; the
    allocator's NVML assertion raised where it would report the OOM. Not Ray's exception of the
    same name (host memory), nor NVML failing to start (no allocation involved)."""
    from oomwizard.logs.signatures import OOM_RE

    assert bool(OOM_RE.search(text)) is oom


def test_the_programs_own_rules_compile_each_regex_when_first_used() -> None:
    """Lint compiles every shipped rule; at run time a regex is compiled the first time a line is
    tried against it, and a broken one still names its file and line."""
    from oomwizard.kb.yamlsrc import KBError, Problem
    from oomwizard.logs.rules_read import LazyPattern, _Reader

    problems: list[Problem] = []
    rx = _Reader("decision_trees/diagnosis/messages.yaml", problems, lazy=True).regex(
        "(?P<n>\\d+) {{dummy requests}}", 12, "message x.pattern")
    assert isinstance(rx, LazyPattern) and rx._compiled is None
    assert set(rx.groupindex) == {"n"} and rx._compiled is None
    m = rx.search("with 512 dummy  requests")
    assert m is not None and m.group("n") == "512"
    bad = _Reader("decision_trees/diagnosis/frames.yaml", problems, lazy=True).regex("(unclosed", 7, "flags x.func")
    assert problems == []
    with pytest.raises(KBError) as e:
        bad.search("anything")
    assert [(p.file, p.line) for p in e.value.problems] == [("decision_trees/diagnosis/frames.yaml", 7)]
    assert "bad regex" in e.value.problems[0].message
    eager: list[Problem] = []
    assert _Reader("x.yaml", eager).regex("(unclosed", 3, "w") is None and eager[0].line == 3
    from oomwizard.logs.rules import rules

    assert all(isinstance(s.pattern, LazyPattern) for s in rules().messages)
