"""Reading a support bundle back (``--replay BUNDLE``) without trusting it.

Like ``--machine``: a regular file of bounded size, its shape checked part by part before any of
it is used, and an error that names the field at fault (exit 4). Nothing in the bundle is taken
as a conclusion: the diagnosis is recomputed from the log lines it carries, the machine's facts
from its machine report, the overrides are coerced like ``--set`` values. Every fact is then
marked as replayed, its original source kept as the detail.
"""

from __future__ import annotations

import ntpath
import posixpath
from dataclasses import dataclass, field, replace
from typing import Any

from ..engine import Answer
from ..envelope import kind_of
from ..facts.catalog import CATALOG, FactValueError, coerce
from ..facts.model import Fact, FactSet
from ..facts.saved import expected, kind
from ..i18n import Text, TextError, msg
from ..logs.model import Diagnosis
from ..text.units import MIB

LIMIT = 32 * MIB
"""A bundle carries at most 8 MiB of log text (:data:`.build.MAX_LOG_CHARS`) plus JSON escaping."""
MAX_LINE_NUMBER = 10**10
MAX_PIECES = 200
MAX_LINES = 2_000_000


class BundleError(TextError, ValueError):
    """The bundle cannot be replayed; the message (in both languages) names the file and, when
    known, the field."""


@dataclass
class Replayed:
    name: str
    diagnosis: Diagnosis | None
    machine: Any
    """A :class:`~oomwizard.facts.machine.MachineReport` or ``None``."""
    overrides: FactSet = field(default_factory=FactSet)
    answers: dict[str, Answer] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    doc: dict[str, Any] = field(default_factory=dict)
    warnings: list[Text] = field(default_factory=list)

    def facts(self) -> FactSet:
        """Machine, log and overrides merged with the usual precedence, every one marked replayed."""
        fs = FactSet()
        if self.machine is not None:
            fs.update(self.machine.facts)
        if self.diagnosis is not None:
            fs.update(self.diagnosis.facts)
        fs.update(self.overrides)
        return fs


def label(name: str) -> str:
    return f"replayed from {ntpath.basename(posixpath.basename(name)) or name}"


def mark(facts: FactSet, name: str) -> FactSet:
    """``facts`` with each source replaced by "replayed from NAME" (the original kept as detail)."""
    src = label(name)
    return FactSet.of(replace(f, source=src, detail=f"{f.source}: {f.detail}" if f.detail else f.source)
                      for f in facts)


def _want(v: Any, types: tuple[type, ...], where: str, what: str, null: bool = False) -> bool:
    """True when ``v`` is present; raise when it has the wrong type (``what``: a noun, ``facts.saved.a.…``)."""
    if v is None and null:
        return False
    if (isinstance(v, bool) and bool not in types) or not isinstance(v, types):
        raise BundleError(expected(where, what, v))
    return True


def _check_lines(log: Any) -> None:
    _want(log, (dict,), "log", "object")
    _want(log.get("inputs"), (list,), "log.inputs", "list")
    _want(log.get("warnings", []), (list,), "log.warnings", "list")
    _want(log.get("warnings_zh", []), (list,), "log.warnings_zh", "list")
    total = 0
    for i, inp in enumerate(log["inputs"]):
        w = f"log.inputs[{i}]"
        _want(inp, (dict,), w, "object")
        _want(inp.get("name"), (str,), f"{w}.name", "string")
        _want(inp.get("lines"), (list,), f"{w}.lines", "list")
        total += len(inp["lines"])
        if total > MAX_LINES:
            raise BundleError(msg("bundle.replay.too_many_lines").format(where=f"{w}.lines", n=MAX_LINES))
        for j, lg in enumerate(inp["lines"]):
            lw = f"{w}.lines[{j}]"
            _want(lg, (dict,), lw, "object")
            pieces = lg.get("pieces")
            _want(pieces, (list,), f"{lw}.pieces", "list")
            if not 0 < len(pieces) <= MAX_PIECES:
                raise BundleError(msg("bundle.replay.pieces").format(where=f"{lw}.pieces", n=len(pieces), most=MAX_PIECES))
            for k, p in enumerate(pieces):
                pw = f"{lw}.pieces[{k}]"
                if not (isinstance(p, list) and len(p) == 3):
                    raise BundleError(expected(pw, "piece", p))
                _want(p[0], (int,), f"{pw}[0]", "line_number")
                if not 0 < p[0] < MAX_LINE_NUMBER:
                    raise BundleError(msg("bundle.replay.not_line_number").format(where=f"{pw}[0]", value=p[0]))
                _want(p[1], (str,), f"{pw}[1]", "string")
                _want(p[2], (str,), f"{pw}[2]", "string")
            for key in ("proc", "level", "src"):
                _want(lg.get(key, ""), (str,), f"{lw}.{key}", "string")
            _want(lg.get("rank"), (int,), f"{lw}.rank", "rank", null=True)


def validate(doc: Any) -> None:
    """Raise :class:`BundleError` naming the first part a replay cannot use."""
    if kind_of(doc) != ("report", 1):
        found = repr(doc.get("schema")) if isinstance(doc, dict) else repr(kind(doc).en)
        raise BundleError(msg("bundle.replay.not_a_bundle").format(schema=found))
    _check_lines(doc.get("log"))
    if _want(doc.get("machine"), (dict,), "machine", "object", null=True):
        from ..facts.saved import ReportError
        from ..facts.saved import validate as check_machine

        try:
            check_machine(doc["machine"])
        except ReportError as e:
            raise BundleError(msg("bundle.replay.in_machine").format(error=e.text)) from None
    _want(doc.get("overrides", {}), (dict,), "overrides", "object")
    for name, f in doc.get("overrides", {}).items():
        _want(f, (dict,), f"overrides.{name}", "object")
    _want(doc.get("answers", []), (list,), "answers", "list")
    for i, a in enumerate(doc.get("answers", [])):
        _want(a, (dict,), f"answers[{i}]", "object")
        for key in ("question", "value", "source"):
            _want(a.get(key), (str,), f"answers[{i}].{key}", "string")


def load_bundle(path: str) -> dict[str, Any]:
    from ..facts.saved import read_report_file

    doc = read_report_file(path, LIMIT, msg("bundle.replay.what"), msg("bundle.replay.what"), BundleError)
    try:
        validate(doc)
    except BundleError as e:
        raise BundleError(msg("bundle.replay.in_file").format(path=path, error=e.text)) from None
    return doc


def diagnosis_of(doc: dict[str, Any]) -> Diagnosis | None:
    """The diagnosis recomputed from the bundle's log lines, as ``diagnose`` computes it."""
    from ..logs.collect import Collector
    from ..logs.diagnose import conclude
    from .build import logical_from_json

    log = doc["log"]
    if not log["inputs"]:
        return None
    col = Collector()
    for inp in log["inputs"]:
        col.file = inp["name"]
        col.files.append(inp["name"])
        for entry in inp["lines"]:
            col.feed(logical_from_json(entry))
    return conclude(col, [i["name"] for i in log["inputs"]], log_warnings(log))


def log_warnings(log: dict[str, Any]) -> list[Text]:
    """The reader's remarks a bundle kept, in both languages where it kept the Chinese beside them
    (bundles written before it did show the English to both)."""
    en = [str(w) for w in log.get("warnings", [])]
    zh = [str(w) for w in log.get("warnings_zh", [])]
    return [Text(e, z) for e, z in zip(en, zh, strict=True)] if len(zh) == len(en) else [Text.same(e) for e in en]


def replay(path: str, kb: Any = None) -> Replayed:
    """The bundle at ``path``, recomputed: diagnosis, machine, overrides, answers."""
    from ..facts.machine import MachineReport

    doc = load_bundle(path)
    warnings: list[Text] = []
    if not doc["log"].get("complete", True):
        warnings.append(msg("bundle.replay.partial_log").format(path=path))
    diag = diagnosis_of(doc)
    machine = MachineReport.from_json(doc["machine"]) if doc.get("machine") else None
    overrides = FactSet()
    for name, f in doc.get("overrides", {}).items():
        if name not in CATALOG:
            warnings.append(msg("bundle.replay.unknown_override").format(path=path, name=repr(name)))
            continue
        try:
            value = coerce(name, f.get("value"))
        except FactValueError as e:
            raise BundleError(msg("bundle.replay.bad_override").format(path=path, name=name, error=e.text)) from None
        overrides.add(Fact(name, value, str(f.get("source", "answered")), kind="answered"))
    answers: dict[str, Answer] = {}
    order: list[str] = []
    for a in doc.get("answers", []):
        if kb is not None and a["question"] not in kb.questions:
            warnings.append(msg("bundle.replay.unknown_answer").format(path=path, question=repr(a["question"])))
            continue
        answers[a["question"]] = Answer(a["value"], a["source"])
        order.append(a["question"])
    name = label(path)
    if diag is not None:
        diag.facts = mark(diag.facts, path)
    if machine is not None:
        machine.facts = mark(machine.facts, path)
    overrides = mark(overrides, path)
    return Replayed(name, diag, machine, overrides, answers, order, doc, warnings)

