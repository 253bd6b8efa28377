"""Tick a leaf's checklist against the log of the next start: did the fix work?

Each automatic check is a regular expression that must (``log_present``) or must not
(``log_absent``) appear in the new log, or a condition on the facts read from it. A log that ends
before the server was ready proves little about what is *absent*, so such passes are reported as
unproven rather than passed. Checks without an automatic form stay for the operator to tick.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .engine import fact_value
from .facts.model import FactSet
from .i18n import ui
from .kb.model import Check, Leaf
from .logs.diagnose import diagnose_paths
from .logs.lines import Joiner
from .logs.reader import GAP, ReadStats, open_source, read_lines
from .render.redact import redact_text
from .render.safe_text import printable

READY_RE = re.compile(
    r"Application startup complete|Uvicorn running on|Starting vLLM API server|"
    r"init engine \(profile, create kv cache, warmup model\) took|Available routes are"
)
"""Lines that only appear once the engine finished starting (V0 and V1, 0.6 to 0.33)."""
EVERYTHING = 1 << 62

PASS, FAIL, UNPROVEN, MANUAL, UNKNOWN = "pass", "fail", "unproven", "manual", "unknown"


@dataclass
class Hit:
    file: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass
class CheckResult:
    check: Check
    status: str
    """``pass``, ``fail``, ``unproven`` (nothing bad seen, but the log stops before the server was
    ready), ``manual`` (a person must look) or ``unknown`` (a fact the condition needs is missing)."""
    hit: Hit | None = None
    reason: str = ""
    """Why, as a key of ``verify.reason.*`` in :mod:`oomwizard.i18n` (empty when obvious)."""
    arg: str = ""
    """The condition or pattern the reason is about, shown verbatim."""

    def reason_text(self, lang: str = "en") -> str:
        return ui(f"verify.reason.{self.reason}", lang, arg=self.arg) if self.reason else ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, **self.check.text.as_dict()}
        if self.hit:
            out["evidence"] = self.hit.to_json()
        if self.reason:
            out["reason"] = self.reason
            out["detail"] = self.reason_text("en")
        return out


@dataclass
class Verification:
    leaf: Leaf
    results: list[CheckResult]
    ready: bool
    ready_at: Hit | None = None
    inputs: list[str] = field(default_factory=list)

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
            "checks": [r.to_json() for r in self.results],
        }


LARGE = 8 << 20
"""Above this size an input is matched line by line (and across each line break) instead of
rebuilding every wrapped message: three times faster, and only a message wrapped over three or
more lines could slip through."""
WRAP_TAIL = 240


def _messages(path: str) -> Iterator[tuple[str, int, str, str]]:
    """(file, line, text to match, text to show) for the messages of one input, in order."""
    src = open_source(path)
    stats = ReadStats(src.name)
    lines = read_lines(src, stats, (), (), exact_limit=EVERYTHING, all_lines_limit=EVERYTHING)
    if src.size is not None and src.size > LARGE:
        prev = ""
        for item in lines:
            n, text = item
            if n < 0:
                prev = ""
                continue
            yield src.name, n, text, text
            if prev:
                # A message cut by a terminal: its end on the previous line, its start on this one.
                yield src.name, n - 1, prev[-WRAP_TAIL:] + text[:WRAP_TAIL], prev
            prev = text if len(text) >= 72 else ""
        return
    joiner = Joiner()
    for item in lines:
        if item == GAP:
            for lg in joiner.flush():
                yield src.name, lg.line, lg.text, lg.shown
            continue
        n, text = item
        for lg in joiner.feed(n, text):
            yield src.name, lg.line, lg.text, lg.shown
    for lg in joiner.flush():
        yield src.name, lg.line, lg.text, lg.shown


def _shown(text: str) -> str:
    out = printable(redact_text(text)).strip()
    return out if len(out) <= 300 else out[:299] + "…"


def verify(leaf: Leaf, paths: list[str], facts: FactSet | None = None) -> Verification:
    """Evaluate ``leaf``'s checklist against the logs in ``paths`` (read whole, streamed)."""
    patterns: list[tuple[int, str, re.Pattern[str]]] = []
    for i, c in enumerate(leaf.checks):
        if c.auto:
            for kind, pat in (("present", c.auto.log_present), ("absent", c.auto.log_absent)):
                if pat:
                    patterns.append((i, kind, re.compile(pat)))
    found: dict[tuple[int, str], Hit] = {}
    ready_at: Hit | None = None
    for file, line, text, shown in (m for path in paths for m in _messages(path)):
        if ready_at is None and READY_RE.search(text):
            ready_at = Hit(file, line, _shown(shown))
        for i, kind, pat in patterns:
            if (i, kind) not in found and pat.search(text):
                found[(i, kind)] = Hit(file, line, _shown(shown))
    known = FactSet()
    if facts is not None:
        known.update(facts)
    known.update(diagnose_paths(paths).facts)
    results = [_judge(i, c, found, known, ready_at is not None) for i, c in enumerate(leaf.checks)]
    return Verification(leaf, results, ready_at is not None, ready_at, list(paths))


def _judge(i: int, c: Check, found: dict[tuple[int, str], Hit], facts: FactSet, ready: bool) -> CheckResult:
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
