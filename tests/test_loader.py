"""Loading the knowledge base: the model it builds, and every structural mistake, located."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oomwizard.kb import loader
from oomwizard.kb.loader import default_root, get_kb, load_kb
from oomwizard.kb.yamlsrc import KBError, Problem

BASE = Path(__file__).parent / "kb_broken" / "base"
TREE = "decision_trees/tree.yaml"
BETA = "decision_trees/leaves/beta-oom.yaml"


def copy(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(BASE, root)
    return root


def edit(root: Path, file: str, old: str, new: str) -> None:
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(file: str, text: str) -> int:
    return next(n for n, line in enumerate((BASE / file).read_text(encoding="utf-8").splitlines(), 1) if line == text)


GPU_ARCH_LINE = line_of(TREE, "  gpu_arch:")


def messages(problems: list[Problem]) -> list[str]:
    return [f"{p.file}:{p.line}: {p.message}" for p in problems]


def test_fixture_loads_into_the_model() -> None:
    kb, problems = load_kb(BASE)
    assert problems == []
    assert kb.start == "symptom" and list(kb.scenarios) == ["alpha-oom", "beta-oom"]
    assert list(kb.questions) == ["symptom", "vllm_version", "gpu_arch"]
    q = kb.questions["gpu_arch"]
    assert (q.file, q.line, q.fact, q.kind, q.unknown) == (TREE, GPU_ARCH_LINE, "gpu_arch", "choice", "unknown")
    hopper = q.choice("hopper")
    assert hopper is not None and [r.target for r in hopper.routes] == ["alpha-hopper", "alpha-oom"]
    assert hopper.routes[0].condition is not None and hopper.routes[0].condition.source == 'vllm_version in ">=0.11,<0.20"'
    assert kb.questions["vllm_version"].kind == "version" and kb.questions["vllm_version"].routes[0].target == "gpu_arch"
    leaf = kb.leaves["alpha-oom"]
    assert [f.id for f in leaf.fixes] == ["lower-max-num-seqs", "enforce-eager"]
    v = leaf.fixes[1].variants[0]
    assert v.flags == (("--enforce-eager", None), ("--kv-cache-dtype", "fp8")) and v.env == (("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1"),)
    assert [s.url for s in leaf.sources] == ["https://github.com/vllm-project/vllm/issues/12529", "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"]
    assert leaf.sources[0].title == "An example report"
    assert leaf.checks[0].auto is not None and leaf.checks[0].auto.log_absent == "CUDA out of memory"
    assert kb.leaves["alpha-hopper"].versions.text == ">=0.11,<0.20"
    art = kb.article("leaves", "alpha-oom", "zh")
    assert art is not None and art.title == "alpha 路径放不下" and art.body.startswith("## 发生了什么")
    assert kb.resolve("alpha-oom") is leaf and kb.resolve("beta-oom") is kb.leaves["beta-oom"] and kb.resolve("nope") is None


def test_strict_loading_raises_with_every_problem(tmp_path: Path) -> None:
    root = copy(tmp_path)
    edit(root, TREE, "next: beta-oom", "next: beta-om")
    edit(root, BETA, "cost: high", "cost: huge")
    with pytest.raises(KBError) as e:
        load_kb(root)
    assert {p.file for p in e.value.problems} == {TREE, BETA}
    assert "beta-om" in str(e.value) and "huge" in str(e.value)


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        (TREE, "    kind: version\n", "    kind: version\n    choices: {}\n", "a version question takes typed input, not 'choices'"),
        (TREE, "    kind: version\n", "    kind: typed\n", "kind 'typed' is not one of choice, version"),
        (TREE, "    next: gpu_arch\n", "\n", "a version question needs 'next'"),
        (TREE, "    unknown: unknown\n    auto:", "    unknown: unknown\n    next: gpu_arch\n    auto:", "a choice question routes per choice, not with 'next'"),
        (TREE, "    kind: version\n", "    kind: version\n    fact: tp\n", "a version question must set a version fact, 'tp' is int"),
        (TREE, "    unknown: unknown\n    auto:", "    unknown: maybe\n    auto:", "'unknown' names 'maybe', which is not a choice"),
        (TREE, "start: symptom", "start: symptoms", "start node 'symptoms' does not exist"),
        (TREE, "          - goto: alpha-oom", "          - if: 'tp > 1'\n            goto: alpha-oom", "the last route must have no 'if'"),
        (TREE, "        next: vllm_version\n      beta:", "        next: []\n      beta:", "'next' must be a node id or a list"),
        (BETA, "id: beta-oom", "id: beta", "leaf id 'beta' must match its file name 'beta-oom'"),
        (BETA, "          --enforce-eager: true\nchecks", "          --enforce-eager: false\nchecks", "value must be a string, a number or true"),
        (BETA, "          --enforce-eager: true\nchecks", "          enforce-eager: true\nchecks", "'enforce-eager' is not a flag"),
        (BETA, "        flags:\n          --enforce-eager: true\nchecks", "        env:\n          VLLM_X: true\nchecks", "value must be a string or number"),
        (BETA, "        flags:\n          --enforce-eager: true\nchecks", "        note: {en: x, zh: y}\nchecks", "a variant must change something"),
        (BETA, "    variants:\n", "    variants: []\n    old:\n", "needs at least one variant"),
        (BETA, "    log_absent: 'AssertionError'", "    fact: 'gpu == \"x\"'", "check uses unknown fact 'gpu'"),
        (BETA, "sources:\n  - fixtures", "sources:\n  - title: no url\n  - fixtures", "missing field 'url'"),
        (BETA, "root_cause:\n  status: confirmed", "root_cause:\n  status: certain", "'certain' is not one of confirmed, probable"),
        (BETA, "  en: vLLM 0.13.0 and later.\n", "  en: vLLM 0.13.0 and later.\n  fr: vLLM 0.13.0 et plus.\n", "unknown language 'fr'"),
        (BETA, 'versions: ">=0.13"', 'versions: ">=0.13,<"', "not a version range"),
    ],
)
def test_structural_mistakes_are_located(tmp_path: Path, file: str, old: str, new: str, expected: str) -> None:
    root = copy(tmp_path)
    edit(root, file, old, new)
    _, problems = load_kb(root, strict=False)
    hits = [p for p in problems if expected in p.message]
    assert hits, "\n".join(messages(problems))
    assert all(p.file == file and p.line for p in hits)


def test_question_defined_twice_across_files(tmp_path: Path) -> None:
    root = copy(tmp_path)
    qdir = root / "decision_trees" / "questions"
    qdir.mkdir()
    (qdir / "extra.yaml").write_text(
        "questions:\n  gpu_arch:\n    text: {en: Again, zh: 再次}\n    unknown: unknown\n"
        "    choices:\n      unknown: {label: {en: x, zh: y}, next: alpha-oom}\n",
        encoding="utf-8",
    )
    _, problems = load_kb(root, strict=False)
    [p] = [p for p in problems if "defined twice" in p.message]
    assert (p.file, p.line) == ("decision_trees/questions/extra.yaml", 2)
    assert f"also {TREE}:{GPU_ARCH_LINE}" in p.message


def test_leaf_id_that_is_also_a_question(tmp_path: Path) -> None:
    root = copy(tmp_path)
    shutil.copy(root / BETA, root / "decision_trees/leaves/gpu_arch.yaml")
    edit(root, "decision_trees/leaves/gpu_arch.yaml", "id: beta-oom", "id: gpu_arch")
    _, problems = load_kb(root, strict=False)
    assert any("leaf id 'gpu_arch' is also a question id" in p.message for p in problems)


def test_article_titles(tmp_path: Path) -> None:
    root = copy(tmp_path)
    (root / "content/en/leaves/beta-oom.md").write_text("# From the heading\n\nText.\n", encoding="utf-8")
    (root / "content/zh/leaves/beta-oom.md").write_text("没有标题。\n", encoding="utf-8")
    kb, problems = load_kb(root, strict=False)
    assert kb.article("leaves", "beta-oom", "en").title == "From the heading"  # type: ignore[union-attr]
    assert messages(problems) == ["content/zh/leaves/beta-oom.md:1: article has no title (front matter 'title:' or a '# ' heading)"]


def test_a_shared_route_list_reports_once(tmp_path: Path) -> None:
    root = copy(tmp_path)
    edit(
        root,
        TREE,
        "      ampere:\n        label:\n          en: Ampere (A100)\n          zh: Ampere（A100）\n        next: alpha-oom",
        "      ampere:\n        label:\n          en: Ampere (A100)\n          zh: Ampere（A100）\n        next: &shared\n          - goto: nowhere",
    )
    edit(root, TREE, "          zh: 不确定\n        next: alpha-oom", "          zh: 不确定\n        next: *shared")
    _, problems = load_kb(root, strict=False)
    assert len([p for p in problems if "'nowhere'" in p.message]) == 1


def test_missing_tree_folder(tmp_path: Path) -> None:
    kb, problems = load_kb(tmp_path, strict=False)
    assert kb.questions == {} and "decision tree folder not found" in problems[0].message
    with pytest.raises(KBError):
        load_kb(tmp_path)


def test_default_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OOMWIZARD_KB", str(tmp_path))
    assert default_root() == tmp_path
    monkeypatch.delenv("OOMWIZARD_KB")
    package = Path(loader.__file__).resolve().parent.parent
    expected = package / "_kb" if (package / "_kb" / "decision_trees").is_dir() else package.parent
    assert default_root() == expected


def test_get_kb_loads_once_and_refuses_a_broken_base(tmp_path: Path) -> None:
    assert get_kb(BASE) is get_kb(str(BASE))
    root = copy(tmp_path)
    edit(root, TREE, "next: beta-oom", "next: beta-om")
    with pytest.raises(KBError):
        get_kb(root)


def test_without_libyaml_the_result_is_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import yaml

    from oomwizard.kb import yamlsrc

    root = copy(tmp_path)
    edit(root, TREE, "next: beta-oom", "next: beta-om")
    edit(root, BETA, "evidence: verified\nfixes:", "evidence: verified\nevidence: documented\nfixes:")
    fast_kb, fast = load_kb(root, strict=False)
    monkeypatch.setattr(yamlsrc, "_COMPOSER", yaml.SafeLoader)
    slow_kb, slow = load_kb(root, strict=False)
    assert fast == slow and len(fast) >= 2
    assert fast_kb.questions == slow_kb.questions and fast_kb.leaves == slow_kb.leaves


def test_yaml_with_lines(tmp_path: Path) -> None:
    from oomwizard.kb.yamlsrc import LDict, LList, load_yaml

    f = tmp_path / "a.yaml"
    f.write_text("# comment\nfirst: 1\nsecond:\n  - x\n  - {k: v}\n\"yes\": yes\nno: 2\nfirst: 3\n? [a, b]\n: 4\n", encoding="utf-8")
    problems: list[Problem] = []
    data = load_yaml(f, "a.yaml", problems)
    assert isinstance(data, LDict) and isinstance(data["second"], LList)
    assert (data.line, data.line_of("first"), data.line_of("second"), data.line_of("missing")) == (2, 2, 3, 2)
    assert data["second"].item_lines == [4, 5] and data["second"].line_of(9) == 4
    assert data["first"] == 1 and data["yes"] is True and data["False"] == 2  # YAML 1.1: unquoted no is false
    assert messages(problems) == ["a.yaml:8: duplicate key 'first' (first at line 2)", "a.yaml:9: mapping keys must be plain scalars"]


def test_yaml_unreadable_empty_and_broken(tmp_path: Path) -> None:
    from oomwizard.kb.yamlsrc import load_yaml

    problems: list[Problem] = []
    assert load_yaml(tmp_path / "missing.yaml", "missing.yaml", problems) is None
    (tmp_path / "empty.yaml").write_text("# nothing\n", encoding="utf-8")
    assert load_yaml(tmp_path / "empty.yaml", "empty.yaml", problems) is None
    (tmp_path / "bad.yaml").write_text("a: 1\nb: [2\n", encoding="utf-8")
    assert load_yaml(tmp_path / "bad.yaml", "bad.yaml", problems) is None
    (tmp_path / "latin.yaml").write_bytes(b"a: \xe9\n")
    assert load_yaml(tmp_path / "latin.yaml", "latin.yaml", problems) is None
    assert [p.file for p in problems] == ["missing.yaml", "bad.yaml", "latin.yaml"]
    assert problems[0].message.startswith("cannot read") and problems[1].message.startswith("YAML syntax") and problems[1].line
    assert str(problems[1]).startswith("bad.yaml:") and ": error: YAML syntax" in str(problems[1])


def test_model_helpers() -> None:
    kb, _ = load_kb(BASE)
    fix = kb.leaves["alpha-oom"].fixes[1]
    assert fix.variant_for(None) is None
    assert fix.variant_for("0.19.0") is fix.variants[0] and fix.variant_for("0.20.0") is fix.variants[1]
    assert fix.variant_for("0.7.3") is None
    assert fix.variants[0].changes_server and fix.variants[1].changes_server
    assert [leaf.id for leaf in kb.leaves_for_scenario("alpha-oom")] == ["alpha-hopper", "alpha-oom"]
    assert kb.node("gpu_arch") is kb.questions["gpu_arch"] and kb.node("beta-oom") is kb.leaves["beta-oom"] and kb.node("x") is None
    del kb.articles[("leaves", "beta-oom", "zh")]
    assert kb.article("leaves", "beta-oom", "zh").lang == "en"  # type: ignore[union-attr]


def test_a_tag_the_safe_loader_refuses_is_a_located_problem(tmp_path: Path) -> None:
    from oomwizard.kb.yamlsrc import load_yaml

    f = tmp_path / "x.yaml"
    f.write_text("a: 1\nb: !!python/object:os.system ''\n")
    problems: list = []
    assert load_yaml(f, "x.yaml", problems) is None
    assert len(problems) == 1 and problems[0].line == 2 and "constructor" in problems[0].message
