"""The diagnosis rules as data: the shipped files load clean, every rule has an example diagnosed
as its scenario, and a broken rule is reported by ``oomwizard lint`` at its file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kbkit import KB_CHECKS, shipped_lint

from oomwizard.lint import lint
from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.rules import load_rules
from oomwizard.logs.signatures import SIGNATURES

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = "decision_trees/diagnosis/messages.yaml"


def test_shipped_rules_load_without_problems() -> None:
    problems: list = []
    rules = load_rules(ROOT, problems)
    assert problems == []
    assert [s.id for s in rules.messages] == [s.id for s in SIGNATURES]
    own = {e.rule for e in rules.examples if not e.file.endswith("refinements.yaml")}
    assert own == {s.id for s in rules.messages} | {m.id for m in rules.mechanisms}
    assert {"message", "refined", "phase", "neighbour", "timeline", "weak", "cut"} <= set(rules.tiers)


@pytest.mark.parametrize("example", load_rules(ROOT).examples, ids=lambda e: f"{e.rule}:{e.line}")
def test_every_example_is_diagnosed_as_its_rule_says(example) -> None:  # type: ignore[no-untyped-def]
    sig = next((s for s in SIGNATURES if s.id == example.rule), None)
    if sig is not None and sig.frames is not None and 'File "' not in example.text:
        pytest.skip("counts only under its frames")
    d = diagnose_text(example.text, "example")
    assert d.matches, example.rule
    top = d.matches[0].score
    assert any(m.scenario == example.scenario and m.score == top for m in d.matches), (example.rule, d.matches[:2])


def _copy(tmp_path: Path) -> Path:
    for name in ("decision_trees", "content"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def _break(root: Path, old: str, new: str) -> int:
    """Replace the first ``old`` in messages.yaml; returns its line."""
    path = root / MESSAGES
    text = path.read_text(encoding="utf-8")
    i = text.index(old)
    path.write_text(text[:i] + new + text[i + len(old):], encoding="utf-8")
    return text[:i].count("\n") + 1


def _problems(root: Path) -> list[str]:
    return [str(p) for p in lint(root, KB_CHECKS) if p.file.startswith("decision_trees/diagnosis/")]


def test_lint_of_the_shipped_rules_is_clean() -> None:
    assert [str(p) for p in shipped_lint() if p.file.startswith("decision_trees/diagnosis/")] == []


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ("  scenario: sampler-warmup\n", "  scenario: sampler-warmpu\n", "unknown scenario 'sampler-warmpu'"),
        ("  phase: sampler_warmup\n", "  phase: sampler_warm\n", "unknown phase 'sampler_warm'"),
        ("    n: sampler_dummy_requests\n", "    n: sampler_dummies\n", "unknown fact 'sampler_dummies'"),
        ("  score: message\n", "  score: messages\n", "unknown score tier 'messages'"),
        ("- 'RuntimeError: CUDA out of memory occurred when warming up sampler with 512",
         "- 'RuntimeError: CUDA out of memory occurred while warming up sampler with 512",
         "example does not match the pattern"),
        ("- id: pooler-warmup-message\n", "- id: sampler-warmup-message\n", "duplicate id"),
    ],
)
def test_a_broken_rule_is_reported_at_its_line(tmp_path: Path, old: str, new: str, expect: str) -> None:
    root = _copy(tmp_path)
    line = _break(root, old, new)
    found = [p for p in _problems(root) if expect in p]
    assert found, _problems(root)
    lines = {int(p.split(":")[1]) for p in found}
    assert any(abs(n - line) <= 14 for n in lines), (line, found)


def test_a_rule_outranked_on_its_own_example_is_reported(tmp_path: Path) -> None:
    """A rule whose example another rule's scenario beats does nothing and must not pass lint."""
    root = _copy(tmp_path)
    rule = (
        "- id: weak-sampler-words\n"
        "  scenario: runtime-oom\n"
        "  score: 0.3\n"
        "  triggers: [warming up sampler]\n"
        "  pattern: 'warming up sampler'\n"
        "  reason: {en: a weaker reading, zh: 较弱的解读}\n"
        "  examples:\n"
        "  - 'RuntimeError: CUDA out of memory occurred when warming up sampler with 8 dummy requests.'\n"
    )
    _break(root, "messages:\n", "messages:\n" + rule)
    found = [p for p in _problems(root) if "weak-sampler-words" in p and "outranks" in p]
    assert found and found[0].startswith(f"{MESSAGES}:"), _problems(root)
