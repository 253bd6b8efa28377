"""A tree whose routes loop is refused when it is loaded, not in the middle of a walk.

``lint`` reports loops with the whole path; the engine only meets one when a walk happens to
take it, and then it can only stop. Loading refuses such a tree up front, so every command and
both frontends say "the knowledge base is broken" with the loop, as for any other damage.
"""

from __future__ import annotations

from .model import KnowledgeBase
from .yamlsrc import Problem


def find_loop(kb: KnowledgeBase) -> Problem | None:
    """The first loop among the questions' routes, or None (iterative: a deep tree cannot overflow)."""
    graph = {
        qid: [r.target for r in [*(r for c in q.choices for r in c.routes), *q.routes] if r.target in kb.questions]
        for qid, q in kb.questions.items()
    }
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path = [root]
        on_path = {root}
        todo = [iter(graph[root])]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                node = path.pop()
                on_path.discard(node)
                done.add(node)
                todo.pop()
                continue
            if nxt in on_path:
                loop = [*path[path.index(nxt):], nxt]
                q = kb.questions[path[-1]]
                return Problem(q.file, q.line, f"cycle in the tree: {' -> '.join(loop)}")
            if nxt not in done:
                path.append(nxt)
                on_path.add(nxt)
                todo.append(iter(graph[nxt]))
    return None
