"""The tree's shape: every node reachable, no cycles, no question a non-interactive walk cannot pass.

The engine meets a cycle or a dead end only when a walk happens to take that route, at 3 a.m. on
someone's server; here every route is followed statically, whatever its condition, so the whole
tree is checked before it ships. Scenarios are checked against the tree too: each one needs a main
leaf of the same id, and a reachable leaf that lists it.
"""

from __future__ import annotations

from collections import deque

from ..engine import Ask, EngineError, walk
from ..expr import Condition
from ..facts.catalog import CATALOG
from ..facts.model import Fact, FactSet
from ..kb.model import KnowledgeBase, Question, Route
from ..versions import Version
from .conditions import condition_problems, fact_domains
from .context import LintContext

TREE_FILE = "decision_trees/tree.yaml"
SCENARIOS_FILE = "decision_trees/scenarios.yaml"
BOOL_CHOICES = {"yes", "no", "unknown"}


def routes_of(q: Question) -> list[Route]:
    return [r for c in q.choices for r in c.routes] + list(q.routes)


def edges(kb: KnowledgeBase) -> dict[str, list[Route]]:
    """Question id -> its routes that lead to an existing node."""
    return {qid: [r for r in routes_of(q) if kb.node(r.target) is not None] for qid, q in kb.questions.items()}


def reachable(kb: KnowledgeBase) -> set[str]:
    """Every node some route leads to from ``start``, whatever the conditions."""
    if kb.node(kb.start) is None:
        return set()
    graph = edges(kb)
    seen = {kb.start}
    todo = deque([kb.start])
    while todo:
        for r in graph.get(todo.popleft(), ()):
            if r.target not in seen:
                seen.add(r.target)
                todo.append(r.target)
    return seen


def start_line(ctx: LintContext) -> int:
    top = ctx.raw(TREE_FILE)
    return top.line_of("start") if hasattr(top, "line_of") else 1


def check_tree(ctx: LintContext) -> None:
    kb = ctx.kb
    domains = fact_domains(kb)
    for q in kb.questions.values():
        _check_question(ctx, q, domains)
    for leaf in kb.leaves.values():
        for c in leaf.checks:
            if c.auto and c.auto.fact:
                _check_condition(ctx, leaf.file, c.line, c.auto.fact, domains)
    if kb.node(kb.start) is None:
        return  # the loader reports a missing or unknown start; nothing is reachable
    seen = reachable(kb)
    for q in kb.questions.values():
        if q.id not in seen:
            ctx.error(q.file, q.line, f"question {q.id} is unreachable: no route from {kb.start!r} leads to it")
    for leaf in kb.leaves.values():
        if leaf.id not in seen:
            ctx.error(leaf.file, leaf.line, f"leaf {leaf.id} is unreachable: no route from {kb.start!r} leads to it")
    cyclic = _check_cycles(ctx)
    dangling = any(kb.node(r.target) is None for q in kb.questions.values() for r in routes_of(q))
    if not (cyclic or dangling):
        _check_walks(ctx)  # otherwise they would only repeat what is reported above


def _check_condition(ctx: LintContext, file: str, line: int, cond: Condition, domains: dict[str, set[str]]) -> None:
    for severity, message in condition_problems(cond, domains):
        ctx.report(severity, file, line, message)


def _check_question(ctx: LintContext, q: Question, domains: dict[str, set[str]]) -> None:
    what = f"question {q.id}"
    if q.kind == "choice":
        if not q.choices:
            ctx.error(q.file, q.line, f"{what}: no choices, so every walk that reaches it is a dead end")
        if q.unknown is None:
            ctx.error(
                q.file,
                q.line,
                f"{what}: no 'unknown' choice, so a walk where nobody can answer (diagnose, --plain with no terminal) "
                "stops here; add 'unknown: <choice id>'",
            )
        spec = CATALOG.get(q.fact)
        if spec is not None and spec.type == "bool":
            for c in q.choices:
                if c.id not in BOOL_CHOICES:
                    hint = ' (unquoted yes/no in YAML read as true/false: write "yes": / "no":)' if c.id in ("True", "False") else ""
                    ctx.error(q.file, c.line, f"{what}: {q.fact!r} is yes/no, so choice {c.id!r} can never be suggested{hint}")
        for c in q.choices:
            _check_routes(ctx, q, list(c.routes), f"{what}, choice {c.id}", domains)
    else:
        _check_routes(ctx, q, list(q.routes), what, domains)
        for rule in q.auto:
            if rule.answer != "unknown" and Version.try_parse(rule.answer) is None:
                ctx.error(q.file, rule.line, f"{what}: auto answer {rule.answer!r} is not a version")
    for rule in q.auto:
        _check_condition(ctx, q.file, rule.line, rule.condition, domains)


def _check_routes(ctx: LintContext, q: Question, routes: list[Route], what: str, domains: dict[str, set[str]]) -> None:
    fallback: Route | None = None
    for r in routes:
        if fallback is not None:
            ctx.warn(q.file, r.line, f"{what}: route to {r.target!r} is never taken (the route at line {fallback.line} always applies first)")
        if r.condition is None:
            fallback = fallback or r
        else:
            _check_condition(ctx, q.file, r.line, r.condition, domains)


def _check_cycles(ctx: LintContext) -> bool:
    """Report each strongly connected group of questions once, with one loop through it."""
    kb = ctx.kb
    graph = {qid: [r.target for r in rs if r.target in kb.questions] for qid, rs in edges(kb).items()}
    found = False
    for component in _strongly_connected(graph):
        first = min(component, key=lambda n: (kb.questions[n].file, kb.questions[n].line))
        if len(component) == 1 and first not in graph[first]:
            continue
        found = True
        loop = _loop_through(first, graph, component)
        closing = loop[-2]
        q = kb.questions[closing]
        line = next((r.line for r in routes_of(q) if r.target == first), q.line)
        ctx.error(q.file, line, f"cycle in the tree: {' -> '.join(loop)} (the engine refuses a walk that loops)")
    return found


def _strongly_connected(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative so that a deep tree cannot hit the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp: set[str] = set()
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.add(n)
                    if n == node:
                        break
                out.append(comp)
    return out


def _loop_through(start: str, graph: dict[str, list[str]], component: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside the component."""
    prev: dict[str, str] = {}
    todo = deque([start])
    while todo:
        node = todo.popleft()
        for nxt in graph.get(node, ()):
            if nxt not in component:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if nxt not in prev:
                prev[nxt] = node
                todo.append(nxt)
    return [start, start]  # pragma: no cover - a component always loops


def _check_walks(ctx: LintContext) -> None:
    """Walk as ``diagnose`` does, with nothing known and with each scenario diagnosed: it must end in a leaf."""
    kb = ctx.kb
    line = start_line(ctx)
    cases: list[tuple[str, FactSet]] = [("with nothing known", FactSet())]
    for sid in kb.scenarios:
        cases.append((f"with diagnosis={sid}", FactSet.of([Fact("diagnosis", sid, "lint", kind="log")])))
    for label, facts in cases:
        try:
            step = walk(kb, facts, auto_accept=True, use_unknown=True)
        except EngineError as e:
            ctx.error(TREE_FILE, line, f"a non-interactive walk {label} fails: {e}")
            continue
        if isinstance(step, Ask):
            q = step.question
            ctx.error(q.file, q.line, f"a non-interactive walk {label} stops at question {q.id}: nothing answers it")


def check_scenarios(ctx: LintContext) -> None:
    kb = ctx.kb
    top = ctx.raw(SCENARIOS_FILE)
    smap = top.get("scenarios") if hasattr(top, "get") else None
    seen = reachable(kb)
    for sid, sc in kb.scenarios.items():
        line = smap.line_of(sid) if smap is not None and hasattr(smap, "line_of") else sc.line
        main = kb.leaves.get(sid)
        if main is None:
            ctx.error(SCENARIOS_FILE, line, f"scenario {sid}: no main leaf (decision_trees/leaves/{sid}.yaml with id {sid})")
        elif sid not in main.scenarios:
            ctx.error(main.file, ctx.line_in(main.file, main.line, "scenarios"), f"leaf {sid}: the main leaf of scenario {sid} must list it in 'scenarios'")
        listing = [leaf for leaf in kb.leaves.values() if sid in leaf.scenarios]
        if listing and seen and not any(leaf.id in seen for leaf in listing):
            ctx.error(SCENARIOS_FILE, line, f"scenario {sid}: no leaf that lists it is reachable from {kb.start!r}")
        elif not listing and main is not None:
            ctx.error(SCENARIOS_FILE, line, f"scenario {sid}: no leaf lists it")
