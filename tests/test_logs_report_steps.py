"""A report that says vLLM ran out of memory without naming the step (a title, a sentence, often
the whole excerpt): the steps it may mean are ranked, below a confident claim and below words
that name a step, with no failure phase for the wizard to take; negated words and PyTorch's own
message are not such a report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kbkit import KB_CHECKS

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
                 "If you are running out of memory, consider decreasing `gpu_memory_utilization`.",
                 "set max_num_seqs lower to avoid OOM at startup",
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
    problems = [str(p) for p in lint(tmp_path, KB_CHECKS) if p.file.endswith("refinements.yaml")]
    assert any(f"refinements.yaml:{line}:" in p and "prose-oom-startpu" in p for p in problems), problems


def test_a_function_of_a_phase_named_in_words_places_that_phase() -> None:
    d = _diag("[Bug]: Since 0.19 `profile_cudagraph_memory()` OOMs for our MoE model")
    top = d.matches[0]
    assert top.scenario == "cudagraph-profile-oom" and top.score < CONFIDENT, _ranked(d)
    assert "profile_cudagraph_memory()" in top.reasons[0].en and "profile_cudagraph_memory()" in top.reasons[0].zh
    assert d.facts.get("failure_phase").value == "cudagraph_profile"


def test_a_traceback_frame_or_a_plain_word_is_not_a_function_named_in_words() -> None:
    frame = diagnose_text('  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", '
                          "line 3100, in profile_run\n", "x")
    assert not any("the report names" in r.en for m in frame.matches for r in m.reasons)
    word = _diag("one more step and it runs out of memory at capture")  # step, capture: ordinary words
    assert not any("the report names" in r.en for m in word.matches for r in m.reasons), _ranked(word)


def _copy(tmp_path: Path) -> Path:
    for name in ("decision_trees", "content"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def test_a_function_added_to_a_phase_is_read_in_reports_too(tmp_path: Path) -> None:
    from oomwizard.logs.rules import load_rules

    root = _copy(tmp_path)
    path = root / "decision_trees/diagnosis/frames.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  - profile_run\n", "  - profile_run\n  - _profile_new_engine\n", 1), encoding="utf-8")
    problems: list = []
    rules = load_rules(root, problems)
    assert problems == []
    sig = next(s for s in rules.messages if s.id == "prose-names-profile-run")
    assert "_profile_new_engine" in sig.triggers
    assert sig.pattern.search("_profile_new_engine() runs out of memory on 0.30")


def test_unknown_named_words_and_a_phase_without_example_are_lint_errors(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    frames = root / "decision_trees/diagnosis/frames.yaml"
    text = frames.read_text(encoding="utf-8")
    text = text.replace("  pattern: '{{@oom}}'\n", "  pattern: '{{@ooms}}'\n")
    frames.write_text(text, encoding="utf-8")
    line = text[:text.index("{{@ooms}}")].count("\n") + 1
    problems = [str(p) for p in lint(root, KB_CHECKS) if p.file.endswith("frames.yaml")]
    assert any(f"frames.yaml:{line}:" in p and "unknown words {{@ooms}}" in p for p in problems), problems

    root2 = _copy(tmp_path / "b")
    frames = root2 / "decision_trees/diagnosis/frames.yaml"
    text = frames.read_text(encoding="utf-8")
    cut = "  - text: 'the server hits OOM inside _dummy_sampler_run with 1024 sequences'\n    scenario: sampler-warmup\n"
    assert cut in text
    frames.write_text(text.replace(cut, ""), encoding="utf-8")
    problems = [str(p) for p in lint(root2, KB_CHECKS) if p.file.endswith("frames.yaml")]
    assert any("no example for sampler_warmup's functions" in p for p in problems), problems


def test_a_rule_needing_two_kinds_of_words_is_tried_only_on_lines_with_both(tmp_path: Path) -> None:
    from oomwizard.logs.rules import load_rules

    rules = load_rules(ROOT, [])
    startup = next(s for s in rules.messages if s.id == "prose-oom-startup")
    assert startup.also and all(w == w.lower() for w in startup.also)
    d = _diag("We saw OOM twice today.")  # an OOM word without a start-up word: the general report only
    assert d.matches[0].scenario == "runtime-oom", _ranked(d)
    root = _copy(tmp_path)
    path = root / "decision_trees/diagnosis/messages.yaml"
    text = path.read_text(encoding="utf-8")
    old = "  also: ['@startup']\n"
    assert old in text
    path.write_text(text.replace(old, "  also: [Launch, boot]\n"), encoding="utf-8")
    problems = [str(p) for p in lint(root) if p.file.endswith("messages.yaml")]
    assert any("also: 'Launch' must be lower case" in p for p in problems), problems
    assert any("prose-oom-startup: example holds none of the words of also" in p for p in problems), problems


def test_report_words_are_read_only_in_lines_that_read_as_words() -> None:
    from oomwizard.logs.errors import reads_as_words

    junk = "\ufffd\ufffdjQ\x07HC\ufffdN\ufffdO`\ufffd-.p\ufffdqf \ufffdOOM\"\ufffd%Z`3J\ufffd\ufffdi\ufffd\ufffd"
    assert not reads_as_words(junk) and not reads_as_words("xOOM!")
    assert reads_as_words("the server OOMs at startup") and reads_as_words("启动时显存不足")
    assert diagnose_text(junk + "\n" + junk.replace("OOM", "oom") + "\n", "rand.bin").matches == []


@pytest.mark.parametrize("line", [
    "After startup, it OOMs after 1000 requests",
    "the server starts fine but OOMs after 1000 requests",
    "启动成功后压测时显存不足",
    "启动命令如下，运行一段时间后 OOM",
])
def test_start_up_that_went_well_is_not_where_it_failed(line: str) -> None:
    d = _diag(line)
    assert d.matches and d.matches[0].scenario == "runtime-oom", _ranked(d)


@pytest.mark.parametrize("line", ["启动报OOM了", "vLLM fails to start due to OOM", "crashes with OOM when launching"])
def test_start_up_words_in_other_shapes(line: str) -> None:
    assert {s for s, _ in _ranked(_diag(line))[:3]} == STARTUP_STEPS


@pytest.mark.parametrize("line", ["it doesn't OOM at startup anymore", "OOM-killed during startup by the kernel",
                                  "we never ran out of memory at startup"])
def test_more_negations_and_the_oom_killers_victims_are_no_report(line: str) -> None:
    d = _diag(line)
    assert not any("the report says" in r.en for m in d.matches for r in m.reasons), _ranked(d)


def test_eager_mode_stated_keeps_graph_capture_down() -> None:
    d = _diag("[Bug]: server fails to start with an OOM",
              "vllm serve m --gpu-memory-utilization 0.98 --enforce-eager")
    assert d.matches[0].scenario != "cudagraph-capture", _ranked(d)


def test_a_line_of_many_kilobytes_is_not_read_as_a_sentence() -> None:
    from oomwizard.logs.errors import PROSE_MAX, reads_as_words

    assert not reads_as_words("OOM at startup " * (PROSE_MAX // 15 + 1))


P = "(EngineCore_DP0 pid=412) INFO 05-14 10:22:31 "
WEIGHTS = P + "[gpu_model_runner.py:2000] Model loading took 14.99 GiB and 5.12 seconds"
KV = P + "[gpu_worker.py:290] Available KV cache memory: 50.12 GiB"
GRAPHS = P + "[gpu_model_runner.py:3000] Graph capturing finished in 12 secs, took 0.50 GiB"
TITLE = "Title: [Bug]: server fails to start with an OOM on 0.11"


@pytest.mark.parametrize(("lines", "first", "ruled_out"), [
    ([TITLE, WEIGHTS], "profile-run-oom", {"weights-load-oom"}),
    ([TITLE, WEIGHTS, KV], "cudagraph-capture", {"weights-load-oom", "profile-run-oom", "no-kv-cache-memory"}),
    ([TITLE, WEIGHTS, KV, GRAPHS], "sampler-warmup", {"profile-run-oom", "cudagraph-capture"}),
])
def test_how_far_start_up_got_rules_out_the_steps_before_it(lines: list[str], first: str, ruled_out: set[str]) -> None:
    ranked = _ranked(_diag(*lines))
    assert ranked[0][0] == first and ranked[0][1] < CONFIDENT, ranked
    assert not ruled_out & {s for s, _ in ranked}, ranked
