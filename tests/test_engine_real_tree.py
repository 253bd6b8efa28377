"""The engine on the real knowledge base: what an operator experiences across branches."""

from __future__ import annotations

from oomwizard.engine import Ask, Done, walk
from oomwizard.facts.model import Fact, FactSet
from oomwizard.kb.loader import get_kb
from oomwizard.session import Session
from oomwizard.versions import Version


def _log(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"log line 1 ({k})", kind="log") for k, v in values.items())


def test_a_fact_confirmed_earlier_is_not_asked_again() -> None:
    """The trunk asks for the model runner; the capture branch needs it too and must not ask twice."""
    kb = get_kb()
    s = Session(kb, _log(vllm_version=Version.parse("0.24.0"), failure_phase="graph_capture"))
    asked: list[str] = []
    step = s.current()
    while isinstance(step, Ask) and len(asked) < 30:
        asked.append(step.question.id)
        if step.question.id == "model_runner":
            step = s.answer("model_runner", "v2")
        elif step.suggestion is not None:
            step = s.accept()
        else:
            step = s.answer(step.question.id, step.question.unknown or "unknown")
    assert "model_runner" in asked
    assert "capture_runner" not in asked
    assert isinstance(step, Done)
    runner_steps = [p for p in step.path if p.question == "capture_runner"]
    assert runner_steps and runner_steps[0].answer == "v2"
    assert runner_steps[0].source == "answered earlier (model_runner)"


def test_a_coarse_rule_answer_keeps_the_specific_fact() -> None:
    """An auto rule answering "other" must not replace model_family=qwen for later calculations."""
    kb = get_kb()
    facts = _log(
        vllm_version=Version.parse("0.24.0"),
        diagnosis="mrv2-cudagraph-profile-zero",
        failure_phase="graph_capture",
        model_runner="v2",
        model_family="qwen",
        model_arch="Qwen3ForCausalLM",
    )
    done = walk(kb, facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done)
    assert done.facts.value("model_family") == "qwen"


def test_correcting_a_fact_reroutes_an_answered_question() -> None:
    """Correcting the version in the facts panel must not leave the old answer steering the walk."""
    kb = get_kb()
    s = Session(kb, _log(diagnosis="sampler-warmup", failure_phase="sampler_warmup"))
    s.accept()  # symptom
    s.answer("vllm_version", "0.10.2")
    assert s.answers["vllm_version"].value == "0.10.2"
    s.override("vllm_version", "0.21.0")
    assert "vllm_version" not in s.answers
    step = s.current()
    assert isinstance(step, Ask) and step.question.id == "vllm_version"
    assert step.suggestion is not None and step.suggestion.answer == "0.21.0"
