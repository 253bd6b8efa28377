"""Every command a fix prints must work on every vLLM release its variant names.

A flag that a release's parser does not know makes ``vllm serve`` exit at once; a ``VLLM_*``
variable a release does not read is silently ignored (0.17.0+ only warns). Either way the operator
has followed our advice and nothing changed. So each variant's flags (set, removed, or typed into a
``vllm serve`` shell line) and variables are held against every known release in its range, and
flag values against what those releases parse. Placeholders must name a calculation or a fact.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..advice.commands import ALIASES
from ..advice.numbers import known_placeholder
from ..kb.model import PLACEHOLDER_RE, Fix, Leaf, Variant
from ..kb.releases import (
    DOTTED_FROM,
    ENV_RE,
    NEVER_EXISTED,
    PREFIX_ONLY_FLAGS,
    Release,
    check_value,
    group_spans,
    load_releases,
    releases_in,
    span,
)
from .conditions import parse_range
from .context import LintContext

_SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")"}
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


@dataclass(frozen=True)
class FlagUse:
    """A flag as written in the knowledge base, with its value (None: a bare switch or a removal)."""

    flag: str
    value: str | None
    line: int


def serve_flags(command: str) -> Iterator[tuple[str, str | None]]:
    """(flag, value) for each option of each ``vllm serve`` (or API server module) in a shell line."""
    command = re.sub(r"\\\r?\n", " ", command)  # a command continued over several lines
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    i = 0
    while i < len(tokens):
        after = _server_args_start(tokens, i)
        if after < 0:
            i += 1
            continue
        i = after
        while i < len(tokens) and tokens[i] not in _SEPARATORS:
            tok = tokens[i]
            if tok.startswith("-") and not _NUMBER_RE.match(tok):
                name, eq, value = tok.partition("=")
                if eq:
                    yield name, value
                elif i + 1 < len(tokens) and tokens[i + 1] not in _SEPARATORS and (
                    not tokens[i + 1].startswith("-") or _NUMBER_RE.match(tokens[i + 1])
                ):
                    yield name, tokens[i + 1]
                    i += 1
                else:
                    yield name, None
            i += 1


def _server_args_start(tokens: list[str], i: int) -> int:
    """Index of the first argument when ``tokens[i]`` starts a vLLM server, else -1."""
    tok = tokens[i]
    if tok.rsplit("/", 1)[-1] == "vllm" and i + 1 < len(tokens) and tokens[i + 1] == "serve":
        return i + 2
    if tok.startswith("vllm.entrypoints.") and tok.endswith("api_server"):
        return i + 1
    return -1


def flag_problems(flag: str, releases: list[Release], where: str) -> Iterator[tuple[str, str]]:
    """(severity, message) for a flag that is misspelt or missing from some release in ``releases``."""
    name = flag
    if flag.startswith("--"):
        head, dot, tail = flag[2:].partition(".")
        if "_" in head:
            dashed = "--" + head.replace("_", "-") + dot + tail
            yield "error", f"{flag}: write the dashed form {dashed} (vLLM also takes underscores; the knowledge base does not)"
            name = dashed
        if dot:
            name = name.partition(".")[0]
            early = [r for r in releases if r.version < DOTTED_FROM]
            if early:
                yield "error", f"{flag}: the dotted form is parsed only from vLLM {DOTTED_FROM} ({where} includes {span(early)})"
    if name in PREFIX_ONLY_FLAGS:
        full = PREFIX_ONLY_FLAGS[name]
        yield "warning", f"{flag} works only as an abbreviation of {full} (argparse prefix matching); write {full}"
        name = full
    missing = [r for r in releases if not r.has_flag(name)]
    if missing:
        having = [r for r in load_releases() if r.has_flag(name)]
        elsewhere = f"it exists in {group_spans(having, list(load_releases()))}" if having else "no release 0.6.6-0.33.0 has it"
        alias = f"; the long name is {ALIASES[name]}" if name in ALIASES else ""
        yield "error", f"{flag} does not exist in vLLM {group_spans(missing, releases)} ({where}; {elsewhere}{alias})"


def value_problems(flag: str, value: str, releases: list[Release]) -> Iterator[str]:
    """Messages for a flag value some releases in range would reject (grouped by release span)."""
    probe = PLACEHOLDER_RE.sub("1", value)
    if probe != value and not probe.lstrip().startswith("{"):
        return  # a computed value: known only on the operator's machine
    name = flag.replace("_", "-") if flag.startswith("--") else flag
    failing: dict[str, list[Release]] = {}
    for r in releases:
        msg = check_value(r, name, probe)
        if msg:
            failing.setdefault(msg, []).append(r)
    for msg, rs in failing.items():
        yield f"{msg} (vLLM {group_spans(rs, releases)})"


def env_problems(name: str, releases: list[Release], where: str, unsetting: bool) -> Iterator[tuple[str, str]]:
    if name in NEVER_EXISTED:
        yield "error", f"{name}: {NEVER_EXISTED[name]}"
        return
    if not name.startswith("VLLM_"):
        return
    missing = [r for r in releases if not r.has_env(name)]
    if not missing:
        return
    having = [r for r in load_releases() if r.has_env(name)]
    elsewhere = f"it exists in {group_spans(having, list(load_releases()))}" if having else "no release 0.6.6-0.33.0 reads it"
    if unsetting:
        yield "warning", f"unset {name}: vLLM {group_spans(missing, releases)} does not read it ({where}; {elsewhere}); harmless, but is the advice right?"
    else:
        yield "error", f"{name} does not exist in vLLM {group_spans(missing, releases)} ({where}; {elsewhere}): vLLM ignores it"


def check_commands(ctx: LintContext) -> None:
    for leaf in ctx.kb.leaves.values():
        for fix in leaf.fixes:
            for i, variant in enumerate(fix.variants):
                _check_variant(ctx, leaf, fix, i, variant)


def _check_variant(ctx: LintContext, leaf: Leaf, fix: Fix, index: int, v: Variant) -> None:
    f = leaf.file
    what = f"leaf {leaf.id}, fix {fix.id}, variant {index + 1}"

    def line(key: str, item: str | int | None = None) -> int:
        return ctx.line_in(f, v.line, key, item)

    spec_text = v.versions.text
    where = f"versions {spec_text!r}"
    _, why = parse_range(spec_text)
    if why:
        ctx.error(f, line("versions"), f"{what}: {why}")
        return
    releases = releases_in(v.versions)
    if not releases:
        ctx.error(f, line("versions"), f"{what}: versions {spec_text!r} cover no known vLLM release ({span(list(load_releases()))})")
        return
    _check_overlap(ctx, leaf, fix, index, v, releases, line("versions"))

    _check_flags(ctx, f, what, v, releases, where, line)
    _check_env(ctx, f, what, v, releases, where, line)
    _check_placeholders(ctx, f, what, v, line)


def _check_flags(
    ctx: LintContext, f: str, what: str, v: Variant, releases: list[Release], where: str, line: Callable[..., int]
) -> None:
    """Every flag a variant sets, removes or runs exists, with a valid value, in each release it names."""
    uses = [FlagUse(name, value, line("flags", name)) for name, value in v.flags]
    uses += [FlagUse(name, None, line("remove_flags", name)) for name in v.remove_flags]
    for i, cmd in enumerate(v.shell):
        uses += [FlagUse(name, value, line("shell", i)) for name, value in serve_flags(cmd)]
    for use in uses:
        for severity, msg in flag_problems(use.flag, releases, where):
            ctx.report(severity, f, use.line, f"{what}: {msg}")
        if use.value is not None:
            for msg in value_problems(use.flag, use.value, releases):
                ctx.error(f, use.line, f"{what}: {msg}")


def _check_env(
    ctx: LintContext, f: str, what: str, v: Variant, releases: list[Release], where: str, line: Callable[..., int]
) -> None:
    """Every variable a variant sets or unsets (also inside its shell lines) exists in those releases."""
    envs = [(name, line("env", name), False) for name, _ in v.env]
    envs += [(name, line("unset_env", name), True) for name in v.unset_env]
    for i, cmd in enumerate(v.shell):
        unset = set(re.findall(r"\bunset\s+((?:[A-Za-z_][A-Za-z0-9_]*\s*)+)", cmd))
        unset_names = {n for group in unset for n in group.split()}
        envs += [(name, line("shell", i), name in unset_names) for name in ENV_RE.findall(cmd)]
    for name, at, unsetting in envs:
        if not _ENV_NAME_RE.match(name):
            ctx.error(f, at, f"{what}: {name!r} is not a valid environment variable name")
            continue
        for severity, msg in env_problems(name, releases, where, unsetting):
            ctx.report(severity, f, at, f"{what}: {msg}")


def _check_placeholders(ctx: LintContext, f: str, what: str, v: Variant, line: Callable[..., int]) -> None:
    templates = [(value, line("flags", name)) for name, value in v.flags if value is not None]
    templates += [(value, line("env", name)) for name, value in v.env]
    templates += [(cmd, line("shell", i)) for i, cmd in enumerate(v.shell)]
    for text, at in templates:
        for name in PLACEHOLDER_RE.findall(text):
            if not known_placeholder(name):
                ctx.error(f, at, f"{what}: placeholder {{{name}}} is neither a calculation (advice/numbers.py, advice/calcs/) nor a fact")


def _check_overlap(ctx: LintContext, leaf: Leaf, fix: Fix, index: int, v: Variant, releases: list[Release], at: int) -> None:
    what = f"leaf {leaf.id}, fix {fix.id}, variant {index + 1}"
    mine = {r.version for r in releases}
    for j, earlier in enumerate(fix.variants[:index]):
        shared = [r for r in releases_in(earlier.versions) if r.version in mine]
        if shared:
            ctx.warn(
                leaf.file,
                at,
                f"{what}: overlaps variant {j + 1} on vLLM {group_spans(shared, releases)}; only the first matching variant is shown",
            )
    if not leaf.versions.is_any and not any(leaf.versions.contains(r.version) for r in releases):
        ctx.warn(leaf.file, at, f"{what}: applies to none of the leaf's releases ({leaf.versions.text})")
