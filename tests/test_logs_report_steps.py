"""A report that says vLLM ran out of memory without naming the step (a title, a sentence, often
the whole excerpt): the steps it may mean are ranked, below a confident claim and below words
that name a step, with no failure phase for the wizard to take; negated words and PyTorch's own
message are not such a report."""

from __future__ import annotations

import shutil
from pathlib import Path

from oomwizard.lint import lint
from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.model import Diagnosis
from oomwizard.logs.signatures import CONFIDENT

ROOT = Path(__file__).resolve().parent.parent
STARTUP_STEPS = {"profile-run-oom", "no-kv-cache-memory", "weights-load-oom"}


def _diag(*lines: str) -> Diagnosis:
    return diagnose_text("\n".join(lines) + "\n", "report.log")


def _ranked(d: Diagnosis) -> list[tuple[str, float]]:
    return [(m.scenario, m.score) for m in d.matches]


def test_start_up_named_without_its_step_ranks_the_steps_that_allocate() -> None:
    d = _diag("Title: [Bug]: vLLM runs out of memory at startup with Qwen2.5-72B on 4xA100",
              "",
              "vllm serve Qwen/Qwen2.5-72B-Instruct --tensor-parallel-size 4 dies before the API comes up.")
    top3 = {s for s, _ in _ranked(d)[:3]}
    assert top3 == STARTUP_STEPS, _ranked(d)
    assert d.matches[0].score < CONFIDENT
    assert "failure_phase" not in d.facts  # no step is known: the wizard asks
    assert any("without saying in which step" in r.en for r in d.matches[0].reasons)


def test_start_up_in_chinese_words() -> None:
    d = _diag("启动时显存不足，换成 0.8.5 就好了")
    assert {s for s, _ in _ranked(d)[:3]} == STARTUP_STEPS, _ranked(d)


def test_a_high_utilization_stated_in_the_log_moves_graph_capture_up() -> None:
    d = _diag("[Bug]: server fails to start with an OOM",
              "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.98")
    assert d.matches[0].scenario == "cudagraph-capture", _ranked(d)
    assert "0.98" in d.matches[0].reasons[0].en


def test_a_step_named_in_words_outranks_start_up_in_general() -> None:
    d = _diag("[Bug]: OOM during CUDA graph capture at startup on 0.9.2")
    assert d.matches[0].scenario == "cudagraph-capture", _ranked(d)


def test_out_of_memory_with_no_when_ranks_run_time_first_then_start_up() -> None:
    d = _diag("it keeps running out of GPU memory and I don't know why")
    ranked = _ranked(d)
    assert ranked[0][0] == "runtime-oom" and ranked[0][1] < CONFIDENT, ranked
    assert STARTUP_STEPS & {s for s, _ in ranked[1:4]}, ranked


def test_negated_words_and_other_memory_words_are_no_report() -> None:
    for line in ("No OOM at startup anymore after the fix.",
                 "the server starts without any OOM now",
                 "Killed: the OOM killer took the process",  # host RAM: its own rule, not this one
                 "GPU KV cache size: 123,456 tokens",
                 "Loading weights took 14.99 GiB; 3 out of 4 shards"):
        d = _diag(line)
        assert not any("without saying" in r.en or "without saying when" in r.en
                       for m in d.matches for r in m.reasons), (line, _ranked(d))


def test_pytorchs_own_message_is_not_read_as_a_report() -> None:
    d = _diag("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
              "capacity of 79.19 GiB of which 3.00 MiB is free.")
    reasons = [r.en for m in d.matches for r in m.reasons]
    assert reasons and not any("the report says" in r for r in reasons), reasons


def test_a_report_group_naming_no_message_rule_is_a_lint_error_at_its_line(tmp_path: Path) -> None:
    for name in ("decision_trees", "content"):
        shutil.copytree(ROOT / name, tmp_path / name)
    path = tmp_path / "decision_trees/diagnosis/refinements.yaml"
    text = path.read_text(encoding="utf-8")
    old = "  prose-oom-startup: startup_report\n"
    line = text[:text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, "  prose-oom-startpu: startup_report\n"), encoding="utf-8")
    problems = [str(p) for p in lint(tmp_path) if p.file.endswith("refinements.yaml")]
    assert any(f"refinements.yaml:{line}:" in p and "prose-oom-startpu" in p for p in problems), problems
