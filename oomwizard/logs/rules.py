"""The diagnosis rules, loaded from ``decision_trees/diagnosis/*.yaml``.

Knowledge about vLLM's messages, frames and start-up lines is data, so a new message variant or
frame is a data change with an example, checked by ``oomwizard lint``; this module only turns the
files into typed rules, once per process. Loading is strict for the program (a broken rule file
must not diagnose silently with part of its rules) and collects located problems for lint.
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..facts.catalog import FAILURE_PHASES
from ..kb.compiled import load_source
from ..kb.root import default_root, own_root
from ..kb.yamlsrc import KBError, LDict, LList, Problem
from .message_facts import read_fact_examples, read_facts
from .refine_rules import load_refinements
from .rules_messages import check_plain_words, load_messages
from .rules_model import SLEEP_STATES, Example, FrameFlag, FramePhase, Rules, Signature
from .rules_named import load_named_in_words
from .rules_read import _int, _Reader, _score, expand, phrase

__all__ = ["FILES", "Example", "FrameFlag", "FramePhase", "Rules", "Signature", "expand", "load_rules",
           "phrase", "rules", "rules_dir"]

FILES = ("tiers.yaml", "messages.yaml", "frames.yaml", "timeline.yaml", "numbers.yaml", "refinements.yaml")


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
        if d["flag"] in rules.flag_lines:
            r.err(d.line_of("flag"), f"flags: {d['flag']!r} is defined twice")
            continue
        rules.flag_lines[str(d["flag"])] = (r.file, d.line_of("flag"))
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
    fwd = doc.get("forward_frames")
    if fwd is not None and r.keys(fwd, doc.line_of("forward_frames"), {"pattern", "phase"}, {"pattern", "phase"},
                                  "forward_frames"):
        rx = r.regex(fwd["pattern"], fwd.line_of("pattern"), "forward_frames.pattern")
        phase = r.phase(fwd["phase"], fwd.line_of("phase"), "forward_frames")
        if rx is not None and phase is not None:
            rules.forward_frames = (rx, phase)
    con = doc.get("construction_frames")
    if con is not None and r.keys(con, doc.line_of("construction_frames"), {"path", "funcs"}, {"path", "funcs"},
                                  "construction_frames"):
        rx = r.regex(con["path"], con.line_of("path"), "construction_frames.path")
        if rx is not None:
            rules.construction_frames = (rx, frozenset(r.strings(con, "funcs", "construction_frames")))
    code = doc.get("engine_code")
    if code is not None:
        rules.engine_code = r.regex(code, doc.line_of("engine_code"), "engine_code")
    load_named_in_words(r, rules, doc)


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
    start = doc.get("run_start")
    if r.keys(start, doc.line_of("run_start"), {"triggers", "pattern"}, {"triggers", "pattern"}, "run_start"):
        rx = r.regex(start["pattern"], start.line_of("pattern"), "run_start")
        if rx is not None:
            rules.run_start = rx
        rules.run_start_triggers = r.strings(start, "triggers", "run_start")
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
                           "weights_share", "gpu_sizes", "startup_numbers"},
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
    _startup_numbers(r, rules, doc)
    sizes = doc.get("gpu_sizes")
    if isinstance(sizes, LDict):
        for name, gib in sizes.items():
            if gib is not None and (not isinstance(gib, int) or isinstance(gib, bool) or gib <= 0):
                r.err(sizes.line_of(name), f"gpu_sizes.{name}: expected a size in GiB or null")
            else:
                rules.gpu_sizes[str(name)] = gib
    elif sizes is not None:
        r.err(doc.line_of("gpu_sizes"), "gpu_sizes: expected name: GiB")
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


def _startup_numbers(r: _Reader, rules: Rules, doc: LDict) -> None:
    """``startup_numbers``: start-up lines and the facts their groups carry (:mod:`.message_facts`)."""
    out = []
    items = r.seq(doc, "startup_numbers", "startup_numbers")
    for i, d in enumerate(items):
        what = f"startup_numbers[{i}]"
        if not r.keys(d, items.line_of(i), {"triggers", "pattern", "facts", "fact_examples", "note"},
                      {"triggers", "pattern", "facts", "fact_examples"}, what):
            continue
        rx = r.regex(d["pattern"], d.line_of("pattern"), f"{what}.pattern")
        facts = read_facts(r, d, rx, what)
        read_fact_examples(r, d, rx, facts, what)
        triggers = r.strings(d, "triggers", what)
        for j, ex in enumerate(r.seq(d, "fact_examples", what)):
            if isinstance(ex, LDict) and not any(t in str(ex.get("text", "")) for t in triggers):
                r.err(d["fact_examples"].line_of(j), f"{what}.fact_examples: the text holds none of the triggers")
        if rx is not None and triggers:
            out.append((triggers, rx, facts))
    rules.startup_numbers = tuple(out)


def _refinements(r: _Reader, rules: Rules, doc: LDict) -> None:
    found: list[tuple[str, str, str, int]] = []
    flags = frozenset(rules.flag_lines)
    rules.refinements = load_refinements(r, rules.tiers, doc, flags, FAILURE_PHASES, found)
    read = {n for group in rules.refinements.groups.values() for rule in group if rule.when is not None
            for n in rule.when.names()}
    for name in sorted(flags - {n.removeprefix("flag_") for n in read}):
        file, line = rules.flag_lines[name]
        r.problems.append(Problem(file, line, f"flags: no rule of refinements.yaml reads flag_{name} (a flag nobody "
                                              "reads does nothing)"))
    for rule, scenario, text, line in found:
        rules.examples.append(Example(rule, scenario, text, r.file, line))
    for rule, _scenario, line in rules.refinements.scenarios:
        rules.sources[rule] = (r.file, line)
    known = {m.id for m in rules.messages}
    for rule in rules.refinements.reports:
        if rule not in known:
            r.err(doc["reports"].line_of(rule), f"reports.{rule}: no message rule has this id")


_SECTIONS = {"tiers.yaml": _tiers, "messages.yaml": load_messages, "frames.yaml": _frames, "timeline.yaml": _timeline,
             "numbers.yaml": _numbers, "refinements.yaml": _refinements}


def rules_dir(root: Path | None = None) -> Path:
    """The rules of ``root``; without one, those of the knowledge base in use, or the program's own
    when that base brings none (a tree and articles of its own, the diagnosis as shipped)."""
    if root is not None:
        return root / "decision_trees" / "diagnosis"
    base = default_root() / "decision_trees" / "diagnosis"
    return base if base.is_dir() else own_root() / "decision_trees" / "diagnosis"


def load_rules(root: Path | None = None, problems: list[Problem] | None = None, *, lazy: bool = False) -> Rules:
    """The rules under ``root`` (the knowledge base's root); problems are appended to ``problems``.
    ``lazy``: regexes are compiled when first used (the program's own rules, which lint checks)."""
    problems = [] if problems is None else problems
    base = rules_dir(root)
    rules = Rules()
    for name in FILES:
        display = f"decision_trees/diagnosis/{name}"
        path = base / name
        if not path.is_file():
            problems.append(Problem(display, None, "missing rule file"))
            continue
        doc = load_source(path, display, problems)  # the YAML, or its compiled copy made from these bytes
        if not isinstance(doc, LDict):
            problems.append(Problem(display, None, "expected a mapping at the top"))
            continue
        reader = _Reader(display, problems, lazy)
        reader.words, reader.plain = rules.words, rules.word_plain  # filled by messages.yaml, read first
        _SECTIONS[name](reader, rules, doc)
    if not lazy:
        check_plain_words(rules, problems)
    return rules


@functools.cache
def rules() -> Rules:
    """The program's rules; a broken rule file stops it with every problem located."""
    problems: list[Problem] = []
    own = rules_dir() == own_root() / "decision_trees" / "diagnosis"
    loaded = load_rules(None, problems, lazy=own)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise KBError(errors)
    return loaded
