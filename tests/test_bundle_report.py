"""``oomwizard report``: one file with facts, path, diagnosis, fix and machine, in three formats."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from schemas import validate_output

from oomwizard.bundle.blocks import Code, fence_for, to_markdown
from oomwizard.cli import main

ROOT = Path(__file__).resolve().parent.parent
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("b") / "bundle.json"
    assert main(["report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(out)]) == 0
    return json.loads(out.read_text())


def test_json_bundle_matches_its_schema_and_the_noninteractive_diagnosis(demo_json: dict, capsys) -> None:
    assert validate_output(demo_json) == "report"
    _, out, _ = run(capsys, "diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--format", "json")
    diag = json.loads(out)
    assert demo_json["summary"]["scenario"] == diag["matches"][0]["scenario"] == "sampler-warmup"
    assert [m["scenario"] for m in demo_json["diagnosis"]["matches"]] == [m["scenario"] for m in diag["matches"]]
    assert demo_json["leaf"]["id"] == diag["leaf"]["id"]
    def commands(leaf: dict) -> list[str]:
        return [v["command"] for f in leaf["fixes"] for v in f["variants"]]

    assert commands(demo_json["leaf"]) == commands(diag["leaf"])
    assert demo_json["path"] == diag["leaf"]["path"] and demo_json["walk"] == "non-interactive"
    # facts keep their sources, the machine report and the version are in
    assert demo_json["facts"]["vllm_version"]["source"].startswith("vllm-serve.log:")
    assert demo_json["machine"]["gpus"][0]["name"] == "NVIDIA H200" and demo_json["machine_source"] == "file"
    assert demo_json["version"] == demo_json["tool"]["version"] and demo_json["created_at"][:2] == "20"
    # the log lines the diagnosis was computed from, with their line numbers
    lines = demo_json["log"]["inputs"][0]["lines"]
    assert demo_json["log"]["complete"] and demo_json["log"]["replays_same"] and len(lines) > 20
    oom = [lg for lg in lines if "torch.OutOfMemoryError" in lg["pieces"][0][1]]
    assert oom and oom[0]["pieces"][0][0] == 43


def test_markdown_renders_on_github_and_holds_the_same(capsys) -> None:
    code, md, _ = run(capsys, "report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE))
    assert code == 0 and md.startswith("# oomwizard support bundle\n")
    assert md.index("## Summary") < md.index("## Fix:") < md.index("## Diagnosis") < md.index("## Answers")
    assert md.count("<details>") == md.count("</details>") >= 3
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert any(t.info == "sh" and t.content.startswith("vllm serve meta-llama/Llama-3.3-70B-Instruct") for t in fences)
    assert any("torch.OutOfMemoryError" in t.content and t.content.startswith("vllm-serve.log:43") for t in fences)
    assert any(t.type == "table_open" for t in tokens)
    assert "NVIDIA H200" in md  # the machine report


def test_a_fence_is_longer_than_any_backtick_run_inside() -> None:
    text = "a ``` b ```` c"
    assert fence_for(text) == "`````" and fence_for("plain") == "```"
    md = to_markdown([Code(text + "\n# not a heading")])
    tokens = MarkdownIt("commonmark").parse(md)
    assert [t.type for t in tokens] == ["fence"] and tokens[0].content == text + "\n# not a heading\n"


def test_a_log_line_cannot_break_out_of_the_markdown_or_html(tmp_path: Path, capsys) -> None:
    log = tmp_path / "v.log"
    text = DEMO_LOG.read_text().replace(
        "torch.OutOfMemoryError:", "```\n</details><script>alert(1)</script> torch.OutOfMemoryError:", 1)
    log.write_text(text)
    _, md, _ = run(capsys, "report", "--log", str(log), "--machine", str(DEMO_MACHINE))
    html_out = tmp_path / "b.html"
    assert main(["report", "--log", str(log), "--machine", str(DEMO_MACHINE), "--output", str(html_out)]) == 0
    html = html_out.read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert html.startswith("<!DOCTYPE html>") and html.count("<details>") == html.count("</details>")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    # raw HTML in the Markdown is only the bundle's own <details>/<summary>; the planted text is code
    blocks = [t.content for t in tokens if t.type in ("html_block", "html_inline")]
    assert blocks and all(b.startswith(("<details>", "</details>")) and "script" not in b for b in blocks)
    assert any("</details><script>" in t.content for t in tokens if t.type == "fence")


def test_output_file_is_private_and_its_extension_picks_the_format(tmp_path: Path, capsys) -> None:
    out = tmp_path / "b.json"
    code, stdout, err = run(capsys, "report", "--machine", str(DEMO_MACHINE), "--output", str(out))
    assert code == 0 and stdout == "" and str(out) in err
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    doc = json.loads(out.read_text())
    validate_output(doc)
    assert doc["diagnosis"] is None and doc["leaf"] is None and doc["log"]["inputs"] == []


def test_an_unreadable_log_is_exit_4(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "report", "--log", str(tmp_path / "missing.log"), "--machine", str(DEMO_MACHINE))
    assert code == 4 and "missing.log" in err


def test_chinese(capsys) -> None:
    code, md, _ = run(capsys, "report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--lang", "zh")
    assert code == 0 and md.startswith("# oomwizard 支持包") and "## 摘要" in md
