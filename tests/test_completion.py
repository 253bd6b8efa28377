"""Shell completion: bash is sourced in a real bash and asked; zsh and fish are checked by the
shells themselves where installed (fish is asked too). Every option comes from the parser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oomwizard.cli import build_parser
from oomwizard.completion import commands, script
from oomwizard.kb.loader import get_kb

ROOT = Path(__file__).resolve().parent.parent


def _script(shell: str) -> str:
    done = subprocess.run([sys.executable, "-m", "oomwizard", "completion", shell], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=True)
    assert done.stdout == script(shell, build_parser())
    return done.stdout


def bash_complete(tmp_path: Path, *lines: str) -> list[list[str]]:
    """What the completion function offers for each command line (a trailing space: a new word)."""
    (tmp_path / "c.bash").write_text(_script("bash"))
    calls = []
    for line in lines:
        calls.append(
            f"COMP_WORDS=({line}); [[ {line!r} == *' ' ]] && COMP_WORDS+=(''); "
            "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _oomwizard; "
            "printf '%s\\n' \"${COMPREPLY[*]}\""
        )
    program = f"source {tmp_path / 'c.bash'}; complete -p oomwizard; " + "; ".join(calls)
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "complete -F _oomwizard oomwizard"
    return [x.split() for x in out[1:]]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_choices_ids_and_files(tmp_path: Path) -> None:
    (tmp_path / "vllm.log").write_text("x\n")
    kb = get_kb()
    got = bash_complete(
        tmp_path,
        "oomwizard ",
        "oomwizard di",
        "oomwizard show sampler-w",
        "oomwizard verify --format json sampler-w",
        "oomwizard verify sampler-warmup vl",
        "oomwizard diagnose --format ",
        "oomwizard diagnose --fo",
        "oomwizard --l",
        "oomwizard completion ",
        "oomwizard --log vl",
        "oomwizard show ",
    )
    _, subs = commands(build_parser())
    assert got[0] == [c.name for c in subs] and "completion" in got[0]
    assert got[1] == ["diagnose"]
    assert set(got[2]) == {i for i in kb.scenarios.keys() | kb.leaves.keys() if i.startswith("sampler-w")}
    assert got[3] == got[2]  # an option's value is not taken for the id
    assert got[4] == ["vllm.log"]
    assert got[5] == ["text", "json", "markdown"]
    assert set(got[6]) == {"--format", "--force", "--follow"}
    assert set(got[7]) == {"--log", "--lang"}
    assert got[8] == ["bash", "zsh", "fish"]
    assert got[9] == ["vllm.log"]
    assert set(got[10]) == set(kb.scenarios) | set(kb.leaves)


def test_every_option_of_the_parser_is_offered() -> None:
    """A new option needs no edit here: the scripts hold every option string of every subcommand."""
    parser = build_parser()
    texts = {shell: script(shell, parser) for shell in ("bash", "zsh", "fish")}
    import argparse

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        for a in p._actions:
            for opt in a.option_strings:
                assert opt in texts["bash"], (name, opt)
                assert opt in texts["zsh"], (name, opt)
                fish = f"-l {opt[2:]}" if opt.startswith("--") else f"-s {opt[1:]}"
                assert fish in texts["fish"], (name, opt)


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_zsh_script_parses_and_registers(tmp_path: Path) -> None:
    path = tmp_path / "c.zsh"
    path.write_text(_script("zsh"))
    assert subprocess.run(["zsh", "-n", str(path)], capture_output=True, timeout=60).returncode == 0
    done = subprocess.run(["zsh", "-fc", f"autoload -Uz compinit && compinit -u -D; source {path}; "
                           "print -r -- $_comps[oomwizard]"], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "_oomwizard", done.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_fish_script_parses_and_completes(tmp_path: Path) -> None:
    path = tmp_path / "c.fish"
    path.write_text(_script("fish"))
    assert subprocess.run(["fish", "-n", str(path)], capture_output=True, timeout=60).returncode == 0
    done = subprocess.run(["fish", "--no-config", "-c", f"source {path}; complete -C 'oomwizard show sampler-w'; "
                           "echo SEP; complete -C 'oomwizard diagnose --format '"],
                          capture_output=True, text=True, timeout=60)
    ids, formats = done.stdout.split("SEP\n")
    kb = get_kb()
    assert set(ids.split()) == {i for i in set(kb.leaves) | set(kb.scenarios) if i.startswith("sampler-w")}
    assert {line.split("\t")[0] for line in formats.splitlines()} == {"text", "json", "markdown"}  # then the option's help


@pytest.mark.skipif(shutil.which("zsh") is None or shutil.which("tmux") is None, reason="needs zsh and tmux")
def test_zsh_completes_ids_and_option_values_when_asked_in_a_terminal(tmp_path: Path) -> None:
    """zsh's completion system runs only in an interactive shell: a real zsh in a private tmux
    server is given Tab and its screen is read back."""
    import time

    path = tmp_path / "c.zsh"
    path.write_text(_script("zsh"))
    bindir = Path(sys.executable).parent
    sock = f"oomwizard-zsh-{tmp_path.name}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=30).stdout

    def wait_for(want: str) -> str:
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline:
            text = tmux("capture-pane", "-p", "-J", "-t", "z")
            if want in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"{want!r} never appeared:\n{text}")

    def screen_after(keys: str, want: str) -> str:
        tmux("send-keys", "-t", "z", "C-u", keys, "Tab")
        return wait_for(want)

    tmux("new-session", "-d", "-s", "z", "-x", "200", "-y", "30",
         f"env -i HOME={tmp_path} TERM=xterm PATH={bindir}:/usr/bin:/bin zsh -f")
    try:
        # the marker the shell prints is not the text typed, so the wait is for the shell itself
        tmux("send-keys", "-t", "z", f"autoload -Uz compinit && compinit -u -D; source {path}; print READY$((6*7))", "Enter")
        wait_for("READY42")
        assert "oomwizard show sampler-warmup" in screen_after("oomwizard show sampler-w", "show sampler-warmup")
        listed = screen_after("oomwizard diagnose --format \t", "markdown")
        assert {"json", "markdown", "text"} <= set(listed.split())
        # options with their descriptions, punctuation kept (a quote, brackets escaped for zsh)
        listed = screen_after("oomwizard diagnose --fo\t", "--format  --")
        assert "the output's format" in listed and "--force" in listed
    finally:
        tmux("kill-server")


def test_a_long_description_is_cut_at_a_word_with_an_ellipsis() -> None:
    from oomwizard.completion import HELP_CELLS, _clean_help

    text = "keep reading the log as it grows (a file, or - for `kubectl logs -f` / `journalctl -f`) " * 2
    cut = _clean_help(text)
    assert len(cut) <= HELP_CELLS and cut.endswith("…") and text.startswith(cut[:-1])
    assert cut[:-1].split()[-1] in text.split()  # the last word is whole
    assert _clean_help("the output's format") == "the output's format"
