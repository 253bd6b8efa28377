"""``oomwizard export``: JSON shape, a Markdown folder, and an offline HTML site whose links all work."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from oomwizard.kb.loader import load_kb
from oomwizard.kb.model import KnowledgeBase
from oomwizard.report.export import describe, export
from oomwizard.report.leaf import leaf_json

BASE = Path(__file__).parent / "kb_broken" / "base"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    kb, problems = load_kb(BASE)
    assert not problems
    return kb


@pytest.fixture(scope="module")
def site(kb: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert export(kb, "html", out, None) == 0
    return out


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.refs.append((tag, name, value))


def parse(page: Path) -> Links:
    p = Links()
    p.feed(page.read_text(encoding="utf-8"))
    return p


def test_json_has_every_scenario_question_and_leaf(kb: KnowledgeBase, tmp_path: Path) -> None:
    out = tmp_path / "kb.json"
    assert export(kb, "json", out, None) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["start"] == "symptom"
    assert [s["id"] for s in data["scenarios"]] == ["alpha-oom", "beta-oom"]
    assert {q["id"] for q in data["questions"]} == {"symptom", "vllm_version", "gpu_arch"}
    assert data["leaves"] == [json.loads(json.dumps(leaf_json(leaf), ensure_ascii=False)) for leaf in kb.leaves.values()]
    for leaf in data["leaves"]:
        assert set(leaf) >= {"id", "scenarios", "title", "fixes", "checklist", "caveats", "sources", "evidence"}
        assert set(leaf["title"]) == {"en", "zh"}
        assert [f["number"] for f in leaf["fixes"]] == list(range(1, len(leaf["fixes"]) + 1)), leaf["id"]
        for f in leaf["fixes"]:
            assert set(f) >= {"id", "variants", "cost", "evidence"}
            assert f["variants"] and all(v["command"].strip() and v["applies_to"] for v in f["variants"])
        assert all(set(item) >= {"en", "zh"} for item in leaf["checklist"])
        assert all(isinstance(s, str) for s in leaf["sources"])
    gpu = next(q for q in data["questions"] if q["id"] == "gpu_arch")
    hopper = next(c for c in gpu["choices"] if c["id"] == "hopper")
    assert hopper["next"] == [{"if": 'vllm_version in ">=0.11,<0.20"', "goto": "alpha-hopper"}, {"if": None, "goto": "alpha-oom"}]
    alpha = next(s for s in data["scenarios"] if s["id"] == "alpha-oom")
    assert alpha["main_leaf"] == "alpha-oom" and set(alpha["leaves"]) == {"alpha-oom", "alpha-hopper"}


def test_json_goes_to_stdout_without_output(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    assert export(kb, "json", None, None) == 0
    assert json.loads(capsys.readouterr().out)["start"] == "symptom"


def test_every_relative_link_in_the_site_exists(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 1 + 2 * (1 + 3 + 3 + 1)  # root, then per language: index, 3 questions, 3 leaves, browse
    checked = 0
    for page in pages:
        links = parse(page)
        for tag, attr, ref in links.refs:
            if ref.startswith("https://") and tag == "a":
                continue  # sources: external pages, opened only by choice
            assert not re.match(r"^[a-z]+:|^/", ref), f"{page}: {tag} {attr}={ref!r} is not relative"
            target = (page.parent / ref.split("#")[0]).resolve()
            assert target.is_file(), f"{page}: broken link {ref!r}"
            checked += 1
        scripts = [ref for tag, attr, ref in links.refs if tag == "script"]
        assert all(Path(ref).name in ("onboard.js", "search-index.js") for ref in scripts), f"{page}: {scripts}"
        text = page.read_text(encoding="utf-8")
        assert text.count("<script") == len(scripts), f"{page}: a script without src (inline)"
    assert checked > 50


def test_site_is_offline_and_styled_by_one_css(site: Path) -> None:
    assert [p.name for p in site.rglob("*.css")] == ["style.css"]
    css = (site / "style.css").read_text(encoding="utf-8")
    assert "@import" not in css and "url(" not in css and "http" not in css
    for page in site.rglob("*.html"):
        links = parse(page)
        stylesheets = [ref for tag, _, ref in links.refs if tag == "link" and not ref.endswith("favicon.svg")]
        assert len(stylesheets) == 1 and stylesheets[0].endswith("style.css")


def test_both_languages_with_a_switch(site: Path) -> None:
    for lang, other, html_lang in (("en", "zh", "en"), ("zh", "en", "zh-CN")):
        page = site / lang / "leaves" / "alpha-oom.html"
        text = page.read_text(encoding="utf-8")
        assert f'<html lang="{html_lang}">' in text
        assert f'href="../../{other}/leaves/alpha-oom.html"' in text
    assert "降低并发序列数" in (site / "zh" / "leaves" / "alpha-oom.html").read_text(encoding="utf-8")
    assert "Lower the number of sequences" in (site / "en" / "leaves" / "alpha-oom.html").read_text(encoding="utf-8")


def test_question_pages_link_each_choice_with_readable_conditions(site: Path) -> None:
    text = (site / "en" / "questions" / "gpu_arch.html").read_text(encoding="utf-8")
    assert "if <span class=\"cond\">vLLM version ≥0.11, &lt;0.20</span> → <a href=\"../leaves/alpha-hopper.html\">" in text
    assert "otherwise → <a href=\"../leaves/alpha-oom.html\">" in text
    assert '<a href="../questions/vllm_version.html">' in text  # reached from
    start = (site / "en" / "questions" / "symptom.html").read_text(encoding="utf-8")
    assert '<strong>The beta message</strong> → <a href="../leaves/beta-oom.html">' in start
    assert "<strong>The alpha message</strong> — when <span class='cond'>Best-matching scenario is alpha-oom</span>" in start


def test_leaf_page_shows_commands_badges_and_unverified_marks(site: Path) -> None:
    text = (site / "en" / "leaves" / "alpha-hopper.html").read_text(encoding="utf-8")
    assert '<pre class="cmd"><code>' in text and "--gpu-memory-utilization" in text
    assert 'class="badge untested"' in text  # the fix and the leaf are untested
    assert 'class="badge probable"' not in text and 'class="badge confirmed"' in text
    assert 'class="badge cost-low"' in text
    article_links = (site / "en" / "leaves" / "alpha-oom.html").read_text(encoding="utf-8")
    assert '<a href="alpha-hopper.html">' in article_links and '<a href="../questions/gpu_arch.html">' in article_links


def test_everything_is_escaped(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    shutil.copytree(BASE, root)
    leaf = root / "decision_trees/leaves/beta-oom.yaml"
    leaf.write_text(
        leaf.read_text(encoding="utf-8").replace(
            "en: The beta path asks for more after the budget is fixed", "en: \"<script>alert(1)</script> & <b>bold</b>\""
        ),
        encoding="utf-8",
    )
    article = root / "content/en/leaves/beta-oom.md"
    article.write_text(article.read_text(encoding="utf-8") + "\n<img src=x onerror=alert(2)>\n", encoding="utf-8")
    kb, _ = load_kb(root)
    out = tmp_path / "site"
    assert export(kb, "html", out, "en") == 0
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert(1)" not in text and "<b>bold" not in text and "<img src=x" not in text, page
    leaf_page = (out / "en" / "leaves" / "beta-oom.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in leaf_page
    assert "&lt;img src=x onerror=alert(2)&gt;" in leaf_page
    index = (out / "en" / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)" in index


def test_one_language_has_no_switch(kb: KnowledgeBase, tmp_path: Path) -> None:
    assert export(kb, "html", tmp_path, "zh") == 0
    assert not (tmp_path / "en").exists()
    text = (tmp_path / "zh" / "leaves" / "beta-oom.html").read_text(encoding="utf-8")
    assert 'class="lang"' not in text


def test_markdown_folder(kb: KnowledgeBase, tmp_path: Path) -> None:
    assert export(kb, "markdown", tmp_path, None) == 0
    for lang in ("en", "zh"):
        assert (tmp_path / lang / "index.md").is_file()
        for leaf in kb.leaves:
            assert (tmp_path / lang / "leaves" / f"{leaf}.md").is_file()
        for q in kb.questions:
            assert (tmp_path / lang / "questions" / f"{q}.md").is_file()
    leaf = (tmp_path / "zh" / "leaves" / "alpha-oom.md").read_text(encoding="utf-8")
    assert leaf.startswith("# alpha 路径放不下") and "## 发生了什么" in leaf and "```bash" in leaf
    question = (tmp_path / "en" / "questions" / "gpu_arch.md").read_text(encoding="utf-8")
    assert "[The alpha path on Hopper](../leaves/alpha-hopper.md)" in question
    for page in tmp_path.rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if not target.startswith("http"):
                assert (page.parent / target.split("#")[0]).is_file(), f"{page}: broken link {target}"


def test_describe_conditions_in_words(kb: KnowledgeBase) -> None:
    from oomwizard.expr import Condition

    c = Condition.parse('gpu_arch in ["hopper", "ada"] and not known(quantization) or tp > 1')
    assert describe(c, "en") == "(GPU architecture is one of [hopper, ada] and not (Quantization is known)) or Tensor parallel size > 1"
    assert describe(Condition.parse("is_moe == false"), "zh") == "MoE 模型 为 否"
    assert describe(Condition.parse('vllm_version in ">=0.18,<0.29" and vllm_version != "0.20"'), "en") == "vLLM version ≥0.18, <0.29 and vLLM version is not 0.20"
    assert describe(Condition.parse('vllm_version in "==0.11.*"'), "zh") == "vLLM 版本 =0.11.*"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"OOMWIZARD_KB": str(BASE), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_cli_export(tmp_path: Path) -> None:
    missing = _cli("export", "--format", "html", cwd=tmp_path)
    assert missing.returncode == 2 and "--output" in missing.stderr
    done = _cli("export", "--format", "html", "--output", "site", "--lang", "en", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "en" / "index.html").is_file()
    a_file = tmp_path / "file"
    a_file.write_text("x")
    clash = _cli("export", "--format", "markdown", "--output", "file", cwd=tmp_path)
    assert clash.returncode == 2 and "not a folder" in clash.stderr


def test_chinese_lines_join_without_a_space() -> None:
    from oomwizard.report.html.site import markdown_html

    assert markdown_html("第一行的\n第二行，English\nwords") == "<p>第一行的第二行，English\nwords</p>\n"


def test_export_keeps_files_it_did_not_write(tmp_path: Path) -> None:
    """A folder holding other files, or an existing JSON file, is not overwritten without --force;
    a folder of an earlier export is replaced in place."""
    (tmp_path / "docs").mkdir()
    mine = tmp_path / "docs" / "index.html"
    mine.write_text("the operator's own page")
    refused = _cli("export", "--format", "html", "--output", "docs", cwd=tmp_path)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert mine.read_text() == "the operator's own page"
    forced = _cli("export", "--format", "html", "--output", "docs", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    again = _cli("export", "--format", "html", "--output", "docs", cwd=tmp_path)  # its own earlier export
    assert again.returncode == 0, again.stderr
    kept = tmp_path / "kb.json"
    kept.write_text("{}")
    assert _cli("export", "--format", "json", "--output", "kb.json", cwd=tmp_path).returncode == 1
    assert kept.read_text() == "{}"
    assert _cli("export", "--format", "json", "--output", "kb.json", "--force", cwd=tmp_path).returncode == 0
    assert kept.read_text().startswith("{\n")
