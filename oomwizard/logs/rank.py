"""From failures to ranked scenarios, each with the lines and the reasons behind it.

A failure is placed first: a message that names its cause; the phase read from a traceback's
frames; for an error without frames of its own, the phase its neighbours tell (the traceback
printed right below it, the method the other workers were running, a progress bar left
unfinished right after it, the request layer reporting the engine dead right after it); the
phase guessed from how far start-up had got; a traceback the excerpt stops inside; a log with no
error that stops during start-up. Each placement has a score tier (``tiers.yaml``) and a reason;
what the rest of the log says then refines it, as data (``refinements.yaml``, evaluated by
:mod:`.refine`): this module names no scenario. The last start of the engine that failed is the
one being diagnosed; evidence from earlier starts still counts, for less.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..facts.catalog import FAILURE_PHASES
from ..facts.model import Fact
from ..i18n import Text, msg, ui
from ..text.units import gib
from ..versions import Version
from .collect import Collector, Failure, Frame
from .mechanisms import evaluate as evaluate_mechanisms
from .mechanisms import numbers_of
from .model import Evidence, Match
from .refine import Candidate, Env, evaluate, sleep_line
from .refine_rules import MECHANISMS
from .rules import rules as _rules
from .signatures import (
    CONFIDENT,
    CONSTRUCTION_FRAMES,
    CUT,
    CUT_CONSTRUCTION,
    CUT_PHASES,
    CUT_TIMELINE,
    DEEPSEEK_V32_RE,
    EARLIER_RUN,
    ENDED,
    ENDED_BEGUN,
    ENGINE_CODE,
    FORWARD_FRAMES,
    FRAME_FLAGS,
    FRAME_PHASES,
    LARGE_VOCAB,
    MRV2_ZERO,
    NEIGHBOUR,
    OTHER_PROCESS,
    PHASE,
    TIMELINE,
    TIMELINE_PHASE,
    WEAK,
    Signature,
)

__all__ = ["Candidate", "Context", "classify", "frame_flags", "frame_phase", "rank"]

STARTUP_PHASES = ("load_weights", "profile_run", "cudagraph_profile", "kv_cache_alloc", "kernel_warmup", "graph_capture",
                  "sampler_warmup")
"""Phases a start-up mark can leave the engine in, where a cut traceback without frames of its own is placed."""
OPTIONAL_PHASES = ("cudagraph_profile", "kernel_warmup")
"""Start-up phases only some releases and settings run (0.18+ graph profile; DeepGEMM/FlashInfer warm-up)."""
MAX_EVIDENCE = 6
MAX_REASONS = 5

PHASE_NAMES: dict[str, Text] = {p: msg(f"logs.phase.{p}") for p in (
    "load_weights", "startup_check", "profile_run", "kv_cache_alloc", "graph_capture", "sampler_warmup",
    "cudagraph_profile", "kernel_warmup", "serving", "host_memory")}
"""How each failure phase is named in a reason."""


def _said(key: str, phase: str | None = None, **fmt: object) -> Text:
    """The catalogue reason ``key``, with the phase named in each language."""
    def one(lang: str) -> str:
        named = {"phase": getattr(PHASE_NAMES[phase], lang)} if phase is not None else {}
        return ui(key, lang, **named, **fmt)
    return Text(one("en"), one("zh"))



def _gib(n: int | float | None) -> str:
    return gib(n, unit=False)


def frame_phase(frames: list[Frame]) -> str | None:
    """The most specific start-up phase any frame shows (``FRAME_PHASES`` order)."""
    if not frames or (ENGINE_CODE is not None and all(f.path and not ENGINE_CODE.search(f.path) for f in frames)):
        return None  # no frame in vLLM's code: the function names are another program's
    funcs = {f.func for f in frames}
    for fp in FRAME_PHASES:
        if (funcs & fp.funcs
                or (fp.path is not None and any(fp.path.search(f.path) for f in frames))
                or (fp.func_re is not None and any(fp.func_re.search(f.func) for f in frames))
                or (fp.ctor is not None and any(f.func == "__init__" and fp.ctor.search(f.path) for f in frames))):
            return fp.phase
    return None


def frame_flags(frames: list[Frame], code: list[str]) -> set[str]:
    out: set[str] = set()
    for flag in FRAME_FLAGS:
        if ((flag.func is not None and any(flag.func.search(f.func) for f in frames))
                or (flag.path is not None and any(flag.path.search(f.path) for f in frames))
                or (flag.code is not None and any(flag.code.search(c) for c in code))):
            out.add(flag.name)
    return out


@dataclass
class Context:
    """What the whole log says that refines a failure's scenario."""

    facts: dict[str, Fact]
    version: Version | None


def _oom_values(f: Failure) -> dict[str, Any]:
    """PyTorch's figures of the failure, as the refinement conditions and reasons name them."""
    oom = f.oom
    if oom is None:
        return {}
    out: dict[str, Any] = {}
    for name in ("requested", "reserved_unallocated", "other_processes", "total", "this_process", "free"):
        v = getattr(oom, name, None)
        out[f"oom_{name}"] = v
        out[f"oom_{name}_gib"] = None if v is None else _gib(v)
    r, q = oom.reserved_unallocated, oom.requested
    if r is not None and q is not None:
        out["oom_fragmented"] = bool(oom.fragmented)
        out["oom_reserved_over_request"] = r / q if q else float("inf")
    out["oom_free_covers"] = oom.free_covers
    if r is not None and oom.total:
        out["oom_reserved_share"] = r / oom.total
    other, total, own = oom.other_processes, oom.total, oom.this_process
    if other and total and own is not None:
        out["oom_others_share"] = other / total
        out["oom_others_over_own"] = other > own
    return out


def _env(f: Failure, ctx: Context, flags: set[str], by_frames: str | None) -> Env:
    model = ctx.facts.get("model")
    arch = ctx.facts.get("model_arch")
    names = f"{model.value if model else ''} {arch.value if arch else ''}"
    values: dict[str, Any] = {f"flag_{f.name}": f.name in flags for f in FRAME_FLAGS}
    values.update(_oom_values(f))
    values.update({
        "vllm_version": ctx.version, "message": f.signature.id if f.signature else None, "frames_phase": by_frames,
        "sleep_state": f.sleep_state, "deepseek_v32": DEEPSEEK_V32_RE.search(names) is not None,
        "large_vocab": LARGE_VOCAB, "mrv2_zero": MRV2_ZERO,
        "exc_invalid_argument": bool(f.exc_type) and "invalid argument" in f.text,
    })
    texts = {"frames_phase_name": PHASE_NAMES[by_frames]} if by_frames in PHASE_NAMES else {}
    return Env(ctx.facts, values, sleep_line(f.sleep_mark), texts)


def _phase_after(result: str, phase: str | None, by_frames: str | None) -> str | None:
    if result == "keep":
        return phase
    if result == "none":
        return None
    return by_frames if result == "frames" else result


def _by_phase(env: Env, phase: str, base: float, how: Text) -> list[Candidate]:
    refs = _rules().refinements
    group = refs.phases.get(phase)
    return [] if group is None else evaluate(refs, group, env, base, how)[0]


def _message(f: Failure, sig: Signature, env: Env, by_frames: str | None) -> tuple[list[Candidate], str | None]:
    """A message that names its cause, refined by its scenario's group when it has one."""
    reason = Text(sig.reason.en.format_map(_Default(f.groups)), sig.reason.zh.format_map(_Default(f.groups)))
    phase: str | None = sig.phase or by_frames or f.timeline
    if sig.by_phase and sig.phase is not None:
        return _by_phase(env, sig.phase, sig.score, reason), sig.phase
    refs = _rules().refinements
    steps = refs.reports.get(sig.id)
    if steps is not None:
        # Words that name no single step: each step they may mean, none of them the failure's phase.
        return evaluate(refs, steps, env, sig.score, reason)[0], None
    group = refs.messages.get(sig.scenario)
    if group is None:
        return [Candidate(sig.scenario, sig.score, reason)], phase
    out, result = evaluate(refs, group, env, sig.score, reason)
    return out, _phase_after(result, phase, by_frames)


def _cut(f: Failure, env: Env, by_frames: str | None) -> tuple[list[Candidate], str | None]:
    """A traceback the input stops inside: the phase its frames, or start-up's marks, show."""
    funcs = {fr.func for fr in f.frames}
    by_frames = by_frames or next((phase for func, phase, unless in CUT_PHASES
                                   if func in funcs and not funcs & unless), None)
    if by_frames is None and f.timeline in STARTUP_PHASES:
        # No frame names a phase: how far start-up had got (the whole log's marks) does.
        how = _said("logs.rank.cut_marks", f.timeline)
        return _by_phase(env, f.timeline, CUT_TIMELINE, how), f.timeline
    if by_frames is None and FORWARD_FRAMES is not None and f.timeline in (None, "load_weights"):
        rx, first = FORWARD_FRAMES
        if any(fr.path and rx.search(fr.path) for fr in f.frames):
            # The model ran a forward pass, and no mark shows start-up got further: its first one.
            return _by_phase(env, first, CUT_TIMELINE, _said("logs.rank.cut_forward", first)), first
    refs = _rules().refinements
    if by_frames is None and f.timeline is None and CONSTRUCTION_FRAMES is not None and refs.construction:
        rx, names = CONSTRUCTION_FRAMES
        built = next((fr.func for fr in f.frames if fr.func in names and fr.path and rx.search(fr.path)), None)
        if built is not None:
            # Inside the engine's construction, no step in view: the steps it runs, none as the phase.
            how = _said("logs.rank.cut_construction", func=built)
            return evaluate(refs, refs.construction, env, CUT_CONSTRUCTION, how)[0], None
    if by_frames is None:
        return [], None
    how = _said("logs.rank.cut_frames", by_frames)
    return _by_phase(env, by_frames, CUT, how), by_frames


def _ended(f: Failure, env: Env) -> tuple[list[Candidate], str | None]:
    """A log with no error that stops during start-up: the phase it stopped in, never confidently
    (a healthy start cut short reads the same), and no failure phase for the wizard to take."""
    phase = f.timeline or STARTUP_PHASES[0]  # none yet: the engine's first step
    if phase not in PHASE_NAMES:
        return [], None
    out = _by_phase(env, phase, ENDED_BEGUN if f.timeline is None else ENDED, ended_reason(f.timeline))
    cap = CONFIDENT - 0.05
    return [Candidate(c.scenario, min(c.score, cap), c.reason, c.context) for c in out], None


def _first_marks() -> str:
    """The start-up lines that would have said the first step began."""
    return " / ".join(f"'{t}'" for t, _, p in TIMELINE if p == STARTUP_PHASES[0])


def _next_marks(phase: str) -> str:
    """The start-up lines (``timeline.yaml``) that would have said the next phase began."""
    order = [p for p in STARTUP_PHASES if p != "startup_check"] + ["serving"]
    # Skipped by some releases and settings (no line of theirs is sure to come): name the next phase every start has.
    later = [p for p in order[order.index(phase) + 1:] if p not in OPTIONAL_PHASES] if phase in order else []
    marks = [t for t, _, p in TIMELINE if later and p == later[0]]
    return " / ".join(f"'{t}'" for t in marks[:3])


def ended_reason(phase: str | None) -> Text:
    """Which lines are missing from a log that stops during ``phase`` with no error (None: after
    the line that began the start, before any step)."""
    if phase is None:
        return _said("logs.rank.ended_begun", next=_first_marks())
    nxt = _next_marks(phase)
    return _said("logs.rank.ended_next", phase, next=nxt) if nxt else _said("logs.rank.ended", phase)


def _placement(f: Failure, by_frames: str | None) -> tuple[str | None, float, Text]:
    """The phase of a GPU OOM, the score that way of reading it earns, and how it was read."""
    if by_frames is not None:
        return by_frames, PHASE, _said("logs.rank.by_frames", by_frames)
    by_next = frame_phase(f.next_frames)
    if by_next is not None:
        return by_next, NEIGHBOUR, _said("logs.rank.by_next", by_next)
    by_method = frame_phase([Frame("", m) for m in f.near_methods])
    if by_method is not None:
        return by_method, NEIGHBOUR, _said("logs.rank.by_method", by_method, methods=", ".join(f.near_methods[:2]))
    if f.after is not None:
        phase = f.after[0]
        return phase, TIMELINE_PHASE, _said("logs.rank.by_bar", phase)
    if f.reported:
        return "serving", NEIGHBOUR, _said("logs.rank.reported")
    if f.timeline is not None:
        return f.timeline, TIMELINE_PHASE, _said("logs.rank.by_timeline", f.timeline)
    by_other = next((p for p in map(frame_phase, f.other_frames) if p is not None), None)
    if by_other is not None:
        return by_other, OTHER_PROCESS, _said("logs.rank.by_other_process", by_other)
    return None, WEAK, _said("logs.rank.weak")


def _oom(f: Failure, env: Env, flags: set[str], by_frames: str | None) -> tuple[list[Candidate], str | None]:
    """A GPU OOM without words of its own: placed, then refined by the groups every OOM gets."""
    refs = _rules().refinements
    if refs.before is not None:
        out, result = evaluate(refs, refs.before, env, WEAK, Text("", ""))
        if out:
            return out, _phase_after(result, None, by_frames)
    phase, base, how = _placement(f, by_frames)
    env.values["placed"] = phase is not None
    group = refs.unplaced if phase is None else refs.phases.get(phase)
    out = [] if group is None else evaluate(refs, group, env, base, how)[0]
    for name in refs.always:
        if name == MECHANISMS:
            r = _rules()
            numbers = numbers_of(f.oom, env.get, flags, phase is not None)
            out.extend(Candidate(m.scenario, m.score, why) for m, why in evaluate_mechanisms(
                r.mechanisms, r.mechanism_params, numbers))
        else:
            out.extend(evaluate(refs, name, env, base, how)[0])
    if phase == "serving" and f.sleep_state in ("asleep", "waking"):
        phase = None  # vLLM was not serving while it slept: the trainer's own step ran out
    return out, phase


def classify(f: Failure, ctx: Context) -> tuple[list[Candidate], str | None]:
    """Candidates for one failure, and the failure phase it shows."""
    flags = frame_flags(f.frames or f.next_frames, f.code) | f.hints
    by_frames = frame_phase(f.frames)
    env = _env(f, ctx, flags, by_frames)
    if f.signature is not None:
        return _message(f, f.signature, env, by_frames)
    if f.cut:
        return _cut(f, env, by_frames)
    if f.ended:
        return _ended(f, env)
    if not f.is_oom:
        return [], None
    return _oom(f, env, flags, by_frames)


class _Default(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass
class Ranked:
    matches: list[Match]
    primary: Failure | None
    phase: str | None
    first_rank: int | None


def rank(col: Collector) -> Ranked:
    if not col.failures:
        return Ranked([], None, None, None)
    version_fact = col.facts.get("vllm_version")
    ctx = Context(col.facts, Version.try_parse(version_fact.value) if version_fact else None)
    classified = [(f, *classify(f, ctx)) for f in col.failures]
    # The start of the engine being diagnosed: the last one with a clear failure.
    runs = [f.run for f, cands, _ in classified if cands]
    strong = [f.run for f, cands, _ in classified if cands and max(c.score for c in cands) >= 0.6]
    focus = max(strong or runs or [0])
    order = {name: i for i, name in reversed(list(enumerate(col.files)))}
    best: dict[str, Match] = {}
    reasons: dict[str, dict[Text, float]] = {}
    per_kind: dict[tuple[str, str], int] = {}
    counts: dict[str, int] = {}
    first_line: dict[str, int] = {}
    primary: tuple[float, int, Failure, str | None] | None = None

    def add_evidence(m: Match, ev: Evidence, kind: str) -> None:
        # Eight ranks print the same error: two lines of each kind leave room for the rest.
        key = (m.scenario, kind)
        if ev in m.evidence or len(m.evidence) >= MAX_EVIDENCE or per_kind.get(key, 0) >= 2:
            return
        per_kind[key] = per_kind.get(key, 0) + 1
        m.evidence.append(ev)

    for f, cands, phase in classified:
        factor = 1.0 if f.run == focus else EARLIER_RUN
        kind = f.signature.id if f.signature else "oom"
        for c in cands:
            score = round(c.score * factor, 3)
            m = best.get(c.scenario)
            if m is None:
                m = best[c.scenario] = Match(c.scenario, score)
                first_line[c.scenario] = f.line
            m.score = max(m.score, score)
            counts[c.scenario] = counts.get(c.scenario, 0) + 1
            add_evidence(m, Evidence(f.file, f.line, f.text), kind)
            for fact in c.context:
                if fact.line:
                    add_evidence(m, Evidence(fact.file or f.file, fact.line, fact.detail or ""), "fact:" + fact.name)
            rs = reasons.setdefault(c.scenario, {})
            rs[c.reason] = max(rs.get(c.reason, 0.0), score)
            better = primary is None or score > primary[0] or (score == primary[0] and f.line < primary[1])
            if f.run == focus and better:
                primary = (score, f.line, f, phase)
    matches = sorted(best.values(), key=lambda m: (-m.score, -counts[m.scenario], first_line[m.scenario]))
    for m in matches:
        m.evidence.sort(key=lambda e: (order.get(e.file, -1), e.line))
        ordered = sorted(reasons[m.scenario].items(), key=lambda kv: -kv[1])
        m.reasons = [t for t, _ in ordered[:MAX_REASONS]]
    ranks = [f for f, cands, _ in classified if f.run == focus and cands and f.rank is not None]
    first_rank = min(ranks, key=lambda f: (order.get(f.file, -1), f.line)).rank if ranks else None
    if primary is None:
        return Ranked(matches, None, None, first_rank)
    phase = primary[3] if primary[3] in FAILURE_PHASES else None
    return Ranked(matches, primary[2], phase, first_rank)
