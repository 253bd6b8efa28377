"""Load ``decision_trees/`` and ``content/`` into a :class:`KnowledgeBase`, validating as we go.

Every structural problem is reported with its file and line, and loading continues so that one run
of ``oomwizard lint`` shows them all. Cross-references (a route to a missing node, an unknown
scenario) are checked here too because the engine cannot run without them; the slower, advisory
checks (flags against releases, translation parity, reachability) live in :mod:`.lint`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..expr import Condition, ExprError
from ..i18n import LANGS, Text
from ..versions import VersionError, VersionSpec
from .model import (
    COSTS,
    EVIDENCE,
    QUESTION_KINDS,
    ROOT_CAUSE_STATUS,
    Article,
    AutoCheck,
    AutoRule,
    Check,
    Choice,
    Fix,
    KnowledgeBase,
    Leaf,
    Question,
    Route,
    Scenario,
    Source,
    Variant,
)
from .root import default_root
from .yamlsrc import KBError, LDict, LList, Problem, load_yaml

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class _Ctx:
    """Collects problems for one file and offers typed field readers."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = problems

    def err(self, line: int | None, msg: str) -> None:
        self.problems.append(Problem(self.file, line, msg))

    def mapping(self, value: Any, line: int, what: str) -> LDict | None:
        if not isinstance(value, LDict):
            self.err(line, f"{what} must be a mapping")
            return None
        return value

    def keys(self, d: LDict, allowed: set[str], required: set[str], what: str) -> None:
        for k in d:
            if k not in allowed:
                self.err(d.line_of(k), f"{what}: unknown field {k!r} (allowed: {', '.join(sorted(allowed))})")
        for k in sorted(required - set(d)):
            self.err(d.line, f"{what}: missing field {k!r}")

    def text(self, d: LDict, key: str, what: str, required: bool = True) -> Text | None:
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            return None
        v = d[key]
        line = d.line_of(key)
        return self.text_value(v, line, f"{what}.{key}")

    def text_value(self, v: Any, line: int, what: str) -> Text | None:
        if not isinstance(v, LDict):
            self.err(line, f"{what} must have an 'en' and a 'zh' text")
            return None
        for k in v:
            if k not in LANGS:
                self.err(v.line_of(k), f"{what}: unknown language {k!r}")
        values = {}
        for lang in LANGS:
            s = v.get(lang)
            if not isinstance(s, str) or not s.strip():
                self.err(v.line_of(lang) if lang in v else v.line, f"{what}: missing {lang!r} translation")
                s = ""
            values[lang] = s.strip()
        return Text(values["en"], values["zh"])

    def string(self, d: LDict, key: str, what: str, required: bool = True) -> str | None:
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            return None
        v = d[key]
        if not isinstance(v, str) or not v.strip():
            self.err(d.line_of(key), f"{what}.{key} must be a non-empty string")
            return None
        return v.strip()

    def enum(self, d: LDict, key: str, allowed: tuple[str, ...], what: str) -> str:
        v = self.string(d, key, what)
        if v is not None and v not in allowed:
            self.err(d.line_of(key), f"{what}.{key}: {v!r} is not one of {', '.join(allowed)}")
        return v or allowed[-1]

    def condition(self, source: Any, line: int, what: str) -> Condition | None:
        if not isinstance(source, str):
            self.err(line, f"{what}: condition must be a string")
            return None
        try:
            return Condition.parse(source)
        except ExprError as e:
            self.err(line, f"{what}: bad condition {source!r}: {e} (column {e.column})")
            return None

    def versions(self, source: Any, line: int, what: str) -> VersionSpec:
        try:
            return VersionSpec.parse(str(source) if source is not None else "*")
        except VersionError as e:
            self.err(line, f"{what}: {e}")
            return VersionSpec.parse("*")

    def lst(self, d: LDict, key: str, what: str, required: bool = False) -> LList:
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            empty = LList()
            empty.line = d.line
            empty.item_lines = []
            return empty
        v = d[key]
        if not isinstance(v, LList):
            self.err(d.line_of(key), f"{what}.{key} must be a list")
            empty = LList()
            empty.line = d.line_of(key)
            empty.item_lines = []
            return empty
        return v


# --- routes and questions ------------------------------------------------------------------


def _routes(ctx: _Ctx, value: Any, line: int, what: str) -> tuple[Route, ...]:
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


def _choices(ctx: _Ctx, d: LDict, what: str) -> list[Choice]:
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


def _auto_rules(ctx: _Ctx, d: LDict, what: str) -> list[AutoRule]:
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


def _question(ctx: _Ctx, qid: str, d: LDict, line: int = 0) -> Question | None:
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


# --- leaves --------------------------------------------------------------------------------


def _str_list(ctx: _Ctx, d: LDict, key: str, what: str) -> tuple[str, ...]:
    out = []
    lst = ctx.lst(d, key, what)
    for i, v in enumerate(lst):
        if not isinstance(v, str) or not v.strip():
            ctx.err(lst.line_of(i), f"{what}.{key}[{i}] must be a non-empty string")
            continue
        out.append(v.strip())
    return tuple(out)


def _variant(ctx: _Ctx, d: LDict, what: str) -> Variant:
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
        remove_flags=_str_list(ctx, d, "remove_flags", what),
        env=tuple(env),
        unset_env=_str_list(ctx, d, "unset_env", what),
        shell=_str_list(ctx, d, "shell", what),
        note=note,
        line=d.line,
    )
    if not (v.changes_server or v.shell):
        ctx.err(d.line, f"{what}: a variant must change something (flags, env, unset_env, remove_flags or shell)")
    return v


def _fix(ctx: _Ctx, d: LDict, what: str) -> Fix:
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
        sources=_str_list(ctx, d, "sources", what),
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


def _check(ctx: _Ctx, item: Any, line: int, what: str) -> Check | None:
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


def _leaf(ctx: _Ctx, d: LDict, expected_id: str) -> Leaf | None:
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
        scenarios=_str_list(ctx, d, "scenarios", what),
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


# --- articles ------------------------------------------------------------------------------

_FRONT_RE = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_CJK = "\u3400-\u9fff\u3000-\u303f\uff00-\uffef"
_CJK_BREAK_RE = re.compile(f"([{_CJK}])\n[ \t]*(?=[{_CJK}])")
_FENCE_RE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)


def join_cjk_lines(markdown: str) -> str:
    """Join a paragraph's lines where both sides are Chinese, outside code blocks.

    Markdown renders a line break inside a paragraph as a space, which is right between English
    words and wrong between Chinese characters; authors wrap long Chinese lines all the same.
    """
    out, pos = [], 0
    for m in _FENCE_RE.finditer(markdown):
        out.append(_CJK_BREAK_RE.sub(r"\1", markdown[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_CJK_BREAK_RE.sub(r"\1", markdown[pos:]))
    return "".join(out)


def _article(path: Path, display: str, kind: str, lang: str, problems: list[Problem]) -> Article | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.append(Problem(display, None, f"cannot read: {e}"))
        return None
    title = ""
    body = text
    m = _FRONT_RE.match(text)
    if m:
        body = text[m.end():]
        for line in m.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "title":
                title = value.strip().strip("\"'")
    if not title:
        h = re.search(r"^#\s+(.+)$", body, re.M)
        title = h.group(1).strip() if h else ""
    if not title:
        problems.append(Problem(display, 1, "article has no title (front matter 'title:' or a '# ' heading)"))
    return Article(kind, path.stem, lang, title, join_cjk_lines(body.strip()) + "\n", display)


# --- the whole base ------------------------------------------------------------------------


def load_kb(root: Path | str | None = None, strict: bool = True) -> tuple[KnowledgeBase, list[Problem]]:
    """Load everything under ``root``; with ``strict`` raise :class:`KBError` on any error."""
    base = Path(root) if root is not None else default_root()
    problems: list[Problem] = []
    trees = base / "decision_trees"

    def rel(p: Path) -> str:
        try:
            return str(p.relative_to(base))
        except ValueError:
            return str(p)

    if not trees.is_dir():
        problems.append(Problem(str(trees), None, "decision tree folder not found"))
        if strict:
            raise KBError(problems)
        return KnowledgeBase("", {}, {}, {}, {}, str(base)), problems

    scenarios = _load_scenarios(trees / "scenarios.yaml", rel, problems)
    start, questions = _load_questions(trees, rel, problems)
    leaves = _load_leaves(trees, rel, problems, questions)
    articles = _load_articles(base, rel, problems)
    kb = KnowledgeBase(start, scenarios, questions, leaves, articles, str(base))
    _check_references(kb, problems)
    # YAML aliases (a shared route list) would report the same problem once per use.
    problems[:] = list(dict.fromkeys(problems))
    if strict and any(p.severity == "error" for p in problems):
        raise KBError(problems)
    return kb, problems


def _load_scenarios(sfile: Path, rel: Callable[[Path], str], problems: list[Problem]) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    data = load_yaml(sfile, rel(sfile), problems)
    ctx = _Ctx(rel(sfile), problems)
    top = ctx.mapping(data, 1, "scenarios.yaml") if data is not None else None
    if top is None:
        return scenarios
    ctx.keys(top, {"scenarios"}, {"scenarios"}, "scenarios.yaml")
    smap = ctx.mapping(top.get("scenarios"), top.line_of("scenarios"), "scenarios")
    for sid, sval in (smap or {}).items():
        sd = ctx.mapping(sval, smap.line_of(sid) if smap else 1, f"scenario {sid}")
        if sd is None:
            continue
        ctx.keys(sd, {"title", "summary"}, {"title", "summary"}, f"scenario {sid}")
        if not ID_RE.match(sid):
            ctx.err(sd.line, f"scenario id {sid!r} must be lower-case letters, digits, '-' or '_'")
        scenarios[sid] = Scenario(
            sid,
            ctx.text(sd, "title", f"scenario {sid}") or Text("", ""),
            ctx.text(sd, "summary", f"scenario {sid}") or Text("", ""),
            sd.line,
        )
    return scenarios


def _load_questions(trees: Path, rel: Callable[[Path], str], problems: list[Problem]) -> tuple[str, dict[str, Question]]:
    """``tree.yaml`` (the start and the trunk) plus every ``questions/*.yaml``."""
    start = ""
    questions: dict[str, Question] = {}
    for qf in [trees / "tree.yaml", *sorted((trees / "questions").glob("*.yaml"))]:
        is_tree = qf.name == "tree.yaml"
        if not qf.exists():
            if is_tree:
                problems.append(Problem(rel(qf), None, "missing: the tree's entry file"))
            continue
        ctx = _Ctx(rel(qf), problems)
        data = load_yaml(qf, rel(qf), problems)
        top = ctx.mapping(data, 1, qf.name) if data is not None else None
        if top is None:
            continue
        allowed = {"start", "questions"} if is_tree else {"questions"}
        ctx.keys(top, allowed, {"questions"} | ({"start"} if is_tree else set()), qf.name)
        if is_tree:
            start = str(top.get("start", ""))
        qmap = ctx.mapping(top.get("questions"), top.line_of("questions"), "questions")
        for qid, qval in (qmap or {}).items():
            qline = qmap.line_of(qid) if qmap else 1
            qd = ctx.mapping(qval, qline, f"question {qid}")
            if qd is None:
                continue
            if qid in questions:
                prev = questions[qid]
                ctx.err(qline, f"question {qid!r} is defined twice (also {prev.file}:{prev.line})")
                continue
            q = _question(ctx, qid, qd, qline)
            if q:
                questions[qid] = q
    return start, questions


def _load_leaves(
    trees: Path, rel: Callable[[Path], str], problems: list[Problem], questions: Mapping[str, Question]
) -> dict[str, Leaf]:
    leaves: dict[str, Leaf] = {}
    for lf in sorted((trees / "leaves").glob("*.yaml")):
        ctx = _Ctx(rel(lf), problems)
        data = load_yaml(lf, rel(lf), problems)
        ld = ctx.mapping(data, 1, lf.name) if data is not None else None
        leaf = _leaf(ctx, ld, lf.stem) if ld is not None else None
        if ld is None or leaf is None:
            continue
        if leaf.id in questions:
            ctx.err(ld.line, f"leaf id {leaf.id!r} is also a question id")
        leaves[leaf.id] = leaf
    return leaves


def _load_articles(base: Path, rel: Callable[[Path], str], problems: list[Problem]) -> dict[tuple[str, str, str], Article]:
    articles: dict[tuple[str, str, str], Article] = {}
    for lang in LANGS:
        for kind in ("leaves", "questions"):
            for md in sorted((base / "content" / lang / kind).glob("*.md")):
                art = _article(md, rel(md), kind, lang, problems)
                if art:
                    articles[(kind, art.id, lang)] = art
    return articles


def _check_references(kb: KnowledgeBase, problems: list[Problem]) -> None:
    """References the engine relies on: routes, answers, scenario ids, fact names."""
    if kb.start and kb.node(kb.start) is None:
        problems.append(Problem("decision_trees/tree.yaml", 1, f"start node {kb.start!r} does not exist"))
    for q in kb.questions.values():
        _check_question_references(kb, q, _Ctx(q.file, problems))
    for leaf in kb.leaves.values():
        _check_leaf_references(kb, leaf, _Ctx(leaf.file, problems))


def _check_question_references(kb: KnowledgeBase, q: Question, ctx: _Ctx) -> None:
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


def _check_leaf_references(kb: KnowledgeBase, leaf: Leaf, ctx: _Ctx) -> None:
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


@lru_cache(maxsize=4)
def _cached(root: str) -> KnowledgeBase:
    from .cycles import find_loop

    kb, _ = load_kb(root, strict=True)
    loop = find_loop(kb)
    if loop is not None:
        raise KBError([loop])
    return kb


def get_kb(root: Path | str | None = None) -> KnowledgeBase:
    """The knowledge base, loaded once per process (raises :class:`KBError` if broken)."""
    return _cached(str(Path(root) if root is not None else default_root()))
