"""Leaves as data: conclusion, fixes with a variant per vLLM spelling, the checklist, sources.

One file per leaf (``decision_trees/leaves/<id>.yaml``), read by :func:`.loader.load_kb`. A
checklist pattern is refused here when the log search could never match it
(:func:`raw_search_problem`), because a check that cannot fire would look like a passed one.
"""

from __future__ import annotations

import re
from typing import Any

from ..i18n import Text
from .fields import ID_RE, FieldReader
from .model import COSTS, EVIDENCE, ROOT_CAUSE_STATUS, AutoCheck, Check, Fix, KnowledgeBase, Leaf, Source, Variant
from .yamlsrc import LDict


def _variant(ctx: FieldReader, d: LDict, what: str) -> Variant:
    ctx.keys(d, {"versions", "flags", "remove_flags", "env", "unset_env", "shell", "note"}, {"versions"}, what)
    flags: list[tuple[str, str | None]] = []
    if "flags" in d:
        fm = ctx.mapping(d["flags"], d.line_of("flags"), f"{what}.flags")
        for name, value in (fm or {}).items():
            if not name.startswith("-"):
                ctx.err(fm.line_of(name) if fm else d.line, f"{what}.flags: {name!r} is not a flag")
            if value is True or value is None:
                flags.append((name, None))
            elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
                flags.append((name, str(value)))
            else:
                ctx.err(fm.line_of(name) if fm else d.line, f"{what}.flags.{name}: value must be a string, a number or true")
    env: list[tuple[str, str]] = []
    if "env" in d:
        em = ctx.mapping(d["env"], d.line_of("env"), f"{what}.env")
        for name, value in (em or {}).items():
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                ctx.err(em.line_of(name) if em else d.line, f"{what}.env.{name}: value must be a string or number")
                continue
            env.append((name, str(value)))
    note = ctx.text(d, "note", what, required=False)
    v = Variant(
        versions=ctx.versions(d.get("versions"), d.line_of("versions"), what),
        flags=tuple(flags),
        remove_flags=ctx.strings(d, "remove_flags", what),
        env=tuple(env),
        unset_env=ctx.strings(d, "unset_env", what),
        shell=ctx.strings(d, "shell", what),
        note=note,
        line=d.line,
    )
    if not (v.changes_server or v.shell):
        ctx.err(d.line, f"{what}: a variant must change something (flags, env, unset_env, remove_flags or shell)")
    return v


def _fix(ctx: FieldReader, d: LDict, what: str) -> Fix:
    ctx.keys(
        d,
        {"id", "title", "cost", "cost_note", "evidence", "variants", "sources", "why"},
        {"id", "title", "cost", "cost_note", "evidence", "variants"},
        what,
    )
    fid = ctx.string(d, "id", what) or "?"
    what = f"{what} {fid}"
    variants = []
    lst = ctx.lst(d, "variants", what, required=True)
    for i, item in enumerate(lst):
        vd = ctx.mapping(item, lst.line_of(i), f"{what}.variants[{i}]")
        if vd is not None:
            variants.append(_variant(ctx, vd, f"{what}.variants[{i}]"))
    if "variants" in d and not variants:
        ctx.err(d.line_of("variants"), f"{what}: needs at least one variant")
    return Fix(
        id=fid,
        title=ctx.text(d, "title", what) or Text("", ""),
        cost=ctx.enum(d, "cost", COSTS, what),
        cost_note=ctx.text(d, "cost_note", what) or Text("", ""),
        evidence=ctx.enum(d, "evidence", EVIDENCE, what),
        variants=tuple(variants),
        sources=ctx.strings(d, "sources", what),
        why=ctx.text(d, "why", what, required=False),
        line=d.line,
    )


def raw_search_problem(pattern: str) -> str | None:
    """Why a checklist pattern cannot be searched for in a log's raw bytes, or None.

    A log is searched before it is split into messages (every byte, by a multi-pattern engine),
    so a pattern must match inside a line as printed, prefixes and all: no line anchors, no
    look-arounds or back-references (which the fast engines do not have), no newlines.
    """
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1: i + 2]
            if nxt in ("A", "Z", "z", "b", "B") and not in_class:
                return f"\\{nxt} cannot be used: the pattern is searched inside lines as printed"
            if nxt.isdigit() and nxt != "0" and not in_class:
                return "back-references cannot be used (the log search engines have none)"
            if nxt == "n":
                return "a pattern cannot span lines"
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1: i + 2] == "]" or pattern[i + 1: i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif c in "^$":
            return f"{c!r} cannot be used: lines carry process and logger prefixes before the message"
        elif (c == "(" and pattern[i + 1: i + 3] in ("?=", "?!")) or pattern[i: i + 4] in ("(?<=", "(?<!"):
            return "look-arounds cannot be used (the log search engines have none)"
        i += 1
    return None


def _check(ctx: FieldReader, item: Any, line: int, what: str) -> Check | None:
    d = ctx.mapping(item, line, what)
    if d is None:
        return None
    ctx.keys(d, {"text", "log_present", "log_absent", "fact"}, {"text"}, what)
    auto = None
    if any(k in d for k in ("log_present", "log_absent", "fact")):
        pats = {}
        for key in ("log_present", "log_absent"):
            if key in d:
                pat = d[key]
                try:
                    re.compile(str(pat))
                except re.error as e:
                    ctx.err(d.line_of(key), f"{what}.{key}: bad regular expression: {e}")
                    continue
                problem = raw_search_problem(str(pat))
                if problem:
                    ctx.err(d.line_of(key), f"{what}.{key}: {problem}")
                    continue
                pats[key] = str(pat)
        cond = ctx.condition(d["fact"], d.line_of("fact"), what) if "fact" in d else None
        auto = AutoCheck(pats.get("log_present"), pats.get("log_absent"), cond)
    return Check(ctx.text(d, "text", what) or Text("", ""), auto, line)


def parse_leaf(ctx: FieldReader, d: LDict, expected_id: str) -> Leaf | None:
    what = f"leaf {expected_id}"
    ctx.keys(
        d,
        {
            "id", "scenarios", "title", "conclusion", "environment", "root_cause", "evidence",
            "fixes", "checks", "caveats", "sources", "versions",
        },
        {"id", "scenarios", "title", "conclusion", "environment", "root_cause", "evidence", "fixes", "checks", "sources"},
        what,
    )
    lid = ctx.string(d, "id", what) or expected_id
    if lid != expected_id:
        ctx.err(d.line_of("id"), f"leaf id {lid!r} must match its file name {expected_id!r}")
    if not ID_RE.match(lid):
        ctx.err(d.line_of("id"), f"{what}: id must be lower-case letters, digits, '-' or '_'")
    rc_status, rc_text = "probable", Text("", "")
    if "root_cause" in d:
        rc = ctx.mapping(d["root_cause"], d.line_of("root_cause"), f"{what}.root_cause")
        if rc is not None:
            ctx.keys(rc, {"status", "text"}, {"status", "text"}, f"{what}.root_cause")
            rc_status = ctx.enum(rc, "status", ROOT_CAUSE_STATUS, f"{what}.root_cause")
            rc_text = ctx.text(rc, "text", f"{what}.root_cause") or rc_text
    fixes = []
    fl = ctx.lst(d, "fixes", what, required=False)
    for i, item in enumerate(fl):
        fd = ctx.mapping(item, fl.line_of(i), f"{what}.fixes[{i}]")
        if fd is not None:
            fixes.append(_fix(ctx, fd, f"{what}: fix"))
    checks = []
    cl = ctx.lst(d, "checks", what)
    for i, item in enumerate(cl):
        c = _check(ctx, item, cl.line_of(i), f"{what}.checks[{i}]")
        if c:
            checks.append(c)
    caveats = []
    cvl = ctx.lst(d, "caveats", what)
    for i, item in enumerate(cvl):
        t = ctx.text_value(item, cvl.line_of(i), f"{what}.caveats[{i}]")
        if t:
            caveats.append(t)
    sources = []
    sl = ctx.lst(d, "sources", what)
    for i, item in enumerate(sl):
        line = sl.line_of(i)
        if isinstance(item, str):
            sources.append(Source(item.strip(), "", line))
            continue
        sd = ctx.mapping(item, line, f"{what}.sources[{i}]")
        if sd is None:
            continue
        ctx.keys(sd, {"url", "title"}, {"url"}, f"{what}.sources[{i}]")
        url = ctx.string(sd, "url", f"{what}.sources[{i}]")
        if url:
            sources.append(Source(url, str(sd.get("title", "")), line))
    return Leaf(
        id=lid,
        scenarios=ctx.strings(d, "scenarios", what),
        title=ctx.text(d, "title", what) or Text("", ""),
        conclusion=ctx.text(d, "conclusion", what) or Text("", ""),
        environment=ctx.text(d, "environment", what) or Text("", ""),
        root_cause=rc_text,
        root_cause_status=rc_status,
        evidence=ctx.enum(d, "evidence", EVIDENCE, what),
        fixes=tuple(fixes),
        checks=tuple(checks),
        caveats=tuple(caveats),
        sources=tuple(sources),
        versions=ctx.versions(d.get("versions"), d.line_of("versions"), what),
        file=ctx.file,
        line=d.line,
    )


def check_leaf_references(kb: KnowledgeBase, leaf: Leaf, ctx: FieldReader) -> None:
    from ..facts.catalog import CATALOG

    if not leaf.scenarios:
        ctx.err(leaf.line, f"leaf {leaf.id}: names no scenario")
    for s in leaf.scenarios:
        if s not in kb.scenarios:
            ctx.err(leaf.line, f"leaf {leaf.id}: unknown scenario id {s!r} (see decision_trees/scenarios.yaml)")
    for chk in leaf.checks:
        if chk.auto and chk.auto.fact:
            for name in sorted(n for n in chk.auto.fact.names() if n not in CATALOG):
                ctx.err(chk.line, f"leaf {leaf.id}: check uses unknown fact {name!r}")
