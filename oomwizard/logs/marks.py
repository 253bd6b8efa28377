"""What a line says about how far the engine's start got: start-up marks, sleep mode, serving,
worker methods and a multimodal profiling pass.

Start-up only moves forward (ranks and Ray replay lines out of order). Ray's deduplicated
summary of a line (``… [repeated 7x across cluster]``) is printed at the end of its window, often
after the error it preceded: its mark still counts for the errors of the same start printed
shortly before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .failure import MAX_MARKS, Run, sanitize
from .lines import Logical
from .signatures import (
    GPU_BLOCKS_RE,
    METHOD_RE,
    MM_PROFILE_RE,
    MM_PROFILE_TRIGGERS,
    NEAR_LINES,
    PROGRESS_RE,
    SERVING_SOURCES,
    SLEEP_MARKS,
    SLEEP_PARTIAL_TAGS,
    TIMELINE,
)
from .triggers import _DEATH_RE, _PHASE_ORDER, _RUN_START_RE, _SERVING_RE, _SLEEP_RE

if TYPE_CHECKING:
    from .collect import Collector


def marks(col: Collector, lg: Logical) -> None:
    """A death reported, sleep, serving, a method, a multimodal profiling pass."""
    text = lg.text
    run = col.run
    if _DEATH_RE.search(text) and len(run.deaths) < MAX_MARKS:
        run.deaths.append((col.file, lg.line, sanitize(lg.shown, 160)))
    if ("sleep" in text or "wake up" in text) and _SLEEP_RE.search(text):
        _sleep_mark(col, text, lg)
    if run.phase != "serving" and (
            _SERVING_RE.search(text)
            or (lg.level == "ERROR" and lg.src.rsplit("/", 1)[-1].startswith(SERVING_SOURCES))):
        run.phase = "serving"
        run.progressed = True
        if lg.repeated:
            _earlier_errors(col, "serving", lg)
    col._line = lg
    if "method" in text and len(run.methods) < MAX_MARKS:
        m = METHOD_RE.search(text)
        if m:
            run.methods.append((col.file, lg.line, m.group("func")))
    if not run.mm_profile and any(t in text for t in MM_PROFILE_TRIGGERS) and MM_PROFILE_RE.search(text):
        run.mm_profile = True


def _sleep_mark(col: Collector, text: str, lg: Logical) -> None:
    """Follow sleep mode: fallen asleep, the weights alone woken, or woken again."""
    for trigger, rx, state in SLEEP_MARKS:
        if trigger not in text:
            continue
        m = rx.search(text)
        if m is None:
            continue
        tags = m.groupdict().get("tags") or ""
        if state == "awake" and any(t in tags for t in SLEEP_PARTIAL_TAGS) and "kv_cache" not in tags:
            state = "waking"
        col.run.sleep = state
        col.run.sleep_mark = (col.file, lg.line, sanitize(lg.shown, 200))
        return


def _earlier_errors(col: Collector, phase: str, lg: Logical) -> None:
    """A Ray summary line came after errors of this start: the processes it stands for had got
    to ``phase`` before them, so those errors move up to it (never back)."""
    order = _PHASE_ORDER.index(phase)
    for f in col.failures[-50:]:
        if (f.run == col.run.index and f.file == col.file and 0 < lg.line - f.line <= NEAR_LINES
                and (f.timeline is None or _PHASE_ORDER.index(f.timeline) < order)):
            f.timeline = phase


def timeline(col: Collector, text: str, lg: Logical) -> None:
    if _RUN_START_RE.search(text):
        run = col.run
        if run.progressed or any(f.run == run.index for f in col.failures[-50:]):
            col.runs.append(Run(len(col.runs), lg.line))
        col.run.began = (col.file, lg.line, sanitize(lg.shown))
        return
    for trigger, rx, phase in TIMELINE:
        if trigger in text and (rx is None or rx.search(text)):
            run = col.run
            bar = PROGRESS_RE.search(text)
            if bar and int(bar.group("done")) < int(bar.group("total")) and len(run.bars) < MAX_MARKS:
                run.bars.append((col.file, lg.line, phase, sanitize(lg.shown, 160)))
            if trigger == "blocks:" and len(run.blocks) < MAX_MARKS:
                blocks = GPU_BLOCKS_RE.search(text)
                if blocks and int(blocks.group("n")) > 0:
                    run.blocks.append((col.file, lg.line, int(blocks.group("n")), sanitize(lg.shown)))
            if phase == "sampler_warmup" and col.facts.get("engine") is not None \
                    and col.facts["engine"].value == "v0":
                phase = "serving"
            if _PHASE_ORDER.index(phase) > _PHASE_ORDER.index(run.phase) if run.phase else True:
                run.phase = phase
            if phase == run.phase:
                run.mark = (col.file, lg.line, sanitize(lg.shown))
            if lg.repeated:
                _earlier_errors(col, phase, lg)
            run.progressed = True
            return
