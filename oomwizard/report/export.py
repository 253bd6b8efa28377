"""``oomwizard export``: the whole knowledge base as JSON, a Markdown folder or an offline HTML site.

Support kits travel to machines without network, so the exports stand alone: the JSON carries
every leaf exactly as ``show --format json`` prints it (one source of truth, :func:`leaf_json`);
the Markdown and HTML folders mirror ``content/`` (``<lang>/leaves/<id>``, ``<lang>/questions/<id>``)
so the relative links articles use between each other keep working, and every question page shows
its choices as links to where they lead, with the route conditions in words.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..envelope import envelope
from ..exitcodes import Exit
from ..expr import BoolOp, Compare, Condition, Known, ListLit, Literal, Name, Node, Not
from ..facts.catalog import CATALOG
from ..i18n import LANGS, Text, detect_lang, msg, ui
from ..kb.model import KnowledgeBase, Leaf, Question, Route
from ..text.safe_text import json_dumps, printable
from ..versions import VersionError, VersionSpec
from .leaf import leaf_json, leaf_markdown

FORMATS = ("json", "markdown", "html")

LABELS: dict[str, Text] = {
    "kb": msg("report.export.kb"),
    "start": msg("report.export.start"),
    "scenarios": msg("report.export.scenarios"),
    "questions": msg("report.export.questions"),
    "leaves": msg("report.export.leaves"),
    "also": msg("report.export.also"),
    "choices": msg("report.export.choices"),
    "then": msg("report.export.then"),
    "typed": msg("report.export.typed"),
    "if": msg("report.export.if"),
    "otherwise": msg("report.export.otherwise"),
    "unknown": msg("report.export.unknown"),
    "suggested": msg("report.export.suggested"),
    "when": msg("report.export.when"),
    "fact": msg("report.export.fact"),
    "reached_from": msg("report.export.reached_from"),
    "why_we_ask": msg("report.export.why_we_ask"),
    "generated": msg("report.export.generated"),
    "language": msg("report.export.language"),
    "index": msg("report.export.index"),
}


def label(key: str, lang: str) -> str:
    return LABELS[key](lang)


MARKER = ".oomwizard-export"
"""Left in an exported folder, so a new export may replace the files of an earlier one."""


def _refuse_overwrite(out: Path, folder: bool, lang: str) -> str | None:
    """Why writing to ``out`` would overwrite files the operator did not ask to lose, or None."""
    if folder:
        if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
            return ui("report.export.not_empty", lang, out=out)
        return None
    if out.exists():
        return ui("report.export.exists", lang, out=out)
    return None


def export(kb: KnowledgeBase, fmt: str, output: str | Path | None, lang: str | None = None,
           force: bool = False) -> int:
    """Write the export; returns the process exit code. Existing files are kept unless ``force``
    (or the folder holds an earlier export)."""
    langs: tuple[str, ...] = (lang,) if lang else LANGS
    talk = detect_lang(lang)
    if fmt == "json":
        text = json_dumps(kb_json(kb)) + "\n"
        if output is None or str(output) == "-":
            sys.stdout.write(text)
            return Exit.OK
        problem = None if force else _refuse_overwrite(Path(output), folder=False, lang=talk)
        if problem:
            print(f"oomwizard: {problem}", file=sys.stderr)
            return Exit.ERROR
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as e:
            print(f"oomwizard: {ui('report.export.cannot_write', talk, out=output, error=e)}", file=sys.stderr)
            return Exit.ERROR
        return Exit.OK
    if fmt not in FORMATS:
        print(f"oomwizard: {ui('report.export.unknown_format', talk, fmt=fmt, formats=', '.join(FORMATS))}", file=sys.stderr)
        return Exit.USAGE
    if output is None:
        print(f"oomwizard: {ui('report.export.needs_folder', talk, fmt=fmt)}", file=sys.stderr)
        return Exit.USAGE
    out = Path(output)
    if out.exists() and not out.is_dir():
        print(f"oomwizard: {ui('report.export.not_a_folder', talk, out=out)}", file=sys.stderr)
        return Exit.USAGE
    problem = None if force else _refuse_overwrite(out, folder=True, lang=talk)
    if problem:
        print(f"oomwizard: {problem}", file=sys.stderr)
        return Exit.ERROR
    try:
        if fmt == "markdown":
            written = write_markdown(kb, out, langs)
        else:
            from .html.site import write_html

            written = write_html(kb, out, langs)
        (out / MARKER).write_text("files written by `oomwizard export`; a new export replaces them\n", encoding="utf-8")
    except OSError as e:
        print(f"oomwizard: {ui('report.export.cannot_write', talk, out=out, error=e)}", file=sys.stderr)
        return Exit.ERROR
    print(f"oomwizard: {ui('report.export.wrote', talk, n=written, out=out)}", file=sys.stderr)
    return Exit.OK


# --- JSON ------------------------------------------------------------------------------------


def _route_json(r: Route) -> dict[str, Any]:
    return {"if": r.condition.source if r.condition else None, "goto": r.target}


def question_json(q: Question) -> dict[str, Any]:
    out: dict[str, Any] = {"id": q.id, "fact": q.fact, "kind": q.kind, "text": q.text.as_dict()}
    if q.kind == "choice":
        out["unknown"] = q.unknown
        out["choices"] = [
            {"id": c.id, "label": c.label.as_dict(), "next": [_route_json(r) for r in c.routes]} for c in q.choices
        ]
    else:
        out["next"] = [_route_json(r) for r in q.routes]
    out["auto"] = [{"if": a.condition.source, "answer": a.answer} for a in q.auto]
    return out


def scenarios_json(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The scenarios with their leaves, as ``scenarios --format json`` and the export list them."""
    return [
        {
            "id": s.id,
            "title": s.title.as_dict(),
            "summary": s.summary.as_dict(),
            "main_leaf": s.id if s.id in kb.leaves else None,
            "leaves": [leaf.id for leaf in kb.leaves_for_scenario(s.id)],
        }
        for s in kb.scenarios.values()
    ]


def kb_json(kb: KnowledgeBase) -> dict[str, Any]:
    """The whole knowledge base in the ``export`` envelope."""
    return envelope("export", {
        "start": kb.start,
        "scenarios": scenarios_json(kb),
        "questions": [question_json(q) for q in kb.questions.values()],
        "leaves": [leaf_json(leaf) for leaf in kb.leaves.values()],
    })


# --- shared by Markdown and HTML -------------------------------------------------------------

_OPS = {
    "==": msg("report.export.op.eq"),
    "!=": msg("report.export.op.ne"),
    "<": msg("report.export.op.lt"),
    "<=": msg("report.export.op.le"),
    ">": msg("report.export.op.gt"),
    ">=": msg("report.export.op.ge"),
}


def describe(cond: Condition | Node, lang: str) -> str:
    """A condition in words: ``vllm_version in ">=0.18,<0.29"`` -> ``vLLM version ≥0.18, <0.29``."""
    node = cond.tree if isinstance(cond, Condition) else cond
    if isinstance(node, Name):
        spec = CATALOG.get(node.name)
        return spec.title(lang) if spec else node.name
    if isinstance(node, Literal):
        if isinstance(node.value, bool):
            return {True: msg("report.export.yes"), False: msg("report.export.no")}[node.value](lang)
        return str(node.value)
    if isinstance(node, ListLit):
        return "[" + ", ".join(describe(i, lang) for i in node.items) + "]"
    if isinstance(node, Known):
        spec = CATALOG.get(node.name)
        what = spec.title(lang) if spec else node.name
        return msg("report.export.what_is_known").format(what=what)(lang)
    if isinstance(node, Not):
        return msg("report.export.not").format(describe=describe(node.operand, lang))(lang)
    if isinstance(node, BoolOp):
        joiner = {"and": msg("report.export.and"), "or": msg("report.export.or")}[node.op](lang)
        return joiner.join(f"({describe(o, lang)})" if isinstance(o, BoolOp) else describe(o, lang) for o in node.operands)
    if isinstance(node, Compare):
        left, right = describe(node.left, lang), describe(node.right, lang)
        if node.op == "in":
            if isinstance(node.right, Literal) and isinstance(node.right.value, str):
                return f"{left} {_range_words(node.right.value)}"
            return msg("report.export.one_of").format(left=left, right=right)(lang)
        return f"{left} {_OPS[node.op](lang)} {right}"
    return str(node)  # pragma: no cover - every node type is handled above


_RANGE_OPS = {">=": "≥", "<=": "≤", "==": "=", "!=": "≠", ">": ">", "<": "<"}


def _range_words(text: str) -> str:
    """``>=0.18,<0.29`` -> ``≥0.18, <0.29`` (left as written if it does not parse)."""
    try:
        spec = VersionSpec.parse(text)
    except VersionError:
        return text
    if spec.is_any:
        return "*"
    return ", ".join(f"{_RANGE_OPS[c.op]}{c.version.text}{'.*' if c.wildcard else ''}" for c in spec.clauses)


def node_title(kb: KnowledgeBase, node_id: str, lang: str) -> str:
    node = kb.node(node_id)
    if isinstance(node, Leaf):
        return node.title(lang)
    if isinstance(node, Question):
        return node.text(lang)
    return node_id


def node_kind(kb: KnowledgeBase, node_id: str) -> str:
    return "leaves" if node_id in kb.leaves else "questions"


def incoming(kb: KnowledgeBase) -> dict[str, list[tuple[Question, str]]]:
    """Node id -> (question, choice id or "") that route to it, for "reached from" links."""
    out: dict[str, list[tuple[Question, str]]] = {}
    for q in kb.questions.values():
        for c in q.choices:
            for r in c.routes:
                out.setdefault(r.target, []).append((q, c.id))
        for r in q.routes:
            out.setdefault(r.target, []).append((q, ""))
    for refs in out.values():
        refs[:] = list(dict.fromkeys(refs))
    return out


# --- Markdown --------------------------------------------------------------------------------


def _md_link(kb: KnowledgeBase, node_id: str, lang: str, here: str) -> str:
    """Link from a page in ``<lang>/<here>/`` (or ``<lang>/`` when here is "") to a node."""
    prefix = "../" if here else ""
    title = node_title(kb, node_id, lang).replace("[", "(").replace("]", ")")
    return f"[{title}]({prefix}{node_kind(kb, node_id)}/{node_id}.md)"


def _md_routes(kb: KnowledgeBase, routes: tuple[Route, ...], lang: str) -> list[str]:
    if len(routes) == 1 and routes[0].condition is None:
        return [f"→ {_md_link(kb, routes[0].target, lang, 'questions')}"]
    out = []
    for r in routes:
        cond = f"{label('if', lang)} {describe(r.condition, lang)}" if r.condition else label("otherwise", lang)
        out.append(f"  - {cond} → {_md_link(kb, r.target, lang, 'questions')}")
    return out


def question_markdown(kb: KnowledgeBase, q: Question, lang: str) -> str:
    out = [f"# {q.text(lang)}", "", f"*{label('fact', lang)}: `{q.fact}`* · `{q.id}`", ""]
    art = kb.articles.get(("questions", q.id, lang))
    if art:
        out += [f"## {label('why_we_ask', lang)}", "", art.body.strip(), ""]
    if q.kind == "choice":
        out += [f"## {label('choices', lang)}", ""]
        for c in q.choices:
            routes = _md_routes(kb, c.routes, lang)
            if len(routes) == 1 and not routes[0].startswith("  "):
                out.append(f"- **{c.label(lang)}** {routes[0]}")
            else:
                out.append(f"- **{c.label(lang)}**")
                out += routes
        if q.unknown:
            chosen = q.choice(q.unknown)
            out += ["", f"*{label('unknown', lang)}: {chosen.label(lang) if chosen else q.unknown}*"]
    else:
        out += [f"## {label('then', lang)}", "", label("typed", lang), ""]
        out += [line if line.startswith("  ") else f"- {line}" for line in _md_routes(kb, q.routes, lang)]
    if q.auto:
        out += ["", f"## {label('suggested', lang)}", ""]
        for a in q.auto:
            chosen = q.choice(a.answer)
            out.append(f"- **{chosen.label(lang) if chosen else a.answer}** — {label('when', lang)} {describe(a.condition, lang)}")
    return "\n".join(out).rstrip() + "\n"


def index_markdown(kb: KnowledgeBase, lang: str) -> str:
    out = [f"# {label('kb', lang)}", ""]
    if kb.start:
        out += [f"**{label('start', lang)}:** {_md_link(kb, kb.start, lang, '')}", ""]
    out += [f"## {label('scenarios', lang)}", ""]
    for s in kb.scenarios.values():
        head = _md_link(kb, s.id, lang, "") if s.id in kb.leaves else f"**{s.title(lang)}**"
        others = [leaf.id for leaf in kb.leaves_for_scenario(s.id) if leaf.id != s.id]
        also = f" ({label('also', lang)}: " + ", ".join(_md_link(kb, i, lang, "") for i in others) + ")" if others else ""
        out.append(f"- `{s.id}` {head} — {s.summary(lang)}{also}")
    out += ["", f"## {label('questions', lang)}", ""]
    out += [f"- {_md_link(kb, q.id, lang, '')}" for q in kb.questions.values()]
    out += ["", f"## {label('leaves', lang)}", ""]
    out += [f"- {_md_link(kb, leaf.id, lang, '')}" for leaf in kb.leaves.values()]
    return "\n".join(out) + "\n"


def write_markdown(kb: KnowledgeBase, out: Path, langs: tuple[str, ...]) -> int:
    files: dict[Path, str] = {}
    files[out / "index.md"] = f"# {label('kb', langs[0])}\n\n" + "".join(
        f"- [{LANG_NAMES[lang](lang)}]({lang}/index.md)\n" for lang in langs
    )
    for lang in langs:
        files[out / lang / "index.md"] = index_markdown(kb, lang)
        for leaf in kb.leaves.values():
            art = kb.articles.get(("leaves", leaf.id, lang))
            files[out / lang / "leaves" / f"{leaf.id}.md"] = leaf_markdown(leaf, lang=lang, article=art.body if art else None)
        for q in kb.questions.values():
            files[out / lang / "questions" / f"{q.id}.md"] = question_markdown(kb, q, lang)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(printable(text), encoding="utf-8")
    return len(files)


LANG_NAMES = {"en": msg("lang.name.en"), "zh": msg("lang.name.zh")}
"""Each language by its own name, the same on every page."""
