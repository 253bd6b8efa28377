"""Onboarding data and logic: glossary, timeline, browse search, budget, tour, and their lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard.facts.model import Fact, FactSet
from oomwizard.frontend.options import DEMO_LOG
from oomwizard.i18n import LANGS
from oomwizard.kb.loader import get_kb
from oomwizard.lint import lint
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.logs.rank import PHASE_NAMES
from oomwizard.onboard.browse import entries, looks_pasted, search
from oomwizard.onboard.budget import budget_from_facts
from oomwizard.onboard.data import fill_placeholders, get_onboarding, load_onboarding
from oomwizard.onboard.tour import tour_pages, tour_values

REPO = Path(__file__).resolve().parent.parent
GIB = 1 << 30


def test_onboarding_loads_without_problems() -> None:
    ob = get_onboarding()
    assert ob.problems == []
    assert len(ob.terms) >= 25
    for term in ob.terms.values():
        for lang in LANGS:
            assert term.name(lang) and term.definition(lang), (term.id, lang)


def test_every_scenario_has_a_timeline_step_that_is_a_diagnosis_phase() -> None:
    ob = get_onboarding()
    assert set(ob.steps) == set(PHASE_NAMES)
    for sid in get_kb().scenarios:
        assert ob.scenarios[sid].step in ob.steps, sid


def test_every_error_message_pasted_lands_on_its_scenario() -> None:
    ob = get_onboarding()
    checked = 0
    for info in ob.scenarios.values():
        for m in info.messages:
            if m.kind != "error":
                continue
            line = fill_placeholders(m.text)
            assert looks_pasted(line), line
            found = [x.scenario for x in diagnose_text(line).matches]
            assert info.id in found, (info.id, line, found)
            checked += 1
    assert checked >= 12


def test_word_search_needs_every_word_and_knows_gpu_generations() -> None:
    kb, ob = get_kb(), get_onboarding()
    all_entries = entries(kb, ob, "en")
    assert search(all_entries, "", ob).how == "all"
    lora = search(all_entries, "--max-lora-rank", ob)
    assert [e.id for e in lora.entries] == ["lora"]
    both = search(all_entries, "sampler vocabulary", ob)
    assert "sampler-sort-large-vocab" in [e.id for e in both.entries]
    assert all("vocabulary" in e.haystack and "sampler" in e.haystack for e in both.entries)
    hopper = {e.id for e in search(all_entries, "hopper", ob).entries}
    h100 = {e.id for e in search(all_entries, "H100", ob).entries}
    assert h100 and h100 <= hopper
    assert search(all_entries, "no-such-thing-anywhere", ob).entries == []


def test_a_pasted_line_is_ranked_by_the_diagnosis() -> None:
    kb, ob = get_kb(), get_onboarding()
    line = "ValueError: max_num_seqs (512) exceeds available Mamba cache blocks (130)"
    res = search(entries(kb, ob, "zh"), line, ob)
    assert res.how == "diagnosis"
    assert res.entries[0].id == "mamba-cache-blocks"
    assert res.entries[0].title == kb.scenarios["mamba-cache-blocks"].title("zh")


def facts(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, "test", kind="log") for k, v in values.items())


def test_budget_adds_up_and_counts_graphs_from_0_20() -> None:
    old = budget_from_facts(facts(gpu_mem_total_bytes=80 * GIB, gpu_memory_utilization=0.9, weights_gib=30.0,
                                  kv_cache_gib=35.0, cudagraph_actual_gib=2.0, vllm_version="0.11.0"))
    assert old is not None and not old.graphs_counted
    inside = sum(p.gib for p in old.parts if p.inside)
    assert inside == pytest.approx(72.0)
    assert old.part("other").gib == pytest.approx(7.0) and old.part("other").derived
    assert old.part("outside").gib == pytest.approx(8.0 - 2.0)
    new = budget_from_facts(facts(gpu_mem_total_bytes=80 * GIB, gpu_memory_utilization=0.9, weights_gib=30.0,
                                  kv_cache_gib=35.0, cudagraph_estimate_gib=2.0, vllm_version="0.20.0"))
    assert new is not None and new.graphs_counted
    assert new.part("other").gib == pytest.approx(5.0)
    assert new.part("outside").gib == pytest.approx(8.0)
    assert budget_from_facts(facts(weights_gib=30.0)) is None


@pytest.mark.parametrize("lang", LANGS)
def test_tour_uses_the_demo_logs_numbers(lang: str) -> None:
    kb, ob = get_kb(), get_onboarding()
    diag = diagnose_paths([str(DEMO_LOG)])
    pages = tour_pages(kb, ob, lang, diag)
    assert 5 <= len(pages) <= 8
    text = "\n".join(p.title + p.body + p.verify for p in pages)
    assert "?" not in text.replace("?)", ""), "every placeholder has a value from the demo"
    f = diag.facts
    assert f"{f.value('weights_gib'):.2f}" in text
    assert f"{f.value('kv_cache_gib'):.2f}" in text
    values = tour_values(kb, diag, lang)
    assert values["command"] in text and "--gpu-memory-utilization" in values["command"]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    shutil.copytree(REPO / "decision_trees", root / "decision_trees")
    shutil.copytree(REPO / "content", root / "content")
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_lint_reports_onboarding_mistakes_with_file_and_line(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit(root / "content/glossary/terms.yaml", "flags: [--block-size]", "flags: [--block-sizes]")
    _edit(root / "content/browse/scenarios.yaml", "    step: host_memory", "    step: nowhere")
    zh = root / "content/glossary/zh.yaml"
    text = zh.read_text(encoding="utf-8")
    start, end = text.index("\nlora:"), text.index("\nspeculative-decoding:")
    zh.write_text(text[:start] + text[end:], encoding="utf-8")
    _edit(root / "content/en/guides/memory.md", "(term:kv-cache)", "(term:kv-cash)")
    problems = [p for p in lint(root) if p.severity == "error"]
    got = {(p.file, p.message.split(":")[0]) for p in problems}

    def line_of(file: str, marker: str) -> int:
        lines = (root / file).read_text(encoding="utf-8").splitlines()
        return next(n for n, x in enumerate(lines, 1) if marker in x)

    by = {p.message: p for p in problems}
    flag = next(p for m, p in by.items() if "--block-sizes" in m)
    assert (flag.file, flag.line) == ("content/glossary/terms.yaml", line_of("content/glossary/terms.yaml", "--block-sizes"))
    step = next(p for m, p in by.items() if "'nowhere'" in m)
    assert (step.file, step.line) == ("content/browse/scenarios.yaml", line_of("content/browse/scenarios.yaml", "step: nowhere"))
    assert any(p.file == "content/glossary/zh.yaml" and "'lora' has no zh entry" in p.message for p in problems)
    link = next(p for m, p in by.items() if "kv-cash" in m)
    assert (link.file, link.line) == ("content/en/guides/memory.md", line_of("content/en/guides/memory.md", "kv-cash"))
    assert len(got) >= 4


def test_onboarding_fields_are_read_like_the_knowledge_base(tmp_path: Path) -> None:
    # The same field reader as the leaves: an item of a list that is no string is named with its
    # index (the valid items are kept), and a language that is neither en nor zh is reported.
    root = _copy(tmp_path)
    _edit(root / "content/glossary/terms.yaml", "flags: [--block-size]", "flags: [--block-size, 7]")
    _edit(root / "content/memory/timeline.yaml", "    text:\n      en:", "    text:\n      fr: Bonjour\n      en:")
    ob = load_onboarding(root)
    tid = next(t.id for t in ob.terms.values() if "--block-size" in t.flags)
    assert ob.terms[tid].flags == ("--block-size",)
    msgs = [(p.file, p.message) for p in ob.problems]
    assert ("content/glossary/terms.yaml", f"term {tid}.flags[1] must be a non-empty string") in msgs, msgs
    assert any(f == "content/memory/timeline.yaml" and m.endswith(".text: unknown language 'fr'") for f, m in msgs), msgs


def test_lint_requires_every_scenario_in_browse(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    path = root / "content/browse/scenarios.yaml"
    text = path.read_text(encoding="utf-8")
    start, end = text.index("\n  lora:"), text.index("\n  speculative-decoding:")
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    msgs = [p.message for p in lint(root) if p.severity == "error"]
    assert any("'lora' has no entry" in m for m in msgs), msgs


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, cwd=REPO)


def test_cli_browse_and_tour_print_lists_when_not_on_a_terminal() -> None:
    out = _cli("browse", "--lang", "en", "Workspace is locked but allocation from 'x' requires 2.00 MB, current size is 1.00 MB.")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("1 of ") and "log diagnosis" in out.stdout
    assert "workspace-locked" in out.stdout and "vllm/v1/worker/workspace.py" in out.stdout
    none = _cli("browse", "--plain", "zzzz-nothing")
    assert none.returncode != 0 and "Nothing matches." in none.stdout
    zh = _cli("tour", "--lang", "zh")
    assert zh.returncode == 0 and "第 1 步" in zh.stdout
    glossary = _cli("browse", "--glossary", "--lang", "en", "expandable")
    assert "Expandable segments" in glossary.stdout and "PYTORCH_CUDA_ALLOC_CONF" in glossary.stdout
