"""Forms that reports of real failures take, one class each (tests/logs/make_logs.py writes the
logs from vLLM's message formats): a wording the signatures did not know, a wrapper, a phase told
by a neighbouring line rather than the traceback, a setting mentioned again after the failure."""

from __future__ import annotations

from typing import Any

import pytest
from logkit import LOGS, assert_facts, assert_ranks_first, b, diag, value

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.model import Diagnosis, where
from oomwizard.logs.signatures import CONFIDENT, MESSAGE

# log -> (scenario ranked first, {fact: value})
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "weights_load_message_tail_0191.log": (
        "weights-load-oom",
        {"failure_phase": "load_weights", "oom_requested_bytes": b("136.00 MiB"), "oom_total_bytes": b("44.39 GiB")},
    ),
    "no_kv_blocks_zero_v0_073_cut.log": (
        "no-kv-cache-memory",
        {"failure_phase": "kv_cache_alloc", "kv_cache_gib": -0.55, "gpu_memory_utilization": 0.9, "vllm_version": "0.7.3"},
    ),
    "xpu_ipex_oldform_serving.log": (
        "runtime-oom",
        {"failure_phase": "serving", "oom_requested_bytes": b("6.00 GiB"), "oom_total_bytes": b("15.56 GiB"),
         "oom_gpu_index": 0},
    ),
    "runtime_oom_v0_engine_dead_after_capture.log": (
        "runtime-oom",
        {"failure_phase": "serving", "oom_requested_bytes": b("3.91 GiB"), "vllm_version": "0.8.1"},
    ),
    "multimodal_profile_v0_064_encdec.log": (
        "multimodal-profile",
        {"failure_phase": "profile_run", "oom_requested_bytes": b("2.33 GiB"), "weights_gib": 10.0712},
    ),
    "weights_load_v0_other_worker_method.log": (
        "weights-load-oom",
        {"failure_phase": "load_weights", "oom_requested_bytes": b("112.00 MiB")},
    ),
    "weights_load_progress_after_oom_0130.log": (
        "weights-load-oom",
        {"failure_phase": "load_weights", "oom_requested_bytes": b("80.00 MiB")},
    ),
    "allreduce_expandable_fix_told_after.log": (
        "expandable-segments-custom-allreduce",
        {"expandable_segments": True, "vllm_version": "0.22.0"},
    ),
    "runtime_oom_v0_worker_loop_then_engine.log": (
        "runtime-oom",
        {"failure_phase": "serving", "oom_requested_bytes": b("1.02 GiB"), "vllm_version": "0.6.4.post1"},
    ),
    "lora_enabled_serving_v0_081.log": (
        "lora",
        {"failure_phase": "serving", "lora_enabled": True, "max_loras": 4, "max_lora_rank": 64, "max_model_len": 65536},
    ),
    "sampler_warmup_cut_issue_limit_0112.log": (
        "sampler-warmup",
        {"failure_phase": "sampler_warmup", "failed_rank": 1, "vllm_version": "0.11.2"},
    ),
    "no_kv_memory_v0_026_fastchat.log": (
        "no-kv-cache-memory",
        {"model": "/models/Qwen-14B-Chat", "max_model_len": 8192, "tp": 2, "dtype": "bfloat16"},
    ),
}


@pytest.fixture(scope="module")
def diagnoses() -> dict[str, Diagnosis]:
    return {name: diag(name) for name in CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scenario_ranks_first(name: str, diagnoses: dict[str, Diagnosis]) -> None:
    assert_ranks_first(diagnoses[name], CASES[name][0], CONFIDENT)


@pytest.mark.parametrize("name", sorted(CASES))
def test_facts(name: str, diagnoses: dict[str, Diagnosis]) -> None:
    assert_facts(diagnoses[name], CASES[name][1])


def test_weights_message_counts_as_a_message() -> None:
    """vLLM's own sentence names the cause: it scores like the other messages, and its evidence is
    the line where that sentence starts (the wrap is rejoined)."""
    d = diag("weights_load_message_tail_0191.log")
    assert d.best is not None and d.best.score >= MESSAGE
    text = (LOGS / "weights_load_message_tail_0191.log").read_text().split("\n")
    first = next(i for i, ln in enumerate(text, 1) if "Failed to load model" in ln)
    assert any(e.line == first for e in d.best.evidence)


@pytest.mark.parametrize("line", [
    "(EngineCore_DP0 pid=9) INFO 09-28 15:47:21 [gpu_worker.py:298] Available KV cache memory: -1.37 GiB",
    "INFO 01-12 08:00:00 [executor_base.py:112] # cuda blocks: 0, # CPU blocks: 2048",
    "INFO 01-12 08:00:00 gpu_executor.py:122] # GPU blocks: 0, # CPU blocks: 2048",
])
def test_no_room_for_the_cache_without_the_message(line: str) -> None:
    d = diagnose_text(line + "\n")
    assert d.best is not None and d.best.scenario == "no-kv-cache-memory"


def test_positive_budget_is_not_a_failure() -> None:
    d = diagnose_text("INFO 01-12 08:00:00 [gpu_worker.py:298] Available KV cache memory: 11.37 GiB\n"
                      "INFO 01-12 08:00:00 [executor_base.py:112] # cuda blocks: 5120, # CPU blocks: 2048\n")
    # Only the phase the excerpt stops in is ranked, never confidently: the budget itself is no failure.
    assert all(m.score < 0.5 for m in d.matches)
    assert all("excerpt ends during" in r.en or m.scenario != "no-kv-cache-memory" for m in d.matches
               for r in m.reasons)


@pytest.mark.parametrize("reporter", [
    "(APIServer pid=1) ERROR 05-05 12:36:59 [async_llm.py:480] AsyncLLM output_handler failed.",
    "ERROR 07-08 09:27:29 async_llm_engine.py:52] Engine background task failed",
    "(APIServer pid=1) ERROR 05-05 12:36:59 [serving_completion.py:377] Error in completion stream generator.",
])
def test_the_layer_that_reports_a_request_failure_means_serving(reporter: str) -> None:
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
           "79.19 GiB of which 300.00 MiB is free.")
    prefix = reporter.split("] ")[0] + "] "
    d = diagnose_text("INFO 01-01 00:00:00 [gpu_model_runner.py:3480] Capturing CUDA graphs (mixed prefill-decode, "
                      f"PIECEWISE): 10%\n{reporter}\n{prefix}{oom}\n")
    assert d.best is not None and d.best.scenario == "runtime-oom"
    assert value(d, "failure_phase") == "serving"


def test_an_access_log_line_means_serving() -> None:
    d = diagnose_text(
        '(APIServer pid=1) INFO:     10.1.4.7:50122 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        "(Worker_TP3 pid=641) ERROR 03-26 21:14:47 [multiproc_executor.py:949] torch.OutOfMemoryError: CUDA out of "
        "memory. Tried to allocate 48.00 MiB. GPU 3 has a total capacity of 79.19 GiB of which 43.00 MiB is free.\n")
    assert d.best is not None and d.best.scenario == "runtime-oom" and value(d, "failure_phase") == "serving"


def test_v0_engine_loop_frames_are_serving() -> None:
    err = "ERROR 04-27 09:07:04 [engine.py:160] "
    d = diagnose_text("\n".join([
        err + "Traceback (most recent call last):",
        err + '  File "/usr/lib/vllm/engine/multiprocessing/engine.py", line 221, in run_engine_loop',
        err + "    request_outputs = self.engine_step()",
        err + '  File "/usr/lib/vllm/engine/multiprocessing/engine.py", line 247, in engine_step',
        err + "    raise e",
        err + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of "
              "44.53 GiB of which 263.25 MiB is free.",
    ]) + "\n")
    assert value(d, "failure_phase") == "serving"


def test_traceback_printed_below_the_message_places_it() -> None:
    """A logger that writes the error first and its traceback below it (V0's engine process)."""
    err = "ERROR 04-27 09:07:04 [engine.py:160] "
    d = diagnose_text("\n".join([
        err + "OutOfMemoryError('CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 44.53 GiB "
              "of which 263.25 MiB is free.')",
        err + "Traceback (most recent call last):",
        err + '  File "/usr/lib/vllm/engine/multiprocessing/engine.py", line 158, in start',
        err + "    self.run_engine_loop()",
        err + '  File "/usr/lib/vllm/engine/multiprocessing/engine.py", line 221, in run_engine_loop',
        err + "    request_outputs = self.engine_step()",
    ]) + "\n")
    assert value(d, "failure_phase") == "serving"


def test_model_construction_frames_are_weight_loading() -> None:
    """Allocating the parameters while the model's layers are built is the weights phase."""
    err = "(VllmWorkerProcess pid=7) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] "
    d = diagnose_text("\n".join([
        err + "Traceback (most recent call last):",
        err + '  File "/x/vllm/model_executor/models/llama.py", line 237, in __init__',
        err + "    self.self_attn = LlamaAttention(",
        err + '  File "/x/vllm/model_executor/layers/linear.py", line 736, in __init__',
        err + "    super().__init__(input_size=input_size,",
        err + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 2 has a total capacity of "
              "14.62 GiB of which 3.31 MiB is free.",
    ]) + "\n")
    assert d.best is not None and d.best.scenario == "weights-load-oom"


def test_command_line_flags_become_facts() -> None:
    d = diag("speculative_command_v0_0511.log")
    assert value(d, "tp") == 4
    assert value(d, "max_model_len") == 2048
    assert value(d, "gpu_memory_utilization") == pytest.approx(0.92)
    assert value(d, "enforce_eager") is True
    assert value(d, "speculative_method") == "draft_model"
    assert d.best is not None and d.best.scenario == "speculative-decoding"
    assert d.best.score < CONFIDENT  # nothing places the error: the wizard still asks


def test_offline_llm_call_arguments_become_facts() -> None:
    d = diagnose_text('llm = LLM("nvidia/Llama-3.1-Minitron-4B-Width-Base", gpu_memory_utilization=0.8, '
                      'max_model_len=11000, speculative_model="ibm-fms/llama3-8b-accelerator", tensor_parallel_size=2)\n')
    assert value(d, "model") == "nvidia/Llama-3.1-Minitron-4B-Width-Base"
    assert value(d, "max_model_len") == 11000 and value(d, "tp") == 2
    assert value(d, "speculative_method") == "draft_model"


def test_runtime_lora_updating_means_lora() -> None:
    d = diagnose_text("VLLM_ALLOW_RUNTIME_LORA_UPDATING=true VLLM_USE_V1=0 vllm serve /models/base --enable-lora\n")
    assert value(d, "lora_enabled") is True


def test_banner_and_a_line_cut_at_1000_characters() -> None:
    d = diag("banner_args_cut_1000_0191.log")
    assert not d.matches
    assert str(value(d, "vllm_version")) == "0.19.1rc1.dev301+g60995c05b"
    assert value(d, "model") == "google/gemma-3-27b-it"
    assert value(d, "gpu_memory_utilization") == pytest.approx(0.88)
    assert value(d, "max_num_seqs") == 48


@pytest.mark.parametrize(("text", "version"), [
    ("I can reproduce it on vLLM 0.21.0 official Docker image with an RTX 5090", "0.21.0"),
    ("I am using RTX 3090 machine and vLLM version was 0.11.0", "0.11.0"),
    ("vLLM version is v0.10.1.1", "0.10.1.1"),
])
def test_version_in_prose(text: str, version: str) -> None:
    assert str(value(diagnose_text(text + "\n"), "vllm_version")) == version


def test_compact_source() -> None:
    assert where("/var/log/pods/vllm/0.log", 214) == "0.log:214"
    assert where(r"C:\logs\vllm.log", 3) == "vllm.log:3"
    assert where("pasted", 12) == "pasted:12"


def test_a_whole_issue_body() -> None:
    """Environment report, pip list, nvidia-smi table, the command in its own code block, the log
    folded in <details>: the command ends with its code block, the rest still reads."""
    d = diag("issue_body_collect_env_compose_085.log")
    assert d.best is not None and d.best.scenario == "sampler-warmup"
    assert value(d, "serve_command") == "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 32768"
    assert str(value(d, "vllm_version")) == "0.8.5.post1"
    assert value(d, "gpu_name") == "NVIDIA L40S" and value(d, "gpu_count") == 2
    assert value(d, "tp") == 2 and value(d, "max_model_len") == 32768
    assert value(d, "expandable_segments") is True and value(d, "sampler_dummy_requests") == 1024
