"""No C1 control, bidi override or zero-width character from a log reaches a fact, a command or
any output, and an escape without its end never hides the rest of a line.

U+009B (CSI) and U+009D (OSC) are what ESC [ and ESC ] are in 8 bits; some terminals obey them in
UTF-8. U+202E and the isolates reorder what a command shows. Both are removed where the log is
cleaned, so a model name carrying them becomes the plain name in every ``vllm serve`` line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard.logs.clean import clean

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "oomwizard" / "demo" / "vllm-serve.log").read_text(encoding="utf-8")
MODEL = "meta-llama/Llama-3.3-70B-Instruct"
RAW = re.compile("[\x80-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
SHOWN = re.compile(r"\\x9[0-9a-f]|\\u00(?:8|9)[0-9a-f]|\\u20(?:0[b-f]|2[a-e]|6[6-9])", re.I)
PAYLOADS = {
    "c1-csi": "\u009b2J\u009b1;1H",
    "c1-osc": "\u009d0;TITLE\u0007",
    "c1-osc-st": "\u009d52;c;cm0gLXJmIH4vKgo=\u009c",
    "c1-dcs": "\u0090qpayload\u009c",
    "bidi": "\u202eevil\u202c\u2066x\u2069",
    "zero-width": "\u200b\u200d\ufeff",
    "mixed": "\u009b31m\u202e\u200f\u0085",
}


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_the_cleaner_drops_c1_bidi_and_zero_width_characters(name: str) -> None:
    line = f"INFO 10-14 09:12:07 [api_server.py:1] model={MODEL}{PAYLOADS[name]} ready"
    (msg,) = clean(line)
    assert not RAW.search(msg.text) and not RAW.search(msg.shown)
    assert msg.text.startswith(f"model={MODEL}")
    assert msg.text.endswith(" ready")


@pytest.mark.parametrize("opener", ["\x1b]", "\u009d", "\x1b]8;;"])
def test_an_escape_without_its_end_does_not_hide_the_rest_of_the_line(opener: str) -> None:
    line = f"torch.OutOfMemoryError: {opener}link CUDA out of memory. Tried to allocate 1.50 GiB."
    (msg,) = clean(line)
    assert "CUDA out of memory. Tried to allocate 1.50 GiB." in msg.text
    assert "\x1b" not in msg.text and "\u009d" not in msg.text


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_a_model_name_with_controls_gives_clean_commands(tmp_path: Path, name: str, fmt: str) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(DEMO.replace(MODEL, MODEL + PAYLOADS[name]), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "oomwizard", "diagnose", str(log), "--format", fmt],
                          capture_output=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert not RAW.search(out) and b"\x1b" not in done.stdout
    assert not SHOWN.search(out), SHOWN.search(out)  # removed, not merely made visible
    if fmt == "json":
        facts = json.loads(out)["facts"]
        assert facts["model"]["value"].startswith(MODEL)
        assert not RAW.search(json.dumps(facts, ensure_ascii=False))
    assert f"vllm serve {MODEL}" in out
