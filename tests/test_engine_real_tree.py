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
    """Correcting the version in the facts panel must not leave the old answer steering the walk:
    the version question is answered again from the corrected value, and the walk goes on from it."""
    kb = get_kb()
    s = Session(kb, _log(diagnosis="sampler-warmup", failure_phase="sampler_warmup"))
    s.accept()  # symptom
    s.answer("vllm_version", "0.10.2")
    assert s.answers["vllm_version"].value == "0.10.2"
    s.override("vllm_version", "0.21.0")
    assert s.answers["vllm_version"].value == "0.21.0"
    assert s.order == ["symptom", "vllm_version"]
    step = s.current()
    assert not (isinstance(step, Ask) and step.question.id == "vllm_version")
    assert any(p.question == "vllm_version" and p.answer == "0.21.0" for p in step.path)


def test_hybrid_dense_models_stay_on_the_v1_runner_in_0_25_to_0_28() -> None:
    """Qwen3-Next and Nemotron-H are not moved to model runner V2 by 0.25-0.28's dense default."""
    from oomwizard.logs.facts import derive_model_facts

    kb = get_kb()
    for arch, model in (("NemotronHForCausalLM", "nvidia/NVIDIA-Nemotron-Nano-9B-v2"),
                        ("Qwen3NextForCausalLM", "Qwen/Qwen3-Next-80B-A3B-Instruct")):
        derived = derive_model_facts(model, arch)
        assert derived["is_hybrid"] is True
        facts = _log(vllm_version=Version.parse("0.26.0"), failure_phase="graph_capture", model_arch=arch, **derived)
        done = walk(kb, facts, {}, auto_accept=True, use_unknown=True)
        assert isinstance(done, Done)
        runner = [s for s in done.path if s.question == "model_runner"]
        assert runner and runner[0].answer == "v1", (arch, runner)
        assert done.leaf.id != "mrv2-cudagraph-profile-zero"
    dense = derive_model_facts("meta-llama/Llama-3.1-8B-Instruct", "LlamaForCausalLM")
    assert dense["is_hybrid"] is False
    facts = _log(vllm_version=Version.parse("0.26.0"), failure_phase="graph_capture", model_arch="LlamaForCausalLM",
                 **dense)
    done = walk(kb, facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done) and done.leaf.id == "mrv2-cudagraph-profile-zero"
