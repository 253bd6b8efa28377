"""The pure walker and the interactive session over it, on the small fixture knowledge base."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oomwizard.engine import Answer, Ask, Done, EngineError, suggest, walk
from oomwizard.facts.catalog import FactValueError
from oomwizard.facts.model import Fact, FactSet
from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase
from oomwizard.session import Session
from oomwizard.versions import Version

BASE = Path(__file__).parent / "kb_broken" / "base"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb(BASE)[0]


def facts(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"test {k}", kind="log") for k, v in values.items())


def answers(**values: str) -> dict[str, Answer]:
    return {k: Answer(v) for k, v in values.items()}


def test_first_question_without_facts(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet())
    assert isinstance(step, Ask)
    assert step.question.id == "symptom" and step.suggestion is None and step.path == ()


def test_auto_rule_suggests_with_its_source(kb: KnowledgeBase) -> None:
    step = walk(kb, facts(diagnosis="beta-oom"))
    assert isinstance(step, Ask) and step.suggestion is not None
    assert step.suggestion.answer == "beta"
    assert step.suggestion.facts == ("diagnosis",)
    assert "diagnosis=beta-oom (test diagnosis)" in step.suggestion.source
    assert step.suggestion.rule == 'diagnosis == "beta-oom"'


def test_diagnose_accepts_suggestions(kb: KnowledgeBase) -> None:
    step = walk(kb, facts(diagnosis="beta-oom"), auto_accept=True, use_unknown=True)
    assert isinstance(step, Done) and step.leaf.id == "beta-oom"
    assert [(s.question, s.answer, s.how) for s in step.path] == [("symptom", "beta", "auto")]


def test_nothing_known_takes_the_unknown_choices(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet(), auto_accept=True, use_unknown=True)
    assert isinstance(step, Done) and step.leaf.id == "alpha-oom"
    assert [(s.question, s.answer, s.how, s.source) for s in step.path] == [
        ("symptom", "unknown", "default", "not known"),
        ("vllm_version", "unknown", "default", "not known"),
        ("gpu_arch", "unknown", "default", "not known"),
    ]
    assert "symptom" not in step.facts  # "not known" is not a fact


def test_without_use_unknown_a_walk_stops_at_the_first_unanswerable_question(kb: KnowledgeBase) -> None:
    step = walk(kb, facts(diagnosis="alpha-oom"), auto_accept=True)
    assert isinstance(step, Ask) and step.question.id == "vllm_version"
    assert [s.question for s in step.path] == ["symptom"]


@pytest.mark.parametrize(("version", "leaf"), [("0.15.0", "alpha-hopper"), ("0.19.1rc1", "alpha-hopper"), ("0.25.0", "alpha-oom"), ("unknown", "alpha-oom")])
def test_routes_follow_conditions(kb: KnowledgeBase, version: str, leaf: str) -> None:
    step = walk(kb, FactSet(), answers(symptom="alpha", vllm_version=version, gpu_arch="hopper"))
    assert isinstance(step, Done) and step.leaf.id == leaf


def test_answers_become_facts(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet(), answers(symptom="alpha", vllm_version="0.15.0", gpu_arch="hopper"))
    assert isinstance(step, Done)
    assert step.facts.value("vllm_version") == Version.parse("0.15.0")
    assert step.facts.value("gpu_arch") == "hopper"
    assert step.facts.get("gpu_arch").kind == "answered"  # type: ignore[union-attr]
    assert [s.how for s in step.path] == ["answered"] * 3


def test_an_answer_beats_what_the_log_said(kb: KnowledgeBase) -> None:
    step = walk(kb, facts(vllm_version=Version.parse("0.25.0")), answers(symptom="alpha", vllm_version="0.15.0", gpu_arch="hopper"))
    assert isinstance(step, Done) and step.leaf.id == "alpha-hopper"
    assert step.facts.alternatives("vllm_version")[0].value == Version.parse("0.25.0")


def test_fact_bound_question_is_suggested_from_the_fact(kb: KnowledgeBase) -> None:
    fs = FactSet.of([Fact("gpu_arch", "hopper", "NVML", kind="machine")])
    step = walk(kb, fs, answers(symptom="alpha", vllm_version="0.12.0"))
    assert isinstance(step, Ask) and step.question.id == "gpu_arch"
    assert step.suggestion is not None and (step.suggestion.answer, step.suggestion.source) == ("hopper", "NVML")
    done = walk(kb, fs, answers(symptom="alpha", vllm_version="0.12.0"), auto_accept=True)
    assert isinstance(done, Done) and done.leaf.id == "alpha-hopper"
    assert done.path[-1].how == "auto" and done.path[-1].source == "NVML"


def test_version_question_suggested_from_a_version_fact(kb: KnowledgeBase) -> None:
    q = kb.questions["vllm_version"]
    assert suggest(q, facts(vllm_version=Version.parse("0.11.1rc1"))).answer == "0.11.1rc1"  # type: ignore[union-attr]
    assert suggest(q, facts(vllm_version="nightly")) is None


def test_invalid_answers_are_ignored(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet(), answers(symptom="gamma"))
    assert isinstance(step, Ask) and step.question.id == "symptom"
    step = walk(kb, FactSet(), answers(symptom="alpha", vllm_version="latest"))
    assert isinstance(step, Ask) and step.question.id == "vllm_version"


def test_labels_follow_the_language(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet(), answers(symptom="beta"), lang="zh")
    assert isinstance(step, Done) and step.path[0].label == "beta 报错"


def test_start_elsewhere(kb: KnowledgeBase) -> None:
    step = walk(kb, FactSet(), start="gpu_arch")
    assert isinstance(step, Ask) and step.question.id == "gpu_arch"


def _broken(tmp_path: Path, old: str, new: str) -> KnowledgeBase:
    root = tmp_path / "kb"
    shutil.copytree(BASE, root)
    tree = root / "decision_trees" / "tree.yaml"
    tree.write_text(tree.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    return load_kb(root, strict=False)[0]


def test_a_cycle_is_refused(tmp_path: Path) -> None:
    kb = _broken(tmp_path, "          zh: Ampere（A100）\n        next: alpha-oom", "          zh: Ampere（A100）\n        next: symptom")
    with pytest.raises(EngineError, match="loops back to 'symptom'"):
        walk(kb, FactSet(), answers(symptom="alpha", vllm_version="0.9.0", gpu_arch="ampere"))


def test_a_route_to_nowhere_is_refused(tmp_path: Path) -> None:
    kb = _broken(tmp_path, "next: beta-oom", "next: beta-om")
    with pytest.raises(EngineError, match="'beta-om', which does not exist"):
        walk(kb, FactSet(), answers(symptom="beta"))


def test_an_auto_answer_that_is_no_choice_is_not_taken(tmp_path: Path) -> None:
    kb = _broken(tmp_path, "answer: beta", "answer: gamma")
    step = walk(kb, facts(diagnosis="beta-oom"), auto_accept=True)
    assert isinstance(step, Ask) and step.question.id == "symptom"


# --- the session ---------------------------------------------------------------------------------


def test_session_answer_back_restart(kb: KnowledgeBase) -> None:
    s = Session(kb)
    assert s.current().question.id == "symptom"  # type: ignore[union-attr]
    assert s.answer("symptom", "alpha").question.id == "vllm_version"  # type: ignore[union-attr]
    assert s.answer("vllm_version", "0.15.0").question.id == "gpu_arch"  # type: ignore[union-attr]
    done = s.answer("gpu_arch", "hopper")
    assert isinstance(done, Done) and done.leaf.id == "alpha-hopper"
    assert s.back().question.id == "gpu_arch"  # type: ignore[union-attr]
    assert s.back().question.id == "vllm_version"  # type: ignore[union-attr]
    assert s.order == ["symptom"]
    assert s.restart().question.id == "symptom"  # type: ignore[union-attr]
    assert s.answers == {} and s.order == []
    assert s.back().question.id == "symptom"  # type: ignore[union-attr]


def test_session_back_remembers_the_users_own_answer_until_answered_again(kb: KnowledgeBase) -> None:
    s = Session(kb, facts(diagnosis="alpha-oom"))
    s.accept()  # symptom: the diagnosis's answer, not the user's own
    s.answer("vllm_version", "0.10.1")
    s.back()
    assert s.previous("vllm_version") == "0.10.1" and s.current().question.id == "vllm_version"  # type: ignore[union-attr]
    s.back()
    assert s.previous("symptom") is None  # an accepted suggestion is shown by the suggestion itself
    s.accept()
    s.answer("vllm_version", "0.15.0")
    assert s.previous("vllm_version") is None
    s.back()
    s.restart()
    assert s.previous("vllm_version") is None


def test_session_forgets_answers_left_off_the_path(kb: KnowledgeBase) -> None:
    s = Session(kb)
    s.answer("symptom", "alpha")
    s.answer("vllm_version", "0.15.0")
    done = s.answer("symptom", "beta")  # changing an earlier answer skips the others
    assert isinstance(done, Done) and done.leaf.id == "beta-oom"
    assert set(s.answers) == {"symptom"} and s.order == ["symptom"]


def test_session_accept_and_finish(kb: KnowledgeBase) -> None:
    s = Session(kb, facts(diagnosis="alpha-oom"))
    step = s.accept()
    assert isinstance(step, Ask) and step.question.id == "vllm_version"
    assert s.answers["symptom"].source.startswith("diagnosis=alpha-oom")
    again = s.accept()  # nothing to accept: the question stays
    assert isinstance(again, Ask) and again.question.id == "vllm_version" and "vllm_version" not in s.answers
    s.add_facts(FactSet.of([Fact("gpu_arch", "ampere", "NVML")]))
    s.answer("vllm_version", "0.12.0")
    done = s.finish()
    assert isinstance(done, Done) and done.leaf.id == "alpha-oom"
    assert done.path[-1].how == "auto"


def test_session_override_checks_the_type(kb: KnowledgeBase) -> None:
    s = Session(kb)
    f = s.override("gpu_arch", "hopper")
    assert f.kind == "answered" and s.facts.value("gpu_arch") == "hopper"
    with pytest.raises(FactValueError):
        s.override("gpu_arch", "hoper")
    with pytest.raises(FactValueError):
        s.override("no_such_fact", "1")
    s.override("vllm_version", "0.15.0")
    s.answer("symptom", "alpha")
    step = s.current()
    assert isinstance(step, Ask) and step.suggestion is not None and step.suggestion.answer == "0.15.0"


def test_replaced_facts_drop_what_the_old_ones_said_and_keep_the_answers() -> None:
    from oomwizard.facts.model import Fact, FactSet
    from oomwizard.kb.loader import get_kb
    from oomwizard.session import Session
    from oomwizard.versions import Version

    kb = get_kb()
    s = Session(kb, FactSet.of([Fact("vllm_version", Version.parse("0.11.0"), "log"), Fact("gpu_arch", "hopper", "nvml")]))
    s.answer(kb.start, "unknown")
    s.replace_facts(FactSet.of([Fact("gpu_arch", "ampere", "nvml")]))
    assert s.facts.value("gpu_arch") == "ampere" and s.facts.get("vllm_version") is None
    assert kb.start in s.answers
    s.add_facts(FactSet.of([Fact("vllm_version", Version.parse("0.12.0"), "log")]))
    assert s.facts.value("gpu_arch") == "ampere" and str(s.facts.value("vllm_version")) == "0.12.0"
