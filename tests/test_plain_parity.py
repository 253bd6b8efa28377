"""Plain mode has what the full-screen wizard has: the welcome menu (demo, open, paste), the facts
review with corrections that keep the answers given, and saving the fix to the same file."""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.stand_ins import StandIns, fixture_kb, no_gpu_machine

from oomwizard.engine import Done
from oomwizard.exitcodes import Exit
from oomwizard.frontend.options import DEMO_LOG, LaunchOptions
from oomwizard.plain import run_plain
from oomwizard.report.save import leaf_file_text


def drive(lines: list[str], *, logs: list[str] | None = None, stand_ins: StandIns | None = None,
          lang: str = "en") -> tuple[int, str, str, StandIns]:
    si = stand_ins or StandIns()
    out, err = io.StringIO(), io.StringIO()
    code = run_plain(LaunchOptions(logs=[] if logs is None else logs, lang=lang), kb=fixture_kb(),
                     sources=si.sources(), numbered=True, line_input=io.StringIO("".join(f"{x}\n" for x in lines)),
                     out=out, err=err)
    return code, out.getvalue(), err.getvalue(), si


def test_no_gpu_and_no_log_offers_the_demo_first_and_enter_opens_it() -> None:
    si = StandIns(machine=no_gpu_machine())
    code, out, _err, _ = drive([""] * 12, stand_ins=si)
    assert code == Exit.OK
    menu = out.split("1-5 [1]:")[0]
    assert "No NVIDIA GPU was found here" in menu
    assert "  1. Try the demo" in menu and "  5. Just answer questions" in menu
    assert si.read_paths == [[str(DEMO_LOG)]]  # the demo's log, read by the real path
    assert "== The sampler warm-up ran out of memory ==" in out


def test_open_a_log_refuses_a_missing_file_at_the_prompt(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    code, out, _err, si = drive(["1", str(tmp_path / "typo.log"), str(log)] + [""] * 10)
    assert code == Exit.OK
    assert "No such file" in out
    assert si.read_paths == [[str(log)]]  # the typo was never read
    assert "Diagnosis from the log" in out


def test_paste_a_log_up_to_a_dot() -> None:
    code, out, _err, si = drive(["2", "first line", "second line", "."] + [""] * 10)
    assert code == Exit.OK
    assert si.pasted == ["first line\nsecond line\n"]
    assert "Diagnosis from the log" in out and "== The sampler warm-up ran out of memory ==" in out


def test_facts_review_corrects_a_value_and_keeps_the_answers(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    # scenario, symptom, version 0.9.2 typed, then on the engine question: the facts review
    lines = ["", "", "0.9.2", "6", "gpu_memory", "lots", "0.9", "", "", ""] + [""] * 6
    code, out, _err, _ = drive(lines, logs=[str(log)])
    assert code == Exit.OK
    review = out.split("-- Everything known so far --")[1]
    assert "gpu_memory_utilization" in review and "0.92" in review
    assert "“lots”" in out or "lots" in out.split("New value for")[1]  # refused by its type, asked again
    assert "gpu_memory_utilization = 0.9 (your answer now beats the log and the machine)" in out
    after = out.split("gpu_memory_utilization = 0.9 ")[1].split("Name of a fact to change (Enter: go on)\n> ")[1]
    assert after.startswith("Which vLLM engine ran it?")  # back where it was, not at question 1
    assert "vllm_version: 0.9.2  [answered]" in out  # the typed answer survived the correction
    assert "--gpu-memory-utilization 0.85" in out  # the fix works from the corrected value (0.9 - 0.05)


def test_save_writes_the_tuis_file_and_asks_before_replacing(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    target = tmp_path / "fix.sh"
    target.write_text("keep me\n")
    walk = [""] * 5  # scenario, symptom, version, engine, gpu arch: the suggestions
    code, out, _err, _ = drive([*walk, "y", str(target), "n"], logs=[str(log)])
    assert code == Exit.OK
    assert "fix.sh exists. Replace it?" in " ".join(out.split()) and target.read_text() == "keep me\n"
    code, out, _err, _ = drive([*walk, "y", str(target), "y", "n"], logs=[str(log)])
    assert code == Exit.OK
    assert f"Saved to {target}" in " ".join(out.split())  # wrapped to the terminal's width
    text = target.read_text()
    assert text.startswith("#!/bin/sh") and "--max-num-seqs 512" in text
    # the very file the TUI's save writes for this walk
    from oomwizard.session import Session

    si = StandIns()
    session = Session(fixture_kb(), lang="en")
    session.facts.update(si.machine.facts)
    session.facts.update(si.diagnosis.facts)
    step = session.finish()
    assert isinstance(step, Done)
    assert text.split("#!/bin/sh")[1].split("set -u")[1] == leaf_file_text("x.sh", step, fixture_kb(), "en").split(
        "set -u")[1]


def test_save_defaults_to_the_tuis_file_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    code, out, _err, _ = drive([""] * 5 + ["y", "", "n"], logs=[str(log)], lang="zh")
    assert code == Exit.OK
    assert (tmp_path / "oomwizard-fix-sampler-warmup.sh").exists()
    assert "已保存到" in out
