"""The refinement rules (``decision_trees/diagnosis/refinements.yaml``): what a broken rule looks
like in lint (located at its line), and that a rule added there changes the diagnosis without code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kbkit import KB_CHECKS, shipped_lint

from oomwizard.lint import lint
from oomwizard.logs.diagnose import diagnose_text

ROOT = Path(__file__).resolve().parent.parent
REFINEMENTS = "decision_trees/diagnosis/refinements.yaml"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.19 GiB of which 1.00 GiB is free.")


def _copy(tmp_path: Path) -> Path:
    for name in ("decision_trees", "content"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def _edit(root: Path, old: str, new: str) -> int:
    path = root / REFINEMENTS
    text = path.read_text(encoding="utf-8")
    i = text.index(old)
    path.write_text(text[:i] + new + text[i + len(old):], encoding="utf-8")
    return text[:i].count("\n") + 1


def _problems(root: Path) -> list[str]:
    return [str(p) for p in lint(root, KB_CHECKS) if p.file == REFINEMENTS]


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ("    scenario: sampler-sort-large-vocab\n", "    scenario: sampler-sort-large-vocabulary\n",
         "unknown scenario 'sampler-sort-large-vocabulary'"),
        ("  - when: vocab_size >= large_vocab\n", "  - when: vocabulary_size >= large_vocab\n",
         "unknown name 'vocabulary_size'"),
        ("  - when: flag_sort\n", "  - when: flag_sorting\n", "unknown name 'flag_sorting'"),
        ("  - when: flag_sort\n", "  - when: flag_sort and\n", "when:"),
        ("    score: {add: -0.18}\n", "    score: {add: huge}\n", "neither a tier"),
        ("    support: [vocab_size]\n", "    support: [vocabulary]\n", "unknown fact 'vocabulary'"),
        ("  - include: features\n    set: {enabled: -0.12}\n", "  - include: feature\n    set: {enabled: -0.12}\n",
         "unknown group 'feature'"),
        ("unplaced: unplaced\n", "unplaced: nowhere\n", "unknown group 'nowhere'"),
        ("    stop: true\n", "    stop: true\n    halt: true\n", "unknown key 'halt'"),
    ],
)
def test_a_broken_refinement_is_reported_at_its_line(tmp_path: Path, old: str, new: str, expect: str) -> None:
    root = _copy(tmp_path)
    line = _edit(root, old, new)
    found = [p for p in _problems(root) if expect in p]
    assert found, _problems(root)
    lines = {int(p.split(":")[1]) for p in found if p.split(":")[1].isdigit()}
    assert any(abs(n - line) <= 8 for n in lines), (line, found)


def test_an_example_the_rule_does_not_win_is_reported(tmp_path: Path) -> None:
    """The vocabulary example with a small vocabulary is a plain sampler warm-up: lint says so."""
    root = _copy(tmp_path)
    _edit(root, "vocab_size: 262144", "vocab_size: 32000")
    found = [p for p in _problems(root) if "vocab_size >= large_vocab" not in p and "sampler-sort-large-vocab" in p]
    assert found, _problems(root)


def test_the_shipped_refinements_lint_clean() -> None:
    assert [str(p) for p in shipped_lint() if p.file == REFINEMENTS] == []
    from oomwizard.logs.rules import load_rules

    examples = [e for e in load_rules(ROOT).examples if e.file == REFINEMENTS]
    assert len({e.scenario for e in examples}) >= 7


def test_refinements_decide_the_ranking() -> None:
    """Each layer of the shipped groups, read through the public diagnosis."""
    capture = "Traceback (most recent call last):\n" \
              '  File "/opt/vllm/v1/worker/gpu_model_runner.py", line 10, in capture_model\n' + OOM
    d = diagnose_text(capture, "x")
    assert [m.scenario for m in d.matches][:1] == ["cudagraph-capture"]
    mrv2 = "INFO vLLM version 0.20.1\n" + capture.replace("gpu_model_runner.py", "gpu/model_runner.py")
    d = diagnose_text(mrv2, "x")
    assert [m.scenario for m in d.matches][:2] == ["mrv2-cudagraph-profile-zero", "cudagraph-capture"]
    old = mrv2.replace("0.20.1", "0.29.0")
    assert [m.scenario for m in diagnose_text(old, "x").matches][:1] == ["cudagraph-capture"]


def test_a_rule_added_as_data_changes_the_diagnosis(tmp_path: Path) -> None:
    """A new refinement is a data change: the program reads it from a knowledge base of its own."""
    root = _copy(tmp_path)
    _edit(root, "  startup_check:\n  - scenario: insufficient-free-memory-at-startup\n",
          "  startup_check:\n  - when: tp > 1\n    scenario: custom-allreduce-ipc\n    score: {add: 0.05}\n"
          "    reason: {en: several GPUs, zh: 多块 GPU}\n  - scenario: insufficient-free-memory-at-startup\n")
    log = ("INFO non-default args: {'model': 'x', 'tensor_parallel_size': 2}\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/vllm/v1/worker/gpu_worker.py", line 10, in init_device\n' + OOM)
    code = ("import sys\nfrom oomwizard.logs.diagnose import diagnose_text\n"
            "print(' '.join(m.scenario for m in diagnose_text(sys.stdin.read(), 'x').matches))")
    env = dict(os.environ, OOMWIZARD_KB=str(root))
    out = subprocess.run([sys.executable, "-c", code], input=log, capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    shipped = [m.scenario for m in diagnose_text(log, "x").matches]
    assert shipped[0] == "insufficient-free-memory-at-startup"
    assert out[:2] == ["custom-allreduce-ipc", "insufficient-free-memory-at-startup"]


def test_a_reason_whose_value_does_not_take_its_format_is_shown_unfilled() -> None:
    from oomwizard.facts.model import Fact
    from oomwizard.i18n import Text
    from oomwizard.logs.refine import Env

    env = Env({"vocab_size": Fact("vocab_size", "many", "x:1")}, {})
    text = Text("large ({vocab_size:,} tokens)", "很大（{vocab_size:,}）")
    assert env.fill(text) == text
    env = Env({"vocab_size": Fact("vocab_size", 262144, "x:1")}, {})
    assert env.fill(text).en == "large (262,144 tokens)"


_SIZED = ("INFO 02-10 21:55:01 worker.py:267] Memory profiling takes 8.01 seconds\n"
          "INFO 02-10 21:55:01 worker.py:267] the current vLLM instance can use total_gpu_memory (139.72GiB) x "
          "gpu_memory_utilization ({u}) = 139.72GiB\n"
          "INFO 02-10 21:55:01 worker.py:267] model weights take 39.66GiB; non_torch_memory takes 2.53GiB; PyTorch "
          "activation peak memory takes 0.24GiB; the rest of the memory reserved for KV Cache is 97.29GiB.\n{extra}"
          "[rank0]: ray.exceptions.RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.execute_method() (pid=341)\n")


@pytest.mark.parametrize(("util", "extra", "first"), [
    ("1.00", "", "cudagraph-capture"),
    ("0.90", "", "insufficient-free-memory-at-startup"),
    ("1.00", "INFO 02-10 21:54:00 [utils.py:253] non-default args: {'enforce_eager': True}\n",
     "insufficient-free-memory-at-startup"),
])
def test_an_error_placed_after_kv_sizing_by_the_marks_alone_ranks_graph_capture_when_nothing_was_left(
        util: str, extra: str, first: str) -> None:
    d = diagnose_text(extra + _SIZED.format(u=util, extra=""))
    assert d.matches[0].scenario == first, [(m.scenario, m.score) for m in d.matches]
    top3 = [m.scenario for m in d.matches[:3]]
    if first == "cudagraph-capture":
        assert set(top3[:2]) == {"cudagraph-capture", "insufficient-free-memory-at-startup"}
    else:  # graph capture still follows the allocation, below it; not at all with graphs off
        assert ("cudagraph-capture" in top3) == ("enforce_eager" not in extra), top3


@pytest.mark.parametrize(("flag", "expect"), [
    ("unused_one", "no rule of refinements.yaml reads flag_unused_one"),
    ("kv_check", "'kv_check' is defined twice"),
])
def test_a_frame_flag_is_defined_once_and_read_by_a_rule(tmp_path: Path, flag: str, expect: str) -> None:
    """frames.yaml is the one list of flags: one that no refinement reads would do nothing."""
    root = _copy(tmp_path)
    frames = root / "decision_trees" / "diagnosis" / "frames.yaml"
    text = frames.read_text(encoding="utf-8")
    anchor = "- flag: custom_allreduce\n"
    line = text[:text.index(anchor)].count("\n") + 1
    frames.write_text(text.replace(anchor, f"- flag: {flag}\n  func:\n    pattern: '^nothing$'\n{anchor}", 1),
                      encoding="utf-8")
    found = [p for p in lint(root, KB_CHECKS) if expect in p.message]
    assert [(p.file, p.line) for p in found] == [("decision_trees/diagnosis/frames.yaml", line)]
