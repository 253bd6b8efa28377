"""More forms that reports of real failures take, one class each (tests/logs/make_logs.py writes
the logs from vLLM's, PyTorch's, Ray's and the kernel's message formats): other wordings of a GPU
out-of-memory error, host memory as Ray and retyped kernel lines report it, a message broken over
lines the wrap joiner leaves apart, and neighbours that place an error without frames."""

from __future__ import annotations

from typing import Any

import pytest
from logkit import assert_facts, assert_ranks_first, b, diag, value

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.model import Diagnosis
from oomwizard.logs.signatures import CONFIDENT

# log -> (scenario ranked first and confident, {fact: value})
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "weights_repack_driver_oom_cut_0200.log": (
        "weights-load-oom", {"failure_phase": "load_weights", "error_platform": "cuda"},
    ),
    "host_ray_task_killed_v1_083.log": ("host-memory", {"failure_phase": "host_memory", "vllm_version": "0.8.3"}),
    "host_raylet_pressure_syslog_wrapped.log": ("host-memory", {"failure_phase": "host_memory"}),
    "host_oom_kill_retyped_report.log": ("host-memory", {"failure_phase": "host_memory"}),
    "workspace_locked_indented_report.log": (
        "workspace-locked", {"workspace_required_mb": 18.75, "workspace_current_mb": 2.25},
    ),
    "kv_too_small_retyped_report_0290.log": (
        "kv-cache-too-small",
        {"max_model_len": 4096, "kv_needed_gib": 1.31, "kv_cache_gib": 1.12, "estimated_max_model_len": 3504},
    ),
    "runtime_oom_v1_reported_by_api_server_0190.log": (
        "runtime-oom", {"failure_phase": "serving", "oom_requested_bytes": b("64.00 MiB")},
    ),
    "runtime_oom_v1_chained_cut_after_source.log": (
        "runtime-oom", {"failure_phase": "serving", "oom_total_bytes": b("79.19 GiB")},
    ),
    "others_hold_gpu_v0_062.log": (
        "insufficient-free-memory-at-startup",
        {"oom_other_processes_bytes": b("71.11 GiB"), "oom_process_bytes": b("8.08 GiB")},
    ),
    "kv_blocks_short_v0_cut.log": (
        "kv-cache-too-small", {"failure_phase": "kv_cache_alloc", "max_model_len": 4096, "kv_cache_tokens": 3856},
    ),
    "nvml_assert_mig_serving_v0_063.log": ("runtime-oom", {"failure_phase": "serving"}),
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


def test_ray_memory_monitor_is_not_a_gpu_oom(diagnoses: dict[str, Diagnosis]) -> None:
    """Ray names its exception OutOfMemoryError too; it is about the node's RAM."""
    d = diagnoses["host_ray_task_killed_v1_083.log"]
    assert not d.oom_messages
    assert all(m.scenario == "host-memory" for m in d.matches)


def test_sleep_mode_wake_up_oom_is_found() -> None:
    """The allocator of sleep mode reports with a capital E and its own source position: a GPU OOM
    of sleep mode's own scenario, refined by the wake_up frames above it."""
    d = diag("sleep_wakeup_cumem_oom_rl.log")
    assert d.best is not None and d.best.scenario == "sleep-mode"
    assert value(d, "error_platform") == "cuda"
    assert d.best.score >= CONFIDENT


def test_oom_broken_after_its_first_sentence() -> None:
    """The numbers on the line after 'CUDA out of memory.' belong to that message, in the old
    parenthesised form without the word capacity; the environment list names the release."""
    d = diag("report_split_oom_env_list_0201.log")
    assert value(d, "oom_requested_bytes") == b("22.10 GiB")
    assert value(d, "oom_total_bytes") == b("23.52 GiB")
    assert value(d, "oom_free_bytes") == 0
    assert value(d, "oom_gpu_index") == 1
    assert str(value(d, "vllm_version")) == "0.20.1"
    assert len(d.oom_messages) == 1


def test_a_line_after_the_message_that_is_not_its_numbers() -> None:
    d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory.\nINFO 01-01 [core.py:1] shutting down\n")
    assert value(d, "oom_requested_bytes") is None


@pytest.mark.parametrize(("text", "version"), [
    ("`vllm==0.20.1` hard-pins `torch==2.11.0`", "0.20.1"),
    ("- vLLM: 0.9.2", "0.9.2"),
])
def test_version_in_a_report(text: str, version: str) -> None:
    assert str(value(diagnose_text(text + "\n"), "vllm_version")) == version


def test_enough_blocks_is_not_a_failure() -> None:
    d = diagnose_text(
        "INFO 08-19 07:51:02 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: model='google/gemma-2-9b', "
        "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1\n"
        "INFO 08-19 07:51:08 gpu_executor.py:102] # GPU blocks: 22982, # CPU blocks: 6241\n")
    # Only the phase the excerpt stops in is ranked, never confidently; the block count is no failure.
    assert all(m.score < 0.5 for m in d.matches)
    assert "kv-cache-too-small" not in {m.scenario for m in d.matches}


def test_block_size_from_the_arguments() -> None:
    """With 32-token blocks the same count holds twice as many tokens."""
    head = ("INFO 06-01 10:00:00 api_server.py:212] args: Namespace(model='/m', max_model_len=6000, block_size=32, "
            "tensor_parallel_size=1)\n")
    blocks = "INFO 06-01 10:00:09 gpu_executor.py:122] # GPU blocks: 200, # CPU blocks: 512\n"
    enough = diagnose_text(head + blocks)
    assert "kv-cache-too-small" not in {m.scenario for m in enough.matches}
    assert all(m.score < 0.5 for m in enough.matches)
    d = diagnose_text(head.replace("block_size=32", "block_size=16") + blocks)
    assert d.best is not None and d.best.scenario == "kv-cache-too-small"


def test_others_holding_little_change_nothing() -> None:
    """Other ranks' NCCL contexts on the same GPU are small: the phase decides, as before."""
    err = "(VllmWorker rank=0 pid=10) ERROR 03-01 10:00:00 [multiproc_executor.py:375] "
    d = diagnose_text("\n".join([
        err + "Traceback (most recent call last):",
        err + '  File "/x/vllm/v1/worker/gpu_model_runner.py", line 1548, in execute_model',
        err + "    hidden_states = self.model(",
        err + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
              "79.19 GiB of which 200.00 MiB is free. Process 11 has 500.00 MiB memory in use. Including non-PyTorch "
              "memory, this process has 78.40 GiB memory in use.",
    ]) + "\n")
    assert d.best is not None and d.best.scenario == "runtime-oom"
    assert "insufficient-free-memory-at-startup" not in {m.scenario for m in d.matches}
