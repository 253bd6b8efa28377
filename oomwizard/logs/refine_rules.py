"""The refinement rules (``decision_trees/diagnosis/refinements.yaml``), loaded and checked.

Once a failure is placed (a message, a phase, nothing), what else the log shows refines it: a
large vocabulary turns a sampler warm-up OOM into the sort's, expandable segments turn a custom
all-reduce error into its known cause. Those refinements are data: groups of rules, each a
condition over the log's facts, the traceback's flags and the failure's own evidence, giving a
scenario, a score (a tier, or the placement's score moved by a delta) and a reason in en and zh.
This module only turns the file into typed rules, with every problem located.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..expr import Condition, ExprError
from ..facts.catalog import CATALOG, FAILURE_PHASES
from ..i18n import Text
from ..kb.yamlsrc import LDict, LList
from .rules_read import _Reader

Found = list[tuple[str, str, str, int]]
"""``(rule, scenario, example text, line)`` of each example."""

VARIABLES = frozenset({
    "placed", "frames_phase", "message", "sleep_state", "matched", "enabled", "deepseek_v32", "large_vocab",
    "mrv2_zero", "exc_invalid_argument", "oom_fragmented", "oom_reserved_unallocated", "oom_requested",
    "oom_reserved_over_request", "oom_other_processes", "oom_others_share", "oom_others_over_own", "oom_free",
    "oom_free_covers", "oom_reserved_share",
})
"""Names a condition may use besides facts and ``flag_<name>``: what the failure itself shows
(set by :mod:`.refine`), and the numbers of ``numbers.yaml``."""
EVIDENCE = frozenset({"sleep_line"})
"""Lines a rule may show as support besides facts: the sleep or wake line before the error."""
PHASE_RESULTS = ("keep", "none", "frames", *FAILURE_PHASES)
MECHANISMS = "@mechanisms"
FRAMES_GROUP = "@frames_phase"
"""``include`` of the group of the phase the traceback's frames show."""
_RULE_KEYS = {"when", "scenario", "score", "reason", "support", "include", "set", "stop", "phase", "note", "examples"}
_SCORE_KEYS = {"base", "add", "max", "base_at_least", "same_as_best"}


@dataclass(frozen=True)
class Score:
    """A tier or number (``fixed``), or the placement's score (or ``base`` instead): raised to
    ``base_at_least``, moved by ``add`` (a number or a variable set by an include), capped at
    ``max``; or the best score this group already gave (``same_as_best``)."""

    fixed: float | None = None
    base: float | None = None
    add: float | str = 0.0
    max: float | None = None
    base_at_least: float | None = None
    same_as_best: bool = False


@dataclass(frozen=True)
class Rule:
    when: Condition | None
    scenario: str | None
    score: Score
    reason: Text | None
    """None: the placement's own reason (the message, or how the phase was read)."""
    support: tuple[str, ...] = ()
    include: str | None = None
    """Another group evaluated here, at this rule's score as its placement score."""
    set: dict[str, float] = field(default_factory=dict)
    """Variables the included group sees (``enabled``: the delta of a feature merely enabled)."""
    stop: bool = False
    phase: str = "keep"
    """What the failure's phase becomes when this rule matches: ``frames`` (the phase its
    frames show), ``none`` (not a phase of vLLM's at all), a phase, or unchanged (``keep``)."""
    line: int = 0


@dataclass
class Refinements:
    groups: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    """Scenario of a message that names its cause -> the group that refines it."""
    phases: dict[str, str] = field(default_factory=dict)
    """Failure phase -> the group of its scenarios."""
    reports: dict[str, str] = field(default_factory=dict)
    """A report's words that name no single step (message rule id) -> the group of the steps they may mean."""
    unplaced: str = ""
    construction: str | None = None
    """A traceback cut inside the engine's construction, with nothing to say how far start-up got:
    the group of the steps it runs."""
    before: str | None = None
    """Tried on a GPU error before it is placed: its candidates, when there are any, are the answer."""
    always: tuple[str, ...] = ()
    """Groups added to every GPU OOM the log places or not (fragmentation, other processes, sleep);
    ``@mechanisms`` stands for the numbers' mechanisms (``numbers.yaml``)."""
    scenarios: list[tuple[str, str, int]] = field(default_factory=list)
    """``(rule, scenario, line)`` for lint."""


def _score(r: _Reader, tiers: dict[str, float], value: Any, line: int, what: str) -> Score | None:
    def num(v: object) -> float | None:
        if isinstance(v, str) and v in tiers:
            return tiers[v]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and -1 <= v <= 1:
            return float(v)
        r.err(line, f"{what}: {v!r} is neither a tier ({', '.join(tiers)}) nor a number")
        return None

    if value is None:
        return Score()
    if not isinstance(value, LDict):
        fixed = num(value)
        return None if fixed is None else Score(fixed=fixed)
    if not r.keys(value, line, _SCORE_KEYS, set(), what):
        return None
    add = value.get("add", 0.0)
    if not (isinstance(add, str) and add in VARIABLES) and num(add) is None:
        return None
    if isinstance(add, (int, float)):
        add = float(add)
    cap = num(value["max"]) if "max" in value else None
    floor = num(value["base_at_least"]) if "base_at_least" in value else None
    start = num(value["base"]) if "base" in value else None
    return Score(None, start, add, cap, floor, value.get("same_as_best") is True)


def _condition(r: _Reader, source: object, line: int, what: str, flags: frozenset[str]) -> Condition | None:
    if not isinstance(source, str) or not source.strip():
        r.err(line, f"{what}.when: expected a condition")
        return None
    try:
        cond = Condition.parse(source)
    except ExprError as e:
        r.err(line, f"{what}.when: {e}")
        return None
    known = VARIABLES | set(CATALOG) | {f"flag_{f}" for f in flags}
    for name in sorted(cond.names() - known):
        r.err(line, f"{what}.when: unknown name {name!r} (a fact, flag_<frame flag> or one of "
                    f"{', '.join(sorted(VARIABLES))})")
    return cond


def _rule(r: _Reader, tiers: dict[str, float], d: object, line: int, what: str, flags: frozenset[str],
          out: Refinements, examples: Found) -> Rule | None:
    if not r.keys(d, line, _RULE_KEYS, set(), what):
        return None
    assert isinstance(d, LDict)
    if ("scenario" in d) == ("include" in d):
        r.err(line, f"{what}: a rule gives a scenario or includes a group, not both")
        return None
    when = _condition(r, d["when"], d.line_of("when"), what, flags) if "when" in d else None
    score = _score(r, tiers, d.get("score"), d.line_of("score") if "score" in d else line, f"{what}.score")
    reason = r.text(d["reason"], d.line_of("reason"), f"{what}.reason") if "reason" in d else None
    support = r.strings(d, "support", what)
    for name in support:
        if name not in CATALOG and name not in EVIDENCE:
            r.err(d.line_of("support"), f"{what}.support: unknown fact {name!r}")
    values = d.get("set")
    sets: dict[str, float] = {}
    if values is not None:
        if not isinstance(values, LDict) or any(k not in VARIABLES or not isinstance(v, (int, float))
                                                for k, v in values.items()):
            r.err(d.line_of("set"), f"{what}.set: expected variable: number")
        else:
            sets = {str(k): float(v) for k, v in values.items()}
    phase = d.get("phase", "keep")
    if phase not in PHASE_RESULTS:
        r.err(d.line_of("phase"), f"{what}.phase: one of {', '.join(PHASE_RESULTS)}")
        return None
    if "scenario" in d:
        out.scenarios.append((what, str(d["scenario"]), line))
        ex = r.seq(d, "examples", what)
        for i, text in enumerate(r.strings(d, "examples", what)):
            examples.append((what, str(d["scenario"]), text, ex.line_of(i)))
    if score is None or ("reason" in d and reason is None):
        return None
    return Rule(when, str(d["scenario"]) if "scenario" in d else None, score, reason, support,
                str(d["include"]) if "include" in d else None, sets, d.get("stop") is True, str(phase), line)


_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def _groups(r: _Reader, tiers: dict[str, float], groups: LDict, flags: frozenset[str], out: Refinements,
            examples: Found) -> None:
    for name, items in groups.items():
        if not _NAME_RE.match(str(name)) or not isinstance(items, LList):
            r.err(groups.line_of(name), f"group {name}: expected a lower-case name and a list of rules")
            continue
        rules = [_rule(r, tiers, d, items.line_of(i), f"group {name} rule {i + 1}", flags, out, examples)
                 for i, d in enumerate(items)]
        out.groups[str(name)] = tuple(x for x in rules if x is not None)
    for name, rules_ in out.groups.items():
        for rule in rules_:
            if rule.include is not None and rule.include not in out.groups and rule.include != FRAMES_GROUP:
                r.err(rule.line, f"group {name}: includes unknown group {rule.include!r}")


def _group_map(r: _Reader, doc: LDict, key: str, known: dict[str, tuple[Rule, ...]],
               check_key: tuple[str, ...] | None) -> dict[str, str]:
    """``key:`` (a scenario or phase -> the group for it); every group named must exist."""
    m = doc.get(key)
    if m is None:
        return {}
    if not isinstance(m, LDict):
        r.err(doc.line_of(key), f"{key}: expected name: group")
        return {}
    for k, g in m.items():
        if g not in known:
            r.err(m.line_of(k), f"{key}.{k}: unknown group {g!r}")
        if check_key is not None and k not in check_key:
            r.err(m.line_of(k), f"{key}: unknown phase {k!r}")
    return {str(k): str(g) for k, g in m.items() if g in known}


def _group_name(r: _Reader, doc: LDict, key: str, known: dict[str, tuple[Rule, ...]], required: bool) -> str | None:
    name = doc.get(key)
    if name is None and not required:
        return None
    if name not in known:
        r.err(doc.line_of(key), f"{key}: unknown group {name!r}")
        return None
    return str(name)


def load_refinements(r: _Reader, tiers: dict[str, float], doc: LDict, flags: frozenset[str],
                     phases: tuple[str, ...], examples: Found) -> Refinements:
    """The groups of ``refinements.yaml``; every include, phase and message entry must name a group."""
    out = Refinements()
    r.keys(doc, doc.line, {"groups", "messages", "phases", "reports", "unplaced", "construction", "before", "always"},
           {"groups", "phases", "unplaced"}, "refinements")
    groups = doc.get("groups")
    if not isinstance(groups, LDict):
        r.err(doc.line, "groups: expected name: [rules]")
        return out
    _groups(r, tiers, groups, flags, out, examples)
    out.messages = _group_map(r, doc, "messages", out.groups, None)
    for scenario in out.messages:
        out.scenarios.append((f"messages.{scenario}", scenario, doc["messages"].line_of(scenario)))
    out.phases = _group_map(r, doc, "phases", out.groups, phases)
    out.reports = _group_map(r, doc, "reports", out.groups, None)
    out.unplaced = _group_name(r, doc, "unplaced", out.groups, True) or ""
    out.before = _group_name(r, doc, "before", out.groups, False)
    out.construction = _group_name(r, doc, "construction", out.groups, False)
    always = r.strings(doc, "always", "always")
    for g in always:
        if g not in out.groups and g != MECHANISMS:
            r.err(doc.line_of("always"), f"always: unknown group {g!r}")
    out.always = tuple(g for g in always if g in out.groups or g == MECHANISMS)
    return out
