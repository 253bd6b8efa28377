"""A leaf as text, Markdown or JSON: the conclusion, commands for this machine, the checklist.

The same functions serve ``diagnose``, ``show``, ``export``, plain mode and what the TUI prints to
the normal screen on exit, so all of them say the same thing in the same order.
"""

from __future__ import annotations

from typing import Any

from ..advice.commands import RenderedFix, applicable_first, render_fix
from ..engine import Step
from ..facts.model import FactSet
from ..i18n import ui
from ..kb.coderef import parse_code_ref
from ..kb.model import Check, Leaf
from ..text.cells import fill


def render_fixes(leaf: Leaf, facts: FactSet | None, lang: str = "en") -> list[RenderedFix]:
    """The leaf's fixes for these facts, numbered the same in every output: what applies to the
    known vLLM version first (cheapest first), what does not apply last."""
    return applicable_first([render_fix(f, facts or FactSet(), lang) for f in leaf.fixes])


def check_json(c: Check, number: int) -> dict[str, Any]:
    """A checklist item; ``number`` is its place in the checklist (1-based), the same in the TUI,
    the ``.sh``, ``verify`` and every output."""
    out: dict[str, Any] = {"number": number, **c.text.as_dict(), "auto": None}
    if c.auto:
        auto: dict[str, str] = {}
        if c.auto.log_present:
            auto["log_present"] = c.auto.log_present
        if c.auto.log_absent:
            auto["log_absent"] = c.auto.log_absent
        if c.auto.fact:
            auto["fact"] = c.auto.fact.source
        out["auto"] = auto
    return out


def fix_json(number: int, rf: RenderedFix) -> dict[str, Any]:
    """One fix with its variants. ``number`` is the fix's place in the leaf (cheapest first), the
    number the TUI shows and the saved ``.sh`` runs (``sh fix.sh 2``); it never depends on the
    vLLM version. ``variants`` holds the one for the known version, or all of them."""
    return {
        "number": number,
        "id": rf.fix.id,
        "title": rf.fix.title.as_dict(),
        "cost": rf.fix.cost,
        "cost_note": rf.fix.cost_note.as_dict(),
        "evidence": rf.fix.evidence,
        "available": rf.available,
        "version": rf.version,
        "why": rf.fix.why.as_dict() if rf.fix.why else None,
        "sources": list(rf.fix.sources),
        "variants": [
            {
                "applies_to": rv.versions,
                "command": rv.script,
                "values": [
                    {"name": r.name, "value": r.value, "why": r.why.as_dict() if r.why else None} for r in rv.values
                ],
                "missing": list(rv.missing),
                "note": rv.note.as_dict() if rv.note else None,
                "assumed": rv.assumed,
            }
            for rv in rf.variants
        ],
    }


def leaf_json(leaf: Leaf, facts: FactSet | None = None, path: tuple[Step, ...] | None = None) -> dict[str, Any]:
    """Everything about a leaf; with ``facts`` the commands carry this machine's values."""
    out: dict[str, Any] = {
        "id": leaf.id,
        "scenarios": list(leaf.scenarios),
        "title": leaf.title.as_dict(),
        "conclusion": leaf.conclusion.as_dict(),
        "environment": leaf.environment.as_dict(),
        "root_cause": {"status": leaf.root_cause_status, **leaf.root_cause.as_dict()},
        "versions": leaf.versions.text,
        "evidence": leaf.evidence,
        "fixes": [fix_json(i, rf) for i, rf in enumerate(render_fixes(leaf, facts), 1)],
        "checklist": [check_json(c, i) for i, c in enumerate(leaf.checks, 1)],
        "caveats": [c.as_dict() for c in leaf.caveats],
        "sources": [s.url for s in leaf.sources],
        "path": None,
    }
    if path is not None:
        out["path"] = [
            {"question": s.question, "answer": s.answer, "label": s.label, "source": s.source, "how": s.how}
            for s in path
        ]
    return out


def _wrap(text: str, indent: str, width: int, hang: str | None = None) -> str:
    """Wrap prose; ``hang`` indents continuation lines (defaults to ``indent``)."""
    rest = indent if hang is None else hang
    return "\n".join(fill(p, width, indent, rest) for p in text.split("\n") if p.strip())


def _tag(rf: RenderedFix, versions: str, lang: str) -> str:
    parts = [ui(f"cost.{rf.fix.cost}", lang), ui(f"evidence.{rf.fix.evidence}", lang)]
    if versions and versions != "*":
        parts.append(f"vLLM {versions}")
    return " · ".join(parts)


def leaf_text(
    leaf: Leaf,
    facts: FactSet | None = None,
    path: tuple[Step, ...] | None = None,
    lang: str = "en",
    width: int = 88,
) -> str:
    """Plain text for terminals and pipes: commands are never wrapped, prose is."""
    out: list[str] = []
    out.append(fill(f"== {leaf.title(lang)} ==", width, "", "   "))
    out.append(fill(f"{ui('evidence', lang)}: {ui('evidence.' + leaf.evidence, lang)}   [{leaf.id}]", width, "", "  "))
    out.append("")
    out.append(f"{ui('conclusion', lang)}:")
    out.append(_wrap(leaf.conclusion(lang), "  ", width))
    out.append(f"{ui('root_cause', lang)} ({ui(leaf.root_cause_status, lang)}):")
    out.append(_wrap(leaf.root_cause(lang), "  ", width))
    out.append(f"{ui('environment', lang)}:")
    out.append(_wrap(leaf.environment(lang), "  ", width))
    out.append("")
    out.append(f"{ui('fixes', lang)}:")
    for i, rf in enumerate(render_fixes(leaf, facts, lang), 1):
        out.extend(_fix_text(i, rf, lang, width))
    out.append("")
    out.append(f"{ui('checklist', lang)}:")
    for c in leaf.checks:
        mark = f" ({ui('auto_check', lang)})" if c.auto else ""
        out.append(_wrap(f"[ ] {c.text(lang)}{mark}", "  ", width, "      "))
    if any(c.auto for c in leaf.checks):
        out.append(_wrap(ui("verify_hint", lang, leaf=leaf.id), "  ", width))
    if leaf.caveats:
        out.append("")
        out.append(f"{ui('caveats', lang)}:")
        for cv in leaf.caveats:
            out.append(_wrap(f"- {cv(lang)}", "  ", width, "    "))
    out.append("")
    out.append(f"{ui('sources', lang)}:")
    for s in leaf.sources:
        out.append(_wrap(f"- {s.url}" + (f"  ({s.title})" if s.title else ""), "  ", width, "    "))
    if path:
        out.append("")
        out.append(f"{ui('path', lang)}:")
        for step in path:
            out.append(_wrap(f"- {step.question}: {step.label}  [{step.said_how(lang)}]", "  ", width, "    "))
    return "\n".join(out) + "\n"


def _fix_text(number: int, rf: RenderedFix, lang: str, width: int) -> list[str]:
    """One numbered fix as text: each variant's tag, commands and computed values, then why."""
    out = [fill(f"{number}. {rf.fix.title(lang)}", width, " ", "    ")]
    if not rf.available:
        spec = " | ".join(v.versions.text for v in rf.fix.variants)
        out.append(_wrap(ui("not_for_version", lang, version=rf.version, spec=spec), "    ", width))
        return out
    for i, rv in enumerate(rf.variants):
        if len(rf.variants) > 1:  # the version unknown: which spelling a copy gives, and the others
            mark = ui("cmd.variant_live", lang) if i == 0 else ui("cmd.variant_other", lang, versions=rv.versions)
            out.append(_wrap(mark, "    ", width))
        out.append(_wrap(f"[{_tag(rf, rv.versions, lang)}]", "    ", width, "     "))
        out.append(_wrap(rf.fix.cost_note(lang), "    ", width))
        out.extend(f"    $ {line}" for line in rv.script.splitlines())
        out.extend(_wrap(f"{r.value}: {r.why(lang)}", "      = ", width, "        ") for r in rv.values if r.why is not None)
        if rv.missing:
            out.append(_wrap(f"{ui('fill_in', lang)}: {', '.join(rv.missing)}", "      ", width, "        "))
        if rv.note:
            out.append(_wrap(rv.note(lang), "      ", width))
        if rv.assumed:
            out.append(_wrap(ui("cmd.assumed", lang, version=rv.assumed), "      ", width))
    if rf.fix.why:
        out.append(_wrap(rf.fix.why(lang), "    ", width))
    return out


def leaf_markdown(
    leaf: Leaf,
    facts: FactSet | None = None,
    path: tuple[Step, ...] | None = None,
    lang: str = "en",
    article: str | None = None,
) -> str:
    out: list[str] = [f"# {leaf.title(lang)}", ""]
    out.append(f"*{ui('evidence', lang)}: {ui('evidence.' + leaf.evidence, lang)}* · `{leaf.id}` · "
               + ", ".join(f"`{s}`" for s in leaf.scenarios))
    out.append("")
    out.append(f"**{ui('conclusion', lang)}:** {leaf.conclusion(lang)}")
    out.append("")
    out.append(f"**{ui('root_cause', lang)} ({ui(leaf.root_cause_status, lang)}):** {leaf.root_cause(lang)}")
    out.append("")
    out.append(f"**{ui('environment', lang)}:** {leaf.environment(lang)}")
    out.append("")
    out.append(f"## {ui('fixes', lang)}")
    out.append("")
    for i, rf in enumerate(render_fixes(leaf, facts, lang), 1):
        out.extend(_fix_markdown(i, rf, lang))
    out.append(f"## {ui('checklist', lang)}")
    out.append("")
    for c in leaf.checks:
        mark = f" *({ui('auto_check', lang)})*" if c.auto else ""
        out.append(f"- [ ] {c.text(lang)}{mark}")
    out.append("")
    if any(c.auto for c in leaf.checks):
        out.append(ui("verify_hint", lang, leaf=leaf.id))
        out.append("")
    out.extend(_markdown_tail(leaf, path, lang, article))
    return "\n".join(out)


def _fix_markdown(number: int, rf: RenderedFix, lang: str) -> list[str]:
    """One numbered fix as Markdown: a heading, each variant's commands and values, why, sources."""
    out = [f"### {number}. {rf.fix.title(lang)}", ""]
    if not rf.available:
        spec = " | ".join(v.versions.text for v in rf.fix.variants)
        out.append("> " + ui("not_for_version", lang, version=rf.version, spec=spec))
        out.append("")
    for rv in rf.variants:
        out.append(f"*{_tag(rf, rv.versions, lang)}* — {rf.fix.cost_note(lang)}")
        out.extend(["", "```bash", rv.script, "```", ""])
        out.extend(f"- `{r.value}`: {r.why(lang)}" for r in rv.values if r.why is not None)
        if rv.missing:
            out.append(f"- {ui('fill_in', lang)}: " + ", ".join(f"`{m}`" for m in rv.missing))
        if rv.note:
            out.append(f"- {rv.note(lang)}")
        if rv.values or rv.missing or rv.note:
            out.append("")
    if rf.fix.why:
        out.extend([rf.fix.why(lang), ""])
    if rf.fix.sources:
        out.extend([" · ".join(_md_source(u) for u in rf.fix.sources), ""])
    return out


def _markdown_tail(leaf: Leaf, path: tuple[Step, ...] | None, lang: str, article: str | None) -> list[str]:
    """Caveats, the article, sources and the path walked, each a section only when it has content."""
    out: list[str] = []
    if leaf.caveats:
        out.extend([f"## {ui('caveats', lang)}", ""])
        out.extend(f"- {cv(lang)}" for cv in leaf.caveats)
        out.append("")
    if article:
        out.extend([article.strip(), ""])
    out.extend([f"## {ui('sources', lang)}", ""])
    out.extend(f"- {_md_source(s.url)}" + (f" — {s.title}" if s.title else "") for s in leaf.sources)
    out.append("")
    if path:
        out.extend([f"## {ui('path', lang)}", ""])
        out.extend(f"- **{step.question}**: {step.label} — {step.said_how(lang)}" for step in path)
        out.append("")
    return out


def _md_source(url: str) -> str:
    """A source in Markdown: a link for a URL or a ``file@version`` reference, code for a fixture name."""
    ref = parse_code_ref(url)
    if ref is not None:
        return f"[`{url}`]({ref.url})"
    return f"<{url}>" if "://" in url else f"`{url}`"
