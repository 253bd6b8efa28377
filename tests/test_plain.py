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
from oomwizard.launch import DEMO_LOG, DEMO_MACHINE, LaunchOptions
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
    with create_pipe_input() as inp:
        inp.send_text(keys)
        inp.close()
        code = run_plain(
            LaunchOptions(logs=[LOG] if logs is None else logs, lang=lang),
            kb=fixture_kb(),
            sources=si.sources(),
            prompt_kwargs={"input": inp, "output": DummyOutput()},
            numbered=numbered,
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


def test_a_version_can_be_unknown() -> None:
    keys = ENTER + CTRL_U + "unknown" + ENTER + ENTER + ENTER
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


def test_without_a_log_the_questions_start_at_once() -> None:
    # symptom: no suggestion, default "not sure"; version: typed; engine; gpu_arch
    keys = ENTER + "0.11.0" + ENTER + ENTER + ENTER
    code, out, err, _ = drive(keys, logs=[], numbered=True)
    assert code == Exit.OK, err
    assert "== First steps for an out-of-memory error ==" in out
    assert "Diagnosis" not in out


def test_the_fix_fits_80_columns_apart_from_commands() -> None:
    code, out, _err, _ = drive(ENTER * 5)
    assert code == Exit.OK
    leaf = out.split("== The sampler warm-up ran out of memory ==")[1]
    long = [
        line
        for line in leaf.splitlines()
        if len(line) > 80 and not line.lstrip().startswith(("$ ", "- symptom", "- engine", "- vllm", "- gpu"))
    ]
    assert long == []


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
