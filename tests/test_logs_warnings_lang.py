"""What the diagnosis says about its input (an empty or binary file, a cut traceback, nothing
found) and how each answer of the walk was reached are shown in the operator's language; JSON keeps
the English, which scripts match on."""

from __future__ import annotations

import json
from pathlib import Path

from oomwizard.cli import main
from oomwizard.engine import walk
from oomwizard.kb.loader import load_kb
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.report.diagnosis import diagnosis_text

CUT = ('Traceback (most recent call last):\n'
       '  File "/usr/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 3100, in profile_run\n')


def _has_cjk(s: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in s)


def test_input_warnings_carry_both_languages(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    d = diagnose_paths([str(empty)])
    assert [w.en for w in d.warnings] == [f"{empty} is empty",
                                          f"no out-of-memory error or other failure this tool knows was found in {empty}"]
    assert all(_has_cjk(w.zh) and str(empty) in w.zh for w in d.warnings)
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(32)) * 64 + b"hello\n")
    zh = [w.zh for w in diagnose_paths([str(binary)]).warnings]
    assert any("二进制" in w for w in zh), zh


def test_the_missing_lines_of_a_cut_log_in_chinese_and_json_in_english(capsys) -> None:  # type: ignore[no-untyped-def]
    d = diagnose_text(CUT, "vllm.log")
    assert d.missing[0].en.startswith("vllm.log:1: the log ends inside this traceback")
    assert d.missing[0].zh.startswith("vllm.log:1：") and "traceback" in d.missing[0].zh
    assert d.to_json()["missing"] == [d.missing[0].en]
    text = diagnosis_text(d, "zh", 100)
    assert d.missing[0].zh.split("：", 1)[1][:10] in text


def test_cli_prints_warnings_in_the_language_asked_for(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "vllm.log"
    log.write_text(CUT, encoding="utf-8")
    main(["diagnose", str(log), "--lang", "zh", "--format", "text"])
    err = capsys.readouterr().err
    assert "日志在这个 traceback 中途结束" in err and "the log ends" not in err
    main(["diagnose", str(log), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert "the log ends inside this traceback" in out["missing"][0]


def test_how_each_answer_was_reached_is_said_in_chinese() -> None:
    kb, _ = load_kb()
    d = diagnose_text(CUT, "vllm.log")
    zh = walk(kb, d.facts, auto_accept=True, use_unknown=True, lang="zh")
    en = walk(kb, d.facts, auto_accept=True, use_unknown=True, lang="en")
    said_zh = [s.said_how("zh") for s in zh.path]  # type: ignore[union-attr]
    said_en = [s.said_how("en") for s in en.path]  # type: ignore[union-attr]
    assert "默认: 未知" in said_zh and "default: not known" in said_en
    assert any(s.startswith("自动采纳: ") for s in said_zh)
    assert not any("default" in s or "not known" in s for s in said_zh)
