"""Questions of the tree as data: choices, routes (``if``/``goto``), suggestions (``auto``).

Read from ``tree.yaml`` and ``questions/*.yaml`` by :func:`.loader.load_kb`; the references a
question makes (facts, targets, choice ids) are checked once the whole base is loaded, because a
route may point to a question in another file.
"""

from __future__ import annotations

from typing import Any

from ..i18n import Text
from .fields import ID_RE, FieldReader
from .model import QUESTION_KINDS, AutoRule, Choice, KnowledgeBase, Question, Route
from .yamlsrc import LDict, LList


def _routes(ctx: FieldReader, value: Any, line: int, what: str) -> tuple[Route, ...]:
    if isinstance(value, str):
        return (Route(value, None, line),)
    if not isinstance(value, LList) or not value:
        ctx.err(line, f"{what}: 'next' must be a node id or a list of {{if, goto}} routes")
        return ()
    routes: list[Route] = []
    for i, item in enumerate(value):
        iline = value.line_of(i)
        d = ctx.mapping(item, iline, f"{what}.next[{i}]")
        if d is None:
            continue
        ctx.keys(d, {"if", "goto"}, {"goto"}, f"{what}.next[{i}]")
        cond = ctx.condition(d["if"], d.line_of("if"), f"{what}.next[{i}]") if "if" in d else None
        target = d.get("goto")
        if isinstance(target, str):
            routes.append(Route(target, cond, iline))
        elif "goto" in d:
            ctx.err(d.line_of("goto"), f"{what}.next[{i}]: 'goto' must be a node id")
    if routes and routes[-1].condition is not None:
        ctx.err(value.line, f"{what}: the last route must have no 'if' (a fallback)")
    return tuple(routes)


def _choices(ctx: FieldReader, d: LDict, what: str) -> list[Choice]:
    """A choice question's ``choices``, each with its label and its own routes."""
    choices: list[Choice] = []
    cmap = ctx.mapping(d.get("choices"), d.line_of("choices"), f"{what}.choices") if "choices" in d else None
    if cmap is None and "choices" not in d:
        ctx.err(d.line, f"{what}: a choice question needs 'choices'")
    for cid, cval in (cmap or {}).items():
        cline = cmap.line_of(cid) if cmap else d.line
        cd = ctx.mapping(cval, cline, f"{what}.choices.{cid}")
        if cd is None:
            continue
        ctx.keys(cd, {"label", "next"}, {"label", "next"}, f"{what}.choices.{cid}")
        label = ctx.text(cd, "label", f"{what}.choices.{cid}") or Text("", "")
        choice_routes = _routes(ctx, cd.get("next"), cd.line_of("next"), f"{what}.choices.{cid}") if "next" in cd else ()
        choices.append(Choice(cid, label, choice_routes, cline))
    if "next" in d:
        ctx.err(d.line_of("next"), f"{what}: a choice question routes per choice, not with 'next'")
    return choices


def _auto_rules(ctx: FieldReader, d: LDict, what: str) -> list[AutoRule]:
    """``auto``: conditions on facts that answer the question without asking."""
    autos: list[AutoRule] = []
    for i, item in enumerate(ctx.lst(d, "auto", what)):
        aline = d["auto"].line_of(i)
        ad = ctx.mapping(item, aline, f"{what}.auto[{i}]")
        if ad is None:
            continue
        ctx.keys(ad, {"if", "answer"}, {"if", "answer"}, f"{what}.auto[{i}]")
        cond = ctx.condition(ad.get("if"), ad.line_of("if"), f"{what}.auto[{i}]") if "if" in ad else None
        answer = ad.get("answer")
        if "answer" in ad and not isinstance(answer, str):
            ctx.err(ad.line_of("answer"), f"{what}.auto[{i}]: 'answer' must be a choice id (quote \"yes\"/\"no\")")
        if cond is not None and isinstance(answer, str):
            autos.append(AutoRule(cond, answer, aline))
    return autos


def parse_question(ctx: FieldReader, qid: str, d: LDict, line: int = 0) -> Question | None:
    what = f"question {qid}"
    if not ID_RE.match(qid):
        ctx.err(d.line, f"{what}: id must be lower-case letters, digits, '-' or '_'")
    ctx.keys(d, {"fact", "kind", "text", "auto", "unknown", "choices", "next"}, {"text"}, what)
    kind = str(d.get("kind", "choice"))
    if kind not in QUESTION_KINDS:
        ctx.err(d.line_of("kind"), f"{what}: kind {kind!r} is not one of {', '.join(QUESTION_KINDS)}")
    fact = str(d.get("fact", qid))
    text = ctx.text(d, "text", what) or Text("", "")
    choices = _choices(ctx, d, what) if kind == "choice" else []
    routes: tuple[Route, ...] = ()
    if kind == "version":
        if "choices" in d:
            ctx.err(d.line_of("choices"), f"{what}: a version question takes typed input, not 'choices'")
        if "next" not in d:
            ctx.err(d.line, f"{what}: a version question needs 'next'")
        else:
            routes = _routes(ctx, d["next"], d.line_of("next"), what)
    autos = _auto_rules(ctx, d, what)
    unknown = d.get("unknown")
    if unknown is not None and not isinstance(unknown, str):
        ctx.err(d.line_of("unknown"), f"{what}: 'unknown' must be a choice id")
        unknown = None
    return Question(
        id=qid,
        fact=fact,
        kind=kind,
        text=text,
        choices=tuple(choices),
        auto=tuple(autos),
        unknown=unknown,
        routes=routes,
        file=ctx.file,
        line=line or d.line,
    )


def check_question_references(kb: KnowledgeBase, q: Question, ctx: FieldReader) -> None:
    from ..facts.catalog import CATALOG

    spec = CATALOG.get(q.fact)
    if spec is None:
        ctx.err(q.line, f"question {q.id}: fact {q.fact!r} is not in the fact catalog (oomwizard/facts/catalog.py)")
    elif q.kind == "version" and spec.type != "version":
        ctx.err(q.line, f"question {q.id}: a version question must set a version fact, {q.fact!r} is {spec.type}")
    elif q.kind == "choice" and spec.type == "enum":
        for c in q.choices:
            if c.id not in spec.values and c.id != "unknown":
                ctx.err(c.line, f"question {q.id}: choice {c.id!r} is not a value of fact {q.fact!r} ({', '.join(spec.values)})")
    ids = {c.id for c in q.choices}
    if q.unknown is not None and q.kind == "choice" and q.unknown not in ids:
        ctx.err(q.line, f"question {q.id}: 'unknown' names {q.unknown!r}, which is not a choice")
    for rule in q.auto:
        if q.kind == "choice" and rule.answer not in ids:
            ctx.err(rule.line, f"question {q.id}: auto answer {rule.answer!r} is not a choice")
    routes = [r for c in q.choices for r in c.routes] + list(q.routes)
    for r in routes:
        if kb.node(r.target) is None:
            ctx.err(r.line, f"question {q.id}: goes to {r.target!r}, which is neither a question nor a leaf")
    conds = [(r.condition, r.line) for r in routes if r.condition] + [(a.condition, a.line) for a in q.auto]
    for cond, line in conds:
        for name in sorted(n for n in cond.names() if n not in CATALOG):
            ctx.err(line or q.line, f"question {q.id}: condition {cond.source!r} uses unknown fact {name!r}")
