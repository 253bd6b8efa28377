"""The machine and the logs, read in worker threads while the screens stay live (mixed into the app).

Detection, a log named on the command line, a log opened or pasted later and a log being followed
each run through :meth:`LogReading.in_thread`; what they find comes back on the app's thread, is
merged into the facts, and every screen on the stack hears of it (:mod:`.messages`). The first log
read after the first frame is followed by the knowledge base and detection (``_then_background``),
so those threads do not compete with the frame that draws the diagnosis. Where two CPUs are free,
the log named on the command line is read meanwhile by a child process started before Textual
was imported (:mod:`..frontend.apart`); the thread then only waits for its answer.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..frontend.inputs import InputProblem, MachineResult
from ..i18n import ui
from . import cjk
from .background import abandonable
from .messages import FactsChanged, LogRead, MachineDetected
from .view import LogState, MachineState

if TYPE_CHECKING:
    from textual.app import App

    from ..facts.model import FactSet
    from ..frontend.inputs import Sources
    from ..frontend.options import LaunchOptions
    from ..logs.model import Diagnosis
    from ..session import Session

    _Base = App[Any]
else:
    _Base = object


class LogReading(_Base):
    """Methods of :class:`~.app.WizardApp` that read the machine and the logs."""

    if TYPE_CHECKING:  # provided by the app
        opts: LaunchOptions
        lang: str
        sources: Sources
        machine: MachineState
        log_state: LogState
        user_facts: FactSet
        keeper: Any
        _keeper_logs: list[str] | None
        _keeper_dropped: bool
        _kb_loaded: Any
        _walk: Session | None
        _then_background: bool
        _read_count: int
        _reading_stopped: threading.Event

        def t(self, key: str, **fmt: object) -> str: ...
        def tell(self, *kinds: type[Any]) -> None: ...
        def keep(self, finished: bool = False) -> None: ...
        def prefill(self) -> None: ...
        def _rebuild_facts(self) -> None: ...
        def _background(self) -> None: ...
        def _names(self, paths: list[str]) -> str: ...
        def choose_scenario(self, scenario: str | None) -> None: ...
        def scenario_text(self, sid: str) -> tuple[Any, Any] | None: ...
        def open_questions(self) -> None: ...
        def leave_diagnosis(self) -> None: ...

    # --- machine detection (worker thread) -----------------------------------------------------

    def start_machine(self) -> None:
        if self.machine.status == "running":
            return
        self.machine = MachineState("running")
        self.tell(MachineDetected)
        path, python = self.opts.effective_machine(), self.opts.python

        def job() -> MachineResult:
            return self.sources.replay_machine(path) if path else self.sources.detect_machine(python)

        self.in_thread(job, self._machine_done, self._machine_failed, "machine")

    def in_thread(self, job: Callable[[], Any], done: Callable[[Any], None], failed: Callable[[str], None],
                  group: str) -> None:
        """Run ``job`` in a thread the app can walk away from (see :mod:`.background`)."""
        self.run_worker(abandonable(job, done, failed, InputProblem, self.lang), group=group, exclusive=True, exit_on_error=False)

    def from_thread(self, callback: Callable[..., object], *args: object) -> None:
        """Call ``callback`` on the app's thread from a worker thread; nothing once the app is closing."""
        with contextlib.suppress(RuntimeError):  # the app is closing
            self.call_from_thread(callback, *args)

    def _machine_done(self, result: MachineResult) -> None:
        self.machine = MachineState("done", result)
        self._rebuild_facts()
        self.tell(MachineDetected, FactsChanged)

    def _machine_failed(self, error: str) -> None:
        from ..text.output import clean_text

        self.machine = MachineState("failed", None, " ".join(clean_text(error).split()))
        self.tell(MachineDetected)

    # --- logs (worker thread) ---------------------------------------------------------------

    def read_logs(self, paths: list[str]) -> None:
        if self.keeper is not None:
            self.keeper.rekey(paths)
        else:
            self._keeper_logs = list(paths)  # for the keeper made later
        what = self._names(paths)
        follow = self.sources.follow_path
        if self.opts.follow and len(paths) == 1 and follow is not None:
            self._read(what, lambda progress, stop: follow(paths[0], self._follow_status, stop))
            return
        self._read(what, lambda progress, stop: self.sources.diagnose_paths(paths, progress))

    def can_watch(self) -> bool:
        """A log file of the operator's (not the demo, not a paste) that is not being watched yet."""
        return (len(self.opts.logs) == 1 and self.opts.logs[0] != "-" and not self.opts.demo
                and self.sources.follow_path is not None
                and not (self.opts.follow and self.log_state.status == "reading"))

    def watch_log(self) -> None:
        if self.can_watch():
            self.opts.follow = True
            self.read_logs(self.opts.logs)

    def read_pasted(self, text: str) -> None:
        self.keeper = None  # a pasted log cannot be read again: that walk is not kept
        self._keeper_dropped = True
        self._read(self.t("tui.welcome.paste"), lambda progress, stop: self.sources.diagnose_text(text, "pasted"))

    def _follow_status(self, key: str, fields: dict[str, object]) -> None:
        self.from_thread(self._log_note, ui(key, self.lang, **fields))

    def _log_note(self, text: str) -> None:
        from .screens.diagnosis import DiagnosisScreen

        if self.log_state.status != "reading":
            return
        self.log_state.note = f"{self.log_state.note}\n{text}".strip()  # "already holds …", then "following …"
        if isinstance(self.screen, DiagnosisScreen):
            self.screen.show_progress(note=self.log_state.note)

    def _progress(self) -> Any:
        """A reader progress callback for the worker thread: at most ten screen updates a second."""
        last = [0.0]

        def report(done: int, total: int | None) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.1:
                last[0] = now
                self.from_thread(self._log_progress, done, total)

        return report

    def _log_progress(self, done: int, total: int | None) -> None:
        from .screens.diagnosis import DiagnosisScreen

        if isinstance(self.screen, DiagnosisScreen) and self.log_state.status == "reading":
            self.screen.show_progress(done, total)

    def _read(self, what: str, job: Any) -> None:
        from .screens.diagnosis import DiagnosisScreen

        self.log_state = LogState("reading", what)
        if not isinstance(self.screen, DiagnosisScreen):
            self.push_screen(DiagnosisScreen())
        self.tell(LogRead)
        self._read_count += 1
        progress, reads = self._progress(), self._read_count

        def stop() -> bool:
            """Whether this read was given up: the app closed, or a newer read replaced it."""
            return self._reading_stopped.is_set() or self._read_count != reads

        def work() -> Diagnosis:
            diag = job(progress, stop)
            if self._kb_loaded is None:
                from ..kb.titles import scenario_titles

                scenario_titles()  # read here, off the screen's thread, for the diagnosis screen
            return diag

        self.in_thread(work, self._log_done, self._log_failed, "log")

    def _log_done(self, diag: Diagnosis) -> None:
        self.log_state = LogState("done", self.log_state.what, diag)
        self.user_facts.remove("diagnosis")
        if self._walk is not None:
            self._walk.restart()
        self._rebuild_facts()
        self.prefill()
        if self.opts.scenario:
            self.choose_scenario(self.opts.scenario)
            self.opts.scenario = None
        if _shows_cjk(diag, self.lang, self.scenario_text):
            cjk.enable()  # before the diagnosis is drawn (otherwise once it is: ``_background``)
        self.tell(LogRead, FactsChanged)
        screen, self.opts.resume_screen = self.opts.resume_screen, None
        if screen in ("question", "leaf"):
            self.open_questions()
        if not self._then_background:  # else kept once the diagnosis is drawn (``_background``)
            self.keep()
        if self._then_background:
            # After the screen has drawn the diagnosis (it hears LogRead first): the knowledge base
            # and detection threads must not compete with that frame.
            self.screen.call_after_refresh(self._background)

    def _log_failed(self, error: str) -> None:
        from ..text.output import clean_text
        from .screens.diagnosis import DiagnosisScreen

        error = " ".join(clean_text(error).split())  # it may quote the file name or its content
        cjk.enable()
        self.log_state = LogState("failed", self.log_state.what, None, error)
        self._rebuild_facts()
        if isinstance(self.screen, DiagnosisScreen):
            self.leave_diagnosis()
        self.notify(self.t("tui.read_failed", error=error), severity="error", timeout=10, markup=False)
        self.tell(LogRead, FactsChanged)
        if self._then_background:
            self._background()

    def start_demo(self) -> None:
        """Switch to the bundled example: its machine report replaces this machine's facts."""
        if not self.opts.demo:
            self._before_demo = (self.opts.machine, self.user_facts.copy())
        self.opts.demo = True
        self.opts.logs = []
        self.opts.machine = None
        self.machine = MachineState()
        self.start_machine()
        self.read_logs(self.opts.effective_logs())

    def leave_demo(self) -> None:
        """Back from the demo to the welcome screen: its log and machine report were the demo's, so
        this machine is read again, and nothing the demo showed (or was corrected in it) becomes a
        fact of the operator's own walk."""
        if not self.opts.demo:
            return
        from ..facts.model import FactSet

        launched = FactSet()  # started with --demo: only what was given with --set
        launched.update(self.opts.overrides)
        machine, user_facts = getattr(self, "_before_demo", (None, launched))
        self.opts.demo = False
        self.opts.machine = machine
        self.user_facts = user_facts
        self.log_state = LogState()
        if self._walk is not None:
            self._walk.restart()
        self.machine = MachineState()
        self._rebuild_facts()
        self.start_machine()
        self.tell(LogRead, FactsChanged)


def _shows_cjk(diag: Diagnosis, lang: str, scenario_text: Callable[[str], Any]) -> bool:
    """Whether the diagnosis screen would draw text that wraps differently with :mod:`.cjk`'s
    patterns: the inputs, each match's title, summary, reasons and evidence, the warnings and the
    facts."""
    texts: list[str] = list(diag.inputs)
    for m in diag.matches:
        sc = scenario_text(m.scenario)
        if sc is not None:
            texts += [sc[0](lang), sc[1](lang)]
        texts += [r(lang) for r in m.reasons]
        texts += [e.text for e in m.evidence]
    texts += [w(lang) for w in diag.warnings]
    texts += [f"{f.value} {f.source}" for f in diag.facts]
    return any(cjk.needed(t) for t in texts)
