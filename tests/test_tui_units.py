"""The frontends' small parts, without a screen: clipboard sequences, path checks, value formats,
Chinese line breaking, the saved shell script."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.stand_ins import fixture_kb, h200_machine, no_gpu_machine, sampler_diagnosis

from oomwizard.engine import walk
from oomwizard.facts.model import FactSet
from oomwizard.frontend.inputs import check_log_path, format_value, machine_summary
from oomwizard.report.script import leaf_script
from oomwizard.tui import cjk, clipboard
from oomwizard.tui.screens.leaf_text import first_sentence
from oomwizard.tui.screens.save import leaf_file_text, write_new
from oomwizard.tui.widgets.breadcrumbs import _shorten
from oomwizard.tui.widgets.commands import command_content

# --- clipboard --------------------------------------------------------------------------------


def test_osc52_is_base64_of_utf8_and_bel_terminated() -> None:
    seq = clipboard.osc52("vllm serve — 模型")
    assert seq.startswith("\x1b]52;c;") and seq.endswith("\a")
    assert base64.b64decode(seq[7:-1]).decode() == "vllm serve — 模型"


def test_plain_terminal_gets_raw_osc52() -> None:
    plan = clipboard.plan("x", {"TERM": "xterm-256color"})
    assert plan.via == "terminal" and plan.sequences == (clipboard.osc52("x"),)


def test_tmux_gets_the_passthrough_with_every_escape_doubled() -> None:
    plan = clipboard.plan("x", {"TMUX": "/tmp/tmux-1000/default,4242,0", "TERM": "screen-256color"})
    assert plan.via == "tmux"
    (seq,) = plan.sequences
    assert seq == "\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\"
    inner = seq[len("\x1bPtmux;") : -2]
    assert inner.replace("\x1b\x1b", "\x1b") == clipboard.osc52("x")


def test_gnu_screen_gets_its_dcs_wrapper() -> None:
    plan = clipboard.plan("x", {"STY": "1234.pts-0.host", "TERM": "screen"})
    assert plan.via == "screen" and plan.sequences == ("\x1bP\x1b]52;c;eA==\a\x1b\\",)


def test_tmux_buffer_tries_w_then_falls_back_and_never_raises() -> None:
    calls: list[list[str]] = []

    class Done:
        def __init__(self, rc: int) -> None:
            self.returncode = rc

    def old_tmux(argv: list[str], **kw: object) -> Done:
        calls.append(argv)
        assert kw["input"] == b"abc"
        return Done(1 if "-w" in argv else 0)

    assert clipboard.load_tmux_buffer("abc", run=old_tmux) is True
    assert calls == [["tmux", "load-buffer", "-w", "-"], ["tmux", "load-buffer", "-"]]

    def missing(argv: list[str], **kw: object) -> Done:
        raise FileNotFoundError("tmux")

    assert clipboard.load_tmux_buffer("abc", run=missing) is False


# --- inputs -----------------------------------------------------------------------------------


def test_check_log_path(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("x")
    assert check_log_path(f"  '{log}' ", "en") == (str(log), None)
    assert check_log_path("", "en")[1] == "Type the path of a log file."
    assert "No such file" in (check_log_path(str(tmp_path / "nope.log"), "en")[1] or "")
    assert "is a folder" in (check_log_path(str(tmp_path), "en")[1] or "")
    assert "文件不存在" in (check_log_path(str(tmp_path / "nope.log"), "zh")[1] or "")


def test_complete_path(tmp_path: Path) -> None:
    from oomwizard.tui.widgets.path_suggester import complete_path

    (tmp_path / "vllm-serve.log").write_text("x")
    (tmp_path / "logs").mkdir()
    (tmp_path / ".hidden.log").write_text("x")
    base = str(tmp_path)
    assert complete_path(f"{base}/vllm") == f"{base}/vllm-serve.log"
    assert complete_path(f"{base}/lo") == f"{base}/logs/"
    assert complete_path(base) == f"{base}/"
    assert complete_path(f"{base}/.h") == f"{base}/.hidden.log"
    assert complete_path(f"{base}/") in (f"{base}/logs/", f"{base}/vllm-serve.log")  # hidden names only when asked
    assert complete_path(f"{base}/nothing") is None
    assert complete_path(f"{base}/vllm-serve.log") is None
    assert complete_path("") is None


def test_format_value() -> None:
    assert format_value("gpu_mem_total_bytes", 150754820096) == "140.4 GiB"
    assert format_value("enforce_eager", True) == "yes"
    assert format_value("enforce_eager", False, "zh") == "否"
    assert format_value("kv_cache_tokens", 1302528) == "1,302,528 tokens"
    assert format_value("gpu_memory_utilization", 0.92) == "0.92"
    assert format_value("weights_gib", 67.718) == "67.718 GiB"  # a float keeps its unit
    assert format_value("max_concurrency", 6.24) == "6.24x"


def test_machine_summary() -> None:
    assert machine_summary(h200_machine(), "en") == "1 x NVIDIA H200 (140.4 GiB) · torch 2.11.0 · driver 580.159.04"
    text = machine_summary(no_gpu_machine(), "en")
    assert "libnvidia-ml.so.1 was not found" in text
    assert not no_gpu_machine().has_gpu and h200_machine().has_gpu


# --- text helpers -----------------------------------------------------------------------------


def test_first_sentence() -> None:
    assert first_sentence("One thing, e.g. this. Another.") == "One thing, e.g. this."
    assert first_sentence("第一句。第二句。") == "第一句。"
    assert first_sentence("Only one") == "Only one"
    long = "word " * 100
    assert first_sentence(long).endswith("…") and len(first_sentence(long)) <= 241


def test_shorten_is_cell_aware() -> None:
    assert _shorten("abcdef", 4) == "abc…"
    assert _shorten("显存不足排障", 5) == "显存…"


def test_command_content_marks_every_placeholder_and_every_command() -> None:
    content = command_content("export A=1\nvllm serve <MODEL> --max-model-len <MAX_MODEL_LEN> 2>&1")
    assert content.plain == "$ export A=1\n$ vllm serve <MODEL> --max-model-len <MAX_MODEL_LEN> 2>&1"
    marked = {content.plain[s.start : s.end] for s in content.spans if "reverse" in str(s.style)}
    assert marked == {"<MODEL>", "<MAX_MODEL_LEN>"}


def test_chinese_lines_are_filled_instead_of_broken_at_spaces() -> None:
    from textual.content import Content

    assert cjk.enable()
    text = "先限制并发序列数（--max-num-seqs，取下方计算出的值），再让出一部分 KV cache（--gpu-memory-utilization，按下方计算出的幅度）；关闭 CUDA graph 只作为最后手段。"
    lines = [line.plain for line in Content(text).wrap(40)]
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(Content(line.rstrip()).cell_length >= 30 for line in lines[:-1]), lines
    assert not any(line.startswith(("，", "。", "）")) for line in lines)
    english = [
        line.plain.rstrip() for line in Content("The sampler warm-up allocates a tensor after the KV cache.").wrap(20)
    ]
    assert english == ["The sampler warm-up", "allocates a tensor", "after the KV cache."]


# --- the saved files --------------------------------------------------------------------------


def _done():  # type: ignore[no-untyped-def]
    kb = fixture_kb()
    facts = FactSet()
    facts.update(h200_machine().facts)
    facts.update(sampler_diagnosis().facts)
    step = walk(kb, facts, {}, auto_accept=True)
    assert step.leaf.id == "sampler-warmup"  # type: ignore[union-attr]
    return kb, step


def test_shell_script_runs_nothing_by_default_and_one_fix_on_request(tmp_path: Path) -> None:
    kb, done = _done()
    text = leaf_file_text("fix.sh", done, kb, "en")
    assert text == leaf_script(done.leaf, done.facts, done.path, "en")
    path = tmp_path / "fix.sh"
    path.write_text(text)
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    assert subprocess.run([sh, "-n", str(path)], check=False).returncode == 0
    # a fake vllm records what would have run
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vllm").write_text('#!/bin/sh\necho "vllm $*" >> "$RECORD"\n')
    (bin_dir / "vllm").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RECORD": str(tmp_path / "ran.txt")}
    menu = subprocess.run([sh, str(path)], env=env, capture_output=True, text=True, check=False)
    assert menu.returncode == 0 and "1  Lower max_num_seqs" in menu.stdout
    assert not (tmp_path / "ran.txt").exists()
    fix1 = subprocess.run([sh, str(path), "1"], env=env, capture_output=True, text=True, check=False)
    assert fix1.returncode == 0, fix1.stderr
    ran = (tmp_path / "ran.txt").read_text()
    assert ran.startswith("vllm serve Qwen/Qwen3-32B") and "--max-num-seqs 512" in ran


def test_shell_script_refuses_a_fix_that_needs_editing(tmp_path: Path) -> None:
    kb = fixture_kb()
    facts = FactSet()
    facts.update(h200_machine().facts)  # no log: no command line, no KV size
    leaf = kb.leaves["kv-cache-too-small"]
    text = leaf_script(leaf, facts, None, "en")
    assert "fill in: <MAX_MODEL_LEN>" in text
    assert "add the rest of your command line" in text
    path = tmp_path / "fix.sh"
    path.write_text(text)
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    done = subprocess.run([sh, str(path), "1"], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert "edit fix 1 first" in done.stderr


def test_markdown_and_text_by_extension() -> None:
    kb, done = _done()
    md = leaf_file_text("x.md", done, kb, "en")
    assert md.startswith("# ") and "```bash" in md and "A longer explanation of **sampler-warmup**" in md
    txt = leaf_file_text("x.txt", done, kb, "en")
    assert txt.startswith("== ") and "    $ vllm serve" in txt


def test_write_new_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "f.sh"
    write_new(path, "one", overwrite=False)
    with pytest.raises(FileExistsError):
        write_new(path, "two", overwrite=False)
    write_new(path, "three", overwrite=True)
    assert path.read_text() == "three"


def test_every_leaf_of_the_real_knowledge_base_saves_as_a_script_sh_can_parse(tmp_path: Path) -> None:
    from oomwizard.kb.loader import get_kb

    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    kb = get_kb()
    facts = FactSet()
    facts.update(h200_machine().facts)
    bad = []
    for leaf in kb.leaves.values():
        for name, f in (("none", None), ("h200", facts)):
            path = tmp_path / f"{leaf.id}-{name}.sh"
            path.write_text(leaf_script(leaf, f, None, "en"))
            done = subprocess.run([sh, "-n", str(path)], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                bad.append(f"{leaf.id} ({name}): {done.stderr.strip()}")
    assert bad == []


def test_with_the_version_unknown_the_script_keeps_one_spelling_live_as_a_copy_does(tmp_path: Path) -> None:
    """Two spellings of one fix (before and from 0.20.0): the newest release's is live, the other a
    comment, so even with its guard deleted the fix never runs two set-ups in turn."""
    from oomwizard.advice.commands import paste_text
    from oomwizard.facts.model import Fact
    from oomwizard.kb.loader import get_kb
    from oomwizard.report.leaf import render_fixes

    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    leaf = get_kb().leaves["sampler-warmup"]
    facts = FactSet()
    facts.update(h200_machine().facts)
    facts.add(Fact("serve_command", "vllm serve m --max-model-len 8192", "log", kind="log"))
    fixes = render_fixes(leaf, facts, "en")
    number, rf = next((i, rf) for i, rf in enumerate(fixes, 1) if len(rf.variants) > 1)
    text = leaf_script(leaf, facts, None, "en")
    assert "spelling is live and the others are comments" in " ".join(text.split())
    body = text.split(f"fix_{number}() {{")[1].split("\n}")[0]
    live = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    # the guard, then exactly the lines a copy gives live
    assert live[0].startswith("echo ") and live[0].endswith("return 2  # delete this line once edited")
    copied = [ln for ln in paste_text(rf, "en").splitlines() if ln.strip() and not ln.startswith("#")]
    assert live[1:] == copied
    # the guard deleted, as the operator would after checking: one server started, not two
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "vllm"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/ran.txt\n')
    fake.chmod(0o755)
    path = tmp_path / "fix.sh"
    path.write_text("\n".join(ln for ln in text.splitlines() if "return 2" not in ln) + "\n")
    done = subprocess.run([sh, str(path), str(number)], capture_output=True, text=True, check=False,
                          env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "ran.txt").read_text().splitlines()) == 1


def test_a_log_on_standard_input_is_named_so_in_the_title() -> None:
    from snapshot_apps.stand_ins import make_app

    assert make_app()._names(["-", "/var/log/vllm.log"]) == "standard input, vllm.log"
    assert make_app(lang="zh")._names(["-"]) == "标准输入"
