"""The diagnosis rules, loaded from ``decision_trees/diagnosis/*.yaml``.

Knowledge about vLLM's messages, frames and start-up lines is data, so a new message variant or
frame is a data change with an example, checked by ``oomwizard lint``; this module only turns the
files into typed rules, once per process. Loading is strict for the program (a broken rule file
must not diagnose silently with part of its rules) and collects located problems for lint.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..facts.catalog import CATALOG, FAILURE_PHASES
from ..i18n import Text
from ..kb.yamlsrc import KBError, LDict, LList, Problem, load_yaml
from .refine_rules import Refinements, load_refinements
from .rules_read import _empty, _int, _Reader, _score, expand, phrase

__all__ = ["FILES", "FLAGS", "Example", "FrameFlag", "FramePhase", "Rules", "Signature", "expand", "load_rules",
           "phrase", "rules", "rules_dir"]

FILES = ("tiers.yaml", "messages.yaml", "frames.yaml", "timeline.yaml", "numbers.yaml", "refinements.yaml")
FLAGS = frozenset({"lora", "spec_decode", "sort", "mrv2", "mm_encoder", "custom_allreduce", "deep_gemm",
                   "flashinfer", "sleep_wake"})
"""The frame flags the ranking reads; a flag nobody reads would be a rule that does nothing."""
SLEEP_STATES = ("asleep", "awake")


@dataclass(frozen=True)
class Signature:
    """A message whose words identify a scenario."""

    id: str
    triggers: tuple[str, ...]
    """Plain substrings; a line holding none of them is never tried against the regex."""
    pattern: re.Pattern[str]
    scenario: str
    score: float
    reason: Text
    """Shown to the operator; ``{name}`` is filled from the regex's named groups."""
    phase: str | None = None
    facts: dict[str, str] = field(default_factory=dict)
    """Named group -> fact name (converted to the fact's type by the caller)."""
    oom: bool = False
    """The message reports a GPU out-of-memory error (so phase and context apply)."""
    frames: re.Pattern[str] | None = None
    """When set, the message counts only at the end of a traceback with a frame (path or
    function) matching this: a bare CUDA error says nothing without the code that raised it."""
    by_phase: bool = False
    """The message only names its phase (a report's own words): the phase's scenarios are ranked
    as for frames, with their refinements, at the message's score."""


@dataclass(frozen=True)
class FramePhase:
    phase: str
    funcs: frozenset[str]
    path: re.Pattern[str] | None = None
    func_re: re.Pattern[str] | None = None
    """For runners whose function names are not listed (model runner V2, plugins)."""
    ctor: re.Pattern[str] | None = None
    """A constructor (``__init__``) frame in a file matching this: building the model allocates
    its parameters, so an OOM there happens while the weights are being set up."""


@dataclass(frozen=True)
class FrameFlag:
    name: str
    func: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    code: re.Pattern[str] | None = None
    """Matched against the source lines a traceback shows under its frames."""


@dataclass(frozen=True)
class Example:
    rule: str
    scenario: str | None
    text: str
    file: str
    line: int


@dataclass
class Rules:
    tiers: dict[str, float] = field(default_factory=dict)
    messages: tuple[Signature, ...] = ()
    inferred: dict[str, Signature] = field(default_factory=dict)
    gpu_oom: re.Pattern[str] = re.compile(r"(?!)")
    gpu_oom_triggers: tuple[str, ...] = ()
    frame_phases: tuple[FramePhase, ...] = ()
    frame_flags: tuple[FrameFlag, ...] = ()
    cut_phases: tuple[tuple[str, str, frozenset[str]], ...] = ()
    warmup_raisers: frozenset[str] = frozenset()
    engine_code: re.Pattern[str] | None = None
    timeline: tuple[tuple[str, re.Pattern[str] | None, str], ...] = ()
    request_layer_death: tuple[str, ...] = ()
    serving_loops: frozenset[str] = frozenset()
    serving_sources: tuple[str, ...] = ()
    sleep_marks: tuple[tuple[str, re.Pattern[str], str], ...] = ()
    sleep_partial_tags: tuple[str, ...] = ()
    mm_profile: re.Pattern[str] = re.compile(r"(?!)")
    mm_profile_triggers: tuple[str, ...] = ()
    thresholds: dict[str, float] = field(default_factory=dict)
    large_vocab: int = 0
    fragmentation_min: int = 0
    mrv2_zero: str = ""
    deepseek_v32: re.Pattern[str] = re.compile(r"(?!)")
    mechanisms: tuple[Any, ...] = ()
    refinements: Refinements = field(default_factory=Refinements)
    mechanism_params: dict[str, Any] = field(default_factory=dict)
    examples: list[Example] = field(default_factory=list)
    sources: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Rule id -> (file, line), for lint's messages."""


_MESSAGE_KEYS = {"id", "scenario", "score", "phase", "triggers", "pattern", "frames", "facts", "oom", "reason", "note",
                 "examples", "by_phase"}


def _signature_facts(r: _Reader, d: LDict, pattern: re.Pattern[str] | None, what: str) -> LDict:
    """``facts:`` (named group -> fact), each a known fact and a group of the pattern."""
    facts = d.get("facts")
    if facts is not None and not isinstance(facts, LDict):
        r.err(d.line_of("facts"), f"{what}.facts: expected group: fact")
    if not isinstance(facts, LDict):
        facts = _empty()
    for group, fact in facts.items():
        if fact not in CATALOG:
            r.err(facts.line_of(group), f"{what}.facts: unknown fact {fact!r}")
        if pattern is not None and group not in pattern.groupindex:
            r.err(facts.line_of(group), f"{what}.facts: the pattern has no group {group!r}")
    return facts


def _signature_examples(r: _Reader, rules: Rules, d: LDict, sid: str, pattern: re.Pattern[str] | None,
                        triggers: tuple[str, ...], what: str) -> None:
    """Each example, kept for lint, must match the pattern and hold a trigger."""
    ex_list = r.seq(d, "examples", what)
    for i, text in enumerate(r.strings(d, "examples", what)):
        rules.examples.append(Example(sid, d.get("scenario"), text, r.file, ex_list.line_of(i)))
        if pattern is not None and not pattern.search(text):
            r.err(ex_list.line_of(i), f"{what}: example does not match the pattern")
        if triggers and not any(t in text for t in triggers):
            r.err(ex_list.line_of(i), f"{what}: example holds none of the triggers")


def _signature(r: _Reader, rules: Rules, d: Any, line: int, what: str, inferred: bool = False) -> Signature | None:
    required = {"id", "scenario", "score", "pattern", "reason"} | (set() if inferred else {"triggers", "examples"})
    if not r.keys(d, line, _MESSAGE_KEYS, required, what):
        return None
    sid = d["id"]
    what = f"{what} {sid}"
    score = _score(r, rules.tiers, d["score"], d.line_of("score"), what)
    pattern = r.regex(d["pattern"], d.line_of("pattern"), f"{what}.pattern")
    reason = r.text(d["reason"], d.line_of("reason"), f"{what}.reason")
    phase = r.phase(d["phase"], d.line_of("phase"), what) if d.get("phase") is not None else None
    frames = r.regex(d["frames"], d.line_of("frames"), f"{what}.frames") if d.get("frames") is not None else None
    facts = _signature_facts(r, d, pattern, what)
    if pattern is not None and reason is not None and not inferred:
        for name in re.findall(r"\{(\w+)\}", reason.en + reason.zh):
            if name not in pattern.groupindex:
                r.err(d.line_of("reason"), f"{what}.reason: the pattern has no group {name!r}")
    triggers = r.strings(d, "triggers", what)
    if not inferred and not triggers:
        r.err(d.line_of("triggers"), f"{what}: at least one trigger")
    _signature_examples(r, rules, d, sid, pattern, triggers, what)
    by_phase = d.get("by_phase") is True
    if by_phase and phase is None:
        r.err(d.line_of("by_phase"), f"{what}: by_phase needs a phase")
    if None in (score, pattern, reason):
        return None
    if sid in rules.sources:
        r.err(line, f"{what}: duplicate id (first at {rules.sources[sid][0]}:{rules.sources[sid][1]})")
    rules.sources[sid] = (r.file, line)
    assert score is not None and pattern is not None and reason is not None
    return Signature(sid, triggers, pattern, str(d["scenario"]), score, reason, phase,
                     {str(k): str(v) for k, v in facts.items()}, d.get("oom") is True, frames, by_phase)


def _tiers(r: _Reader, rules: Rules, doc: LDict) -> None:
    th = doc.get("thresholds")
    if r.keys(th, doc.line_of("thresholds"), {"confident", "earlier_run"}, {"confident", "earlier_run"}, "thresholds"):
        for k in ("confident", "earlier_run"):
            if isinstance(th[k], (int, float)) and 0 < th[k] <= 1:
                rules.thresholds[k] = float(th[k])
            else:
                r.err(th.line_of(k), f"thresholds.{k}: expected a number in (0, 1]")
    tiers = doc.get("tiers")
    if not isinstance(tiers, LDict):
        r.err(doc.line, "tiers: expected name: score")
        return
    for name, value in tiers.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 1:
            r.err(tiers.line_of(name), f"tier {name}: expected a number in (0, 1]")
        else:
            rules.tiers[name] = float(value)
    order = doc.get("order")
    if isinstance(order, LList):
        scores = [rules.tiers.get(n) for n in order]
        if None in scores or scores != sorted(scores, reverse=True):  # type: ignore[type-var]
            r.err(order.line, "order: tiers must be known and listed from the strongest to the weakest")


def _messages(r: _Reader, rules: Rules, doc: LDict) -> None:
    items = r.seq(doc, "messages", "messages")
    sigs = [_signature(r, rules, d, items.line_of(i), "message") for i, d in enumerate(items)]
    rules.messages = tuple(s for s in sigs if s is not None)
    inferred = r.seq(doc, "inferred", "inferred")
    for i, d in enumerate(inferred):
        s = _signature(r, rules, d, inferred.line_of(i), "inferred", inferred=True)
        if s is not None:
            rules.inferred[s.id] = s
    oom = doc.get("gpu_oom")
    if r.keys(oom, doc.line_of("gpu_oom"), {"triggers", "patterns", "examples", "note"}, {"triggers", "patterns"},
              "gpu_oom"):
        parts = r.strings(oom, "patterns", "gpu_oom")
        rx = r.regex("|".join(parts), oom.line_of("patterns"), "gpu_oom.patterns")
        if rx is not None:
            rules.gpu_oom = rx
            ex = r.seq(oom, "examples", "gpu_oom")
            for i, text in enumerate(r.strings(oom, "examples", "gpu_oom")):
                if not rx.search(text):
                    r.err(ex.line_of(i), "gpu_oom: example does not match")
        rules.gpu_oom_triggers = r.strings(oom, "triggers", "gpu_oom")


def _frames(r: _Reader, rules: Rules, doc: LDict) -> None:
    phases = []
    items = r.seq(doc, "phases", "phases")
    for i, d in enumerate(items):
        line = items.line_of(i)
        if not r.keys(d, line, {"phase", "funcs", "path", "func", "ctor", "note"}, {"phase", "funcs"}, "phases"):
            continue
        phase = r.phase(d["phase"], d.line_of("phase"), "phases")
        opt = {k: r.regex(d[k], d.line_of(k), f"phases {phase}.{k}") if d.get(k) is not None else None
               for k in ("path", "func", "ctor")}
        if phase is not None:
            phases.append(FramePhase(phase, frozenset(r.strings(d, "funcs", f"phases {phase}")), opt["path"],
                                     opt["func"], opt["ctor"]))
    rules.frame_phases = tuple(phases)
    flags = []
    items = r.seq(doc, "flags", "flags")
    for i, d in enumerate(items):
        line = items.line_of(i)
        if not r.keys(d, line, {"flag", "func", "path", "code", "note"}, {"flag"}, "flags"):
            continue
        if d["flag"] not in FLAGS:
            r.err(d.line_of("flag"), f"flags: unknown flag {d['flag']!r} (one of {', '.join(sorted(FLAGS))})")
            continue
        opt = {k: r.regex(d[k], d.line_of(k), f"flags {d['flag']}.{k}") if d.get(k) is not None else None
               for k in ("func", "path", "code")}
        flags.append(FrameFlag(str(d["flag"]), opt["func"], opt["path"], opt["code"]))
    rules.frame_flags = tuple(flags)
    cut = []
    items = r.seq(doc, "cut_phases", "cut_phases")
    for i, d in enumerate(items):
        if r.keys(d, items.line_of(i), {"frame", "phase", "unless", "note"}, {"frame", "phase"}, "cut_phases"):
            phase = r.phase(d["phase"], d.line_of("phase"), "cut_phases")
            if phase is not None:
                cut.append((str(d["frame"]), phase, frozenset(r.strings(d, "unless", "cut_phases"))))
    rules.cut_phases = tuple(cut)
    rules.warmup_raisers = frozenset(r.strings(doc, "warmup_raisers", "warmup_raisers"))
    code = doc.get("engine_code")
    if code is not None:
        rules.engine_code = r.regex(code, doc.line_of("engine_code"), "engine_code")


def _timeline(r: _Reader, rules: Rules, doc: LDict) -> None:
    marks = []
    items = r.seq(doc, "marks", "marks")
    for i, d in enumerate(items):
        if not r.keys(d, items.line_of(i), {"trigger", "phase", "pattern", "note"}, {"trigger", "phase"}, "marks"):
            continue
        phase = r.phase(d["phase"], d.line_of("phase"), f"marks {d['trigger']!r}")
        rx = r.regex(d["pattern"], d.line_of("pattern"), "marks") if d.get("pattern") is not None else None
        if phase is not None:
            marks.append((str(d["trigger"]), rx, phase))
    rules.timeline = tuple(marks)
    rules.request_layer_death = r.strings(doc, "request_layer_death", "request_layer_death")
    rules.serving_loops = frozenset(r.strings(doc, "serving_loops", "serving_loops"))
    rules.serving_sources = r.strings(doc, "serving_sources", "serving_sources")
    sleep = []
    items = r.seq(doc, "sleep_marks", "sleep_marks")
    for i, d in enumerate(items):
        if not r.keys(d, items.line_of(i), {"trigger", "pattern", "state", "note"}, {"trigger", "pattern", "state"},
                      "sleep_marks"):
            continue
        if d["state"] not in SLEEP_STATES:
            r.err(d.line_of("state"), f"sleep_marks: state must be one of {', '.join(SLEEP_STATES)}")
            continue
        rx = r.regex(d["pattern"], d.line_of("pattern"), "sleep_marks")
        if rx is not None:
            sleep.append((str(d["trigger"]), rx, str(d["state"])))
    rules.sleep_marks = tuple(sleep)
    rules.sleep_partial_tags = r.strings(doc, "sleep_partial_tags", "sleep_partial_tags")
    mm = doc.get("multimodal_profile")
    if r.keys(mm, doc.line_of("multimodal_profile"), {"triggers", "pattern"}, {"triggers", "pattern"},
              "multimodal_profile"):
        rx = r.regex(mm["pattern"], mm.line_of("pattern"), "multimodal_profile")
        if rx is not None:
            rules.mm_profile = rx
        rules.mm_profile_triggers = r.strings(mm, "triggers", "multimodal_profile")


def _numbers(r: _Reader, rules: Rules, doc: LDict) -> None:
    from ..versions import VersionSpec
    from .mechanisms import CONDITIONS, Mechanism

    r.keys(doc, doc.line, {"large_vocab", "fragmentation_min_mib", "mrv2_zero", "deepseek_v32", "mechanisms",
                           "weights_share"},
           {"large_vocab", "fragmentation_min_mib", "mrv2_zero", "deepseek_v32"}, "numbers")
    rules.large_vocab = _int(r, doc, "large_vocab")
    rules.fragmentation_min = _int(r, doc, "fragmentation_min_mib") << 20
    spec = doc.get("mrv2_zero")
    try:
        VersionSpec.parse(str(spec))
        rules.mrv2_zero = str(spec)
    except ValueError as e:
        r.err(doc.line_of("mrv2_zero"), f"mrv2_zero: {e}")
    rx = r.regex(doc.get("deepseek_v32"), doc.line_of("deepseek_v32"), "deepseek_v32")
    if rx is not None:
        rules.deepseek_v32 = rx
    share = doc.get("weights_share", 0.9)
    if not isinstance(share, (int, float)) or not 0 < share <= 1:
        r.err(doc.line_of("weights_share"), "weights_share: expected a number in (0, 1]")
    rules.mechanism_params = {"weights_share": share}
    out = []
    items = r.seq(doc, "mechanisms", "mechanisms")
    for i, d in enumerate(items):
        line = items.line_of(i)
        if not r.keys(d, line, {"id", "when", "scenario", "score", "reason", "examples", "note"},
                      {"id", "when", "scenario", "score", "reason", "examples"}, "mechanisms"):
            continue
        what = f"mechanism {d['id']}"
        when = r.strings(d, "when", what)
        for c in when:
            if c not in CONDITIONS:
                r.err(d.line_of("when"), f"{what}: unknown condition {c!r} (one of {', '.join(CONDITIONS)})")
        score = _score(r, rules.tiers, d["score"], d.line_of("score"), what)
        reason = r.text(d["reason"], d.line_of("reason"), f"{what}.reason")
        ex = r.seq(d, "examples", what)
        for j, text in enumerate(r.strings(d, "examples", what)):
            rules.examples.append(Example(str(d["id"]), str(d["scenario"]), text, r.file, ex.line_of(j)))
        if d["id"] in rules.sources:
            r.err(line, f"{what}: duplicate id")
        rules.sources[str(d["id"])] = (r.file, line)
        if score is not None and reason is not None and all(c in CONDITIONS for c in when):
            out.append(Mechanism(str(d["id"]), when, str(d["scenario"]), score, reason))
    rules.mechanisms = tuple(out)


def _refinements(r: _Reader, rules: Rules, doc: LDict) -> None:
    found: list[tuple[str, str, str, int]] = []
    rules.refinements = load_refinements(r, rules.tiers, doc, FLAGS, FAILURE_PHASES, found)
    for rule, scenario, text, line in found:
        rules.examples.append(Example(rule, scenario, text, r.file, line))
    for rule, _scenario, line in rules.refinements.scenarios:
        rules.sources[rule] = (r.file, line)


_SECTIONS = {"tiers.yaml": _tiers, "messages.yaml": _messages, "frames.yaml": _frames, "timeline.yaml": _timeline,
             "numbers.yaml": _numbers, "refinements.yaml": _refinements}


def _own_root() -> Path:
    """The program's own knowledge base (the wheel's copy or the source tree), whatever
    ``$OOMWIZARD_KB`` says."""
    pkg = Path(__file__).resolve().parent.parent
    bundled = pkg / "_kb"
    return bundled if (bundled / "decision_trees").is_dir() else pkg.parent


def rules_dir(root: Path | None = None) -> Path:
    """The rules of ``root``; without one, those of the knowledge base in use, or the program's own
    when that base brings none (a tree and articles of its own, the diagnosis as shipped)."""
    from ..kb.root import default_root

    if root is not None:
        return root / "decision_trees" / "diagnosis"
    base = default_root() / "decision_trees" / "diagnosis"
    return base if base.is_dir() else _own_root() / "decision_trees" / "diagnosis"


def load_rules(root: Path | None = None, problems: list[Problem] | None = None) -> Rules:
    """The rules under ``root`` (the knowledge base's root); problems are appended to ``problems``."""
    problems = [] if problems is None else problems
    base = rules_dir(root)
    rules = Rules()
    for name in FILES:
        display = f"decision_trees/diagnosis/{name}"
        path = base / name
        if not path.is_file():
            problems.append(Problem(display, None, "missing rule file"))
            continue
        doc = load_yaml(path, display, problems)
        if not isinstance(doc, LDict):
            problems.append(Problem(display, None, "expected a mapping at the top"))
            continue
        _SECTIONS[name](_Reader(display, problems), rules, doc)
    return rules


@functools.cache
def rules() -> Rules:
    """The program's rules; a broken rule file stops it with every problem located."""
    problems: list[Problem] = []
    loaded = load_rules(None, problems)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise KBError(errors)
    return loaded
