"""Shell completion scripts for bash, zsh and fish, written from the argparse parser itself.

Every subcommand's options, their choices (``--format``, ``--lang``) and which of them take a
file come from the parser the program parses with, so a new option completes without anyone
editing a list here. Leaf and scenario ids (``show``, ``verify``) come from the knowledge base
when the script is written: regenerate it after an upgrade, as with ``kubectl completion``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish")
PROG = "oomwizard"
FILE_METAVARS = ("FILE", "PATH")


@dataclass
class Option:
    names: list[str]
    help: str
    takes_value: bool
    choices: list[str] = field(default_factory=list)
    file: bool = False


@dataclass
class Command:
    name: str
    help: str
    options: list[Option]
    ids: bool = False
    """The first positional argument is a leaf or scenario id."""
    files: bool = False
    """Positional arguments (after the id, if any) are files."""
    words: list[str] = field(default_factory=list)
    """The choices of a positional argument (``completion SHELL``)."""


HELP_CELLS = 90
"""A description longer than this is cut at a word, with "…" (the shells show one line)."""


def _clean_help(text: str | None) -> str:
    words = re.sub(r"%\((\w+)\)s", "", text or "").split()
    out: list[str] = []
    for w in words:
        if len(" ".join([*out, w])) > HELP_CELLS - 1:
            return " ".join(out).rstrip(",;:(") + "…"
        out.append(w)
    return " ".join(out)


def _options(parser: argparse.ArgumentParser) -> tuple[list[Option], bool, bool, list[str]]:
    opts: list[Option] = []
    ids = files = False
    words: list[str] = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            continue
        if not a.option_strings:
            metavar = str(a.metavar or a.dest)
            if a.choices:
                words = [str(c) for c in a.choices]
            elif "ID" in metavar:
                ids = True
            else:
                files = True
            continue
        takes = a.nargs != 0
        file = takes and (str(a.metavar or "") in FILE_METAVARS or a.dest == "log")
        choices = [str(c) for c in a.choices] if a.choices else []
        opts.append(Option(list(a.option_strings), _clean_help(a.help), takes, choices, file))
    return opts, ids, files, words


def commands(parser: argparse.ArgumentParser) -> tuple[Command, list[Command]]:
    """The top level (the wizard's options) and each subcommand, as the parser defines them."""
    top_opts = _options(parser)[0]
    top = Command("", "", top_opts)
    subs: list[Command] = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: _clean_help(c.help) for c in a._choices_actions}
            for name, sub in a.choices.items():
                opts, ids, files, words = _options(sub)
                subs.append(Command(name, helps.get(name, ""), opts, ids, files, words))
    return top, subs


def kb_ids() -> list[str]:
    from .kb.loader import get_kb

    kb = get_kb()
    return sorted(set(kb.leaves) | set(kb.scenarios))


# --- bash --------------------------------------------------------------------------------------


def _words(items: Iterable[str]) -> str:
    return " ".join(items)


def bash(top: Command, subs: list[Command], ids: list[str]) -> str:
    names = [c.name for c in subs]
    valued = "|".join(sorted({n for c in [top, *subs] for o in c.options if o.takes_value for n in o.names}))
    out = [
        f"# bash completion for {PROG}; load with: source <({PROG} completion bash)",
        f"_{PROG}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" pos=0 i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in',
        f"            {valued}) i=$((i + 1)); continue ;;",
        "            -*) continue ;;",
        "        esac",
        f'        if [ -z "$cmd" ]; then case "${{COMP_WORDS[i]}}" in {"|".join(names)}) cmd="${{COMP_WORDS[i]}}"; continue ;; esac; fi',
        '        [ -n "$cmd" ] && pos=$((pos + 1))',
        "    done",
        '    case "$cmd $prev" in',
    ]
    for c in [top, *subs]:
        for o in c.options:
            if not o.takes_value:
                continue
            keys = "|".join(f'"{c.name} {n}"' for n in o.names)
            if o.choices:
                out.append(f'        {keys}) COMPREPLY=($(compgen -W "{_words(o.choices)}" -- "$cur")); return ;;')
            elif o.file:
                out.append(f'        {keys}) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;')
            else:
                out.append(f"        {keys}) COMPREPLY=(); return ;;")
    out.append("    esac")
    out.append('    case "$cmd" in')
    for c in [top, *subs]:
        opts = _words(n for o in c.options for n in o.names)
        label = c.name or '""'
        lines = [f'            COMPREPLY=($(compgen -W "{opts}" -- "$cur")); return']
        body = ['        if [[ "$cur" == -* ]]; then', *lines, "        fi"]
        if not c.name:
            body.append(f'        COMPREPLY=($(compgen -W "{_words(names)}" -- "$cur")); return')
        elif c.ids or c.words:
            choices = _words(c.words or ids)
            body.append(f'        if [ "$pos" -eq 0 ]; then COMPREPLY=($(compgen -W "{choices}" -- "$cur")); return; fi')
        if c.files:
            body.append('        COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return')
        out.append(f"    {label})")
        out.extend(body)
        out.append("        ;;")
    out.append("    esac")
    out.append("}")
    out.append(f"complete -F _{PROG} {PROG}")
    return "\n".join(out) + "\n"


# --- zsh ---------------------------------------------------------------------------------------


def _zq(text: str) -> str:
    """Text inside a single-quoted zsh _arguments spec: no quotes, brackets or colons."""
    return re.sub(r"[\[\]:'\\]", " ", text)


def _zdesc(text: str) -> str:
    """An option's help as the ``[description]`` of a single-quoted _arguments spec, punctuation
    kept: brackets and backslashes escaped for _arguments, a quote closed and reopened for sh."""
    inner = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return inner.replace("'", "'\\''")


def _zsh_spec(o: Option) -> list[str]:
    action = ""
    if o.takes_value:
        if o.choices:
            action = f":{_zq(o.names[-1].lstrip('-'))}:({' '.join(o.choices)})"
        elif o.file:
            action = ":file:_files"
        else:
            action = ":value: "
    group = "(" + " ".join(o.names) + ")" if len(o.names) > 1 else ""
    rep = "*" if o.names[-1] in ("--log", "--set") else ""
    spec = []
    for n in o.names:
        spec.append(f"'{group}{rep}{n}[{_zdesc(o.help)}]{action}'")
    return spec


def zsh(top: Command, subs: list[Command], ids: list[str]) -> str:
    out = [
        f"#compdef {PROG}",
        f"# zsh completion for {PROG}; load with: source <({PROG} completion zsh)",
        f"_{PROG}() {{",
        "    local curcontext=\"$curcontext\" state line",
        "    typeset -A opt_args",
        "    _arguments -C \\",
    ]
    for o in top.options:
        out.extend(f"        {s} \\" for s in _zsh_spec(o))
    out.append("        '1: :->command' \\")
    out.append("        '*:: :->args'")
    out.append("    case $state in")
    out.append("    command)")
    out.append("        local -a cmds")
    out.append("        cmds=(")
    for c in subs:
        out.append(f"            '{c.name}:{_zq(c.help)}'")
    out.append("        )")
    out.append(f"        _describe -t commands '{PROG} command' cmds ;;")
    out.append("    args)")
    out.append("        case $line[1] in")
    for c in subs:
        out.append(f"        {c.name})")
        out.append("            _arguments \\")
        for o in c.options:
            out.extend(f"                {s} \\" for s in _zsh_spec(o))
        if c.ids or c.words:
            out.append(f"                '1:{'id' if c.ids else 'shell'}:({' '.join(c.words or ids)})' \\")
        if c.files:
            out.append("                '*:file:_files' \\")
        out.append("                && return 0 ;;")
    out.append("        esac ;;")
    out.append("    esac")
    out.append("}")
    out.append(f'if [ "$funcstack[1]" = "_{PROG}" ]; then _{PROG} "$@"; else compdef _{PROG} {PROG}; fi')
    return "\n".join(out) + "\n"


# --- fish --------------------------------------------------------------------------------------


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(cond: str, o: Option) -> str:
    parts = [f"complete -c {PROG} -n {_fq(cond)}"]
    for n in o.names:
        parts.append(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}")
    if o.takes_value:
        if o.choices:
            parts.append(f"-x -a {_fq(' '.join(o.choices))}")
        elif o.file:
            parts.append("-r -F")
        else:
            parts.append("-x")
    if o.help:
        parts.append(f"-d {_fq(o.help)}")
    return " ".join(parts)


def fish(top: Command, subs: list[Command], ids: list[str]) -> str:
    names = " ".join(c.name for c in subs)
    out = [f"# fish completion for {PROG}; load with: {PROG} completion fish | source",
           f"complete -c {PROG} -f"]
    top_cond = f"not __fish_seen_subcommand_from {names}"
    for c in subs:
        out.append(f"complete -c {PROG} -n {_fq(top_cond)} -a {c.name} -d {_fq(c.help)}")
    out.extend(_fish_option(top_cond, o) for o in top.options)
    for c in subs:
        cond = f"__fish_seen_subcommand_from {c.name}"
        out.extend(_fish_option(cond, o) for o in c.options)
        if c.ids or c.words:
            out.append(f"complete -c {PROG} -n {_fq(cond)} -a {_fq(' '.join(c.words or ids))}")
        if c.files:
            out.append(f"complete -c {PROG} -n {_fq(cond)} -F")
    return "\n".join(out) + "\n"


WRITERS = {"bash": bash, "zsh": zsh, "fish": fish}


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    top, subs = commands(parser)
    return WRITERS[shell](top, subs, kb_ids())
