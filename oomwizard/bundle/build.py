"""Assemble a support bundle: facts with sources, answers and path, diagnosis, fix, machine, log.

The bundle is one JSON-like document; Markdown and HTML are drawn from it after redaction, so
every format holds exactly the same (redacted) text. For replay it carries the log lines the
collector read, as logical lines with their line numbers (not the whole log, not a summary): the
diagnosis is recomputed from them on the other machine by the same code, so a bundle cannot
claim a diagnosis its evidence does not support. A line whose redaction would change how it was
joined from its pieces is kept as one piece (its later pieces' line numbers are lost).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import __version__
from ..engine import Answer, Done, walk
from ..facts.model import FactSet
from ..kb.model import KnowledgeBase
from ..logs.lines import Logical
from ..logs.model import Diagnosis
from ..report.leaf import leaf_json
from ..text.redact import redact_text

MAX_LOG_CHARS = 8 << 20
"""Log text a bundle carries at most; a bundle whose log was cut says so and replays with a warning."""


@dataclass
class LogLines:
    """The logical lines the collector read, per input, as the bundle stores them."""

    inputs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """The reader's remarks about the inputs (binary data, cut lines), which replay repeats."""
    warnings_zh: list[str] = field(default_factory=list)
    """The same remarks in Chinese, so a replay speaks the operator's language."""
    chars: int = 0
    complete: bool = True

    def hook(self, name: str, lg: Logical) -> None:
        if not self.inputs or self.inputs[-1]["name"] != name:
            self.inputs.append({"name": name, "lines": []})
        entry = logical_json(lg)
        size = sum(len(p[1]) + len(p[2]) for p in entry["pieces"])
        if self.chars + size > MAX_LOG_CHARS:
            self.complete = False
            return
        self.chars += size
        self.inputs[-1]["lines"].append(entry)


def logical_json(lg: Logical) -> dict[str, Any]:
    """``lg`` as pieces ``[line, text, shown]``; one piece when redacting the pieces apart would
    miss what redacting the joined line catches (a secret split by a terminal wrap)."""
    cuts = [0, *lg.starts, len(lg.text)]
    scuts = [0, *lg.shown_starts, len(lg.shown)]
    lines = [lg.line, *lg.lines]
    pieces: list[list[Any]] = [
        [lines[i], lg.text[cuts[i]:cuts[i + 1]], lg.shown[scuts[i]:scuts[i + 1]]] for i in range(len(lines))]
    if len(pieces) > 1 and (
        "".join(redact_text(str(p[1])) for p in pieces) != redact_text(lg.text)
        or "".join(redact_text(str(p[2])) for p in pieces) != redact_text(lg.shown)
    ):
        pieces = [[lg.line, lg.text, lg.shown]]
    out: dict[str, Any] = {"pieces": pieces}
    for key in ("proc", "level", "src"):
        if getattr(lg, key):
            out[key] = getattr(lg, key)
    if lg.rank is not None:
        out["rank"] = lg.rank
    return out


def logical_from_json(entry: dict[str, Any]) -> Logical:
    pieces = entry["pieces"]
    text = shown = ""
    starts: list[int] = []
    shown_starts: list[int] = []
    for i, (_, t, s) in enumerate(pieces):
        if i:
            starts.append(len(text))
            shown_starts.append(len(shown))
        text += t
        shown += s
    return Logical(text=text, shown=shown, line=pieces[0][0], proc=entry.get("proc", ""), rank=entry.get("rank"),
                   level=entry.get("level", ""), src=entry.get("src", ""), starts=starts,
                   lines=[p[0] for p in pieces[1:]], shown_starts=shown_starts)


def read_logs(paths: Sequence[str], progress: Any = None) -> tuple[Diagnosis, LogLines]:
    """Diagnose ``paths`` as ``diagnose`` does, keeping the lines read for the bundle."""
    from ..logs.diagnose import collect, conclude
    from ..logs.inputs import open_inputs

    sources = open_inputs(list(paths))
    kept = LogLines()
    col, warnings = collect(sources, progress=progress, on_line=kept.hook)
    for src in sources:  # an input with no line read still counts as an input
        if src.name not in [i["name"] for i in kept.inputs]:
            kept.inputs.append({"name": src.name, "lines": []})
    kept.inputs.sort(key=lambda i: [s.name for s in sources].index(i["name"]))
    diag = conclude(col, [s.name for s in sources], list(warnings))
    kept.warnings = [w.en for w in warnings]  # English, as JSON keeps it; Chinese beside it for replays
    kept.warnings_zh = [w.zh for w in warnings]
    return diag, kept


def noninteractive(kb: KnowledgeBase, facts: FactSet, diag: Diagnosis | None, overrides: FactSet,
                   lang: str) -> Done | None:
    """The walk ``diagnose`` takes: every suggestion accepted, unknowns answered "don't know"."""
    if not ((diag is not None and diag.matches) or len(overrides)):
        return None
    step = walk(kb, facts, {}, auto_accept=True, use_unknown=True, lang=lang)
    return step if isinstance(step, Done) else None


@dataclass
class BundleInput:
    """What a bundle is made of; the frontends and ``report`` fill it from what they hold."""

    kb: KnowledgeBase
    lang: str = "en"
    diagnosis: Diagnosis | None = None
    log: LogLines | None = None
    machine: dict[str, Any] | None = None
    """The ``detect`` report's data (no ``facts`` key), or ``None`` when no machine was read."""
    machine_source: str = "none"
    """``detected`` (this machine), ``file`` (``--machine``), ``replayed`` or ``none``."""
    facts: FactSet = field(default_factory=FactSet)
    overrides: FactSet = field(default_factory=FactSet)
    answers: dict[str, Answer] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    done: Done | None = None
    interactive: bool = False
    replayed_from: str | None = None
    log_paths: list[str] = field(default_factory=list)
    """An interactive walk's log files, read again when its bundle is written (``write_walk_bundle``)."""


def bundle_body(b: BundleInput, now: datetime | None = None) -> dict[str, Any]:
    """The bundle's body (unredacted): :func:`oomwizard.bundle.formats.finish` redacts it."""
    now = now or datetime.now(timezone.utc)
    diag = b.diagnosis
    done = b.done
    best = diag.best if diag is not None else None
    summary: dict[str, Any] = {
        "scenario": best.scenario if best else None,
        "scenario_title": _scenario_title(b.kb, best.scenario if best else None),
        "confidence": round(best.score, 3) if best else 0.0,
        "leaf": done.leaf.id if done else None,
        "leaf_title": done.leaf.title.as_dict() if done else None,
        "conclusion": done.leaf.conclusion.as_dict() if done else None,
    }
    log = b.log
    answers = [{"question": q, "value": b.answers[q].value, "source": b.answers[q].source}
               for q in b.order if q in b.answers]
    body: dict[str, Any] = {
        "created_at": now.isoformat(timespec="seconds"),
        "version": __version__,
        "lang": b.lang,
        "walk": "interactive" if b.interactive else "non-interactive",
        "summary": summary,
        "inputs": list(diag.inputs) if diag is not None else [],
        "facts": (done.facts if done is not None else b.facts).to_json(),
        "overrides": b.overrides.to_json(),
        "answers": answers,
        "path": leaf_json(done.leaf, done.facts, done.path)["path"] if done else [],
        "diagnosis": diag.to_json() if diag is not None else None,
        "leaf": leaf_json(done.leaf, done.facts, done.path) if done else None,
        "machine": b.machine,
        "machine_source": b.machine_source,
        "log": {
            "inputs": log.inputs if log is not None else [],
            "warnings": list(log.warnings) if log is not None else [],
            "warnings_zh": list(log.warnings_zh) if log is not None else [],
            "complete": log.complete if log is not None else True,
        },
    }
    if b.replayed_from:
        body["replayed_from"] = b.replayed_from
    return body


def _scenario_title(kb: KnowledgeBase, sid: str | None) -> dict[str, str] | None:
    if sid is None:
        return None
    sc = kb.scenarios.get(sid)
    return sc.title.as_dict() if sc is not None else None
