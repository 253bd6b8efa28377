"""Keeping the walk as it goes, and picking it up again (``--resume``, the welcome screen).

:class:`Keeper` is what a frontend calls after every change; it turns the session into a
:class:`~.state.Walk` and saves it. :func:`resume_into` points launch options at a saved walk:
the same logs and machine, the overrides checked again like ``--set`` values, the answers filled
in, and the screen to open on. A log that changed since the walk was saved is read afresh and
its old answers are not reused: they followed another log.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ..engine import Answer
from ..facts.model import Fact, FactSet
from ..i18n import ui
from ..versions import Version
from .state import Store, Walk, log_key


def _raw(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Version):
        return str(value)
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value)
    return str(value)


class Keeper:
    """Saves one walk after every change; a folder that cannot be written turns it off (once, with a note)."""

    def __init__(self, opts: Any, store: Store | None = None) -> None:
        self.store = store or Store()
        self.opts = opts
        self.problem: str | None = None
        self.walk = Walk(key="", lang=opts.lang)
        self.rekey(opts.effective_logs())
        with contextlib.suppress(OSError):
            self.store.prune()

    def rekey(self, logs: list[str]) -> None:
        """A walk now follows ``logs`` (a log opened from the welcome screen)."""
        real = [p for p in logs if p != "-"]
        machine = self.opts.effective_machine()
        self.walk.key = log_key(real, machine, self.opts.replay)
        self.walk.logs = [os.path.abspath(p) for p in real]
        self.walk.machine = os.path.abspath(machine) if machine else None
        self.walk.replay = os.path.abspath(self.opts.replay) if self.opts.replay else None

    def save(self, *, screen: str | None = None, answers: dict[str, Answer] | None = None,
             order: list[str] | None = None, overrides: FactSet | None = None, scenario: str | None = None,
             leaf: str | None = None, finished: bool = False) -> None:
        if self.problem is not None:
            return
        w = self.walk
        if screen is not None:
            w.screen = screen
        if answers is not None and order is not None:
            w.answers = [{"question": q, "value": answers[q].value, "source": answers[q].source}
                         for q in order if q in answers]
        if overrides is not None:
            w.overrides = {f.name: _raw(f.value) for f in overrides if f.name != "diagnosis"}
        w.scenario, w.leaf, w.finished = scenario, leaf, finished
        try:
            self.store.save(w)
        except OSError as e:
            self.problem = f"cannot keep the walk in {self.store.folder}: {e.strerror or e}; it cannot be resumed"


def describe(w: Walk, lang: str, now: float | None = None) -> str:
    """``vllm.log · 4 answers · 2 h ago``: enough to recognise a walk on the welcome screen."""
    import time

    what = ", ".join(os.path.basename(p) for p in w.logs) or ui("bundle.resume.no_logs", lang)
    age = max(0, int((time.time() if now is None else now) - w.updated))
    ago = f"{age // 3600} h" if age >= 3600 else f"{age // 60} min"
    n = len(w.answers)
    key = {0: "bundle.resume.walk_none", 1: "bundle.resume.walk_one"}.get(n, "bundle.resume.walk_many")
    return ui(key, lang, what=what, n=n, ago=ago)


def resume_into(opts: Any, walk: Walk) -> list[str]:
    """Point ``opts`` at ``walk``; the warnings to show (a changed log, an override that no longer fits)."""
    from ..facts.catalog import CATALOG, FactValueError, coerce

    notes: list[str] = []
    opts.logs, opts.machine, opts.replay, opts.demo = list(walk.logs), walk.machine, walk.replay, False
    if log_key(walk.logs, walk.machine, walk.replay) != walk.key:
        inputs = ", ".join(walk.logs) or ui("bundle.resume.the_input", opts.lang)
        notes.append(ui("bundle.resume.input_changed", opts.lang, inputs=inputs))
        return notes
    for name, raw in walk.overrides.items():
        if name not in CATALOG:
            notes.append(ui("bundle.resume.unknown_override", opts.lang, name=name))
            continue
        try:
            opts.overrides.add(Fact(name, coerce(name, raw), "answered (resumed)", kind="answered"))
        except FactValueError as e:
            notes.append(ui("bundle.resume.bad_override", opts.lang, name=name, error=e.text(opts.lang)))
    opts.answers = {a["question"]: Answer(a["value"], a["source"]) for a in walk.answers}
    opts.order = [a["question"] for a in walk.answers]
    opts.resume_screen = walk.screen
    opts.scenario = walk.scenario
    return notes


def resume_options(opts: Any, store: Store | None = None) -> tuple[bool, list[str]]:
    """``--resume``: the last unfinished walk (the one of ``--log`` when given) into ``opts``."""
    store = store or Store()
    walk = None
    if opts.logs:
        walk = store.load(log_key([p for p in opts.logs if p != "-"], opts.effective_machine(), opts.replay))
        if walk is not None and walk.finished:
            walk = None
    else:
        walk = store.latest_unfinished()
    skipped = [w(opts.lang) for w in store.warnings]
    if walk is None:
        return False, [*skipped, ui("bundle.resume.nothing_to_resume", opts.lang)]
    return True, [*skipped, *resume_into(opts, walk)]
