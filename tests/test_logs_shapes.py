"""Shapes of real logs the reader must see through: Ray's deduplicated lines printed after the
error, lines an operator left out, a traceback cut at its header, and message facts read from the
rules' data. Every log here is synthetic, written from the message formats of the released code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oomwizard.logs.clean import clean_message
from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.model import Diagnosis
from oomwizard.logs.rules import load_rules
from oomwizard.logs.signatures import CONFIDENT

ROOT = Path(__file__).resolve().parent.parent
SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.19 GiB of which 1.00 GiB is free.")


# --- Ray ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("prefix, proc", [
    ("(raylet) ", "raylet"),
    ("(raylet, ip=10.0.0.2) ", "raylet"),
    ("(autoscaler +1m20s) ", "autoscaler"),
    ("(pid=5439, ip=10.0.0.2) ", "pid=5439"),
    ("(RayWorkerWrapper pid=77, ip=10.0.0.3) ", "RayWorkerWrapper pid=77"),
])
def test_ray_prefixes_are_peeled(prefix: str, proc: str) -> None:
    c = clean_message(prefix + "INFO 05-01 10:00:00 [core.py:1] Loading weights [repeated 3x across cluster]")
    assert c.text == "Loading weights"
    assert c.proc == proc
    assert c.repeated


def test_a_line_without_the_summary_is_no_repeat() -> None:
    assert not clean_message("(EngineCore pid=1) INFO 05-01 10:00:00 [core.py:1] Loading weights").repeated


_RAY_START = [
    "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.2",
    "(RayWorkerWrapper pid=501, ip=10.0.0.2) INFO 05-01 10:00:40 [gpu_model_runner.py:1] Model loading took 30.1 GiB "
    "and 20 seconds",
    f"ERROR 05-01 10:01:00 [core.py:1] {OOM}",
]
_CAPTURED = ("(RayWorkerWrapper pid=502, ip=10.0.0.2) INFO 05-01 10:00:59 [gpu_model_runner.py:2] Graph capturing "
             "finished in 5 secs, took 0.50 GiB")


def test_a_mark_in_a_ray_summary_after_the_error_still_places_it() -> None:
    before = diagnose_text("\n".join(_RAY_START))
    after = diagnose_text("\n".join([*_RAY_START, _CAPTURED + " [repeated 7x across cluster]"]))
    assert before.facts.value("failure_phase") == "profile_run"
    # Graph capture had ended on the other workers before the summary was flushed.
    assert after.facts.value("failure_phase") == "sampler_warmup"


def test_a_plain_mark_after_the_error_does_not_move_it() -> None:
    d = diagnose_text("\n".join([*_RAY_START, _CAPTURED]))
    assert d.facts.value("failure_phase") == "profile_run"


def test_a_ray_summary_before_the_error_counts_as_any_mark() -> None:
    lines = [_RAY_START[0], _RAY_START[1], _CAPTURED + " [repeated 7x across cluster]", _RAY_START[2]]
    assert diagnose_text("\n".join(lines)).facts.value("failure_phase") == "sampler_warmup"


# --- elisions -------------------------------------------------------------------------------------
EC = "(EngineCore_DP0 pid=290) ERROR 10-20 09:02:11 [core.py:708] "
_CAPTURE = [f"{EC}Traceback (most recent call last):",
            f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 340, in compile_or_warm_up_model',
            f"{EC}    self.model_runner.capture_model()",
            f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 3400, in capture_model',
            f"{EC}    self._capture()"]
ELISIONS = ["...", "…", "[...]", "<snip>", "(truncated)", "--- cut ---", "[... 40 lines omitted ...]", "(...)"]


@pytest.mark.parametrize("elision", ELISIONS)
def test_frames_on_both_sides_of_an_elision_are_one_traceback(elision: str) -> None:
    # The top was copied with the process prefix, the end without (another view of the same log).
    d = diagnose_text("\n".join([*_CAPTURE, elision, OOM]))
    assert d.matches[0].scenario.startswith(("cudagraph", "mrv2")), d.matches[:2]
    assert d.facts.value("failure_phase") == "graph_capture"


def test_without_an_elision_another_process_does_not_continue_the_traceback() -> None:
    # Ranks interleave their lines: the exception of another writer closes no traceback of this one.
    # At most the other process's frames place it, below a confident claim (tier other_process).
    d = diagnose_text("\n".join([*_CAPTURE, OOM]))
    assert d.matches[0].score < CONFIDENT
    joined = diagnose_text("\n".join([*_CAPTURE, "...", OOM]))
    assert joined.matches[0].score >= CONFIDENT


@pytest.mark.parametrize("elision", ["...", "<snip>"])
def test_an_elision_is_never_joined_to_a_wide_line_before_it(elision: str) -> None:
    wide = f"{EC}    self.really_long_function_name_for_capture(argument_one, argument_two, three)"
    d = diagnose_text("\n".join([*_CAPTURE, wide, elision, OOM]))
    assert d.facts.value("failure_phase") == "graph_capture"


# --- a traceback cut at its header ----------------------------------------------------------------
_MARKS = ["INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.10.1",
          "INFO 05-01 10:00:40 [gpu_model_runner.py:1] Model loading took 30.1 GiB and 20 seconds",
          "INFO 05-01 10:00:50 [gpu_worker.py:1] Available KV cache memory: 20.00 GiB",
          "INFO 05-01 10:00:51 [kv_cache_utils.py:1] GPU KV cache size: 100,000 tokens",
          "ERROR 05-01 10:01:00 [core.py:1] EngineCore failed to start.",
          "ERROR 05-01 10:01:00 [core.py:1] Traceback (most recent call last):"]


def test_a_traceback_cut_at_its_header_is_ranked_by_the_marks_before_it() -> None:
    d = diagnose_text("\n".join(_MARKS))
    assert d.matches and d.matches[0].score < CONFIDENT
    assert d.facts.value("failure_phase") == "kv_cache_alloc"
    assert d.facts.get("diagnosis") is None
    assert len(d.missing) == 1 and "header" in d.missing[0].en and "pasted:6" in d.missing[0].en


def test_a_header_with_one_frame_is_ranked_the_same_way() -> None:
    frame = f'ERROR 05-01 10:01:00 [core.py:1]   File "{SITE}/v1/engine/core.py", line 699, in run_engine_core'
    d = diagnose_text("\n".join([*_MARKS, frame]))
    assert d.facts.value("failure_phase") == "kv_cache_alloc"
    assert len(d.missing) == 1 and "before its exception" in d.missing[0].en and "header" not in d.missing[0].en


def test_a_bare_header_without_marks_says_nothing() -> None:
    d = diagnose_text("\n".join(_MARKS[-2:]))
    assert not d.matches and not d.missing


# --- message facts as data ------------------------------------------------------------------------
def test_message_facts_come_from_the_rules() -> None:
    d = diagnose_text("ValueError: Free memory on device xpu:0 (3.22/4.0 GiB) on startup is less than desired GPU "
                      "memory utilization (0.9, 3.6 GiB).")
    assert d.facts.value("gpu_mem_total_bytes") == 4 << 30
    assert d.facts.value("error_platform") == "xpu"
    d = diagnose_text("RuntimeError: HIP Error: out of memory at /app/csrc/cumem_allocator.cpp:120")
    assert d.facts.value("error_platform") == "rocm"
    d = diagnose_text("WARNING 01-01 config.py:1] Possibly too large swap space. 64.00 GiB out of the 125.00 GiB "
                      "total CPU memory is allocated for the swap space.")
    assert d.facts.value("host_mem_total_bytes") == 125 << 30


def _copy_with(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    shutil.copytree(ROOT / "decision_trees", tmp_path / "decision_trees")
    path = tmp_path / "decision_trees/diagnosis/messages.yaml"
    text = path.read_text(encoding="utf-8")
    i = text.index(old)
    path.write_text(text[:i] + new + text[i + len(old):], encoding="utf-8")
    return tmp_path, text[:i].count("\n") + 1


@pytest.mark.parametrize("old, new, said", [
    ("{fact: gpu_mem_total_bytes, unit: GiB}", "{fact: gpu_mem_total_bytes, unit: GiBs}", "unknown unit 'GiBs'"),
    ("{fact: host_mem_total_bytes, unit: GiB}", "{fact: host_memory, unit: GiB}", "unknown fact 'host_memory'"),
    ("values: {hip: rocm}", "values: {hip: amd}", "'amd' is no value of error_platform"),
    ("facts: {error_platform: rocm}", "facts: {error_platform: cuda}", "error_platform reads 'rocm', expected 'cuda'"),
    ("facts: {swap_space_gb: 64.0, host_mem_total_bytes: 134217728000}",
     "facts: {swap_space_gb: 64.0, host_mem_total_bytes: 1}", "host_mem_total_bytes reads 134217728000"),
])
def test_a_broken_fact_mapping_is_reported_at_its_line(tmp_path: Path, old: str, new: str, said: str) -> None:
    root, line = _copy_with(tmp_path, old, new)
    problems: list = []
    load_rules(root, problems)
    hits = [p for p in problems if said in p.message]
    assert hits, [str(p) for p in problems]
    assert hits[0].file == "decision_trees/diagnosis/messages.yaml" and hits[0].line == line


# --- the GPU's size stated outside any error ------------------------------------------------------
@pytest.mark.parametrize("text, gib", [
    ("We serve it on a single A100 80GB.", 80),
    ("Hardware: 8x H100", 80),
    ("my 4090 24GB box", 24),
    ("NVIDIA A100-SXM4-40GB", 40),
    ("using 2xL40S", 48),
    ("GPU: NVIDIA GeForce RTX 4090", 24),
])
def test_a_gpu_named_in_prose_states_its_size(text: str, gib: int) -> None:
    f = diagnose_text(f"first line\n{text}").facts.get("gpu_mem_stated_bytes")
    assert f is not None and f.value == gib << 30 and f.line == 2


@pytest.mark.parametrize("text", ["port 4090 is open", "on an A100", "TP4 with T4s"])
def test_no_size_without_a_known_name_and_size(text: str) -> None:
    assert diagnose_text(text).facts.get("gpu_mem_stated_bytes") is None


def test_nvidia_smi_gives_the_exact_total() -> None:
    smi = ("|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |\n"
           "| N/A   34C    P0    70W / 700W |      0MiB / 81559MiB |      0%      Default |")
    assert diagnose_text(smi).facts.value("gpu_mem_stated_bytes") == 81559 << 20


_WEIGHTS = ["python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-2-70b-hf",
            "RuntimeError: CUDA error: out of memory"]


def test_the_stated_size_feeds_the_numbers_rules() -> None:
    without = diagnose_text("\n".join(_WEIGHTS))
    stated = diagnose_text("\n".join(["We run it on a single A100 80GB.", *_WEIGHTS]))
    assert without.matches[0].scenario == "runtime-oom"
    assert stated.matches[0].scenario == "weights-load-oom"


def test_the_stated_size_never_replaces_the_messages_own_total() -> None:
    d = diagnose_text(f"On a single A100 80GB.\n{OOM}")
    assert d.facts.value("gpu_mem_stated_bytes") == 80 << 30
    assert d.facts.value("oom_total_bytes") == round(79.19 * (1 << 30))


# --- a quoted command line, read with the release of the same log ---------------------------------
_SERVE = "$ vllm serve Qwen/Qwen3-8B -O.cudagraph_mode=FULL_DECODE_ONLY --max-model-len 8192"


def _served(version: str | None) -> Diagnosis:
    lines = [_SERVE]
    if version:
        lines.append(f"INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version {version}")
    lines.append(OOM)
    return diagnose_text("\n".join(lines))


@pytest.mark.parametrize("version, mode", [
    ("0.10.2", "FULL_DECODE_ONLY"),  # -O.<key> is a compilation-config key (vllm/utils/__init__.py@0.10.2)
    ("0.11.0", "FULL_DECODE_ONLY"),
    ("0.13.0", None),  # every -O<x> is --optimization-level (vllm/utils/argparse_utils.py@0.13.0)
    (None, None),  # no release: both readings are possible, so neither is taken
])
def test_a_quoted_command_is_read_as_the_logged_release_reads_it(version: str | None, mode: str | None) -> None:
    d = _served(version)
    assert d.facts.value("cudagraph_mode") == mode
    assert d.facts.value("max_model_len") == 8192
    cmd = d.facts.get("serve_command")
    assert cmd is not None and cmd.line == 1


def test_an_llm_call_goes_through_the_same_parser() -> None:
    d = diagnose_text("llm = LLM(model='Qwen/Qwen3-8B', gpu_memory_utilization=0.95, enforce_eager=True)\n"
                      "vLLM version 0.10.2")
    assert d.facts.value("gpu_memory_utilization") == 0.95
    assert d.facts.value("enforce_eager") is True
    assert d.facts.value("model") == "Qwen/Qwen3-8B"


def test_a_wrong_startup_figure_is_reported_at_its_line(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "decision_trees", tmp_path / "decision_trees")
    path = tmp_path / "decision_trees/diagnosis/numbers.yaml"
    text = path.read_text(encoding="utf-8")
    old = "facts: {kv_cache_tokens: 444960}"
    i = text.index(old)
    path.write_text(text[:i] + "facts: {kv_cache_tokens: 444}" + text[i + len(old):], encoding="utf-8")
    problems: list = []
    load_rules(tmp_path, problems)
    hits = [p for p in problems if "kv_cache_tokens reads 444960, expected 444" in p.message]
    assert hits and hits[0].file.endswith("numbers.yaml") and hits[0].line == text[:i].count("\n") + 1


def test_a_bare_card_number_is_not_searched_for_in_every_byte() -> None:
    from oomwizard.logs.collect import trigger_words

    words = set(trigger_words())
    assert {"RTX", "GB", "MiB /", "H100"} <= words
    assert not words & {"4090", "3090", "4080", "5090"}  # ports, ids and token counts hold them
