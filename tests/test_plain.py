"""Plain mode (``--plain``, ``TERM=dumb``) driven through prompt_toolkit's pipe input.

Keys go in through ``create_pipe_input``; the prompts render to ``DummyOutput``; what the wizard
prints itself (the diagnosis, help, the fix) is captured. The input is closed after the keys, so
a test that runs out of keys ends with EOF (a cancel) instead of hanging.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.stand_ins import StandIns, fixture_kb

from oomwizard.exitcodes import Exit
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions
from oomwizard.plain import run_plain

ENTER = "\r"
CTRL_C = "\x03"
CTRL_U = "\x15"  # clear the pre-filled answer
DOWN = "\x1b[B"
LOG = __file__


def drive(
    keys: str,
    *,
    numbered: bool = False,
    logs: list[str] | None = None,
    stand_ins: StandIns | None = None,
    lang: str = "en",
) -> tuple[int, str, str, StandIns]:
    si = stand_ins or StandIns()
    out, err = io.StringIO(), io.StringIO()
    # Line mode reads whole lines: the same keys, as lines (Ctrl+U cleared a pre-filled answer).
    lines = io.StringIO(keys.replace(CTRL_U, "").replace(ENTER, "\n")) if numbered else None
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()
        code = run_plain(
            LaunchOptions(logs=[LOG] if logs is None else logs, lang=lang),
            kb=fixture_kb(),
            sources=si.sources(),
            prompt_kwargs={"input": inp, "output": DummyOutput()},
            numbered=numbered,
            line_input=lines,
            out=out,
            err=err,
        )
    return code, out.getvalue(), err.getvalue(), si


def test_enter_everywhere_accepts_the_suggestions_and_prints_the_fix() -> None:
    # scenario, symptom, version, engine, gpu_arch
    code, out, err, _ = drive(ENTER * 5)
    assert code == Exit.OK
    diagnosis, leaf = out.split("== The sampler warm-up ran out of memory ==")
    assert "OOM while warming up the sampler" in diagnosis and "vllm-serve.log:214" in diagnosis
    assert "--max-num-seqs 512" in leaf
    assert "[ ] Send a request with the largest batch you serve" in out
    assert "gpu_arch: Hopper (H100, H200 — SM90)  [accepted: NVML]" in out
    assert "detecting this machine" in err
    assert "Traceback" not in out + err


def test_ctrl_c_cancels_with_130_and_no_traceback() -> None:
    code, out, err, _ = drive(ENTER + CTRL_C)
    assert code == Exit.CANCELLED
    assert "cancelled" in err
    assert "Traceback" not in out + err
    assert "==" not in out.split("\n", 8)[-1]  # no leaf printed


def test_running_out_of_input_is_a_cancel_not_a_hang() -> None:
    code, _out, _err, _ = drive(ENTER)
    assert code == Exit.CANCELLED


def test_numbered_choices_for_dumb_terminals_with_back_and_help() -> None:
    keys = (
        ENTER  # scenario: the default (1, sampler warm-up)
        + ENTER  # symptom: suggested
        + ENTER  # version: pre-filled 0.11.0
        + CTRL_U
        + "5"
        + ENTER  # engine: 1 V1, 2 V0, 3 not sure, 4 back, 5 help
        + CTRL_U
        + "4"
        + ENTER  # engine again: back
        + CTRL_U
        + "0.9.2"
        + ENTER  # version, typed
        + CTRL_U
        + "2"
        + ENTER  # engine: V0 (0.9.2 suggests V1)
        + ENTER  # gpu_arch: suggested
    )
    code, out, err, _ = drive(keys, numbered=True)
    assert code == Exit.OK, err
    assert "  1. ★ V1 (the only engine from 0.11.0)" in out
    assert "  4. ← back" in out and "  5. ? why we ask" in out
    assert "-- Why we ask: Why we ask (engine) --" in out
    assert "The answer to **engine** decides which branch" in out
    assert "vllm_version: 0.9.2  [answered]" in out
    assert "engine: V0  [answered]" in out


def test_back_offers_the_users_own_answers_again_as_the_defaults() -> None:
    keys = (
        ENTER  # scenario
        + ENTER  # symptom
        + CTRL_U + "0.9.2" + ENTER  # version, typed over the log's 0.11.0
        + CTRL_U + "4" + ENTER  # engine: back
        + ENTER  # version again: the default is the typed 0.9.2
        + CTRL_U + "2" + ENTER  # engine: V0, against the suggestion
        + CTRL_U + "4" + ENTER  # gpu_arch: back
        + ENTER  # engine again: the default is V0
        + ENTER  # gpu_arch
    )
    code, out, err, _ = drive(keys, numbered=True)
    assert code == Exit.OK, err
    assert "[0.11.0]: Which vLLM engine" in out and "[0.9.2]: Which vLLM engine" in out  # typed, then kept
    # the engine's default before (not sure, [3]) and after Back (the V0 the user picked, [2])
    assert "1-6 [3]: Which GPU architecture?" in out and "1-6 [2]: Which GPU architecture?" in out
    assert "vllm_version: 0.9.2  [answered]" in out
    assert "engine: V0  [answered]" in out


def test_a_version_can_be_unknown() -> None:
    keys = "4" + ENTER + ENTER + CTRL_U + "unknown" + ENTER + ENTER + ENTER
    code, out, err, _ = drive(keys, logs=[], numbered=True)
    assert code == Exit.OK, err
    # without a log nothing else knows the version: the engine gets no suggestion, its default is "not sure"
    assert "vllm_version: unknown" in out
    assert "engine: Not sure" in out


def test_an_unreadable_log_is_exit_4_before_any_question() -> None:
    code, out, err, _si = drive(ENTER * 5, logs=["/nonexistent/vllm.log"])
    assert code == Exit.INPUT
    assert "no such file" in err
    assert out == ""


def test_without_a_log_the_welcome_menu_comes_first_then_the_questions() -> None:
    # welcome: 4 just answer questions; symptom: no suggestion, default "not sure"; version: typed;
    # engine; gpu_arch
    keys = "4" + ENTER + ENTER + "0.11.0" + ENTER + ENTER + ENTER
    code, out, err, _ = drive(keys, logs=[], numbered=True)
    assert code == Exit.OK, err
    menu = out.split("1-5 [1]:")[0]
    assert "1. Open a log file" in menu and "5. Try the demo" in menu  # this machine has a GPU
    assert "== First steps for an out-of-memory error ==" in out
    assert "Diagnosis" not in out


def test_a_line_prompt_for_a_path_offers_no_key_it_cannot_take(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x\n")
    code, out, err, _ = drive("1" + ENTER + str(log) + ENTER + ENTER * 5, logs=[], numbered=True)
    assert code == Exit.OK, err
    prompt = out.split("1-5 [1]: ", 1)[1].split("\n")[0]
    assert prompt.startswith("Path of the log file")
    assert not any(key in prompt for key in ("Tab", "→", "Esc"))  # a line of text cannot complete or cancel


def test_the_fix_fits_80_columns_apart_from_commands() -> None:
    code, out, _err, _ = drive(ENTER * 5)
    assert code == Exit.OK
    leaf, closing = out.split("== The sampler warm-up ran out of memory ==")[1].split("\n== Run this:")
    long = [
        line
        for line in leaf.splitlines()
        if len(line) > 80 and not line.lstrip().startswith(("$ ", "- symptom", "- engine", "- vllm", "- gpu"))
    ]
    assert long == []
    # the output ends as the full-screen wizard's exit print does: the first fix's command, unprefixed
    # (a triple-click copies it), then how to check the next start
    assert closing.split("\n")[1].startswith("vllm serve ") and "--max-num-seqs 512" in closing
    assert closing.rstrip().endswith("oomwizard verify sampler-warmup NEW.LOG")
    assert all(len(line) <= 80 for line in closing.splitlines() if not line.startswith("vllm serve"))


def test_chinese() -> None:
    code, out, err, _ = drive(ENTER * 5, lang="zh")
    assert code == Exit.OK
    assert "== sampler 预热时显存不足 ==" in out
    assert "正在检测本机" in err


@pytest.mark.skipif(not (DEMO_LOG.exists() and DEMO_MACHINE.exists()), reason="demo files not present")
def test_demo_end_to_end_with_the_real_reader_and_knowledge_base() -> None:
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text(ENTER * 40)
        inp.close()
        code = run_plain(
            LaunchOptions(demo=True),
            prompt_kwargs={"input": inp, "output": DummyOutput()},
            numbered=False,
            out=out,
            err=err,
        )
    assert code == Exit.OK, err.getvalue()
    text = out.getvalue()
    assert "sampler-warmup" in text
    assert "$ vllm serve" in text
    assert "detecting" not in err.getvalue()  # the demo replays its machine instead


# --- checking the next start's log after the fix ------------------------------------------------

NEXT_START = [
    "\x1b[1;36m(APIServer pid=50011)\x1b[0;0m INFO 11-29 03:40:01 [api_server.py:1896] vLLM API server version 0.11.0",
    "\x1b[1;36m(EngineCore_DP0 pid=50102)\x1b[0;0m INFO 11-29 03:41:52 [core.py:210] init engine (profile, create kv "
    "cache, warmup model) took 71.84 seconds",
    "\x1b[1;36m(APIServer pid=50011)\x1b[0;0m INFO:     Application startup complete.",
]


def test_the_fix_ends_with_the_verify_command_and_the_offer_defaults_to_no() -> None:
    code, out, err, _ = drive(ENTER * 7)  # the sixth Enter declines the save, the seventh the check
    assert code == Exit.OK, err
    assert "`oomwizard verify sampler-warmup NEW.LOG`" in out.replace("\n  ", " ")
    assert "Checking the fix" not in out


def test_checking_the_next_start_now(tmp_path: Path) -> None:
    log = tmp_path / "next.log"
    log.write_text("\n".join(NEXT_START) + "\n", encoding="utf-8")
    missing = str(tmp_path / "typo.log")
    keys = ENTER * 6 + "y" + missing + ENTER + CTRL_U + str(log) + ENTER  # Enter 6: no save
    code, out, err, _ = drive(keys)
    assert code == Exit.OK, err
    fix, checked = out.split("== Checking the fix: The sampler warm-up ran out of memory ==")
    assert "--max-num-seqs 512" in fix
    assert f"The server finished starting ({log}:2)." in checked
    assert "[x] The new log shows" in checked and "[ ] Send a request" in checked
    assert "Every automatic check passed" in checked
    assert "typo.log" not in out + err  # refused at the prompt, never read


def test_a_failed_start_is_reported_with_its_line(tmp_path: Path) -> None:
    from snapshot_apps.stand_ins import WARMUP_LINE

    log = tmp_path / "again.log"
    log.write_text("\n".join([*NEXT_START[:1], WARMUP_LINE]) + "\n", encoding="utf-8")
    code, out, _err, _ = drive(ENTER * 6 + "y" + str(log) + ENTER, lang="zh")
    assert code == Exit.OK
    assert "[!] 新日志出现" in out and "未通过" in out
    assert f"{log}:2: (EngineCore_DP0 pid=3811) ERROR" in " ".join(out.split())  # wrapped to the width
    assert "修复尚未生效" in out


def test_ctrl_c_at_the_offer_still_ends_normally() -> None:
    code, out, err, _ = drive(ENTER * 5 + CTRL_C)
    assert code == Exit.OK
    assert "== The sampler warm-up ran out of memory ==" in out
    assert "cancelled" not in err


def test_a_broken_knowledge_base_is_exit_5_with_the_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "decision_trees").mkdir()
    (tmp_path / "decision_trees" / "tree.yaml").write_text("start: [\n", encoding="utf-8")
    monkeypatch.setenv("OOMWIZARD_KB", str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    code = run_plain(LaunchOptions(), out=out, err=err)
    assert code == Exit.KB_INVALID
    assert "the knowledge base is broken" in err.getvalue() and "tree.yaml" in err.getvalue()
    assert out.getvalue() == ""


def test_a_yes_no_question_wraps_to_the_terminal_and_keeps_its_answer_on_the_last_line() -> None:
    from oomwizard.plain_prompts import LinePrompts

    out = io.StringIO()
    prompts = LinePrompts(io.StringIO("y\n"), out, 40, "en")
    assert prompts.confirm("Write a support bundle (redacted) to attach to a ticket?") is True
    lines = out.getvalue().split("\n")
    assert lines == ["Write a support bundle (redacted) to", "attach to a ticket? [y/N]: "]
