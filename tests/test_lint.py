"""``oomwizard lint`` finds each kind of mistake, at the right file and line.

Every case copies the small valid knowledge base in ``tests/kb_broken/base`` into a temporary
folder, makes one mistake a contributor could make, and checks that lint reports it where the
contributor has to look. The expected line is found by a marker in the broken file, so the cases
survive edits to the fixture.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from kbkit import shipped_lint
from schemas import validate_output

from oomwizard.kb.yamlsrc import Problem
from oomwizard.lint import lint

BASE = Path(__file__).parent / "kb_broken" / "base"
REPO = Path(__file__).resolve().parent.parent

TREE = "decision_trees/tree.yaml"
SCEN = "decision_trees/scenarios.yaml"
ALPHA = "decision_trees/leaves/alpha-oom.yaml"
HOPPER = "decision_trees/leaves/alpha-hopper.yaml"
BETA = "decision_trees/leaves/beta-oom.yaml"
EN_ALPHA = "content/en/leaves/alpha-oom.md"
ZH_ALPHA = "content/zh/leaves/alpha-oom.md"


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[tuple[str, str | None, str | None], ...]
    """(file, old, new): replace ``old`` (which must occur once) by ``new``; old None creates the
    file with ``new``; new None deletes the file."""
    file: str
    marker: str
    """Text on the line the problem must point at (first occurrence in the broken file)."""
    message: str
    severity: str = "error"


def make_kb(tmp_path: Path, edits: tuple[tuple[str, str | None, str | None], ...] = ()) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(BASE, root)
    for file, old, new in edits:
        path = root / file
        if old is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new or "", encoding="utf-8")
        elif new is None and old == "":
            path.unlink()
        else:
            text = path.read_text(encoding="utf-8")
            assert text.count(old) == 1, f"fixture drifted: {old!r} must occur once in {file}"
            path.write_text(text.replace(old, new or ""), encoding="utf-8")
    return root


def line_of(root: Path, file: str, marker: str) -> int:
    """First line containing ``marker``; ``^marker`` must start the line."""
    for n, line in enumerate((root / file).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(marker[1:]) if marker.startswith("^") else marker in line:
            return n
    raise AssertionError(f"marker {marker!r} not in {file}")


CASES = [
    # --- schema and references (the loader) ------------------------------------------------
    Case("yaml-syntax", ((BETA, "title:\n  en: The beta", "title:\n  en: The: beta"),), BETA, "en: The: beta", "YAML syntax"),
    Case("duplicate-key", ((BETA, "evidence: verified\nfixes:", "evidence: verified\nevidence: documented\nfixes:"),),
         BETA, "evidence: documented", "duplicate key 'evidence'"),
    Case("unknown-field", ((BETA, "evidence: verified\nfixes:", "evidence: verified\nsolution: none\nfixes:"),),
         BETA, "solution: none", "unknown field 'solution'"),
    Case("route-to-nowhere", ((TREE, "next: beta-oom", "next: beta-om"),), TREE, "next: beta-om", "goes to 'beta-om'"),
    Case("goto-not-an-id", ((TREE, "goto: alpha-hopper", "goto: [alpha-hopper]"),), TREE, "goto: [alpha-hopper]", "'goto' must be a node id"),
    Case("unknown-fact", ((TREE, "'diagnosis == \"alpha-oom\"'", "'diagnoses == \"alpha-oom\"'"),),
         TREE, "diagnoses ==", "unknown fact 'diagnoses'"),
    Case("bad-condition-syntax", ((TREE, "'diagnosis == \"beta-oom\"'", "'diagnosis = \"beta-oom\"'"),),
         TREE, "diagnosis = ", "bad condition"),
    Case("auto-answer-not-a-choice", ((TREE, "answer: beta", "answer: gamma"),), TREE, "diagnosis == \"beta-oom\"", "auto answer 'gamma' is not a choice"),
    Case("auto-answer-yaml-bool", ((TREE, "answer: beta", "answer: yes"),), TREE, "answer: yes", "'answer' must be a choice id"),
    Case("unknown-scenario-in-leaf", ((BETA, "scenarios: [beta-oom]", "scenarios: [beta-oom, gamma-oom]"),),
         BETA, "id: beta-oom", "unknown scenario id 'gamma-oom'"),
    Case("bad-regex-check", ((BETA, "log_absent: 'AssertionError'", "log_absent: 'Assertion(Error'"),),
         BETA, "log_absent:", "bad regular expression"),
    Case("anchored-check", ((BETA, "log_absent: 'AssertionError'", "log_absent: '^AssertionError'"),),
         BETA, "log_absent:", "'^' cannot be used: lines carry process and logger prefixes"),
    Case("look-around-check", ((BETA, "log_absent: 'AssertionError'", "log_absent: 'Assertion(?!Ok)Error'"),),
         BETA, "log_absent:", "look-arounds cannot be used"),
    Case("missing-translation", ((BETA, "  zh: 解码变慢。\n    evidence: verified", "  zh: ''\n    evidence: verified"),),
         BETA, "zh: ''", "missing 'zh' translation"),
    # --- the tree ---------------------------------------------------------------------------
    Case("cycle", ((TREE, "          zh: Ampere（A100）\n        next: alpha-oom", "          zh: Ampere（A100）\n        next: symptom"),),
         TREE, "next: symptom", "cycle in the tree: symptom -> vllm_version -> gpu_arch -> symptom"),
    Case("unreachable-leaf", ((TREE, "next: beta-oom", "next: vllm_version"),), BETA, "id: beta-oom", "leaf beta-oom is unreachable"),
    Case("unreachable-scenario", ((TREE, "next: beta-oom", "next: vllm_version"),), SCEN, "  beta-oom:",
         "scenario beta-oom: no leaf that lists it is reachable"),
    Case("unreachable-question",
         ((TREE, "\n  vllm_version:", "\n  lost:\n    fact: symptom\n    text:\n      en: Lost here\n      zh: 迷路了\n    unknown: unknown\n"
           "    choices:\n      unknown:\n        label:\n          en: Not sure\n          zh: 不确定\n        next: beta-oom\n\n  vllm_version:"),),
         TREE, "  lost:", "question lost is unreachable"),
    Case("no-unknown-choice", ((TREE, "      zh: GPU 是什么架构？\n    unknown: unknown\n", "      zh: GPU 是什么架构？\n"),),
         TREE, "  gpu_arch:", "question gpu_arch: no 'unknown' choice"),
    Case("dead-end-no-choices", ((TREE, "      zh: 故障表现是什么？\n", "      zh: 故障表现是什么？\n    choices: {}\n  old:\n"),),
         TREE, "  symptom:", "no choices, so every walk that reaches it is a dead end"),
    Case("route-never-taken",
         ((TREE, "          - if: 'vllm_version in \">=0.11,<0.20\"'",
           "          - goto: alpha-oom\n          - if: 'vllm_version in \">=0.11,<0.20\"'"),),
         TREE, "- if: 'vllm_version in", "route to 'alpha-hopper' is never taken", "warning"),
    Case("enum-value-typo", ((TREE, "'diagnosis == \"beta-oom\"'", "'gpu_arch == \"hoper\"'"),),
         TREE, "hoper", "'hoper' is not a value of 'gpu_arch'"),
    Case("enum-choice-typo", ((TREE, "      ampere:\n", "      amper:\n"),), TREE, "      amper:", "choice 'amper' is not a value of fact 'gpu_arch'"),
    Case("diagnosis-typo", ((TREE, "'diagnosis == \"beta-oom\"'", "'diagnosis == \"beta-om\"'"),), TREE, "beta-om", "'beta-om' is not one of the scenario ids"),
    Case("bool-compared-with-string", ((TREE, "'diagnosis == \"beta-oom\"'", "'is_moe == \"yes\"'"),),
         TREE, "is_moe", "compare it with true or false"),
    Case("bool-question-choices", ((TREE, "      zh: GPU 是什么架构？\n", "      zh: GPU 是什么架构？\n    fact: expandable_segments\n"),),
         TREE, "      hopper:", "'expandable_segments' is yes/no, so choice 'hopper'"),
    Case("empty-version-range", ((TREE, "'vllm_version in \">=0.11,<0.20\"'", "'vllm_version in \">=0.20,<0.11\"'"),),
         TREE, "- if: 'vllm_version in", "is empty"),
    Case("malformed-version-range", ((TREE, "'vllm_version in \">=0.11,<0.20\"'", "'vllm_version in \">=0.11,<<0.20\"'"),),
         TREE, "- if: 'vllm_version in", "not a version range"),
    Case("version-as-number", ((TREE, "'vllm_version in \">=0.11,<0.20\"'", "'vllm_version >= 0.10'"),),
         TREE, "vllm_version >= 0.10", "quote versions"),
    Case("version-question-auto-answer",
         ((TREE, "      zh: 出问题的 vLLM 版本是多少？\n", "      zh: 出问题的 vLLM 版本是多少？\n    auto:\n      - if: 'known(gpu_arch)'\n        answer: latest\n"),),
         TREE, "- if: 'known(gpu_arch)'", "auto answer 'latest' is not a version"),
    # --- scenarios --------------------------------------------------------------------------
    Case("scenario-without-main-leaf",
         ((SCEN, "scenarios:\n", "scenarios:\n  gamma-oom:\n    title: {en: Gamma fails, zh: Gamma 失败}\n    summary: {en: Gamma, zh: Gamma}\n"),),
         SCEN, "  gamma-oom:", "scenario gamma-oom: no main leaf"),
    Case("main-leaf-does-not-list-scenario", ((ALPHA, "scenarios: [alpha-oom]", "scenarios: [beta-oom]"),),
         ALPHA, "scenarios: [beta-oom]", "the main leaf of scenario alpha-oom must list it"),
    # --- leaves -----------------------------------------------------------------------------
    Case("no-checklist", ((BETA, "checks:\n  - text:\n      en: No assertion in the new log.\n      zh: 新日志中没有断言错误。\n    log_absent: 'AssertionError'\n",
                           "checks: []\n"),), BETA, "checks: []", "needs a checklist"),
    Case("no-fixes", ((HOPPER, "fixes:\n  - id: lower-utilization", "fixes: []\nold_fixes:\n  - id: lower-utilization"),),
         HOPPER, "fixes: []", "needs at least one fix"),
    Case("fixes-not-cheapest-first", ((ALPHA, "cost: low", "cost: upgrade"),), ALPHA, "cost: high", "list fixes cheapest first"),
    Case("bad-cost", ((ALPHA, "cost: low", "cost: cheap"),), ALPHA, "cost: cheap", "'cheap' is not one of none, low"),
    Case("bad-evidence-level", ((HOPPER, "evidence: untested\nfixes:", "evidence: tested\nfixes:"),), HOPPER, "evidence: tested", "'tested' is not one of"),
    Case("verified-fix-without-source", ((BETA, "sources: [fixtures/h200/oom_default.json]", "sources: [https://docs.vllm.ai/en/latest/]"),),
         BETA, "    evidence: verified", "'verified' needs an issue/PR URL or a fixtures/ reading in its sources"),
    Case("verified-leaf-without-source", ((BETA, "sources:\n  - fixtures/h200/oom_default.json", "sources:\n  - https://docs.vllm.ai/en/latest/"),),
         BETA, "evidence: verified", "'verified' needs an issue/PR URL or a fixtures/ reading among its sources"),
    Case("http-source", ((HOPPER, "https://github.com/vllm-project/vllm/pull/23456", "http://github.com/vllm-project/vllm/pull/23456"),),
         HOPPER, "http://github.com", "not a well-formed https URL"),
    Case("github-source-not-issue", ((HOPPER, "https://github.com/vllm-project/vllm/pull/23456", "https://github.com/vllm-project/vllm/pulls"),),
         HOPPER, "vllm/pulls", "must be github.com/<org>/<repo>/issues/N or /pull/N"),
    Case("duplicate-source", ((ALPHA, "  - https://docs.vllm.ai/en/latest/configuration/conserving_memory/", "  - https://github.com/vllm-project/vllm/issues/12529"),),
         ALPHA, "^  - https://github.com/vllm-project/vllm/issues/12529", "listed twice"),
    Case("untranslated-text", ((SCEN, "zh: Alpha 显存不足", "zh: Alpha runs out of memory"),), SCEN, "zh: Alpha runs out", "untranslated", "warning"),
    Case("chinese-folded-with-a-space", ((BETA, "conclusion:\n  en: Run in eager mode so the budget is never fixed early.\n  zh: 使用 eager 模式，预算就不会被提前固定。",
                                          "conclusion:\n  en: Run in eager mode so the budget is never fixed early.\n  zh: >-\n    使用 eager 模式，预算就\n    不会被提前固定。"),),
         BETA, "    不会被提前固定。", "YAML joins them with a space", "warning"),
    Case("leaf-range-without-release", ((HOPPER, 'versions: ">=0.11,<0.20"\ntitle', 'versions: "<0.5"\ntitle'),),
         HOPPER, 'versions: "<0.5"', "cover no known vLLM release"),
    Case("code-fix-without-reference", ((BETA, "sources: [fixtures/h200/oom_default.json]", "sources: [https://docs.vllm.ai/en/latest/]"),
                                        (BETA, "    evidence: verified", "    evidence: code")),
         BETA, "    evidence: code", "'code' needs a file@version reference"),
    Case("code-leaf-without-reference", ((BETA, "evidence: verified\nfixes:", "evidence: code\nfixes:"),),
         BETA, "evidence: code", "'code' needs a file@version reference (vllm/<path>.py@X.Y.Z) among its sources"),
    Case("code-reference-unknown-release", ((BETA, "sources:\n  - fixtures/h200/oom_default.json",
                                            "sources:\n  - fixtures/h200/oom_default.json\n  - vllm/v1/worker/gpu_worker.py@0.8.7"),),
         BETA, "gpu_worker.py@0.8.7", "vLLM 0.8.7 is not a known release"),
    Case("code-reference-malformed", ((BETA, "sources:\n  - fixtures/h200/oom_default.json",
                                      "sources:\n  - fixtures/h200/oom_default.json\n  - gpu_worker@v0.11"),),
         BETA, "gpu_worker@v0.11", "is not a file@version reference"),
    Case("internal-document-in-leaf", ((BETA, "en: The budget is fixed when graph capture ends.",
                                        "en: The budget is fixed when graph capture ends, as seed 004 says."),),
         BETA, "as seed 004 says", "refers to an internal document"),
    Case("internal-document-in-article", ((ZH_ALPHA, "## 步骤\n", "## 步骤\n\nseed 中的说法不对。\n"),),
         ZH_ALPHA, "seed 中的说法", "refers to an internal document"),
    # --- commands against the releases --------------------------------------------------------
    Case("flag-missing-in-part-of-range", ((ALPHA, "--kv-cache-dtype: fp8", "--kv-cache-memory-bytes: 2G"),),
         ALPHA, "--kv-cache-memory-bytes: 2G", "--kv-cache-memory-bytes does not exist in vLLM 0.8.0-0.10.1"),
    Case("flag-underscore", ((ALPHA, "--max-num-seqs:", "--max_num_seqs:"),), ALPHA, "--max_num_seqs:", "write the dashed form --max-num-seqs"),
    Case("flag-prefix-only", ((ALPHA, "--kv-cache-dtype: fp8", "--kv-cache-memory: 2G"),), ALPHA, "--kv-cache-memory: 2G",
         "works only as an abbreviation of --kv-cache-memory-bytes", "warning"),
    Case("flag-unknown-everywhere", ((ALPHA, "--max-num-seqs:", "--max-num-seq:"),), ALPHA, "--max-num-seq:", "no release 0.6.6-0.33.0 has it"),
    Case("removed-flag", ((ALPHA, "--kv-cache-dtype: fp8", "--swap-space: 8"),), ALPHA, "--swap-space: 8",
         "--swap-space does not exist in vLLM 0.18.0-0.19.0"),
    Case("remove-flag-missing", ((BETA, "        flags:\n          --enforce-eager: true\nchecks",
                                 "        flags:\n          --enforce-eager: true\n        remove_flags: [--speculative-model]\nchecks"),),
         BETA, "remove_flags: [--speculative-model]", "--speculative-model does not exist in vLLM 0.13.0-0.33.0"),
    Case("flag-value-kv-dtype", ((ALPHA, "--kv-cache-dtype: fp8", "--kv-cache-dtype: turboquant_4bit"),), ALPHA, "turboquant_4bit",
         "--kv-cache-dtype 'turboquant_4bit' is not a choice"),
    Case("flag-value-json", ((ALPHA, "true\n        shell:\n", "true\n          --speculative-config: '{\"method\": mtp}'\n        shell:\n"),),
         ALPHA, "--speculative-config", "--speculative-config value is not valid JSON"),
    Case("flag-value-limit-mm", ((ALPHA, "true\n        shell:\n", "true\n          --limit-mm-per-prompt: image=4\n        shell:\n"),),
         ALPHA, "--limit-mm-per-prompt", "the key=value form is rejected from 0.10.0"),
    Case("dotted-flag-too-early", ((ALPHA, "--kv-cache-dtype: fp8", "--compilation-config.cudagraph_mode: PIECEWISE"),),
         ALPHA, "--compilation-config.cudagraph_mode", "the dotted form is parsed only from vLLM 0.9.0"),
    Case("env-never-existed", ((ALPHA, "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_ALLOW_WORKSPACE_GROWTH"),), ALPHA, "VLLM_ALLOW_WORKSPACE_GROWTH",
         "VLLM_ALLOW_WORKSPACE_GROWTH: it exists in no vLLM release"),
    Case("env-missing-in-part-of-range", ((ALPHA, "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_USE_V1"),), ALPHA, "VLLM_USE_V1",
         "VLLM_USE_V1 does not exist in vLLM 0.11.1-0.19.0"),
    Case("unset-env-missing", ((BETA, "          --enforce-eager: true\nchecks", "          --enforce-eager: true\n        unset_env: [VLLM_USE_V1]\nchecks"),),
         BETA, "unset_env: [VLLM_USE_V1]", "unset VLLM_USE_V1: vLLM 0.13.0-0.33.0 does not read it", "warning"),
    Case("shell-serve-flag", ((ALPHA, '"nvidia-smi --query-gpu=memory.used --format=csv"', '"vllm serve my-model --swap-space 8 && echo done"'),),
         ALPHA, "vllm serve my-model", "--swap-space does not exist in vLLM 0.20.0-0.33.0"),
    Case("shell-env", ((ALPHA, '"nvidia-smi --query-gpu=memory.used --format=csv"', '"VLLM_ALLOW_WORKSPACE_GROWTH=1 vllm serve my-model"'),),
         ALPHA, "VLLM_ALLOW_WORKSPACE_GROWTH=1", "exists in no vLLM release"),
    Case("variant-range-without-release", ((ALPHA, 'versions: ">=0.20"', 'versions: ">=0.40"'),), ALPHA, 'versions: ">=0.40"', "cover no known vLLM release"),
    Case("variant-range-empty", ((ALPHA, 'versions: ">=0.20"', 'versions: ">=0.20,<0.19"'),), ALPHA, 'versions: ">=0.20,<0.19"', "is empty"),
    Case("variants-overlap", ((ALPHA, 'versions: ">=0.20"', 'versions: ">=0.19"'),), ALPHA, 'versions: ">=0.19"', "overlaps variant 1 on vLLM 0.19.0", "warning"),
    Case("unknown-placeholder", ((ALPHA, "{sampler_max_num_seqs}", "{sampler_max_seqs}"),), ALPHA, "{sampler_max_seqs}", "placeholder {sampler_max_seqs}"),
    # --- articles ---------------------------------------------------------------------------
    Case("missing-article", (("content/zh/leaves/beta-oom.md", "", None),), BETA, "id: beta-oom", "no article content/zh/leaves/beta-oom.md"),
    Case("missing-question-article", (("content/en/questions/gpu_arch.md", "", None),
                                      (ZH_ALPHA, "以及[为什么询问架构](../questions/gpu_arch.md)", "以及为什么询问架构"),
                                      (EN_ALPHA, "and [why we ask for the architecture](../questions/gpu_arch.md)", "and why we ask for the architecture")),
         TREE, "  gpu_arch:", "no article content/en/questions/gpu_arch.md"),
    Case("orphan-article", (("content/en/leaves/gamma.md", None, "---\ntitle: Gamma\n---\n\nNothing.\n"),),
         "content/en/leaves/gamma.md", "^---", "orphan article"),
    Case("heading-count", ((ZH_ALPHA, "## 步骤\n", "步骤\n"),), ZH_ALPHA, "## 发生了什么", "1 '##' headings, but content/en/leaves/alpha-oom.md has 2"),
    Case("code-block-differs", ((ZH_ALPHA, "--max-num-seqs 128", "--max-num-seqs 64"),), ZH_ALPHA, "```bash", "code block 1 differs"),
    Case("url-missing-in-zh", ((ZH_ALPHA, "并先阅读 https://docs.vllm.ai/en/latest/configuration/conserving_memory/。", "并先阅读文档。"),),
         EN_ALPHA, "read https://docs.vllm.ai", "URL https://docs.vllm.ai/en/latest/configuration/conserving_memory/ is not in content/zh"),
    Case("flag-name-missing-in-zh", (("content/zh/leaves/alpha-hopper.md", "请降低 `--gpu-memory-utilization`", "请降低显存比例"),),
         "content/en/leaves/alpha-hopper.md", "--gpu-memory-utilization", "name --gpu-memory-utilization is not in content/zh"),
    Case("broken-article-link", ((EN_ALPHA, "(alpha-hopper.md)", "(alpha-hoper.md)"),), EN_ALPHA, "alpha-hoper.md", "link 'alpha-hoper.md' does not lead to an article"),
    Case("env-never-existed-in-article", ((EN_ALPHA, "vllm serve my-model --max", "VLLM_ALLOW_WORKSPACE_GROWTH=1 vllm serve my-model --max"),
                                          (ZH_ALPHA, "vllm serve my-model --max", "VLLM_ALLOW_WORKSPACE_GROWTH=1 vllm serve my-model --max")),
         EN_ALPHA, "VLLM_ALLOW_WORKSPACE_GROWTH=1", "exists in no vLLM release"),
    Case("article-flag-in-no-release", ((EN_ALPHA, "vllm serve my-model --max-num-seqs 128", "vllm serve my-model \\\n  --max-num-seq 128"),
                                        (ZH_ALPHA, "vllm serve my-model --max-num-seqs 128", "vllm serve my-model \\\n  --max-num-seq 128")),
         EN_ALPHA, "vllm serve my-model", "--max-num-seq is a flag of no vLLM release", "warning"),
    Case("untranslated-article-title", (("content/zh/leaves/beta-oom.md", "title: beta 路径在预算确定后申请了更多显存",
                                         "title: The beta path asks for more after the budget is fixed"),),
         "content/zh/leaves/beta-oom.md", "title:", "untranslated", "warning"),
]


def _find(problems: list[Problem], case: Case, line: int) -> list[Problem]:
    return [p for p in problems if p.file == case.file and p.line == line and case.message in p.message and p.severity == case.severity]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_lint_reports_mistake_at_file_and_line(tmp_path: Path, case: Case) -> None:
    root = make_kb(tmp_path, case.edits)
    problems = lint(root)
    line = line_of(root, case.file, case.marker)
    assert _find(problems, case, line), f"expected {case.severity} at {case.file}:{line} containing {case.message!r}; got:\n" + "\n".join(
        map(str, problems)
    )


def test_fixture_knowledge_base_is_clean() -> None:
    assert lint(BASE) == []


def test_code_level_accepts_a_reference_to_a_known_release(tmp_path: Path) -> None:
    root = make_kb(tmp_path, ((BETA, "evidence: verified\nfixes:", "evidence: code\nfixes:"),
                              (BETA, "sources:\n  - fixtures/h200/oom_default.json",
                               "sources:\n  - fixtures/h200/oom_default.json\n  - vllm/v1/worker/gpu_worker.py@0.11.0\n"
                               "  - torch/include/c10/cuda/CUDAAllocatorConfig.h@2.9.1")))
    assert [p for p in lint(root) if p.file == BETA] == []


def test_a_sampling_seed_is_not_an_internal_document() -> None:
    from oomwizard.lint.internal import internal_references

    fine = "requests with their own seed bypass it\n带自身 seed 的请求会绕过它\nthe seed parameter of a request"
    assert internal_references(fine) == []
    assert [line for line, _ in internal_references("ok\nas some guides (and seed 004) say\nthe seed's value of 4")] == [2, 3]


def test_problems_are_sorted_by_file_and_line(tmp_path: Path) -> None:
    root = make_kb(tmp_path, ((ALPHA, "cost: low", "cost: cheap"), (TREE, "next: beta-oom", "next: beta-om"), (BETA, "log_absent: 'AssertionError'", "log_absent: '('")))
    problems = lint(root)
    keys = [(p.file, p.line or 0) for p in problems]
    assert len(problems) >= 3
    assert keys == sorted(keys)


def test_lint_keeps_going_after_errors(tmp_path: Path) -> None:
    root = make_kb(tmp_path, ((ALPHA, "cost: low", "cost: cheap"), (HOPPER, "https://github.com/vllm-project/vllm/pull/23456", "http://x"),
                              (ZH_ALPHA, "--max-num-seqs 128", "--max-num-seqs 64")))
    files = {p.file for p in lint(root) if p.severity == "error"}
    assert {ALPHA, HOPPER, ZH_ALPHA} <= files


def _cli(*args: str, kb: Path) -> subprocess.CompletedProcess[str]:
    env = {"OOMWIZARD_KB": str(kb), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_lint_json_and_exit_codes(tmp_path: Path) -> None:
    clean = _cli("lint", "--format", "json", kb=BASE)
    assert clean.returncode == 0, clean.stderr
    doc = json.loads(clean.stdout)
    assert validate_output(doc) == "lint"
    assert {k: doc[k] for k in ("ok", "problems")} == {"ok": True, "problems": []}

    broken = make_kb(tmp_path, ((ALPHA, "--max-num-seqs:", "--max_num_seqs:"),))
    out = _cli("lint", "--format", "json", kb=broken)
    assert out.returncode == 5
    data = json.loads(out.stdout)
    assert validate_output(data) == "lint" and data["ok"] is False
    [p] = [p for p in data["problems"] if "dashed form" in p["message"]]
    assert p["file"] == ALPHA and p["line"] == line_of(broken, ALPHA, "--max_num_seqs:") and p["severity"] == "error"

    text = _cli("lint", kb=broken)
    assert text.returncode == 5
    assert f"{ALPHA}:{p['line']}: error: " in text.stdout
    assert "error(s)" in text.stderr


def test_warnings_alone_do_not_fail(tmp_path: Path) -> None:
    root = make_kb(tmp_path, ((SCEN, "zh: Alpha 显存不足", "zh: Alpha runs out of memory"),))
    out = _cli("lint", kb=root)
    assert out.returncode == 0, out.stdout
    assert "warning" in out.stdout


def test_real_knowledge_base_lints_clean() -> None:
    """The gate: the knowledge base that ships has no lint errors."""
    errors = [p for p in shipped_lint() if p.severity == "error"]
    assert not errors, f"{len(errors)} lint error(s):\n" + "\n".join(map(str, errors[:40]))


@pytest.mark.parametrize(
    ("file", "text"),
    [
        (TREE, ""),
        (TREE, "- just\n- a list\n"),
        (TREE, "start: symptom\nquestions:\n  symptom: a string\n"),
        (SCEN, "scenarios: []\n"),
        (BETA, "[1, 2]\n"),
        (BETA, "id: beta-oom\nfixes:\n  - 3\n  - {id: x, variants: [{versions: 7}]}\n"),
        (ALPHA, "id: alpha-oom\nscenarios: [alpha-oom]\nfixes: {a: 1}\nsources: [{url: 5}]\nchecks: [text]\n"),
        (EN_ALPHA, "\x00\x01 not markdown ```\n"),
    ],
)
def test_lint_survives_nonsense(tmp_path: Path, file: str, text: str) -> None:
    root = make_kb(tmp_path)
    (root / file).write_text(text, encoding="utf-8")
    problems = lint(root)
    assert any(p.severity == "error" for p in problems)
    assert all(isinstance(p.file, str) and p.file for p in problems)


def test_folded_chinese_breaks_only_where_yaml_adds_a_space() -> None:
    from oomwizard.lint.leaves import folded_cjk_breaks

    text = (
        "a:\n  zh: >-\n    第一行，\n    第二行\n"  # folded: flagged at line 4
        "b:\n  zh: |\n    保留换行\n    没问题\n"  # literal: kept as a newline
        "c:\n  zh: >-\n    以英文结尾 vLLM\n    下一行\n"  # ends in ASCII: the space is right
        "d:\n  - 列表\n  - 项目\n"  # separate items
    )
    assert folded_cjk_breaks(text) == [4]
