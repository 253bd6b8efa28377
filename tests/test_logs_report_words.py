"""Reports whose excerpt holds the failure only in the reporter's words (a title, a sentence of the
description) or in a line that is not vLLM's own message: one class each, written here as a short
synthetic report. Such words rank their scenario below a confident claim (the wizard still asks),
never above an error the log itself prints, except where they name the setting that refines that
error (expandable segments beside a custom all-reduce failure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.logs.model import Diagnosis
from oomwizard.logs.signatures import CONFIDENT, SIGNATURES

SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
EC = "(EngineCore_DP0 pid=412) ERROR 05-14 10:22:31 [core.py:710] "


def _diag(tmp_path: Path, lines: list[str]) -> Diagnosis:
    p = tmp_path / "report.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return diagnose_paths([str(p)])


def _top(d: Diagnosis) -> tuple[str, float]:
    assert d.matches, "nothing found"
    return d.matches[0].scenario, d.matches[0].score


def _scenarios(d: Diagnosis, n: int = 3) -> list[str]:
    return [m.scenario for m in d.matches[:n]]


# report -> scenario ranked first, below a confident claim
REPORTS: dict[str, tuple[list[str], str]] = {
    "workspace locked, in prose": ([
        "[Bug]: long-context prefill aborts with the quantized KV cache on 0.20",
        "",
        "Past about 7K cached tokens the prefill path asks the shared workspace for more room, but the",
        "workspace is locked after the engine starts, so the request aborts.",
        "```bash",
        "vllm serve /models/m --tensor-parallel-size 4 --kv-cache-dtype fp8",
        "```",
    ], "workspace-locked"),
    "prompt logprobs, in a title": ([
        "[OOM] prompt_logprobs on long prompts takes the engine down",
        "",
        "With four clients asking for prompt_logprobs=10 each rank tries to gather the full-vocabulary",
        "logits of a chunk at once, and the engine core dies.",
    ], "runtime-oom-logprobs"),
    "evaluation harness scoring choices": ([
        "Every MMLU run through lm-eval ends in an OOM on this model",
        "",
        "Offline generation with the same model works; only the evaluation run fails.",
    ], "runtime-oom-logprobs"),
    "woken up, words between": ([
        "GPU memory stays allocated between steps, so there is an OOM when the rollout engine is "
        "woken up for step two.",
    ], "sleep-mode"),
    "weight repacking": ([
        "A 4-bit checkpoint: OOM during marlin repacking at 0.85 on a 24 GB card.",
        "(EngineCore pid=12) INFO 08-01 10:00:00 [default_loader.py:430] Loading weights took 14.02 seconds",
    ], "weights-load-oom"),
    "LoRA, exceeding the memory": ([
        "[Usage]: serving a 70B model with LoRA on eight 24 GB cards",
        "",
        "Adding two adapters, LoRA pushes the model to exceed GPU memory.",
    ], "lora"),
    "kernel warm-up, in a title": ([
        "The DeepGEMM warmup OOMs once data parallelism goes above four",
    ], "kernel-warmup-oom"),
    "utilization check, in prose": ([
        "After the quantization step the engine start fails with gpu_memory_utilization errors.",
    ], "insufficient-free-memory-at-startup"),
    "multimodal encoder while serving": ([
        "[Bugfix] Profile the encoder cache in the new runner",
        "",
        "Serving screenshots, the engine goes out of memory at runtime when the vision encoder runs on large "
        "images.",
    ], "runtime-oom-multimodal"),
    "the cumem allocator's file": ([
        "Sleep mode is on and the OOM comes from cumem_allocator.cpp on two of the ranks.",
    ], "sleep-mode"),
    "serving, in a title": ([
        "[Bug]: OOM after a few hundred requests with 0.9.1",
        "",
        "The server starts fine and answers for a while.",
    ], "runtime-oom"),
    "fragmentation, in prose": ([
        "Lower the default memory share",
        "",
        "Closes the crash report. The OOM is caused by fragmentation of the caching allocator, so a",
        "smaller share leaves room for it.",
    ], "fragmentation"),
    "custom all-reduce with expandable segments, in a title": ([
        "2x RTX 4090: custom all-reduce fails in graph capture with expandable_segments=True, False is fine",
        "",
        "- driver 570, CUDA 12.8, TP=2",
    ], "expandable-segments-custom-allreduce"),
    "speculative decoding, in prose": ([
        "[Bugfix] Count the draft model in the memory profile",
        "",
        "The profiler leaves the draft model's weights out, so with --gpu-memory-utilization 0.9 the engine then "
        "runs out-of-memory while it loads them.",
        "```text",
        "INFO 03-02 11:04:10 [model_runner.py:1110] Starting to load model Qwen/Qwen2.5-7B-Instruct...",
        "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
    ], "speculative-decoding"),
    "LoRA, in a title": ([
        "[Bug]: OOM when serving with --enable-lora and max_loras 16 on two L4",
        "",
        "Without the adapters the same model serves fine.",
    ], "lora"),
    "the OOM killer, in prose": ([
        "长上下文训练时进程被 OOM killer 杀掉",
        "",
        "vllm==0.7.3, --vllm_tensor_parallel_size 2",
    ], "host-memory"),
    "host memory growth, in a title": ([
        "Why does host memory keep growing between rollouts?",
        "",
        "```",
        "(LLMRayActor pid=5120) INFO 06-20 01:36:37 worker.py:133] Sleep mode freed 40.10 GiB memory, 20.50 GiB memory is still in use.",
        "(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root",
    ], "host-memory"),
    "host OOM, in a title": ([
        "[Bug]: RAM OOM on a 64 GB node while eight workers read the shards",
    ], "host-memory"),
    "fragmentation, in a sentence without OOM": ([
        "[Bug]: serving runs out of memory because of allocator fragmentation after a day",
    ], "fragmentation"),
    "graph capture OOMed, phase before the verb": ([
        "[Bugfix] Reserve graph memory in the new runner",
        "",
        "The estimate was zero, so the KV cache took the whole budget and `capture_model()` OOMed at start-up.",
    ], "cudagraph-capture"),
    "sampler warm-up OOM, phase before the noun": ([
        "[Bugfix] Fix the sampler warmup OOM with 1024 sequences",
    ], "sampler-warmup"),
}


@pytest.mark.parametrize("name", list(REPORTS))
def test_a_report_in_its_own_words_points_at_the_class_without_claiming(tmp_path: Path, name: str) -> None:
    lines, scenario = REPORTS[name]
    d = _diag(tmp_path, lines)
    got, score = _top(d)
    assert got == scenario, [(m.scenario, m.score) for m in d.matches[:3]]
    assert score < CONFIDENT, score


def test_every_report_words_rule_stays_below_a_confident_claim() -> None:
    """The reporter's words are evidence for the wizard's questions, not a verdict."""
    prose = [s for s in SIGNATURES if s.id.startswith("prose-")]
    assert len(prose) >= 14
    assert all(s.score < CONFIDENT for s in prose), [(s.id, s.score) for s in prose if s.score >= CONFIDENT]


def test_report_words_do_not_outrank_the_error_the_log_prints(tmp_path: Path) -> None:
    """A title that names LoRA above a traceback through graph capture: the frames decide."""
    d = _diag(tmp_path, [
        "[Bug]: OOM with LoRA on 0.11",
        f"{EC}Traceback (most recent call last):",
        f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 340, in compile_or_warm_up_model',
        f"{EC}    self.model_runner.capture_model()",
        f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 3400, in capture_model',
        f"{EC}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total "
        "capacity of 79.19 GiB of which 301.00 MiB is free.",
    ])
    assert _top(d)[0] == "cudagraph-capture" and _top(d)[1] >= CONFIDENT
    assert "lora" in _scenarios(d)


def test_expandable_segments_named_beside_the_custom_allreduce_error_refines_it(tmp_path: Path) -> None:
    """The error alone cannot tell the two causes apart; a sentence of the same report that names
    expandable_segments:True with custom all-reduce is the setting in force."""
    error = ["```", "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:164 'invalid argument'",
             "(EngineCore) ERROR Worker proc VllmWorker-1 died unexpectedly (exit code: None)", "```"]
    alone = _diag(tmp_path, ["TP=4 server dies right after graph capture:", *error])
    assert _top(alone)[0] == "custom-allreduce-ipc"
    told = _diag(tmp_path, ["TP=4 server dies right after graph capture:", *error,
                            "Unsetting `expandable_segments:True` or passing `--disable-custom-all-reduce` avoids it."])
    scenario, score = _top(told)
    assert scenario == "expandable-segments-custom-allreduce" and score >= 0.95
    fact = told.facts.get("expandable_segments")
    assert fact is not None and fact.value is True and fact.line == 6
    off = _diag(tmp_path, ["TP=4 server dies right after graph capture:", *error,
                           "It happens with custom all-reduce whatever expandable_segments says."])
    assert off.facts.get("expandable_segments") is None
    assert _top(off)[0] == "custom-allreduce-ipc"


def test_the_cumem_pool_assertion_line_is_sleep_mode_with_expandable_segments_on() -> None:
    """CuMemAllocator.__init__ asserts against expandable segments (0.8.0-0.20.0); a traceback shows
    that line above the AssertionError, and a report may quote only the line."""
    d = diagnose_text('assert "expandable_segments:True" not in conf报错\n\n使用官方镜像运行 PPO 脚本时出错\n')
    assert _top(d) == ("sleep-mode", 0.9)
    fact = d.facts.get("expandable_segments")
    assert fact is not None and fact.value is True
    tb = diagnose_text("\n".join([
        "Traceback (most recent call last):",
        f'  File "{SITE}/device_allocator/cumem.py", line 132, in __init__',
        '    assert "expandable_segments:True" not in conf, (',
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "AssertionError: Expandable segments are not compatible with memory pool.",
    ]))
    assert _top(tb)[0] == "sleep-mode" and _top(tb)[1] >= 0.9
    # 0.21.0 and later read the setting without asserting: that line is no failure.
    assert not diagnose_text('        expandable_was_enabled = "expandable_segments:True" in conf\n').matches


@pytest.mark.parametrize(("rule", "text"), [
    # PyTorch's own hint names fragmentation; it is no report that fragmentation caused it.
    ("prose-oom-fragmentation",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
     "23.64 GiB of which 9.06 MiB is free. If reserved but unallocated memory is large try setting "
     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."),
    # Loading the model is not serving.
    ("prose-oom-serving", "OOM when loading the model on a single 24 GB card"),
    ("prose-oom-serving", "the node hit an OOM when load of the 70B shards began on eight workers"),
    # A draft of a pull request is not a draft model; "exploration" holds no LoRA.
    ("prose-oom-speculative", "This is a draft; it fixes the OOM in the encoder profiling."),
    ("prose-oom-lora", "OOM during exploration of larger batch sizes"),
    ("prose-host-oom", "GPU OOM at 0.95 on the H100, while the CPU stays idle"),
    # The GPU's OOM ending a process is not the kernel's OOM killer.
    ("prose-oom-killer", "the CUDA OOM killed the engine"),
    # A container path named workspace is not vLLM's workspace.
    ("prose-workspace-locked", "the volume /workspace/models is mounted read-only and locked by the job"),
    # A command line that sets both is a configuration, not a report tying them together.
    ("prose-allreduce-expandable",
     "docker run --gpus all -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vllm/vllm-openai --model m "
     "--tensor-parallel-size 2 --disable-custom-all-reduce"),
    ("prose-allreduce-expandable",
     "vllm serve Qwen/Qwen3-8B -tp 2 --disable-custom-all-reduce  # PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
    # Words near a class that say something else: nobody woke up; a warm-up done before the OOM; a
    # cache switched off; LoRA not in use; a dataset repacked; MMLU run as generation.
    ("prose-oom-wake-up", "the server OOMed on Friday and nobody woke up until noon"),
    ("prose-oom-kernel-warmup", "kernel warmup done; OOM later during decode"),
    ("prose-oom-multimodal-serving", "OOM at runtime; I disabled the image cache"),
    ("prose-oom-lora", "Without LoRA, the model still exceeds GPU memory"),
    ("prose-oom-loading", "OOM during my repack of the dataset"),
    ("prose-oom-logprobs", "OOM while running MMLU with generate_until"),
    # The cumem allocator's out-of-memory error has its own rule, refined by the phase it came in.
    ("sleep-cumem-error", "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:163"),
    # Profiling an image model at start-up is no OOM while serving images.
    ("prose-oom-multimodal-serving", "OOM during the start-up profile with image inputs of the largest size"),
    # Warm-up of the sampler is not the kernel warm-up; a utilization value is no failed check.
    ("prose-oom-kernel-warmup", "the sampler warmup OOMs with 1024 sequences"),
    ("prose-free-memory-utilization", "--gpu-memory-utilization 0.9 works, errors appear only at 0.95"),
    ("prose-host-memory-growth", "Possibly too large swap space. 8.00 GiB out of the 31.00 GiB total CPU memory is "
                                 "allocated for the swap space."),
])
def test_words_near_a_class_do_not_name_it(rule: str, text: str) -> None:
    sig = next(s for s in SIGNATURES if s.id == rule)
    assert sig.pattern.search(text) is None


def test_the_ray_worker_connection_message_alone_is_weak_host_memory() -> None:
    """Ray names the OOM killer first among the causes of a worker lost this way, a crash second."""
    d = diagnose_text("Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a "
                      "connection error code 2. End of file.\n")
    scenario, score = _top(d)
    assert scenario == "host-memory" and score < CONFIDENT


def test_vllm_messages_quoted_in_part_are_still_their_message(tmp_path: Path) -> None:
    """Reports quote vLLM's message without its first words or its line number."""
    mamba = _diag(tmp_path, ["Raising the context to 128k stops it: `exceeds available Mamba cache blocks (95)`."])
    assert _top(mamba) == ("mamba-cache-blocks", 0.95)
    fact = mamba.facts.get("mamba_cache_blocks")
    assert fact is not None and fact.value == 95
    ar = _diag(tmp_path, ["Two ranks print `custom_all_reduce.cuh: invalid argument` and the engine exits."])
    assert _top(ar)[0] == "custom-allreduce-ipc"


def test_a_cumem_driver_error_is_sleep_mode_above_the_fragmented_oom_beside_it(tmp_path: Path) -> None:
    """The cumem pool is sleep mode's (its main user): its driver error explains the PyTorch OOM that
    follows with most of the GPU free, which alone would read as fragmentation."""
    d = _diag(tmp_path, [
        "CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:119",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 7 has a total capacity of "
        "79.11 GiB of which 66.43 GiB is free. Of the allocated memory 8.51 GiB is allocated by PyTorch, and "
        "4.20 GiB is reserved by PyTorch but unallocated.",
    ])
    assert _scenarios(d, 2) == ["sleep-mode", "fragmentation"], [(m.scenario, m.score) for m in d.matches]
    assert "invalid argument" in d.matches[0].reasons[0].en


@pytest.mark.parametrize(("text", "scenario"), [
    ("an out-of-memory error during the FlashInfer autotune step", "kernel-warmup-oom"),
    ("GPU Memory Utilization check failed at start", "insufficient-free-memory-at-startup"),
    ("Out of memory at runtime once the vision encoder ran on the first images", "runtime-oom-multimodal"),
])
def test_report_words_in_any_case_reach_their_rule(text: str, scenario: str) -> None:
    """A rule's triggers are plain substrings: each spelling its pattern accepts has one."""
    d = diagnose_text(text + "\n")
    assert d.matches and d.matches[0].scenario == scenario, [(m.scenario, m.score) for m in d.matches]


@pytest.mark.parametrize("title", ["[Bug]: Not Enough GPU Memory When Starting Qwen2.5-72B",
                                   "VLLM RUNS OUT OF MEMORY AT STARTUP ON 4 GPUS",
                                   "Server Fails To Start With OOM since 0.9"])
def test_title_case_and_upper_case_reports_are_read(tmp_path: Path, title: str) -> None:
    # The triggers come from the named words' plain words in each spelling a report uses.
    scenario, score = _top(_diag(tmp_path, [title]))
    assert scenario == "profile-run-oom" and score < CONFIDENT, (scenario, score)


def _messages_edited(tmp_path: Path, old: str, new: str) -> tuple[str, int, list]:
    """Lint's problems for a copy of the rules whose messages.yaml has its first ``old`` replaced by
    ``new``; with the original text and the offset of the edit."""
    import shutil

    from oomwizard.logs.rules import load_rules

    root = Path(__file__).resolve().parent.parent
    shutil.copytree(root / "decision_trees", tmp_path / "decision_trees")
    path = tmp_path / "decision_trees/diagnosis/messages.yaml"
    text = path.read_text(encoding="utf-8")
    i = text.index(old)
    path.write_text(text[:i] + new + text[i + len(old):], encoding="utf-8")
    problems: list = []
    load_rules(tmp_path, problems)
    return text, i, problems


def test_a_spelling_the_plain_words_miss_is_a_lint_error(tmp_path: Path) -> None:
    old = "plain: [oom, out of, out-of, enough, insufficient, 显存]"
    text, i, problems = _messages_edited(tmp_path, old, "plain: [oom, out of, out-of, insufficient, 显存]")
    hits = [p for p in problems if p.message.startswith("words.oom: matches")]
    assert hits and hits[0].file.endswith("messages.yaml") and "enough" in hits[0].message.lower(), problems
    assert hits[0].line == text[:i].count("\n")  # the line of `oom:`, above `plain:`


def test_an_unknown_named_word_in_triggers_is_a_lint_error(tmp_path: Path) -> None:
    text, i, problems = _messages_edited(tmp_path, "\n  triggers: ['@oom']", "\n  triggers: ['@ooms']")
    hits = [p for p in problems if "'@ooms' is no named word" in p.message]
    assert hits and hits[0].line == text[:i].count("\n") + 2, problems
