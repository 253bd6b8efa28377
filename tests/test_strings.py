"""The string catalogues: lint finds each kind of problem at its line; the program's own pass; no Chinese in code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from oomwizard.cli import build_parser, main
from oomwizard.cli_lang import argv_lang
from oomwizard.i18n import Msg, Text, both, compiled_path, msg, strings, ui
from oomwizard.lint.strings import (
    INLINE_CJK_ALLOWED,
    PACKAGE,
    catalogue_problems,
    compiled_text,
    read_catalogue,
    scan_code,
)

ROOT = Path(__file__).resolve().parent.parent


def _catalogue(tmp: Path, en: str, zh: str, code: dict[str, str]) -> tuple[Path, Path]:
    """A content/ folder with two catalogues and a package with ``code``, compiled as gen_strings does."""
    content, pkg = tmp / "content", tmp / "pkg"
    for lang, text in (("en", en), ("zh", zh)):
        (content / lang).mkdir(parents=True)
        (content / lang / "strings.yaml").write_text(text, encoding="utf-8")
        (pkg / "data" / "strings").mkdir(parents=True, exist_ok=True)
        entries = read_catalogue(content / lang / "strings.yaml")
        (pkg / "data" / "strings" / f"{lang}.json").write_text(
            compiled_text({k: e.text for k, e in entries.items()}), encoding="utf-8")
    for name, text in code.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text, encoding="utf-8")
    return content, pkg


def _found(problems: list) -> set[tuple[str, int | None, str]]:
    return {(p.file, p.line, p.message) for p in problems}


def test_the_programs_catalogues_have_no_problem():
    assert [str(p) for p in catalogue_problems(ROOT / "content")] == []


def test_no_chinese_is_written_in_code_outside_the_allow_list():
    """A Chinese string in a .py file belongs in content/zh/strings.yaml (the allowed entries say why
    they are not UI text)."""
    assert scan_code().cjk == []
    assert "logs/" not in INLINE_CJK_ALLOWED and "advice/calcs/" not in INLINE_CJK_ALLOWED


def test_chinese_written_back_into_the_calculations_is_found(tmp_path):
    """advice/calcs/ speaks through the catalogue: an inline Chinese explanation there is a lint error."""
    content, pkg = _catalogue(tmp_path, "a.b: 'x'\n", "a.b: '甲'\n", {
        "mod.py": 'X = ui("a.b", "en")\n',
        "advice/calcs/kv.py": 'from x import Text\n\nWHY = Text("fits", "放得下")\n',
    })
    assert _found(catalogue_problems(content, pkg)) == {
        ("pkg/advice/calcs/kv.py", 3, "Chinese text in code: give it a key in content/{en,zh}/strings.yaml"),
    }


def test_new_inline_chinese_is_found_with_its_line(tmp_path):
    content, pkg = _catalogue(tmp_path, "a.b: 'x'\n", "a.b: '甲'\n", {
        "mod.py": 'X = ui("a.b", "en")\n\nY = "新的中文"\n',
        "plain_prompts.py": 'YES = ("是",)\n',  # allowed: an answer the prompt accepts
        "logs/rank.py": 'W = "日志原因"\n',  # no longer allowed
        "esc.py": 'R = "[\\u4e00-\\u9fff]"\n',  # an escaped range is not text
    })
    found = _found(catalogue_problems(content, pkg))
    assert found == {("pkg/mod.py", 3, "Chinese text in code: give it a key in content/{en,zh}/strings.yaml"),
                     ("pkg/logs/rank.py", 1, "Chinese text in code: give it a key in content/{en,zh}/strings.yaml")}


def test_missing_unused_unknown_and_placeholder_problems_at_their_lines(tmp_path):
    en = "a.used: 'hello {name}'\na.only_en: 'x'\na.unused: 'y'\na.fmt: '{n} files'\n"
    zh = "a.used: '你好 {name}'\na.unused: '乙'\na.fmt: '{count} 个文件'\na.only_zh: '丙'\n"
    code = 'from x import msg, ui\nA = ui("a.used", "en", name=1)\nB = msg("a.fmt")\nC = msg("a.only_en")\n' \
           'D = ui("a.missing", "en")\nE = msg("a.only_zh")\n'
    content, pkg = _catalogue(tmp_path, en, zh, {"mod.py": code})
    found = _found(catalogue_problems(content, pkg, shown="content"))
    assert found == {
        ("content/en/strings.yaml", 2, "a.only_en: missing in content/zh/strings.yaml"),
        ("content/zh/strings.yaml", 4, "a.only_zh: missing in content/en/strings.yaml"),
        ("content/zh/strings.yaml", 3, "a.fmt: placeholders differ: en ['n'], zh ['count']"),
        ("content/en/strings.yaml", 3, "a.unused: no code uses this string"),
        ("pkg/mod.py", 5, "'a.missing' is not in content/en/strings.yaml"),
        ("pkg/mod.py", 6, "'a.only_zh' is not in content/en/strings.yaml"),
    }


def test_an_f_string_prefix_uses_its_keys_and_must_match_one(tmp_path):
    en = "cost.low: 'low'\ncost.high: 'high'\n"
    zh = "cost.low: '低'\ncost.high: '高'\n"
    code = 'A = ui(f"cost.{c}", "en")\nB = ui(f"nothing.{c}", "en")\n'
    content, pkg = _catalogue(tmp_path, en, zh, {"mod.py": code})
    assert _found(catalogue_problems(content, pkg)) == {
        ("pkg/mod.py", 2, "no key of content/en/strings.yaml starts with 'nothing.'"),
    }


def test_a_stale_compiled_catalogue_and_bad_braces_are_errors(tmp_path):
    content, pkg = _catalogue(tmp_path, "a.b: 'x {'\n", "a.b: '甲 {{'\n", {"mod.py": 'A = ui("a.b", "en")\n'})
    (content / "zh" / "strings.yaml").write_text("a.b: '乙 {{'\n", encoding="utf-8")
    found = _found(catalogue_problems(content, pkg))
    assert ("content/en/strings.yaml", 1, "a.b: unbalanced braces (write {{ for a brace)") in found
    assert ("content/zh/strings.yaml", 1, "oomwizard/data/strings/zh.json differs from this catalogue: "
            "run python scripts/gen_strings.py") in found
    assert not any(f == "content/en/strings.yaml" and "differs" in m for f, _, m in found)


def test_the_compiled_catalogues_equal_the_yaml():
    for lang in ("en", "zh"):
        data = yaml.safe_load((ROOT / "content" / lang / "strings.yaml").read_text(encoding="utf-8"))
        assert json.loads(compiled_path(lang).read_text(encoding="utf-8")) == data


def test_a_catalogue_string_reads_only_the_language_asked_for():
    code = (
        "from oomwizard import i18n\n"
        "t = i18n.msg('tui.title')\n"
        "assert i18n.strings.cache_info().currsize == 0\n"
        "print(t('zh'))\n"
        "print(i18n.strings.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["vLLM 显存不足排障向导", "1"]


def test_msg_behaves_like_the_text_it_names():
    t = msg("tui.quit")
    assert isinstance(t, Text) and isinstance(t, Msg)
    assert (t.en, t.zh, t("en"), t("zh")) == ("Quit", "退出", "Quit", "退出")
    assert t == Text("Quit", "退出") and Text("Quit", "退出") == t
    assert hash(t) == hash(Text("Quit", "退出"))
    assert t.as_dict() == {"en": "Quit", "zh": "退出"}
    assert msg("tui.save.done").format(path="/x").zh == "已保存到 /x"
    assert both("tui.save.done", path="/x") == ("Saved to /x", "已保存到 /x")
    with pytest.raises(KeyError, match=r"no string 'no\.such\.key'"):
        ui("no.such.key", "en")


def test_the_catalogue_has_each_language_once():
    assert strings("en") is strings("en")
    assert set(strings("en")) == set(strings("zh"))


def test_every_help_text_is_in_the_language_asked_for():
    """Every argument and sub-command's help comes from the catalogue, in both languages."""
    def helps(lang: str) -> list[str]:
        out = []
        stack = [build_parser(lang)]
        while stack:
            p = stack.pop()
            out.append(p.description or "")
            for a in p._actions:
                if a.help:
                    out.append(a.help)
                if isinstance(a.choices, dict):
                    stack += [v for v in a.choices.values() if hasattr(v, "_actions")]
                    out += [c.help for c in getattr(a, "_choices_actions", []) if c.help]
        return [h for h in out if h]

    en, zh = helps("en"), helps("zh")
    assert len(en) == len(zh) > 60
    cli_en = {v for k, v in strings("en").items() if k.startswith("cli.help.")}
    cli_zh = {v for k, v in strings("zh").items() if k.startswith("cli.help.")}
    builtin_en = {"show this help message and exit", "show program's version number and exit"}
    assert set(en) <= cli_en | builtin_en
    assert set(zh) <= cli_zh | {ui("cli.argparse.help", "zh"), ui("cli.argparse.version", "zh")}


def test_help_follows_lang_and_the_locale(capsys, monkeypatch):
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert main(["diagnose", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("用法：oomwizard diagnose") and "--detect" in out and "同时读取本机信息" in out
    assert main(["--lang", "en", "diagnose", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: oomwizard diagnose")


def test_cli_errors_speak_chinese(capsys):
    assert main(["show", "no-such-leaf", "--lang", "zh"]) != 0
    assert "没有结论或场景 'no-such-leaf'" in capsys.readouterr().err
    assert main(["show", "no-such-leaf", "--lang", "en"]) != 0
    assert "no leaf or scenario 'no-such-leaf'" in capsys.readouterr().err
    assert main(["--lang", "zh", "diagnose", "--bogus"]) == 2
    assert "oomwizard：错误：无法识别的参数：--bogus" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "lang"), [
    (["--lang", "zh", "show"], "zh"), (["--lang=en"], "en"), (["--lang", "fr"], None),
    (["show", "--", "--lang", "zh"], None), ([], None),
])
def test_the_help_language_is_read_before_parsing(argv, lang):
    assert argv_lang(argv) == lang


def test_the_package_ships_its_compiled_catalogues():
    for lang in ("en", "zh"):
        assert compiled_path(lang).is_relative_to(PACKAGE)


def test_every_fact_has_its_label_and_every_label_a_fact(tmp_path) -> None:
    from oomwizard.facts.catalog import CATALOG
    from oomwizard.lint.strings import fact_title_problems

    real = Path(__file__).resolve().parent.parent / "content" / "en" / "strings.yaml"
    assert fact_title_problems(real, "en") == []
    assert CATALOG["vllm_version"].title("en") == "vLLM version"
    cat = tmp_path / "strings.yaml"
    cat.write_text("fact.tp: Tensor parallel size\nfact.gone: an old fact\n", encoding="utf-8")
    problems = [str(p) for p in fact_title_problems(cat, "x.yaml", names=["tp", "new_fact"])]
    assert any("'new_fact' has no label" in p for p in problems)
    assert any(p.startswith("x.yaml:2") and "fact.gone: no such fact" in p for p in problems)
    assert len(problems) == 2
