"""A bundle redacted, then drawn as JSON, GitHub Markdown or HTML.

Redaction happens once, on the document, before any format is drawn: identities (unless
``--no-redact``) through one :class:`~.identity.Identities` table, secrets through
:func:`~oomwizard.text.redact.redact_data` (never optional). The formats read only the
redacted document, and the output boundary redacts secrets once more on the way out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..envelope import envelope
from ..i18n import msg
from ..text.redact import redact_data
from ..text.safe_text import printable
from .blocks import Block, Code, Details, Heading, Items, Para, Table, to_html, to_markdown
from .identity import Identities

T = {
    "title": msg("bundle.formats.title"),
    "made": msg("bundle.formats.made"),
    "interactive": msg("bundle.formats.interactive"),
    "non-interactive": msg("bundle.formats.non-interactive"),
    "redacted": msg("bundle.formats.redacted"),
    "not_redacted": msg("bundle.formats.not_redacted"),
    "summary": msg("bundle.formats.summary"),
    "diagnosis": msg("bundle.formats.diagnosis"),
    "fix": msg("bundle.formats.fix"),
    "conclusion": msg("bundle.formats.conclusion"),
    "inputs": msg("bundle.formats.inputs"),
    "none": msg("bundle.formats.none"),
    "nothing": msg("bundle.formats.nothing"),
    "commands": msg("bundle.formats.commands"),
    "checklist": msg("bundle.formats.checklist"),
    "ranking": msg("bundle.formats.ranking"),
    "score": msg("bundle.formats.score"),
    "scenario": msg("bundle.formats.scenario"),
    "evidence": msg("bundle.formats.evidence"),
    "path": msg("bundle.formats.path"),
    "question": msg("bundle.formats.question"),
    "answer": msg("bundle.formats.answer"),
    "how": msg("bundle.formats.how"),
    "source": msg("bundle.formats.source"),
    "facts": msg("bundle.formats.facts"),
    "fact": msg("bundle.formats.fact"),
    "value": msg("bundle.formats.value"),
    "kind": msg("bundle.formats.kind"),
    "machine": msg("bundle.formats.machine"),
    "machine_none": msg("bundle.formats.machine_none"),
    "warnings": msg("bundle.formats.warnings"),
    "replayed": msg("bundle.formats.replayed"),
    "incomplete": msg("bundle.formats.incomplete"),
}
EVIDENCE_SHOWN = 12
"""Evidence lines shown outside the collapsed block; the rest is one click away."""


def finish(body: dict[str, Any], identities: Identities | None) -> dict[str, Any]:
    """The enveloped, redacted document every format is drawn from."""
    doc = envelope("report", body)
    if identities is not None:
        identities.discover_data(doc)
        doc = identities.apply_data(doc)
        doc["redaction"] = {"secrets": True, "identities": True, "replaced": identities.counts()}
    else:
        doc["redaction"] = {"secrets": True, "identities": False, "replaced": {}}
    return redact_data(doc)


def _t(key: str, lang: str, **kw: Any) -> str:
    s = T[key](lang)
    return s.format(**kw) if kw else s


def _tx(d: Any, lang: str) -> str:
    """A ``{"en", "zh"}`` object (or plain text) in ``lang``."""
    if isinstance(d, dict):
        return printable(str(d.get(lang) or d.get("en") or ""))
    return printable("" if d is None else str(d))


def _value(v: Any) -> str:
    if isinstance(v, (dict, list)):
        import json

        return json.dumps(v, ensure_ascii=False)
    return printable(str(v))


def blocks(doc: dict[str, Any], lang: str) -> list[Block]:
    s = doc.get("summary") or {}
    red = doc.get("redaction") or {}
    out: list[Block] = [Heading(1, _t("title", lang))]
    out.append(Para(_t("made", lang, at=doc.get("created_at", ""), version=doc.get("version", ""),
                       walk=_t(doc.get("walk", "non-interactive"), lang),
                       redaction=_t("redacted" if red.get("identities") else "not_redacted", lang))))
    if doc.get("replayed_from"):
        out.append(Para(_t("replayed", lang, name=doc["replayed_from"])))
    scen = f"{_tx(s.get('scenario_title'), lang)} ({s['scenario']}, {s.get('confidence', 0):.2f})" if s.get("scenario") else _t("nothing", lang)
    fix = f"{_tx(s.get('leaf_title'), lang)} ({s['leaf']})" if s.get("leaf") else _t("none", lang)
    out += [Heading(2, _t("summary", lang)), Table(["", ""], [
        [_t("diagnosis", lang), scen],
        [_t("fix", lang), fix],
        [_t("conclusion", lang), _tx(s.get("conclusion"), lang) or _t("none", lang)],
        [_t("inputs", lang), ", ".join(printable(str(i)) for i in doc.get("inputs") or []) or _t("none", lang)],
    ])]
    out += _leaf_blocks(doc.get("leaf"), lang)
    out += _diagnosis_blocks(doc.get("diagnosis"), lang)
    out += _path_blocks(doc, lang)
    facts = doc.get("facts") or {}
    rows = [[n, _value(f.get("value")), str(f.get("kind", "")), printable(str(f.get("source", "")))]
            for n, f in sorted(facts.items())]
    out.append(Details(_t("facts", lang, n=len(rows)), [Table(
        [_t("fact", lang), _t("value", lang), _t("kind", lang), _t("source", lang)], rows)]))
    out.append(_machine_block(doc.get("machine"), lang))
    notes = list((doc.get("diagnosis") or {}).get("warnings") or [])
    if not (doc.get("log") or {}).get("complete", True):
        notes.append(_t("incomplete", lang))
    if notes:
        out += [Heading(2, _t("warnings", lang)), Items([printable(str(n)) for n in notes])]
    return out


def _leaf_blocks(leaf: dict[str, Any] | None, lang: str) -> list[Block]:
    if not leaf:
        return []
    out: list[Block] = [Heading(2, f"{_t('fix', lang)}: {_tx(leaf.get('title'), lang)}"),
                        Para(_tx(leaf.get("conclusion"), lang)), Heading(3, _t("commands", lang))]
    for fix in leaf.get("fixes") or []:
        if fix.get("available") is False:
            continue  # not for this release: the JSON keeps it, the page shows what to run
        for v in fix.get("variants") or []:
            head = f"{fix.get('number')}. {_tx(fix.get('title'), lang)}"
            if v.get("applies_to") not in (None, "", "*"):
                head += f" (vLLM {v['applies_to']})"
            out += [Para(head, strong=True), Code(printable(str(v.get("command") or "")), "sh")]
    checks = [_tx(c, lang) for c in leaf.get("checklist") or []]
    if checks:
        out += [Heading(3, _t("checklist", lang)), Items(checks, checkbox=True)]
    return out


def _diagnosis_blocks(diag: dict[str, Any] | None, lang: str) -> list[Block]:
    if not diag:
        return []
    matches = diag.get("matches") or []
    out: list[Block] = [Heading(2, _t("diagnosis", lang))]
    if not matches:
        return [*out, Para(_t("nothing", lang))]
    out.append(Table([_t("score", lang), _t("scenario", lang)],
                     [[f"{m.get('score', 0):.2f}", str(m.get("scenario", ""))] for m in matches[:8]]))
    ev = [f"{_where(e)}  {printable(str(e.get('text', '')))}" for e in matches[0].get("evidence") or []]
    if ev:
        first, rest = ev[:EVIDENCE_SHOWN], ev[EVIDENCE_SHOWN:]
        blocks: list[Block] = [Code("\n".join(first))]
        if rest:
            blocks.append(Code("\n".join(rest)))
        out.append(Details(_t("evidence", lang, n=len(ev)), blocks))
    return out


def _where(e: dict[str, Any]) -> str:
    import ntpath
    import posixpath

    f = str(e.get("file", ""))
    return f"{ntpath.basename(posixpath.basename(f)) or f}:{e.get('line', '?')}"


def _path_blocks(doc: dict[str, Any], lang: str) -> list[Block]:
    path = doc.get("path") or []
    if not path:
        return []
    rows = [[printable(str(p.get("question", ""))), printable(str(p.get("label") or p.get("answer", ""))),
             str(p.get("how", "")), printable(str(p.get("source", "")))] for p in path]
    return [Heading(2, _t("path", lang)),
            Table([_t("question", lang), _t("answer", lang), _t("how", lang), _t("source", lang)], rows)]


def _machine_block(machine: dict[str, Any] | None, lang: str) -> Block:
    if not machine:
        return Para(_t("machine_none", lang))
    from ..facts.machine import MachineReport
    from ..report.machine import machine_text

    try:
        text = machine_text(MachineReport.from_json(machine), lang)
    except Exception:  # noqa: BLE001 - a report this version cannot draw is still shown, as its data
        import json

        text = json.dumps(machine, indent=2, ensure_ascii=False)
    return Details(_t("machine", lang), [Code(printable(text))])


def render(doc: dict[str, Any], fmt: str, lang: str) -> str:
    if fmt == "json":
        from ..text.safe_text import json_dumps

        return json_dumps(doc, indent=2) + "\n"
    bl = blocks(doc, lang)
    if fmt == "html":
        return to_html(_t("title", lang), bl, lang)
    return to_markdown(bl)


def identities_for(doc_sources: Iterable[str] = ()) -> Identities:
    """A table seeded with this machine's host and user names (hidden even where no pattern shows them)."""
    from .identity import local_identities

    hosts, users = local_identities()
    return Identities(hosts=[*hosts, *doc_sources], users=users)
