"""Hostile streams and inputs end with one line on stderr and a documented exit code, never a
traceback and never a hang.

Each case runs the real command in a child process through ``sh`` (so descriptors can be closed
the way an operator's shell closes them). ``timeout`` only bounds a hang: a case that blocks fails
instead of stalling the suite.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from oomwizard.exitcodes import Exit

ROOT = Path(__file__).resolve().parents[2]
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"
OOMWIZARD = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "oomwizard"))
HANG = 60


def sh(command: str, *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.pop("OOMWIZARD_TRACEBACK", None)
    full_env.update(env or {})
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, cwd=cwd, env=full_env,
                          stdin=subprocess.DEVNULL, start_new_session=True, timeout=HANG)


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The single ``oomwizard: …`` line, checked for ``words``; no traceback anywhere."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("oomwizard: ")
    for w in words:
        assert w in lines[0]
    return lines[0]


# --- closed and full standard streams ----------------------------------------------------------


def test_diagnose_of_a_file_works_with_stdin_closed() -> None:
    done = sh(f"{OOMWIZARD} diagnose {shlex.quote(str(DEMO_LOG))} --format json <&-")
    assert done.returncode == Exit.OK, done.stderr
    assert '"scenario": "sampler-warmup"' in done.stdout


def test_verify_of_a_file_works_with_stdin_closed() -> None:
    done = sh(f"{OOMWIZARD} verify sampler-warmup {shlex.quote(str(DEMO_LOG))} <&-")
    assert done.returncode == Exit.CHECK_FAILED, done.stderr  # the demo log still shows the failure
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["diagnose", "diagnose -", "verify sampler-warmup"])
def test_reading_stdin_that_is_closed_is_an_input_error(command: str) -> None:
    done = sh(f"{OOMWIZARD} {command} <&-")
    assert done.returncode == Exit.INPUT
    one_line_error(done, "standard input is closed")


def test_the_wizard_with_stdin_closed_gives_the_no_terminal_hint() -> None:
    done = sh(f"{OOMWIZARD} <&-")
    assert done.returncode == Exit.NO_TTY
    one_line_error(done, "no interactive terminal")


@pytest.mark.parametrize(
    "command", [f"diagnose {shlex.quote(str(DEMO_LOG))}", "show sampler-warmup", "scenarios", "--help"]
)
def test_a_closed_stdout_is_an_output_error(command: str) -> None:
    done = sh(f"{OOMWIZARD} {command} >&-")
    assert done.returncode == Exit.OUTPUT
    one_line_error(done, "cannot write the output", "closed")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command",
    [f"diagnose {shlex.quote(str(DEMO_LOG))}", f"verify sampler-warmup {shlex.quote(str(DEMO_LOG))}",
     "export --format json", "show sampler-warmup --format markdown"],
)
def test_a_full_disk_is_an_output_error(command: str) -> None:
    done = sh(f"{OOMWIZARD} {command} >/dev/full")
    assert done.returncode == Exit.OUTPUT
    one_line_error(done, "cannot write the output", "No space left on device")


def test_a_reader_that_goes_away_ends_quietly_with_0() -> None:
    # Far more than a pipe holds, so the writes really meet the closed pipe.
    proc = subprocess.Popen([sys.executable, "-m", "oomwizard", "export", "--format", "json"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().strip() == b"{"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=HANG) == Exit.OK
    assert err == ""


def test_a_closed_stderr_still_gives_the_exit_code() -> None:
    done = sh(f"{OOMWIZARD} diagnose /nonexistent.log 2>&-")
    assert done.returncode == Exit.INPUT
    assert done.stdout == ""  # the message did not move to stdout


# --- deeply nested JSON ------------------------------------------------------------------------

DEEP = {
    "jsonl-array": '{"log": "x", "a": ' + "[" * 1500 + "]" * 1500 + "}\n",
    "jsonl-object": '{"log": ' * 3000 + '"x"' + "}" * 3000 + "\n",
    "config": (
        "INFO 10-14 09:12:27 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
        "compilation_config=" + '{"a": ' * 3000 + "1" + "}" * 3000 + ", seed=0\n"
    ),
}


@pytest.mark.parametrize("kind", sorted(DEEP))
@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_deeply_nested_line_is_skipped_and_the_rest_diagnosed(tmp_path: Path, kind: str, how: str) -> None:
    log = tmp_path / "deep.log"
    log.write_text(DEEP[kind] + DEMO_LOG.read_text(encoding="utf-8"), encoding="utf-8")
    arg = f"- < {shlex.quote(str(log))}" if how == "stdin" else shlex.quote(str(log))
    done = sh(f"{OOMWIZARD} diagnose {arg} --format json")
    assert done.returncode == Exit.OK, done.stderr[-2000:]
    assert '"scenario": "sampler-warmup"' in done.stdout
    assert "Traceback" not in done.stderr


def test_verify_reads_a_deeply_nested_line_too(tmp_path: Path) -> None:
    log = tmp_path / "deep.log"
    log.write_text(DEEP["jsonl-object"] + DEMO_LOG.read_text(encoding="utf-8"), encoding="utf-8")
    done = sh(f"{OOMWIZARD} verify sampler-warmup {shlex.quote(str(log))}")
    assert done.returncode == Exit.CHECK_FAILED, done.stderr[-2000:]


def test_a_deeply_nested_machine_report_is_an_input_error(tmp_path: Path) -> None:
    report = tmp_path / "deep.json"
    report.write_text('{"schema": 1, "x": ' + "[" * 100000 + "]" * 100000 + "}", encoding="utf-8")
    for command in (f"diagnose {shlex.quote(str(DEMO_LOG))}", "show sampler-warmup"):
        done = sh(f"{OOMWIZARD} {command} --machine {shlex.quote(str(report))}")
        assert done.returncode == Exit.INPUT
        one_line_error(done, "cannot read machine description", "nests too deeply")


# --- devices and named pipes -------------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", ["diagnose", "verify sampler-warmup"])
def test_a_device_is_refused_as_a_log(device: str, command: str) -> None:
    done = sh(f"{OOMWIZARD} {command} {device}")
    assert done.returncode == Exit.INPUT
    one_line_error(done, device, "is a device")


def test_a_device_on_stdin_is_refused() -> None:
    done = sh(f"{OOMWIZARD} diagnose < /dev/zero")
    assert done.returncode == Exit.INPUT
    one_line_error(done, "<stdin>", "is a device")


def test_dev_null_is_still_an_empty_log() -> None:
    done = sh(f"{OOMWIZARD} diagnose /dev/null")
    assert done.returncode == Exit.NO_MATCH
    assert "/dev/null is empty" in done.stderr


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_machine_report_that_is_not_a_regular_file_is_refused(tmp_path: Path, special: str) -> None:
    path = special
    if special == "fifo":
        path = str(tmp_path / "report.fifo")
        os.mkfifo(path)
    done = sh(f"{OOMWIZARD} diagnose {shlex.quote(str(DEMO_LOG))} --machine {shlex.quote(path)}")
    assert done.returncode == Exit.INPUT
    one_line_error(done, "not a regular file")


def test_a_named_pipe_with_no_writer_is_given_up_on_after_the_wait(tmp_path: Path) -> None:
    """In-process, with the wait shortened: the reader gives up on a pipe nobody writes to."""
    from oomwizard.logs.inputs import open_pipe
    from oomwizard.logs.reader import InputError

    fifo = tmp_path / "nobody-writes"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="nothing was written"):
        open_pipe(str(fifo), wait=0.2)


@pytest.mark.slow
def test_a_named_pipe_with_no_writer_is_given_up_on(tmp_path: Path) -> None:
    """The command itself, with its full 10 s wait (slow for that wait alone)."""
    fifo = tmp_path / "nobody-writes"
    os.mkfifo(fifo)
    done = sh(f"{OOMWIZARD} diagnose {shlex.quote(str(fifo))}")
    assert done.returncode == Exit.INPUT
    one_line_error(done, "named pipe", "nothing was written")


def test_a_named_pipe_is_read_even_when_the_writer_is_gone_before_the_read(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as fh:  # blocks until the reader opens; then writes and closes at once
            fh.write(DEMO_LOG.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    done = sh(f"{OOMWIZARD} diagnose {shlex.quote(str(fifo))} --format json")
    writer.join(timeout=HANG)
    assert done.returncode == Exit.OK, done.stderr
    assert '"scenario": "sampler-warmup"' in done.stdout


def test_verify_reads_a_named_pipe_once(tmp_path: Path) -> None:
    """verify reads each input once, like diagnose: a named pipe gives the verdict the file gives."""
    import threading

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(DEMO_LOG.read_bytes())

    writer = threading.Thread(target=feed)
    writer.start()
    piped = sh(f"{OOMWIZARD} verify sampler-warmup {shlex.quote(str(fifo))} --format json")
    writer.join(timeout=HANG)
    plain = sh(f"{OOMWIZARD} verify sampler-warmup {shlex.quote(str(DEMO_LOG))} --format json")
    assert piped.returncode == plain.returncode == Exit.CHECK_FAILED, piped.stderr
    assert piped.stdout.replace(str(fifo), "LOG") == plain.stdout.replace(str(DEMO_LOG), "LOG")


def test_a_shell_pipe_is_still_read() -> None:
    if shutil.which("bash") is None:
        pytest.skip("needs bash for <(…)")
    command = f"{OOMWIZARD} diagnose <(cat {shlex.quote(str(DEMO_LOG))}) --format json"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert done.returncode == Exit.OK, done.stderr
    assert '"scenario": "sampler-warmup"' in done.stdout


# --- a broken knowledge base and the last resort ------------------------------------------------


def test_a_tree_that_loops_is_a_broken_knowledge_base(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(ROOT / "decision_trees", kb / "decision_trees")
    shutil.copytree(ROOT / "content", kb / "content")
    tree = kb / "decision_trees" / "tree.yaml"
    text = tree.read_text(encoding="utf-8")
    marker = "        next: vllm_version"
    assert marker in text
    tree.write_text(text.replace(marker, "        next: symptom", 1), encoding="utf-8")
    done = sh(f"{OOMWIZARD} diagnose {shlex.quote(str(DEMO_LOG))}", env={"OOMWIZARD_KB": str(kb)})
    assert done.returncode == Exit.KB_INVALID
    assert "Traceback" not in done.stderr
    assert "cycle in the tree: symptom -> symptom" in done.stderr


def _alias_bomb() -> str:
    """Nine levels of nine aliases: 9**9 strings if each alias were expanded, a few KiB of YAML."""
    text = 'x_bomb:\n  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, 10):
        text += f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n"
    return text


@pytest.mark.parametrize("command", ["lint", "show sampler-warmup", f"diagnose {shlex.quote(str(DEMO_LOG))}"])
def test_a_yaml_alias_bomb_is_an_unknown_field_not_a_hang(tmp_path: Path, command: str) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(ROOT / "decision_trees", kb / "decision_trees")
    shutil.copytree(ROOT / "content", kb / "content")
    leaf = kb / "decision_trees" / "leaves" / "sampler-warmup.yaml"
    leaf.write_text(leaf.read_text(encoding="utf-8") + _alias_bomb(), encoding="utf-8")
    done = sh(f"{OOMWIZARD} {command}", env={"OOMWIZARD_KB": str(kb)})
    assert done.returncode == Exit.KB_INVALID
    assert "unknown field 'x_bomb'" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_an_unexpected_error_is_one_line_and_exit_70(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from oomwizard import cli

    def broken(args: object) -> int:
        raise KeyError("\x1b]0;title\x07no such thing")

    monkeypatch.setitem(cli.COMMANDS, "scenarios", broken)
    monkeypatch.delenv("OOMWIZARD_TRACEBACK", raising=False)
    assert cli.main(["scenarios"]) == Exit.BUG
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("oomwizard: internal error: KeyError:") and "no such thing" in lines[0]
    assert "\x1b" not in err and "\x07" not in err
    assert "please report it" in lines[1]
