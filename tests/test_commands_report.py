"""A leaf as JSON, text and Markdown: the same content, commands never wrapped, this machine's values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oomwizard.engine import Answer, Done, walk
from oomwizard.facts.model import Fact, FactSet
from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase
from oomwizard.report.leaf import leaf_json, leaf_markdown, leaf_text

BASE = Path(__file__).parent / "kb_broken" / "base"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb(BASE)[0]


def test_json_without_facts_lists_every_variant(kb: KnowledgeBase) -> None:
    data = leaf_json(kb.leaves["alpha-oom"])
    assert [(f["number"], f["id"], [v["applies_to"] for v in f["variants"]], f["cost"], f["evidence"])
            for f in data["fixes"]] == [
        (1, "lower-max-num-seqs", [">=0.8"], "low", "verified"),
        (2, "enforce-eager", [">=0.20", ">=0.8,<0.20"], "high", "documented"),  # the newest release's first
    ]
    assert data["fixes"][0]["available"] is True and data["fixes"][0]["version"] is None and data["path"] is None
    assert data["sources"] == ["https://github.com/vllm-project/vllm/issues/12529", "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"]
    assert data["checklist"] == [{"number": 1, "en": "The new log has no out-of-memory error.", "zh": "新日志中不再出现显存不足的报错。", "auto": {"log_absent": "CUDA out of memory"}}]
    assert data["root_cause"]["status"] == "probable"


def test_json_with_facts_and_path(kb: KnowledgeBase) -> None:
    fs = FactSet.of([Fact("vllm_version", "0.21.0", "log line 3", kind="log"), Fact("max_num_seqs", 512, "log line 9", kind="log")])
    step = walk(kb, fs, {"symptom": Answer("alpha"), "vllm_version": Answer("0.21.0"), "gpu_arch": Answer("ampere")})
    assert isinstance(step, Done)
    data = leaf_json(step.leaf, step.facts, step.path)
    first = data["fixes"][0]
    assert first["available"] is True and first["version"] == "0.21.0"
    (variant,) = first["variants"]
    assert variant["missing"] == [] and "--max-num-seqs 256" in variant["command"]
    assert variant["values"][0]["name"] == "sampler_max_num_seqs" and variant["values"][0]["value"] == "256"
    # the variant for 0.21.0 only; the fix keeps its number whatever the version
    assert [(f["number"], [v["applies_to"] for v in f["variants"]]) for f in data["fixes"]] == [(1, [">=0.8"]), (2, [">=0.20"])]
    assert [p["question"] for p in data["path"]] == ["symptom", "vllm_version", "gpu_arch"]


def test_text_says_which_spelling_a_copy_gives_when_the_version_is_unknown(kb: KnowledgeBase) -> None:
    text = leaf_text(kb.leaves["alpha-oom"], None, width=100)
    fix = text.split(" 2. ")[1].split("\nVerify")[0]
    live, other = fix.index("Copy gives this spelling"), fix.index("for vLLM >=0.8,<0.20 instead")
    assert live < fix.index("[high cost · documented · vLLM >=0.20]") < other
    assert fix.index("[high cost · documented · vLLM >=0.8,<0.20]") > other
    known = leaf_text(kb.leaves["alpha-oom"], FactSet.of([Fact("vllm_version", "0.21.0", "log", kind="log")]))
    assert "Copy gives this spelling" not in known and "instead (a copy" not in known


def test_text_keeps_commands_whole_and_wraps_prose(kb: KnowledgeBase) -> None:
    fs = FactSet.of([Fact("serve_command", "vllm serve " + "org/" + "x" * 60 + " --max-num-seqs 512 --kv-cache-dtype fp8", "ps", kind="process")])
    text = leaf_text(kb.leaves["alpha-oom"], fs, width=60)
    command = next(line for line in text.splitlines() if "$ vllm serve org/" in line)
    assert re.search(r" --max-num-seqs \d+ --kv-cache-dtype fp8$", command) and len(command) > 60
    assert all(len(line) <= 60 for line in text.splitlines() if "$ " not in line and "http" not in line)
    zh = leaf_text(kb.leaves["alpha-oom"], None, lang="zh")
    assert zh.startswith("== alpha 路径放不下 ==") and "验证清单" in zh


def test_markdown_carries_the_article_and_sources(kb: KnowledgeBase) -> None:
    art = kb.article("leaves", "alpha-oom", "en")
    assert art is not None
    md = leaf_markdown(kb.leaves["alpha-oom"], lang="en", article=art.body)
    assert md.startswith("# The alpha path does not fit\n")
    assert "## What happens" in md and "```bash\nvllm serve <MODEL> --max-num-seqs" in md
    assert md.index("## What happens") < md.index("## Sources")
    assert "- <https://github.com/vllm-project/vllm/issues/12529> — An example report" in md


@pytest.mark.parametrize("version", [None, "0.4.1", "0.11.0"])
def test_every_leaf_fits_60_columns_but_commands_and_single_words(version: str | None) -> None:
    """Headings, tags and version notes wrap too, in both languages; only a command (kept whole
    to be copied) or one unit longer than a line (a URL, after its list mark) may run past."""
    from oomwizard.kb.loader import get_kb
    from oomwizard.text.cells import cell_len

    fs = FactSet.of([Fact("vllm_version", version, "log", kind="log")]) if version else None
    long = []
    for leaf in get_kb().leaves.values():
        for lang in ("en", "zh"):
            for line in leaf_text(leaf, fs, None, lang, width=60).splitlines():
                single = re.fullmatch(r"(?:[-*•]|\d{1,3}[.)])?\s*\S+", line.strip())
                if cell_len(line) > 60 and not line.lstrip().startswith("$ ") and not single:
                    long.append((leaf.id, lang, line))
    assert long == []


def test_the_shared_memory_fix_runs_the_change_not_only_a_check() -> None:
    """Run this is what fixes the failure: the container started again with the host's shared
    memory, then the check that it took; a script keeps the template commented until filled in."""
    from oomwizard.kb.loader import get_kb
    from oomwizard.report.runthis import run_this
    from oomwizard.report.script import leaf_script

    leaf = get_kb().leaves["host-memory"]
    top = run_this(leaf, None)
    assert top is not None and top.fix.fix.id == "shared-memory-for-containers"
    first, check = top.commands.splitlines()
    assert first.startswith("docker run --ipc=host ") and check.endswith("df -h /dev/shm")
    body = leaf_script(leaf, None, None, "en").split("fix_1() {")[1].split("\n}")[0]
    assert "    # docker run --ipc=host" in body and "fill in: <CONTAINER>" in body
