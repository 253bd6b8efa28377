"""Turn a fix into the exact commands to paste, for this vLLM version and this command line.

When the command that started vLLM is known (a running process, or the log's own record of its
arguments) the fix is applied *to that command*: existing flags are replaced rather than repeated,
whatever spelling they used (``--max_num_seqs``, ``--max-num-seqs=…``, ``-tp``), and opposite
switches are dropped. Otherwise a minimal ``vllm serve <model> …`` line shows the flags to add.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from ..facts.model import FactSet
from ..facts.vllm_args import SHORT_FLAGS, canonical_key, is_switch
from ..i18n import Text, ui
from ..kb.model import PLACEHOLDER_RE, Fix, Variant
from ..text.output import clean_text
from ..text.redact import REDACTED, SHELL_VARS, flag_name, redact_argv, secret_value_spans
from ..versions import Version
from .numbers import Resolved, resolve

ALIASES = {short: "--" + key.replace("_", "-") for short, key in SHORT_FLAGS.items()} | {"-O": "--optimization-level"}
"""Short aliases by their long names (:mod:`oomwizard.facts.vllm_args`); a rewritten command
is for a release that reads ``-O`` as ``--optimization-level``."""


def canonical(flag: str) -> str:
    """``--max_num_seqs`` -> ``--max-num-seqs``; short aliases to their long names."""
    if flag in ALIASES:
        return ALIASES[flag]
    head, dot, tail = flag.partition(".")
    if dot and head in ALIASES:  # -cc.cudagraph_mode
        return ALIASES[head] + dot + tail
    if flag.startswith("--"):
        head, dot, tail = flag[2:].partition(".")
        return "--" + head.replace("_", "-") + (dot + tail if dot else "")
    return flag


def opposites(flag: str) -> set[str]:
    """Switches that undo ``flag``: ``--no-X``/``--X`` and ``--enable-X``/``--disable-X``."""
    name = flag[2:]
    out = set()
    if name.startswith("no-"):
        out.add("--" + name[3:])
    else:
        out.add("--no-" + name)
    if name.startswith("enable-"):
        out.add("--disable-" + name[7:])
        out.add("--no-disable-" + name[7:])
    if name.startswith("disable-"):
        out.add("--enable-" + name[8:])
        out.add("--no-enable-" + name[8:])
    return out


@dataclass
class ServeCommand:
    """A parsed ``vllm serve`` (or ``python -m vllm.entrypoints…``) command line."""

    argv: list[str]

    @classmethod
    def parse(cls, text: str) -> ServeCommand:
        try:
            return cls(shlex.split(text))
        except ValueError:
            return cls(text.split())

    def _flag_spans(self) -> list[tuple[int, int, str]]:
        """(start, end, canonical flag) for every option and the value that follows it."""
        spans = []
        i = 0
        argv = self.argv
        while i < len(argv):
            tok = argv[i]
            if tok.startswith("-") and not _is_number(tok):
                name, eq, _ = tok.partition("=")
                end = i + 1
                if not eq and i + 1 < len(argv) and not (argv[i + 1].startswith("-") and not _is_number(argv[i + 1])):
                    end = i + 2 if _takes_value(name, argv, i) else i + 1
                spans.append((i, end, canonical(name)))
                i = end
            else:
                i += 1
        return spans

    def has(self, flag: str) -> bool:
        c = canonical(flag)
        return any(f == c for _, _, f in self._flag_spans())

    def value(self, flag: str) -> str | None:
        """The value given to ``flag`` (any spelling: ``--x=v``, ``--x v``, ``--x_y``, short alias), if any."""
        c = canonical(flag)
        for start, end, f in self._flag_spans():
            if f == c:
                _, eq, inline = self.argv[start].partition("=")
                if eq:
                    return inline
                return self.argv[start + 1] if end > start + 1 else None
        return None

    def remove(self, flag: str) -> None:
        """Drop ``flag`` in any spelling, and its dotted keys (``--speculative-config.method``) too."""
        c = canonical(flag)
        keep: list[str] = []
        spans = {s: (e, f) for s, e, f in self._flag_spans()}
        i = 0
        while i < len(self.argv):
            if i in spans and (spans[i][1] == c or ("." not in c and spans[i][1].startswith(c + "."))):
                i = spans[i][0]
                continue
            keep.append(self.argv[i])
            i += 1
        self.argv = keep

    def set(self, flag: str, value: str | None) -> None:
        for opp in opposites(canonical(flag)):
            self.remove(opp)
        c = canonical(flag)
        if "." not in c:  # a whole value replaces the dotted keys that would be merged into it
            for _, _, f in self._flag_spans():
                if f.startswith(c + "."):
                    self.remove(f)
        new = [flag] if value is None else [flag, value]
        for s, e, f in self._flag_spans():
            if f == c:
                self.argv[s:e] = new
                # drop later duplicates
                rest = ServeCommand(self.argv[s + len(new):])
                rest.remove(flag)
                self.argv = self.argv[: s + len(new)] + rest.argv
                return
        self.argv.extend(new)

    def secret_vars(self) -> list[str]:
        """The shell variables :meth:`text` reads hidden values from, in order."""
        return self._render()[1]

    def text(self) -> str:
        """The command to paste: secrets become ``"$VLLM_API_KEY"``-style references, never a value."""
        return " ".join(self._render()[0])

    def _render(self) -> tuple[list[str], list[str]]:
        """Shell words and the variables they read. A secret flag's values become ``"$VLLM_API_KEY"``
        (``"$VLLM_API_KEY_2"`` …); a secret hidden inside another value (a URL's password, a JSON
        field) becomes ``${DOWNLOAD_DIR_SECRET}`` inside that value, so no placeholder is ever run."""
        redacted = redact_argv(self.argv)
        words = [shlex.quote(a) for a in redacted]
        names: list[str] = []
        for first, end, secret_flag in secret_value_spans(self.argv):
            for n, k in enumerate(range(first, end)):
                names.append(_secret_var(secret_flag, n))
                words[k] = f'"${names[-1]}"'
        for k, a in enumerate(self.argv):
            flag = flag_name(a)
            if flag and "=" in a:
                names.append(_secret_var(flag, 0))
                words[k] = f'{a.partition("=")[0]}="${names[-1]}"'
            elif REDACTED in redacted[k] and not words[k].startswith('"$'):
                head, eq, _ = a.partition("=")
                owner = head if a.startswith("--") and eq else self.argv[k - 1] if k and self.argv[k - 1].startswith("--") else "--value"
                pieces = redacted[k].split(REDACTED)
                base = canonical(owner)[2:].upper().replace("-", "_").replace(".", "_") + "_SECRET"
                out = _dq(pieces[0])
                for n, piece in enumerate(pieces[1:]):
                    names.append(base if n == 0 else f"{base}_{n + 1}")
                    out += "${" + names[-1] + "}" + _dq(piece)
                words[k] = f'"{out}"'
        return words, list(dict.fromkeys(names))


def _dq(text: str) -> str:
    """``text`` for the inside of a double-quoted shell word."""
    return re.sub(r'([\\"$`])', r"\\\1", text)


def _secret_var(flag: str, n: int) -> str:
    """``--api-key`` -> ``VLLM_API_KEY``, its second value ``VLLM_API_KEY_2``; others by their name."""
    base = SHELL_VARS.get(flag) or flag[2:].upper().replace("-", "_")
    return base if n == 0 else f"{base}_{n + 1}"


def _is_number(tok: str) -> bool:
    return bool(re.fullmatch(r"-?\d+(\.\d+)?", tok))


def _takes_value(name: str, argv: list[str], i: int) -> bool:
    return not is_switch(canonical_key(name))


# --- rendering a fix ---------------------------------------------------------------------------


@dataclass
class RenderedVariant:
    versions: str
    script: str
    values: list[Resolved] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    note: Text | None = None
    assumed: str | None = None
    """Set when the version was a pre-release/dev build matched to its release line."""


@dataclass
class RenderedFix:
    fix: Fix
    variants: list[RenderedVariant]
    available: bool = True
    """False when the vLLM version is known and no variant of this fix exists for it."""
    version: str | None = None


def _fill(template: str, facts: FactSet, used: dict[str, Resolved]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        r = used.get(name) or resolve(name, facts)
        used[name] = r
        return r.value if r.value is not None else r.placeholder

    return PLACEHOLDER_RE.sub(sub, template)


def render_variant(variant: Variant, facts: FactSet, lang: str = "en") -> RenderedVariant:
    used: dict[str, Resolved] = {}
    lines: list[str] = []
    for name, value in variant.env:
        lines.append(f"export {name}={shlex.quote(_fill(value, facts, used))}")
    for name in variant.unset_env:
        lines.append(f"unset {name}")
    for cmd in variant.shell:
        lines.append(_fill(cmd, facts, used))
    if variant.flags or variant.remove_flags or variant.env or variant.unset_env:
        lines.append(_server_line(variant, facts, used, lang))
    missing = [r.placeholder for r in used.values() if r.value is None]
    return RenderedVariant(
        versions=variant.versions.text,
        script=clean_text("\n".join(lines)),
        values=[_clean_resolved(r) for r in used.values()],
        missing=missing,
        note=variant.note,
    )


def _clean_resolved(r: Resolved) -> Resolved:
    """Values and their reasons quote fact values and file names: clean them for every frontend."""
    why = Text(clean_text(r.why.en), clean_text(r.why.zh)) if r.why is not None else None
    return Resolved(r.name, clean_text(r.value) if r.value is not None else None, why, r.placeholder)


def _server_line(variant: Variant, facts: FactSet, used: dict[str, Resolved], lang: str = "en") -> str:
    original = facts.value("serve_command")
    if original:
        cmd = ServeCommand.parse(str(original))
        for flag in variant.remove_flags:
            cmd.remove(flag)
        for flag, value in variant.flags:
            cmd.set(flag, None if value is None else _fill(value, facts, used))
        return _secrets_note(cmd, lang) + _bare_placeholders(cmd.text())
    model = facts.value("model")
    argv = ["vllm", "serve", str(model) if model else "<MODEL>"]
    cmd = ServeCommand(argv)
    for flag, value in variant.flags:
        cmd.set(flag, None if value is None else _fill(value, facts, used))
    text = _bare_placeholders(cmd.text())
    note = "  # " + ui("cmd.other_flags", lang)
    if variant.remove_flags:
        note += ui("cmd.remove", lang, flags=" ".join(variant.remove_flags))
    return text + note


def _secrets_note(cmd: ServeCommand, lang: str) -> str:
    """A comment line before a command that reads secrets from the shell: export them first."""
    names = cmd.secret_vars()
    return "# " + ui("cmd.secret_vars", lang, names=" ".join(names)) + "\n" if names else ""


def _bare_placeholders(text: str) -> str:
    """``'<MAX_NUM_SEQS>'`` -> ``<MAX_NUM_SEQS>``: a placeholder must look like one, not like a value."""
    return re.sub(r"'(<[A-Z][A-Z0-9_]*>)'", r"\1", text)


def render_fix(fix: Fix, facts: FactSet, lang: str = "en") -> RenderedFix:
    """Render the variant for the known vLLM version, or every variant when it is unknown."""
    raw = facts.value("vllm_version")
    version = Version.try_parse(raw) if raw is not None else None
    if version is None:
        # The spelling a paste gives live (the newest release's) comes first wherever it is shown.
        first = newest_index(fix)
        ordered = [fix.variants[first]] + [v for i, v in enumerate(fix.variants) if i != first]
        return RenderedFix(fix, [render_variant(v, facts, lang) for v in ordered], True, None)
    chosen = fix.variant_for(version)
    if chosen is None:
        return RenderedFix(fix, [render_variant(v, facts, lang) for v in fix.variants], False, str(version))
    rv = render_variant(chosen, facts, lang)
    if version.prerelease:
        rv.assumed = version.base
    return RenderedFix(fix, [rv], True, str(version))


# --- what to paste -----------------------------------------------------------------------------


def newest_index(fix: Fix) -> int:
    """The index of the variant for the newest vLLM release known, else the last one listed.

    Used when the version is not known: one spelling is given live and the others commented out,
    so a paste never runs two contradictory set-ups one after the other.
    """
    from ..kb.releases import load_releases

    releases = load_releases()
    if releases:
        newest = releases[-1].version
        for i, variant in enumerate(fix.variants):
            if variant.versions.contains(newest):
                return i
    return len(fix.variants) - 1


def paste_text(rf: RenderedFix, lang: str = "en") -> str:
    """The commands to paste for one fix, never two alternatives live at once.

    The known version's variant alone; with the version unknown, the newest release's spelling with
    the other spellings as comments under it; nothing for a fix that does not apply to the known
    version (the frontends say why instead).
    """
    if not rf.available or not rf.variants:
        return ""
    if len(rf.variants) == 1:
        return clean_text(rf.variants[0].script)
    chosen = rf.variants[0]  # with the version unknown, render_fix puts the newest release's first
    out = [f"# vLLM {chosen.versions}: " + ui("cmd.variant_unknown", lang), chosen.script]
    for rv in rf.variants[1:]:
        out.append("")
        out.append(f"# vLLM {rv.versions}:")
        out.extend(f"# {line}" for line in rv.script.splitlines())
    return clean_text("\n".join(out))


def applicable_first(fixes: list[RenderedFix]) -> list[RenderedFix]:
    """Fixes that apply to the known version first, in their order; those that do not, sunk last."""
    return [rf for rf in fixes if rf.available] + [rf for rf in fixes if not rf.available]
