"""No planted secret reaches any output: the CLI in every format, the TUI's save, copy and exit print.

The secrets sit in the shell environment, in two running servers (argv, environ, ``--config``
YAML) and in a log (the argument record, ``Namespace(...)``, JSON, URLs, headers, the OOM lines).
Every output is searched for every secret by exact match.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plant import SECRETS, cli, fake_proc, keys_only_log, leaks, secrets_log, set_command, shell_env, tui_outputs

from oomwizard.kb.loader import get_kb
from oomwizard.logs.diagnose import diagnose_paths

# One worker runs this module: its module-scoped fixture is built once, not once per worker.
pytestmark = pytest.mark.xdist_group("hostile-secrets")


KEY_REF = '"$VLLM_API_KEY"'


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("planted")
    return {
        "dir": d,
        "proc": fake_proc(d / "proc"),
        "log": secrets_log(d / "secrets.log"),
        "minimal": secrets_log(d / "minimal.log", with_args=False),
    }


def _run(planted: dict[str, Path], *args: str) -> str:
    env = {**shell_env(), "OOMWIZARD_PROC_ROOT": str(planted["proc"])}
    r = cli(*args, env=env, cwd=planted["dir"])
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    return (r.stdout + r.stderr).decode("utf-8", "replace")


CASES = {
    "detect text": ("detect",),
    "detect json": ("detect", "--format", "json"),
    "diagnose text": ("diagnose", "{log}"),
    "diagnose markdown": ("diagnose", "{log}", "--format", "markdown"),
    "diagnose json": ("diagnose", "{log}", "--format", "json"),
    "diagnose --detect text": ("diagnose", "{log}", "--detect"),
    "diagnose --detect json": ("diagnose", "{log}", "--detect", "--format", "json"),
    "minimal --detect text": ("diagnose", "{minimal}", "--detect"),
    "minimal --detect markdown": ("diagnose", "{minimal}", "--detect", "--format", "markdown"),
    "minimal --detect json": ("diagnose", "{minimal}", "--detect", "--format", "json"),
    "--set text": ("diagnose", "{minimal}", "--set", "{set}"),
    "--set json": ("diagnose", "{minimal}", "--set", "{set}", "--format", "json"),
    "show --set markdown": ("show", "sampler-warmup", "--set", "{set}", "--format", "markdown"),
}


@pytest.fixture(scope="module")
def outputs(planted: dict[str, Path]) -> dict[str, str]:
    out = {}
    for name, args in CASES.items():
        out[name] = _run(planted, *(a.format(log=planted["log"], minimal=planted["minimal"], set=set_command()) for a in args))
    return out


def test_the_plant_is_large_and_the_inputs_hold_it(planted: dict[str, Path]) -> None:
    assert len(SECRETS) >= 50 and len(set(SECRETS.values())) == len(SECRETS)
    held = planted["log"].read_text() + json.dumps(shell_env())
    for pid in ("4100", "4300"):
        held += (planted["proc"] / pid / "cmdline").read_text() + (planted["proc"] / pid / "environ").read_text()
    held += (planted["proc"] / "cwd2" / "cfg.yaml").read_text() + set_command()
    assert set(leaks(held)) == set(SECRETS)


@pytest.mark.parametrize("case", list(CASES))
def test_no_secret_in_cli_output(outputs: dict[str, str], case: str) -> None:
    assert leaks(outputs[case]) == {}


def test_the_outputs_are_real(outputs: dict[str, str]) -> None:
    """The searched outputs hold the servers and the fix, so a clean result means something."""
    assert "org/m2" in outputs["detect text"] and "org/m1" in outputs["detect text"]
    data = json.loads(outputs["diagnose json"])
    assert data["matches"][0]["scenario"] == "sampler-warmup"
    assert "vllm serve" in outputs["diagnose text"] and "vllm serve org/m2" in outputs["minimal --detect text"]


@pytest.mark.parametrize("case", ["diagnose text", "diagnose markdown", "minimal --detect text", "--set text", "show --set markdown"])
def test_rewritten_commands_read_the_key_from_the_environment(outputs: dict[str, str], case: str) -> None:
    text = outputs[case]
    serve = [ln for ln in text.splitlines() if ln.strip().lstrip("$ ").startswith("vllm serve") and "--api-key" in ln]
    assert serve, text
    for ln in serve:
        assert f"--api-key {KEY_REF} " in ln + " " and "<redacted>" not in ln.split("--api-key", 1)[1].split(" --", 1)[0]
    assert "export VLLM_API_KEY" in text


def test_several_keys_keep_their_count_as_several_variables(outputs: dict[str, str]) -> None:
    serve = [ln for ln in outputs["minimal --detect text"].splitlines() if ln.strip().startswith("$ vllm serve org/m2")]
    assert serve
    assert all(f'--api-key {KEY_REF} "$VLLM_API_KEY_2" "$VLLM_API_KEY_3"' in ln for ln in serve), serve


def test_json_commands_carry_the_reference(outputs: dict[str, str]) -> None:
    data = json.loads(outputs["diagnose json"])
    commands = [v["command"] for f in data["leaf"]["fixes"] for v in f["variants"] if "--api-key" in v["command"]]
    assert commands and all(KEY_REF in c for c in commands)


# --- the saved script runs with the operator's key, never with a placeholder --------------------


def _leaf_script_for(log: Path) -> str:
    from oomwizard.engine import Done, walk
    from oomwizard.report.script import leaf_script

    diag = diagnose_paths([str(log)])
    kb = get_kb()
    step = walk(kb, diag.facts, {}, auto_accept=True, use_unknown=True, lang="en")
    assert isinstance(step, Done)
    return leaf_script(step.leaf, step.facts, step.path, "en")


def _fake_vllm(tmp_path: Path) -> Path:
    """A ``vllm`` on PATH that writes the words it was given, one a line, to ``$ARGS_OUT``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "vllm"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGS_OUT"\n')
    fake.chmod(0o755)
    return bindir


def _runnable_fix(script: str) -> str:
    """The number of the first fix that runs a serve line without asking for an edit first."""
    numbers = [i + 1 for i, body in enumerate(script.split("\nfix_")[1:]) if "vllm serve" in body and "return 2" not in body]
    assert numbers, script
    return str(numbers[0])


def test_saved_script_passes_the_exported_key_and_refuses_without_it(tmp_path: Path) -> None:
    script = _leaf_script_for(keys_only_log(tmp_path / "keys.log"))
    assert leaks(script) == {} and "<redacted>" not in script
    target = tmp_path / "fix.sh"
    target.write_text(script)
    n = _runnable_fix(script)
    args_out = tmp_path / "args.txt"
    env = {"PATH": f"{_fake_vllm(tmp_path)}:/usr/bin:/bin", "ARGS_OUT": str(args_out), "VLLM_API_KEY": "op-key-1", "VLLM_API_KEY_2": "op-key-2", "HF_TOKEN": "op-hf"}
    r = subprocess.run(["sh", str(target), n], env=env, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    words = args_out.read_text().splitlines()
    i = words.index("--api-key")
    assert words[i + 1 : i + 3] == ["op-key-1", "op-key-2"]
    assert words[words.index("--hf-token") + 1] == "op-hf"
    args_out.unlink()
    env.pop("VLLM_API_KEY_2")
    r = subprocess.run(["sh", str(target), n], env=env, capture_output=True, timeout=30)
    assert r.returncode != 0 and not args_out.exists()
    assert b"VLLM_API_KEY_2" in r.stderr


def test_a_secret_inside_another_value_is_read_from_the_shell_too(planted: dict[str, Path], tmp_path: Path) -> None:
    """``--download-dir https://user:PASS@host``: the password comes back from a variable, so
    neither the secret nor a placeholder ever runs."""
    script = _leaf_script_for(planted["log"])
    assert leaks(script) == {} and "<redacted>" not in script
    assert "export VLLM_API_KEY VLLM_API_KEY_2 HF_TOKEN SSL_KEYFILE_PASSWORD DOWNLOAD_DIR_SECRET" in script
    target = tmp_path / "fix.sh"
    target.write_text(script)
    args_out = tmp_path / "args.txt"
    env = {"PATH": f"{_fake_vllm(tmp_path)}:/usr/bin:/bin", "ARGS_OUT": str(args_out), "VLLM_API_KEY": "k1", "VLLM_API_KEY_2": "k2",
           "HF_TOKEN": "h", "SSL_KEYFILE_PASSWORD": "s", "DOWNLOAD_DIR_SECRET": "op-pass"}
    r = subprocess.run(["sh", str(target), _runnable_fix(script)], env=env, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    words = args_out.read_text().splitlines()
    assert words[words.index("--download-dir") + 1] == "https://loguser:op-pass@host.internal/x"


# --- the TUI: save, copy, the print on exit -------------------------------------------------------


def test_tui_save_copy_and_exit_print_hold_no_secret(planted: dict[str, Path], tmp_path: Path) -> None:
    screens, texts = tui_outputs(planted["log"], tmp_path)
    texts["screens"] = "\n".join(screens)
    assert "vllm serve" in texts["exit print"] and KEY_REF in texts["copy"]
    assert {k: leaks(v) for k, v in texts.items() if leaks(v)} == {}
