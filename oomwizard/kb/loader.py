"""Load ``decision_trees/`` and ``content/`` into a :class:`KnowledgeBase`, validating as we go.

Every structural problem is reported with its file and line, and loading continues so that one run
of ``oomwizard lint`` shows them all. Cross-references (a route to a missing node, an unknown
scenario) are checked here too because the engine cannot run without them; the slower, advisory
checks (flags against releases, translation parity, reachability) live in :mod:`.lint`.

The parts are read by :mod:`.questions`, :mod:`.leaves` and :mod:`.articles`, each field through
:class:`.fields.FieldReader`; this module walks the folders and checks what spans files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from ..i18n import Text
from .articles import load_articles
from .compiled import load_source
from .fields import ID_RE, FieldReader
from .leaves import check_leaf_references, parse_leaf
from .model import KnowledgeBase, Leaf, Question, Scenario
from .questions import check_question_references, parse_question
from .root import default_root as default_root  # part of the loader's interface: where the KB is read from
from .yamlsrc import KBError, Problem


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
    articles = load_articles(base, rel, problems)
    kb = KnowledgeBase(start, scenarios, questions, leaves, articles, str(base))
    _check_references(kb, problems)
    # YAML aliases (a shared route list) would report the same problem once per use.
    problems[:] = list(dict.fromkeys(problems))
    if strict and any(p.severity == "error" for p in problems):
        raise KBError(problems)
    return kb, problems


def _load_scenarios(sfile: Path, rel: Callable[[Path], str], problems: list[Problem]) -> dict[str, Scenario]:
    scenarios: dict[str, Scenario] = {}
    data = load_source(sfile, rel(sfile), problems)
    ctx = FieldReader(rel(sfile), problems)
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
        ctx = FieldReader(rel(qf), problems)
        data = load_source(qf, rel(qf), problems)
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
            q = parse_question(ctx, qid, qd, qline)
            if q:
                questions[qid] = q
    return start, questions


def _load_leaves(
    trees: Path, rel: Callable[[Path], str], problems: list[Problem], questions: Mapping[str, Question]
) -> dict[str, Leaf]:
    leaves: dict[str, Leaf] = {}
    for lf in sorted((trees / "leaves").glob("*.yaml")):
        ctx = FieldReader(rel(lf), problems)
        data = load_source(lf, rel(lf), problems)
        ld = ctx.mapping(data, 1, lf.name) if data is not None else None
        leaf = parse_leaf(ctx, ld, lf.stem) if ld is not None else None
        if ld is None or leaf is None:
            continue
        if leaf.id in questions:
            ctx.err(ld.line, f"leaf id {leaf.id!r} is also a question id")
        leaves[leaf.id] = leaf
    return leaves


def _check_references(kb: KnowledgeBase, problems: list[Problem]) -> None:
    """References the engine relies on: routes, answers, scenario ids, fact names."""
    if kb.start and kb.node(kb.start) is None:
        problems.append(Problem("decision_trees/tree.yaml", 1, f"start node {kb.start!r} does not exist"))
    for q in kb.questions.values():
        check_question_references(kb, q, FieldReader(q.file, problems))
    for leaf in kb.leaves.values():
        check_leaf_references(kb, leaf, FieldReader(leaf.file, problems))


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
