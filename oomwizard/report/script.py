"""A leaf as a shell script the operator can keep: every fix, the checklist, and nothing run by default.

The fixes of a leaf are alternatives, so a script that ran them top to bottom would be wrong (and
would start vLLM several times). Each fix becomes a function; the script runs one only when asked
by number, and a fix that still needs editing (a placeholder to fill in, a ``vllm serve`` line that
holds only the changed flags, several spellings for an unknown vLLM version) refuses to run until
the operator has edited it.
"""

from __future__ import annotations

import re

from ..advice.commands import RenderedFix, RenderedVariant
from ..engine import Step
from ..facts.model import FactSet
from ..i18n import ui
from ..kb.model import Leaf
from ..text.cells import wrap
from ..text.redact import REDACTED
from .leaf import render_fixes

SHOWN_PLACEHOLDER_RE = re.compile(r"<[A-Z][A-Z0-9_]*>")
"""A value still to be filled in, as rendered commands show it (``<MODEL>``, ``<MAX_MODEL_LEN>``)."""


def _comment(text: str, width: int = 78, indent: str = "", lead: str = "") -> list[str]:
    """``text`` as wrapped shell comments; ``indent`` goes before the ``#``, ``lead`` after it."""
    lines: list[str] = []
    first, rest = indent + "# " + lead, indent + "# " + " " * len(lead)
    for para in text.split("\n"):
        if not para.strip():
            continue
        lines.extend(wrap(para, width, first, rest))
    return lines


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _blockers(rf: RenderedFix, facts: FactSet | None, lang: str) -> list[str]:
    out: list[str] = []
    if not rf.available:
        spec = " | ".join(v.versions.text for v in rf.fix.variants)
        out.append(ui("not_for_version", lang, version=rf.version, spec=spec))
    if len(rf.variants) > 1:
        out.append(ui("script.pick_variant", lang))
    missing = sorted({m for rv in rf.variants for m in SHOWN_PLACEHOLDER_RE.findall(rv.script)})
    if missing:
        out.append(f"{ui('fill_in', lang)}: {', '.join(missing)}")
    if any(REDACTED in rv.script for rv in rf.variants):
        out.append(ui("script.redacted", lang))
    known_command = facts is not None and facts.value("serve_command")
    if not known_command and any(v.changes_server for v in rf.fix.variants):
        out.append(ui("script.partial_serve", lang))
    if missing:
        out.append(ui("script.uncomment", lang))
    return out


def _variant_lines(rf: RenderedFix, rv: RenderedVariant, lang: str, live: bool = True) -> list[str]:
    """One spelling of a fix; with the version unknown only the newest release's (the first) is
    live, the others are comments, as in a copy: the function never runs two set-ups in turn."""
    out: list[str] = []
    if len(rf.variants) > 1:
        out.append(f"    # vLLM {rv.versions}")
    for r in rv.values:
        if r.why is not None:
            out.extend(_comment(f"{r.value}: {r.why(lang)}", indent="    "))
    if rv.note:
        out.extend(_comment(rv.note(lang), indent="    "))
    for line in rv.script.splitlines():
        # A placeholder such as <MAX_MODEL_LEN> reads as a redirection to sh: keep the line as a
        # comment so the file still parses (the menu must work); the guard above explains.
        out.append(("    # " if SHOWN_PLACEHOLDER_RE.search(line) or not live else "    ") + line)
    return out


def leaf_script(
    leaf: Leaf,
    facts: FactSet | None = None,
    path: tuple[Step, ...] | None = None,
    lang: str = "en",
) -> str:
    fixes = render_fixes(leaf, facts, lang)
    out: list[str] = ["#!/bin/sh"]
    out.extend(_comment(leaf.title(lang)))
    out.append(f"# [{leaf.id}] {ui('evidence', lang)}: {ui('evidence.' + leaf.evidence, lang)}")
    out.append("#")
    out.extend(_comment(f"{ui('conclusion', lang)}: {leaf.conclusion(lang)}"))
    out.append("#")
    out.extend(_comment(f"{ui('root_cause', lang)} ({ui(leaf.root_cause_status, lang)}): {leaf.root_cause(lang)}"))
    out.append("#")
    out.extend(_comment(ui("script.usage", lang)))
    out.append("#")
    out.append(f"# {ui('checklist', lang)}:")
    for c in leaf.checks:
        mark = f" ({ui('auto_check', lang)})" if c.auto else ""
        out.extend(_comment(f"[ ] {c.text(lang)}{mark}", lead="  "))
    if leaf.caveats:
        out.append("#")
        out.append(f"# {ui('caveats', lang)}:")
        for cv in leaf.caveats:
            out.extend(_comment(f"- {cv(lang)}", lead="  "))
    out.append("#")
    out.append(f"# {ui('sources', lang)}:")
    for s in leaf.sources:
        out.append(f"#   {s.url}")
    if path:
        out.append("#")
        out.append(f"# {ui('path', lang)}:")
        for step in path:
            out.extend(_comment(f"{step.question}: {step.label} [{step.said_how(lang)}]", lead="  "))
    out.append("")
    out.append("set -u")
    for i, rf in enumerate(fixes, 1):
        out.append("")
        out.append(f"fix_{i}() {{")
        tag = f"{ui('cost.' + rf.fix.cost, lang)} · {ui('evidence.' + rf.fix.evidence, lang)}"
        out.extend(_comment(f"{i}. {rf.fix.title(lang)} ({tag})", indent="    "))
        out.extend(_comment(rf.fix.cost_note(lang), indent="    "))
        blockers = _blockers(rf, facts, lang)
        if blockers:
            msg = ui("script.edit_first", lang, n=i, reason="; ".join(blockers))
            out.append(f"    echo {_sh_quote(msg)} >&2; return 2  # {ui('script.delete_line', lang)}")
        for n, rv in enumerate(rf.variants):
            out.extend(_variant_lines(rf, rv, lang, live=n == 0))
        out.append("}")
    out.append("")
    out.append('case "${1:-}" in')
    for i in range(1, len(fixes) + 1):
        out.append(f"    {i}) fix_{i} ;;")
    out.append("    *)")
    out.append(f"        echo {_sh_quote(ui('script.menu', lang))}")
    for i, rf in enumerate(fixes, 1):
        item = f"  {i}  {rf.fix.title(lang)} ({ui('cost.' + rf.fix.cost, lang)})"
        out.append(f"        echo {_sh_quote(item)}")
    out.append("        ;;")
    out.append("esac")
    return "\n".join(out) + "\n"
