"""How many words ``--api-key`` takes depends on the vLLM release, and so does what is hidden.

Released parsers: up to 0.10.0 ``--api-key`` is one value (``parser.add_argument("--api-key",
type=optional_type(str))`` in ``vllm/entrypoints/openai/cli_args.py``); from 0.10.1 it is
``api_key: list[str]``, which ``get_kwargs`` turns into ``nargs="+"``. On an old release the word
after the key is the next argument, often the model, and must survive; on a new one, or when the
release is unknown, every word is a key and is hidden.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "machine"))

from fake_proc import make_proc
from fake_site import add_dist

from oomwizard.advice.commands import ServeCommand
from oomwizard.facts.processes import find_servers
from oomwizard.text.output import clean_json, clean_text
from oomwizard.text.redact import redact_argv

KEY = "Zq7Xsecretvalue1"
ARGV = ["vllm", "serve", "--api-key", KEY, "org/my-model", "--port", "8000"]
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.mark.parametrize("version", ["0.6.6", "0.8.5", "0.9.2", "0.10.0", "v0.10.0"])
def test_before_0_10_1_the_word_after_the_key_is_kept(version: str) -> None:
    out = redact_argv(ARGV, version)
    assert KEY not in " ".join(out)
    assert out == ["vllm", "serve", "--api-key=<redacted>", "org/my-model", "--port", "8000"]
    text = ServeCommand(out).text()
    assert text == 'vllm serve --api-key="$VLLM_API_KEY" org/my-model --port 8000'
    # the output boundary, which cannot know the release, keeps the model too
    assert clean_text(text) == text
    assert json.loads(clean_json({"argv": out}))["argv"] == out


@pytest.mark.parametrize("version", ["0.10.1", "0.11.0", "0.33.0", None, "not a version"])
def test_from_0_10_1_or_unknown_every_word_is_a_key(version: str | None) -> None:
    out = redact_argv(ARGV, version)
    assert out == ["vllm", "serve", "--api-key", "<redacted>", "<redacted>", "--port", "8000"]
    assert ServeCommand(out).text() == 'vllm serve --api-key "$VLLM_API_KEY" "$VLLM_API_KEY_2" --port 8000'


@pytest.mark.parametrize(("version", "model_kept"), [("0.9.2", True), ("0.11.0", False)])
def test_a_running_server_is_read_by_the_release_of_its_environment(tmp_path: Path, version: str, model_kept: bool) -> None:
    venv = tmp_path / "venv"
    add_dist(venv / "lib" / f"python{XY}" / "site-packages", "vllm", version)
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {sys.version.split()[0]}\n")
    (venv / "bin").mkdir()
    python = venv / "bin" / "python3"
    python.write_text("#!/bin/sh\nexit 1\n")  # never started: only its files are read
    argv = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--api-key", KEY, "org/my-model", "--port", "8000"]
    root = make_proc(tmp_path / "proc", [{"pid": 4242, "argv": argv, "environ": {"PATH": "/usr/bin"}}])
    (server,) = find_servers(root)["servers"]
    blob = json.dumps(server)
    assert KEY not in blob
    assert ("org/my-model" in server["argv"]) is model_kept
    assert ("org/my-model" in server["command"]) is model_kept
