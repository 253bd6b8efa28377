"""The diagnosis as the operator reads it (text, Markdown) and as ``oomwizard diagnose`` prints it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from logkit import LOGS

from oomwizard.exitcodes import Exit
from oomwizard.frontend.options import DEMO_LOG
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.report.diagnosis import diagnosis_markdown, diagnosis_text

HOSTILE = (
    "\x1b]52;c;cm0gLXJmIH4=\x07(EngineCore_DP0 pid=7) ERROR 10-20 09:07:13 [core.py:1] \x1b[2J\x1b[H"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.57 GiB "
    "of which 120.00 MiB is free. | `code` *bold* --api-key sk-abcdefghijklmnopqrstuvwxyz \x1b]0;title\x07\n"
)


def test_demo_text_tells_the_story() -> None:
    d = diagnose_paths([str(DEMO_LOG)])
    out = diagnosis_text(d, "en")
    assert "sampler-warmup" in out
    assert f"{DEMO_LOG}:" in out  # evidence with file:line
    assert "1024 dummy requests" in out
    assert "139.80 GiB" in out and "501.00 MiB" in out  # the OOM broken down
    assert "62.4 GiB" in out  # available KV cache
    assert "\x1b" not in out


def test_demo_story_numbers() -> None:
    """The demo log is consistent: 70B FP8 on one H200 at 0.97, 320 KiB of KV per token (bf16)."""
    d = diagnose_paths([str(DEMO_LOG)])
    f = d.facts
    assert str(f.value("vllm_version")) == "0.11.0"
    assert (f.value("engine"), f.value("model_runner")) == ("v1", "v1")
    assert f.value("model") == "meta-llama/Llama-3.3-70B-Instruct"
    assert (f.value("quantization"), f.value("gpu_memory_utilization"), f.value("max_model_len")) == ("fp8", 0.97, 32768)
    assert f.value("sampler_dummy_requests") == 1024
    total_gib = f.value("oom_total_bytes") / (1 << 30)
    assert total_gib == pytest.approx(139.80, abs=0.01)
    kv_bytes = f.value("kv_cache_gib") * (1 << 30)
    assert kv_bytes / f.value("kv_cache_tokens") == pytest.approx(320 * 1024, rel=0.002)
    assert f.value("kv_cache_tokens") / 32768 == pytest.approx(f.value("max_concurrency"), abs=0.01)
    assert f.value("weights_gib") == pytest.approx(67.7, abs=0.1)
    # what the budget left outside the KV cache and weights: total x (1 - 0.97) minus the graphs
    assert total_gib * 0.97 > f.value("weights_gib") + f.value("kv_cache_gib")
    assert f.value("serve_command").startswith("vllm serve meta-llama/Llama-3.3-70B-Instruct")
    assert d.matches[0].scenario == "sampler-warmup"


def test_a_narrow_terminal_puts_each_fact_value_under_its_name() -> None:
    from oomwizard.text.cells import cell_len

    d = diagnose_paths([str(DEMO_LOG)])
    facts_wide = next(b for b in diagnosis_text(d, "en", width=88).split("\n\n") if "0.97  (line 3)" in b)
    facts_narrow = next(b for b in diagnosis_text(d, "en", width=60).split("\n\n") if "0.97  (line 3)" in b)
    line = next(x for x in facts_wide.splitlines() if "0.97" in x)
    assert line.startswith("  gpu_memory_utilization ") and line.endswith("0.97  (line 3)")  # one row: name, value
    rows = facts_narrow.splitlines()
    i = rows.index("  gpu_memory_utilization")
    assert rows[i + 1] == "    0.97  (line 3)"
    command = next(n for n, x in enumerate(rows) if x.strip().startswith("vllm serve"))
    assert "meta-llama/Llama-3.3-70B-Instruct" in rows[command]  # the model's name is not cut by a wrap
    assert all(cell_len(x) <= 60 for x in rows)
    # Chinese names are shorter: at 70 two columns leave the model's name its room, at 60 they do not
    for width, two_columns in ((70, True), (60, False)):
        zh = next(b for b in diagnosis_text(d, "zh", width=width).split("\n\n") if "0.97  (行 3)" in b).splitlines()
        assert any(x.startswith("  gpu_memory_utilization ") and x.endswith("0.97  (行 3)") for x in zh) is two_columns
        assert all(cell_len(x) <= width for x in zh)


def test_chinese() -> None:
    out = diagnosis_text(diagnose_paths([str(DEMO_LOG)]), "zh")
    assert "日志诊断" in out and "最可能" in out and "证据" in out


def test_hostile_log_text_is_neutralised() -> None:
    d = diagnose_text(HOSTILE)
    for out in (diagnosis_text(d, "en"), diagnosis_markdown(d, "en")):
        assert "\x1b" not in out and "\x07" not in out
        assert "sk-abcdefghijklmnopqrstuvwxyz" not in out


def test_markdown_escapes_log_text() -> None:
    d = diagnose_text(HOSTILE)
    md = diagnosis_markdown(d, "en")
    assert md.startswith("## ")
    assert "### Evidence" in md
    ev = [ln for ln in md.splitlines() if ln.startswith("- `` ") or ln.startswith("- `pasted")]
    assert ev and "\\|" in md  # a pipe in log text cannot break a table


def test_no_match_renders() -> None:
    d = diagnose_paths([str(LOGS / "healthy_startup.log")])
    assert "No out-of-memory error" in diagnosis_text(d, "en")
    assert "No out-of-memory error" in diagnosis_markdown(d, "en")


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], input=stdin, capture_output=True, timeout=120)


def test_cli_json_on_the_demo() -> None:
    r = _cli("diagnose", str(DEMO_LOG), "--format", "json")
    assert r.returncode == Exit.OK, r.stderr
    data = json.loads(r.stdout)
    assert data["matches"][0]["scenario"] == "sampler-warmup"
    assert 0 < data["matches"][0]["score"] <= 1
    ev = data["matches"][0]["evidence"][0]
    assert set(ev) == {"file", "line", "text"}
    fact = data["facts"]["sampler_dummy_requests"]
    assert fact["value"] == 1024 and fact["kind"] == "log" and fact["source"] == f"{DEMO_LOG.name}:{fact['line']}"
    assert fact["file"] == str(DEMO_LOG)
    assert data["inputs"] == [str(DEMO_LOG)]
    assert data["oom_messages"][0]["requested"] == 501 << 20


@pytest.mark.parametrize("args", [("diagnose", str(DEMO_LOG)), ("show", "sampler-warmup")], ids=["diagnose", "show"])
def test_cli_text_ends_with_what_to_run_and_how_to_check_it(args: tuple[str, ...]) -> None:
    """As the wizard's exit print: at 80x24 the last screen of the output is the fix, not its sources."""
    r = _cli(*args)
    assert r.returncode == Exit.OK, r.stderr
    tail = r.stdout.decode().rstrip("\n").splitlines()[-6:]
    assert tail[-1] == "oomwizard verify sampler-warmup NEW.LOG"
    assert any(line.startswith("== Run this: fix 1,") for line in tail), tail
    assert any(line.startswith("vllm serve ") for line in tail), tail


def test_cli_stdin_and_no_match_exit_code() -> None:
    r = _cli("diagnose", "-", "--format", "json", stdin=(LOGS / "healthy_startup.log").read_bytes())
    assert r.returncode == Exit.NO_MATCH
    assert json.loads(r.stdout)["matches"] == []
    assert b"no out-of-memory error" in r.stderr


def test_cli_missing_file() -> None:
    r = _cli("diagnose", "/nonexistent/vllm.log")
    assert r.returncode == Exit.INPUT
    assert b"/nonexistent/vllm.log" in r.stderr
