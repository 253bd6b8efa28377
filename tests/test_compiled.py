"""The compiled copies of the knowledge base's YAML: exact, current, and never used for other bytes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard.kb import compiled
from oomwizard.kb.compiled import BUNDLES, bundle_sources, compile_bundle, load_source, same, stale
from oomwizard.kb.yamlsrc import LDict, Problem, load_yaml
from oomwizard.lint import lint
from oomwizard.logs.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = "decision_trees/diagnosis/messages.yaml"


def _tree(tmp: Path) -> Path:
    root = tmp / "kb"
    shutil.copytree(ROOT / "decision_trees", root / "decision_trees")
    return root


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder for compiled bundles, used instead of the program's own."""
    folder = tmp_path / "compiled"
    folder.mkdir()
    monkeypatch.setattr(compiled, "DATA", folder)
    compiled._bundle.cache_clear()
    yield folder
    compiled._bundle.cache_clear()


@pytest.mark.parametrize("name", BUNDLES)
def test_the_checked_in_bundles_are_generated_from_the_current_yaml(name: str) -> None:
    have = (ROOT / "oomwizard" / "data" / "compiled" / f"{name}.json").read_text(encoding="utf-8")
    assert have == compile_bundle(ROOT, name), "run python scripts/gen_compiled.py"


def test_every_file_of_the_program_comes_back_as_its_yaml_gives_it() -> None:
    files = [d for name in BUNDLES for d in bundle_sources(ROOT, name)]
    assert MESSAGES in files and "decision_trees/scenarios.yaml" in files and "decision_trees/tree.yaml" in files
    assert any(d.startswith("decision_trees/leaves/") for d in files)
    for display in files:
        from_copy: list[Problem] = []
        from_yaml: list[Problem] = []
        doc = load_source(ROOT / display, display, from_copy)
        assert same(doc, load_yaml(ROOT / display, display, from_yaml)), display
        assert from_copy == from_yaml
    assert not stale(ROOT)


def test_the_copy_is_read_and_the_yaml_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_yaml(*_a: object) -> None:
        raise AssertionError("parsed the YAML")

    monkeypatch.setattr(compiled, "load_yaml", no_yaml)
    doc = load_source(ROOT / MESSAGES, MESSAGES, [])
    assert isinstance(doc, LDict) and doc.line_of("messages") > 0


def test_an_edited_rule_is_read_from_its_yaml(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    path = root / MESSAGES
    text = path.read_text(encoding="utf-8")
    assert "Workspace is locked" in text
    path.write_text(text.replace("Workspace is locked", "Workspace is held"), encoding="utf-8")
    doc = load_source(path, MESSAGES, [])
    assert "Workspace is held" in json.dumps(doc) and "Workspace is locked" not in json.dumps(doc)
    edited = load_rules(root)
    assert any("Workspace is held" in t for s in edited.messages for t in s.triggers)
    assert not any("Workspace is locked" in t for s in edited.messages for t in s.triggers)


def test_a_broken_edit_is_reported_not_hidden_by_the_copy(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    path = root / "decision_trees/diagnosis/tiers.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "tiers: {}\n", encoding="utf-8")
    problems: list[Problem] = []
    load_rules(root, problems)
    assert any("duplicate key 'tiers'" in p.message for p in problems)


def test_the_problems_of_a_parse_come_back_with_the_copy(tmp_path: Path, data: Path) -> None:
    root = _tree(tmp_path)
    path = root / "decision_trees/diagnosis/tiers.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "order: []\n", encoding="utf-8")
    (data / "diagnosis.json").write_text(compile_bundle(root, "diagnosis"), encoding="utf-8")
    want: list[Problem] = []
    load_yaml(path, "decision_trees/diagnosis/tiers.yaml", want)
    assert [p.message.split(" (")[0] for p in want] == ["duplicate key 'order'"]
    got: list[Problem] = []
    assert same(load_source(path, "decision_trees/diagnosis/tiers.yaml", got),
                load_yaml(path, "decision_trees/diagnosis/tiers.yaml", []))
    assert got == want and got


def test_a_value_json_cannot_carry_is_left_to_the_yaml(tmp_path: Path, data: Path) -> None:
    root = _tree(tmp_path)
    path = root / "decision_trees/diagnosis/timeline.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "checked: 2026-12-02\n", encoding="utf-8")
    text = compile_bundle(root, "diagnosis")
    assert '"decision_trees/diagnosis/timeline.yaml"' not in text and f'"{MESSAGES}"' in text
    (data / "diagnosis.json").write_text(text, encoding="utf-8")
    (data / "kb.json").write_text(compile_bundle(root, "kb"), encoding="utf-8")
    doc = load_source(path, "decision_trees/diagnosis/timeline.yaml", [])
    assert str(doc["checked"]) == "2026-12-02"
    assert stale(root) == []


def test_stale_names_each_file_the_copy_was_not_made_from(tmp_path: Path, data: Path) -> None:
    root = _tree(tmp_path)
    for name in BUNDLES:
        (data / f"{name}.json").write_text(compile_bundle(root, name), encoding="utf-8")
    assert stale(root) == []
    tiers = root / "decision_trees/diagnosis/tiers.yaml"
    tiers.write_text(tiers.read_text(encoding="utf-8") + "# a comment changes the bytes\n", encoding="utf-8")
    (root / "decision_trees/questions/extra.yaml").write_text("questions: {}\n", encoding="utf-8")
    gone = sorted((root / "decision_trees/leaves").glob("*.yaml"))[0]
    gone.unlink()
    found = {(p.file, p.message.split(":")[0]) for p in stale(root)}
    assert found == {
        ("decision_trees/diagnosis/tiers.yaml", "oomwizard/data/compiled/diagnosis.json was generated from another "
                                                "version of this file"),
        ("decision_trees/questions/extra.yaml", "not in oomwizard/data/compiled/kb.json"),
        ("oomwizard/data/compiled/kb.json", f"holds decision_trees/leaves/{gone.name}, which no longer exists"),
    }
    assert all(p.message.endswith("run python scripts/gen_compiled.py") for p in stale(root))
    (data / "kb.json").write_text('{"format": 0}', encoding="utf-8")
    assert any(p.file == "oomwizard/data/compiled/kb.json" and "format" in p.message for p in stale(root))


def test_lint_reports_a_stale_copy_of_the_programs_own_base(tmp_path: Path, data: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "own"
    shutil.copytree(ROOT / "decision_trees", root / "decision_trees")
    shutil.copytree(ROOT / "content", root / "content")
    for name in BUNDLES:
        (data / f"{name}.json").write_text(compile_bundle(root, name), encoding="utf-8")
    monkeypatch.setattr("oomwizard.lint.compiled.own_root", lambda: root)
    assert not [p for p in lint(root) if "gen_compiled" in p.message]
    tree = root / "decision_trees/tree.yaml"
    tree.write_text(tree.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    found = [p for p in lint(root) if "gen_compiled" in p.message]
    assert [(p.file, p.severity) for p in found] == [("decision_trees/tree.yaml", "error")]


def test_the_diagnosis_and_the_scenario_titles_import_no_yaml_parser() -> None:
    code = (
        "import sys\n"
        "from oomwizard.frontend.inputs import default_sources\n"
        "from oomwizard.frontend.options import DEMO_LOG\n"
        "from oomwizard.kb.titles import scenario_titles\n"
        "d = default_sources().diagnose_paths([str(DEMO_LOG)], None)\n"
        "assert d.best.scenario == 'sampler-warmup', d.best\n"
        "assert scenario_titles()['sampler-warmup'][0].en\n"
        "print(sorted(m for m in sys.modules if m == 'yaml' or m.startswith('yaml.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
