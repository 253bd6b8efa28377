"""The command line's errors in the operator's language: the same failure, the same exit code, the
message in Chinese with ``--lang zh`` (or a Chinese locale) and in English otherwise."""

from __future__ import annotations

import argparse
import json

import pytest

from oomwizard.cli import build_parser, main
from oomwizard.exitcodes import Exit
from oomwizard.i18n import strings, ui


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_folder_given_as_a_log_is_refused_in_the_language_asked_for(capsys, tmp_path, lang):
    code, err = _run(capsys, ["diagnose", str(tmp_path), "--lang", lang])
    assert code == Exit.INPUT
    want = {
        "en": f"oomwizard: cannot read {tmp_path}: it is a directory (pass the log files inside it)",
        "zh": f"oomwizard: 无法读取 {tmp_path}：它是一个目录（请传入其中的日志文件）",
    }[lang]
    assert want in err.splitlines()


def test_a_missing_log_for_verify_speaks_the_locale(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    missing = tmp_path / "gone.log"
    code, err = _run(capsys, ["verify", "fragmentation", str(missing)])
    assert code == Exit.INPUT
    assert f"无法读取 {missing}：" in err and "cannot read" not in err


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_machine_description_with_a_wrong_field_names_it_in_each_language(capsys, tmp_path, lang):
    bad = tmp_path / "machine.json"
    bad.write_text(json.dumps({"gpus": "H200"}), encoding="utf-8")
    code, err = _run(capsys, ["show", "fragmentation", "--machine", str(bad), "--lang", lang])
    assert code == Exit.INPUT
    want = {
        "en": f"machine description {bad}: gpus: expected a list, found a string",
        "zh": f"机器描述 {bad}：gpus：应为列表，实际为字符串",
    }[lang]
    assert f"oomwizard: {want}" in err.splitlines()


def test_a_machine_description_that_is_no_json_is_refused_in_chinese(capsys, tmp_path):
    bad = tmp_path / "machine.json"
    bad.write_bytes(b"\xff\xfe not json")
    (tmp_path / "x.log").write_text("INFO nothing happened\n", encoding="utf-8")
    code, err = _run(capsys, ["diagnose", "--machine", str(bad), "--lang", "zh", str(tmp_path / "x.log")])
    assert code == Exit.INPUT
    assert f"oomwizard: 无法读取机器描述 {bad}：不是 UTF-8 文本（第 0 字节）" in err.splitlines()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bundle_that_is_not_one_is_refused_in_each_language(capsys, tmp_path, lang):
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"schema": "oomwizard/detect/v1"}), encoding="utf-8")
    code, err = _run(capsys, ["diagnose", "--replay", str(bundle), "--lang", lang])
    assert code == Exit.INPUT
    want = {
        "en": f"bundle {bundle}: not an `oomwizard report --format json` bundle (schema 'oomwizard/detect/v1', "
              "expected 'oomwizard/report/v1')",
        "zh": f"支持包 {bundle}：不是 `oomwizard report --format json` 支持包（schema 为 'oomwizard/detect/v1'，"
              "应为 'oomwizard/report/v1'）",
    }[lang]
    assert f"oomwizard: {want}" in err.splitlines()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_python_that_is_not_there_is_a_usage_error_in_each_language(capsys, tmp_path, lang):
    gone = tmp_path / "bin" / "python"
    code, err = _run(capsys, ["detect", "--python", str(gone), "--lang", lang])
    assert code == Exit.USAGE
    want = {"en": f"--python {gone}: {gone} does not exist", "zh": f"--python {gone}：{gone} 不存在"}[lang]
    assert f"oomwizard: {want}" in err.splitlines()


def test_a_python_others_can_replace_is_refused_in_chinese(capsys, tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    py = folder / "python3"
    py.write_text("#!/bin/sh\n", encoding="utf-8")
    py.chmod(0o755)
    folder.chmod(0o777)
    try:
        code, err = _run(capsys, ["detect", "--python", str(py), "--lang", "zh"])
    finally:
        folder.chmod(0o755)
    assert code == Exit.USAGE
    assert f"oomwizard: --python {py}：拒绝运行它：文件夹 {folder} 可被其他用户写入（权限 777）" in err.splitlines()


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                out += _parsers(sub)
    return out


def test_every_option_of_every_command_has_its_help_from_the_catalogue():
    """No option is left without help, and in Chinese every help is a Chinese catalogue string."""
    zh_texts = set(strings("zh").values())
    missing, foreign = [], []
    for prog, parser in _parsers(build_parser("zh")):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = [(f"{prog} {c.dest}", c.help) for c in action._choices_actions]
            else:
                helps = [(f"{prog} {'/'.join(action.option_strings) or action.dest}", action.help)]
            for where, text in helps:
                if not text:
                    missing.append(where)
                elif text not in zh_texts:
                    foreign.append((where, text))
    assert missing == []
    assert foreign == []


@pytest.mark.parametrize("argv", [["lint"], ["completion", "bash"]])
def test_lint_and_completion_take_lang_too(capsys, argv):
    assert main([*argv, "--lang", "zh", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(ui("cli.argparse.usage", "zh") + f"oomwizard {argv[0]}")
    assert ui("cli.help.common.lang", "zh") in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_damaged_saved_walk_is_skipped_with_a_note_in_each_language(tmp_path, lang):
    from oomwizard.bundle.resume import resume_options
    from oomwizard.bundle.state import Store
    from oomwizard.frontend.options import LaunchOptions

    (tmp_path / "walk-x.json").write_text("not json", encoding="utf-8")
    ok, notes = resume_options(LaunchOptions(resume=True, lang=lang), Store(tmp_path))
    want = {
        "en": [f"ignoring the saved walk {tmp_path / 'walk-x.json'}: not valid JSON (damaged?)",
               "no unfinished walk to resume; starting a new one"],
        "zh": [f"忽略保存的诊断记录 {tmp_path / 'walk-x.json'}：不是有效的 JSON（已损坏？）",
               "没有未完成的诊断可以继续；将开始新的诊断"],
    }[lang]
    assert not ok and notes == want


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_broken_knowledge_base_is_reported_the_same_way_by_every_entry_point(lang):
    import io

    from oomwizard.frontend.problems import SHOWN, print_kb_broken

    out = io.StringIO()
    print_kb_broken((f"decision_trees/x.yaml:{i}: error: broken" for i in range(1, 100)), lang, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"oomwizard: {ui('cli.error.kb_broken', lang)}"
    assert ("知识库已损坏" in lines[0]) == (lang == "zh")
    assert lines[1:] == [f"  decision_trees/x.yaml:{i}: error: broken" for i in range(1, SHOWN + 1)]
