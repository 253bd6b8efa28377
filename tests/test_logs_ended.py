"""A log with no error that stops during start-up: the phase it stopped in is ranked, never
confidently, with the lines that would settle it; a healthy start-up or another failure is not."""

from __future__ import annotations

import pytest

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT

VERSION = "INFO 11-02 10:00:00 [__init__.py:239] vLLM version 0.10.1\n"
LOAD = ("(EngineCore_0 pid=71) INFO 11-02 10:00:05 [gpu_model_runner.py:1953] Starting to load model "
        "Qwen/Qwen2.5-7B-Instruct...\n")
LOADED = "(EngineCore_0 pid=71) INFO 11-02 10:00:20 [gpu_model_runner.py:1985] Model loading took 15.2 GiB and 14.1 seconds\n"
KV = ("(EngineCore_0 pid=71) INFO 11-02 10:00:31 [gpu_worker.py:276] Available KV cache memory: 50.12 GiB\n"
      "(EngineCore_0 pid=71) INFO 11-02 10:00:31 [kv_cache_utils.py:849] GPU KV cache size: 938,624 tokens\n")
CAPTURE = ("(EngineCore_0 pid=71) Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  40%|████      "
           "| 27/67 [00:02<00:03, 12.1it/s]\n")
READY = ("(EngineCore_0 pid=71) INFO 11-02 10:01:00 [core.py:214] init engine (profile, create kv cache, warmup "
         "model) took 40.12 seconds\n(APIServer pid=1) INFO:     Application startup complete.\n")


@pytest.mark.parametrize(
    ("text", "scenario", "last_line"),
    [
        (VERSION + LOAD, "weights-load-oom", 2),
        (VERSION + LOAD + LOADED, "profile-run-oom", 3),
        (VERSION + LOAD + LOADED + KV, "insufficient-free-memory-at-startup", 5),
        (VERSION + LOAD + LOADED + KV + CAPTURE, "cudagraph-capture", 6),
    ],
    ids=["weights", "profiling", "kv-cache", "capture"],
)
def test_a_log_ending_in_a_phase_ranks_its_scenario_below_confidence(text: str, scenario: str,
                                                                    last_line: int) -> None:
    d = diagnose_text(text, "vllm.log")
    assert d.matches and d.matches[0].scenario == scenario
    assert all(m.score < CONFIDENT for m in d.matches)
    assert [e.line for e in d.matches[0].evidence] == [last_line]
    assert d.missing and d.missing[0].en.startswith(f"vllm.log:{last_line}: the excerpt ends during")
    reasons = [r for m in d.matches for r in m.reasons if "excerpt ends" in r.en]
    assert reasons and all("摘录" in r.zh for r in reasons)
    assert "diagnosis" not in d.facts and "failure_phase" not in d.facts


def test_the_missing_lines_name_the_next_start_up_line() -> None:
    d = diagnose_text(VERSION + LOAD + LOADED, "vllm.log")
    assert "Available KV cache memory" in d.missing[0].en
    d = diagnose_text(VERSION + LOAD + LOADED + KV + CAPTURE, "vllm.log")
    assert "Graph capturing finished" in d.missing[0].en


def test_a_multimodal_model_stopping_in_profiling_keeps_its_refinement_unconfident() -> None:
    text = VERSION + "INFO Resolved architecture: Qwen2_5_VLForConditionalGeneration\n" + LOAD + LOADED
    d = diagnose_text(text, "vllm.log")
    assert {m.scenario for m in d.matches} >= {"profile-run-oom", "multimodal-profile"}
    assert all(m.score < CONFIDENT for m in d.matches)


@pytest.mark.parametrize(
    "text",
    [
        VERSION + LOAD + LOADED + KV + CAPTURE + READY,
        VERSION + LOAD + LOADED + "Traceback (most recent call last):\n  File \"/opt/vllm/config.py\", line 10, in "
        "verify\nValueError: The model's max seq len (131072) is larger than the maximum number of tokens\n",
        VERSION,
        "",
    ],
    ids=["ready", "other-failure", "no-start-up-line", "empty"],
)
def test_no_claim_without_a_start_up_that_stopped(text: str) -> None:
    d = diagnose_text(text, "vllm.log")
    assert not any("excerpt ends during" in r.en for m in d.matches for r in m.reasons)
    assert not any("excerpt ends during" in w.en for w in d.missing)


RUN = ("INFO 11-02 10:00:01 [core.py:70] Initializing a V1 LLM engine (v0.10.1) with config: "
       "model='Qwen/Qwen2.5-7B-Instruct'\n")


def test_the_last_start_of_the_engine_is_the_one_read() -> None:
    """Restarts: only the last start's stop counts, whether it came up or stopped."""
    came_up_last = RUN + LOAD + LOADED + RUN + LOAD + LOADED + KV + CAPTURE + READY
    assert not any("excerpt ends during" in w.en for w in diagnose_text(came_up_last, "vllm.log").missing)
    stopped_last = RUN + LOAD + LOADED + KV + CAPTURE + READY + RUN + LOAD + LOADED
    d = diagnose_text(stopped_last, "vllm.log")
    assert d.matches[0].scenario == "profile-run-oom"
    assert d.missing[0].en.startswith("vllm.log:11: ")


def test_a_log_whose_reading_stopped_early_is_not_taken_to_end_there(tmp_path) -> None:
    """A gzip cut in transit stops the reader mid start-up: that is where the file broke, not
    where vLLM stopped, so no phase is claimed; the same text read whole still ranks its phase."""
    import gzip

    from oomwizard.logs.diagnose import diagnose_paths

    text = (VERSION + LOAD + LOADED).encode()
    whole = tmp_path / "whole.log.gz"
    whole.write_bytes(gzip.compress(text))
    assert diagnose_paths([str(whole)]).matches[0].scenario == "profile-run-oom"
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(text * 40)[:-12])  # no end-of-stream marker: the reader reports the damage
    d = diagnose_paths([str(cut)])
    assert any("the rest was not read" in w.en for w in d.warnings)
    assert d.matches == [] and not any("excerpt ends during" in w.en for w in d.missing)


V0_RUN = ("INFO 10-14 16:19:10 llm_engine.py:169] Initializing an LLM engine (v0.5.1) with config: "
          "model='./merged/', speculative_config=None, tokenizer='./merged/', tensor_parallel_size=4\n")
SERVER = "INFO 03-04 06:25:30 api_server.py:912] vLLM API server version 0.7.3\n"


@pytest.mark.parametrize("text", [V0_RUN, SERVER + "INFO 03-04 06:25:30 api_server.py:913] args: Namespace(model='m')\n",
                                  "INFO 03-04 06:25:30 api_server.py:913] args: Namespace(subparser='serve', model_tag='/mnt/m",
                                  "INFO 11-20 09:14:02 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B'}\n",
                                  VERSION + RUN], ids=["v0-engine", "api-server", "args-cut", "non-default-args", "v1-engine"])
def test_a_log_ending_before_any_step_ranks_the_first_step_lower_still(text: str) -> None:
    """Stopped right after the line that began the start (the server's version, the engine's
    configuration): the first step of start-up, loading the weights, below the tier of a log that
    reached a step, with the lines that would have said that step began."""
    d = diagnose_text(text, "vllm.log")
    assert [m.scenario for m in d.matches][:1] == ["weights-load-oom"]
    assert d.matches[0].score < diagnose_text(VERSION + LOAD, "vllm.log").matches[0].score
    began = len(text.splitlines())  # the last line: the arguments the server printed begin the start too
    assert d.missing and d.missing[0].en.startswith(f"vllm.log:{began}: the excerpt ends after the line that began")
    assert "'Starting to load model'" in d.missing[0].en
    assert d.facts.get("failure_phase") is None  # nothing failed that the excerpt shows


def test_a_start_that_began_and_then_failed_is_read_by_its_failure() -> None:
    other = V0_RUN + "Traceback (most recent call last):\n  File \"/opt/vllm/config.py\", line 10, in verify\nValueError: bad\n"
    assert not any("began this start" in w.en for w in diagnose_text(other, "vllm.log").missing)
