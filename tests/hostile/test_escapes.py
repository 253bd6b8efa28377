"""No escape sequence, C1 control or invisible character from any input reaches any output raw.

Payloads (OSC 52, OSC 0, OSC 8, CSI, DCS, C1 CSI/OSC, backspaces, CR, bidi overrides, zero-width)
go into the log's lines and its model name, the log's file name, ``--set`` values, ``--machine``
strings and a running server's argv and script path. Every output is read back as bytes.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plant import EVIL_NAME, FORBIDDEN, OSC0, PAYLOAD, cli, hostile_log, hostile_proc, minimal_log, tui_outputs

from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb
from oomwizard.logs.diagnose import diagnose_paths

# One worker runs this module: its module-scoped fixture is built once, not once per worker.
pytestmark = pytest.mark.xdist_group("hostile-escapes")


def raw_controls(text: str) -> list[str]:
    """Every forbidden character in an output (tab, newline and CR aside), as its code point."""
    return sorted({f"U+{ord(c):04X}" for c in FORBIDDEN.findall(text)})


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("escapes")
    log = hostile_log(d / EVIL_NAME)
    empty = d / ("empty" + OSC0 + ".log")
    empty.write_text("")
    return {"dir": d, "log": log, "empty": empty, "proc": hostile_proc(d), "minimal": minimal_log(d)}


CASES = {
    "diagnose text": ("diagnose", "{log}"),
    "diagnose markdown": ("diagnose", "{log}", "--format", "markdown"),
    "diagnose json": ("diagnose", "{log}", "--format", "json"),
    "diagnose zh": ("diagnose", "{log}", "--lang", "zh"),
    "diagnose stdin": ("diagnose", "-"),
    "diagnose missing and empty files": ("diagnose", "{log}.nope", "{empty}"),
    "detect text": ("detect",),
    "detect json": ("detect", "--format", "json"),
    "diagnose --detect text": ("diagnose", "{minimal}", "--detect"),
    "diagnose --detect json": ("diagnose", "{minimal}", "--detect", "--format", "json"),
    "show --set text": ("show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--set", "gpu_name=G" + PAYLOAD),
    "show --set markdown": ("show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--format", "markdown"),
    "show --set json": ("show", "sampler-warmup", "--set", "model=m" + PAYLOAD, "--format", "json"),
    "verify": ("verify", "sampler-warmup", "{log}"),
}


@pytest.fixture(scope="module")
def outputs(inputs: dict[str, Path]) -> dict[str, tuple[str, str]]:
    out = {}
    env = {"OOMWIZARD_PROC_ROOT": str(inputs["proc"])}
    for name, args in CASES.items():
        argv = [a.format(**{k: str(v) for k, v in inputs.items()}) for a in args]
        stdin = inputs["log"].read_bytes() if argv[-1] == "-" else None
        r = subprocess.run(
            [sys.executable, "-m", "oomwizard", *argv], input=stdin, capture_output=True, timeout=120,
            env={**cli_env(), **env}, cwd=inputs["dir"],
        )
        assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
        out[name] = (r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"))
    return out


def cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "LANG")}


@pytest.mark.parametrize("case", list(CASES))
def test_no_raw_control_in_cli_output(outputs: dict[str, tuple[str, str]], case: str) -> None:
    stdout, stderr = outputs[case]
    assert raw_controls(stdout) == [] and raw_controls(stderr) == []


def test_the_payloads_reach_the_outputs(outputs: dict[str, tuple[str, str]]) -> None:
    """The searched outputs do carry the hostile values (made visible), so clean means cleaned."""
    text = outputs["diagnose text"][0]
    assert "evil\\u202e.log" in text  # the file name, its escape sequences dropped, its bidi shown
    # the log's model name: its controls are removed where the log is cleaned, not only made visible
    serve = [ln for ln in text.splitlines() if "vllm serve 'meta-llama/Llama" in ln]
    assert serve and not any("\\u202e" in ln or "\\x9" in ln for ln in serve)
    assert "\\u202e" in outputs["show --set text"][0]
    assert "org/m" in outputs["detect text"][0]
    assert "cannot read" in outputs["diagnose missing and empty files"][1]


@pytest.mark.parametrize("case", [c for c in CASES if c.endswith("json")])
def test_json_escapes_c1_and_bidi(outputs: dict[str, tuple[str, str]], case: str) -> None:
    stdout = outputs[case][0]
    data = json.loads(stdout)
    assert data
    if case.startswith("diagnose"):  # the file name keeps its characters, escaped
        assert "\\u202e" in stdout


def test_machine_file_strings_are_escaped(inputs: dict[str, Path], outputs: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    machine = tmp_path / "m.json"
    machine.write_text(outputs["detect json"][0])
    data = json.loads(machine.read_text())
    data.setdefault("gpus", [{}])
    machine.write_text(json.dumps(data).replace("org/m", "org/m" + json.dumps(PAYLOAD)[1:-1], 1))
    for fmt in ("text", "json"):
        r = cli("diagnose", str(inputs["minimal"]), "--machine", str(machine), "--format", fmt)
        assert b"Traceback" not in r.stderr
        assert raw_controls(r.stdout.decode()) == [] and raw_controls(r.stderr.decode()) == []


def test_exports_hold_no_raw_control(tmp_path: Path) -> None:
    for fmt in ("markdown", "html"):
        r = cli("export", "--format", fmt, "--output", str(tmp_path / fmt))
        assert r.returncode == 0, r.stderr
        for f in (tmp_path / fmt).rglob("*"):
            if f.is_file():
                assert raw_controls(f.read_text(encoding="utf-8")) == [], f
    r = cli("export", "--format", "json")
    assert raw_controls(r.stdout.decode()) == [] and json.loads(r.stdout)


# --- the TUI and plain mode: the screen, the terminal stream, the exit print, save, copy ---------


def test_tui_screens_and_files_hold_no_payload(inputs: dict[str, Path], tmp_path: Path) -> None:
    screens, texts = tui_outputs(inputs["log"], tmp_path)
    assert [raw_controls(s) for s in screens if raw_controls(s)] == []
    assert any("evil\\u202e.log" in s for s in screens)  # the file name is shown, made harmless
    assert "vllm serve 'meta-llama/Llama" in texts["exit print"]
    assert {k: raw_controls(v) for k, v in texts.items() if raw_controls(v)} == {}


def test_plain_mode_prints_no_payload(inputs: dict[str, Path]) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from snapshot_apps.stand_ins import StandIns, no_gpu_machine

    from oomwizard.plain import run_plain

    log = str(inputs["log"])
    si = StandIns(machine=no_gpu_machine(), diagnosis=diagnose_paths([log]))
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("\r" * 12)
        inp.close()
        run_plain(LaunchOptions(logs=[log]), kb=get_kb(), sources=si.sources(),
                  prompt_kwargs={"input": inp, "output": DummyOutput()}, numbered=True,
                  line_input=io.StringIO("\n" * 12), out=out, err=err)
    printed = out.getvalue() + err.getvalue()
    assert "vllm serve 'meta-llama/Llama" in printed and "evil\\u202e.log" in printed
    assert raw_controls(printed) == []
