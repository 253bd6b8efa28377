"""Tick a leaf's checklist against the log of the next start: did the fix work?

Each automatic check is a regular expression that must (``log_present``) or must not
(``log_absent``) appear in the new log, or a condition on the facts read from it. A log that ends
before the server was ready proves little about what is *absent*, so such passes are reported as
unproven rather than passed. Checks without an automatic form stay for the operator to tick.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .engine import fact_value
from .facts.model import FactSet
from .i18n import Text, ui
from .kb.model import Check, Leaf
from .logs.diagnose import collect, conclude
from .logs.inputs import open_inputs
from .logs.lines import Logical
from .logs.model import Evidence
from .logs.reader import ALL_LINES_LIMIT, Progress
from .text.redact import redact_text
from .text.safe_text import printable

READY_RE = re.compile(
    r"Application startup complete|Uvicorn running on|Starting vLLM API server|"
    r"init engine \(profile, create kv cache, warmup model\) took|Available routes are"
)
"""Lines that only appear once the engine finished starting (V0 and V1, 0.6 to 0.33)."""

PASS, FAIL, UNPROVEN, MANUAL, UNKNOWN = "pass", "fail", "unproven", "manual", "unknown"


@dataclass
class CheckResult:
    check: Check
    status: str
    """``pass``, ``fail``, ``unproven`` (nothing bad seen, but the log stops before the server was
    ready), ``manual`` (a person must look) or ``unknown`` (a fact the condition needs is missing)."""
    hit: Evidence | None = None
    reason: str = ""
    """Why, as a key of ``verify.reason.*`` in :mod:`oomwizard.i18n` (empty when obvious)."""
    arg: str = ""
    """The condition or pattern the reason is about, shown verbatim."""

    def reason_text(self, lang: str = "en") -> str:
        return ui(f"verify.reason.{self.reason}", lang, arg=self.arg) if self.reason else ""

    def to_json(self, number: int) -> dict[str, Any]:
        """``number`` is the item's place in the leaf's checklist, as every output numbers it."""
        return {
            "number": number,
            "status": self.status,
            **self.check.text.as_dict(),
            "evidence": self.hit.to_json() if self.hit else None,
            "reason": self.reason or None,
            "detail": self.reason_text("en") or None,
        }


@dataclass
class Verification:
    leaf: Leaf
    results: list[CheckResult]
    ready: bool
    ready_at: Evidence | None = None
    inputs: list[str] = field(default_factory=list)
    warnings: list[Text] = field(default_factory=list)
    """What the reader noticed about the inputs (empty, binary, cut short): why a check may be unknown."""

    @property
    def failed(self) -> bool:
        return any(r.status == FAIL for r in self.results)

    @property
    def proven(self) -> bool:
        """Every automatic check passed on a log that reached a ready server."""
        auto = [r for r in self.results if r.status != MANUAL]
        return bool(auto) and all(r.status == PASS for r in auto)

    def to_json(self) -> dict[str, Any]:
        return {
            "leaf": self.leaf.id,
            "ready": self.ready,
            "ready_at": self.ready_at.to_json() if self.ready_at else None,
            "proven": self.proven,
            "failed": self.failed,
            "inputs": self.inputs,
            "checks": [r.to_json(i) for i, r in enumerate(self.results, 1)],
        }


def _shown(text: str) -> str:
    out = printable(redact_text(text)).strip()
    return out if len(out) <= 300 else out[:299] + "…"


def verify(leaf: Leaf, paths: list[str], facts: FactSet | None = None, progress: Progress | None = None,
           all_lines_limit: int = ALL_LINES_LIMIT) -> Verification:
    """Evaluate ``leaf``'s checklist against the logs in ``paths``.

    Each input is read once, by the same reader as the diagnosis: every byte is searched for the
    checklist's patterns together with the diagnosis's triggers, and the lines around a hit are
    matched on the logical line (a message a terminal wrapped counts where another trigger of the
    same message, such as ``out of memory``, brings its lines in; inputs up to ``all_lines_limit``
    are read line by line).
    """
    patterns: list[tuple[int, str, re.Pattern[str]]] = []
    for i, c in enumerate(leaf.checks):
        if c.auto:
            for kind, pat in (("present", c.auto.log_present), ("absent", c.auto.log_absent)):
                if pat:
                    patterns.append((i, kind, re.compile(pat)))
    found: dict[tuple[int, str], Evidence] = {}
    ready: list[Evidence] = []

    def on_line(file: str, lg: Logical) -> None:
        text = lg.text
        if not ready and READY_RE.search(text):
            ready.append(Evidence(file, lg.line, _shown(lg.shown)))
        for i, kind, pat in patterns:
            if (i, kind) not in found:
                m = pat.search(text)
                if m is not None:
                    found[(i, kind)] = Evidence(file, lg.line_at(m.start()), _shown(lg.shown))

    sources = open_inputs(paths)
    extra = tuple(dict.fromkeys([READY_RE.pattern.encode(), *(p.pattern.encode() for _, _, p in patterns)]))
    col, warnings = collect(sources, extra=extra, on_line=on_line, progress=progress, all_lines_limit=all_lines_limit)
    read_warnings = list(warnings)  # before the diagnosis adds its own ("no known failure" is good news here)
    known = FactSet()
    if facts is not None:
        known.update(facts)
    known.update(conclude(col, [s.name for s in sources], warnings).facts)
    ready_at = ready[0] if ready else None
    results = [_judge(i, c, found, known, ready_at is not None) for i, c in enumerate(leaf.checks)]
    return Verification(leaf, results, ready_at is not None, ready_at, list(paths), read_warnings)


def _judge(i: int, c: Check, found: dict[tuple[int, str], Evidence], facts: FactSet, ready: bool) -> CheckResult:
    if c.auto is None:
        return CheckResult(c, MANUAL)
    if c.auto.log_absent and (i, "absent") in found:
        return CheckResult(c, FAIL, found[(i, "absent")], "still_there")
    if c.auto.log_present:
        hit = found.get((i, "present"))
        if hit is None:
            return CheckResult(c, FAIL if ready else UNPROVEN, None, "missing")
        if not c.auto.fact and not c.auto.log_absent:
            return CheckResult(c, PASS, hit)
    if c.auto.fact:
        value = c.auto.fact.evaluate(lambda name: fact_value(facts, name))
        if value is None:
            return CheckResult(c, UNKNOWN, None, "no_fact", c.auto.fact.source)
        if value is False:
            return CheckResult(c, FAIL, None, "false", c.auto.fact.source)
    if c.auto.log_absent and not ready:
        return CheckResult(c, UNPROVEN, None, "not_ready")
    return CheckResult(c, PASS, found.get((i, "present")))
