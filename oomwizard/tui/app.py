"""The full-screen wizard: welcome, diagnosis, questions, the fix.

The app owns the :class:`~oomwizard.session.Session` and the facts that feed it: the operator's
``--set`` values and overrides, the log's facts, and this machine's facts, which arrive late from a
worker thread so the first screen never waits on NVML or package scans. Screens see the app through
:class:`~.view.Wizard` (read-only state and requests); when the machine, a log or the facts change,
every screen on the stack gets a message (:mod:`.messages`), so a suggestion can appear under the
operator's cursor while they read.

When the app ends with a fix on the screen stack (even under the facts screen or a dialog),
:func:`run_tui` prints the commands and the checklist to the normal screen after Textual has
restored it, so they stay in the scrollback after the wizard is gone; a check of the next start's
log made in the wizard is printed after them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message

from ..exitcodes import Exit
from ..facts.model import Fact, FactSet
from ..frontend.inputs import InputProblem, MachineResult, Sources, default_sources
from ..frontend.options import LaunchOptions
from ..i18n import ui
from ..onboard import texts as _onboard_texts  # noqa: F401  (registers the onboarding screens' labels)
from ..signals import HANDLED, Watchdog, exit_code
from . import cjk, clipboard
from .background import abandonable
from .keymap import keymap_from
from .messages import FactsChanged, LogRead, MachineDetected, ResumeOffered
from .styles import add_screen_styles
from .view import LogState, MachineState, Wizard
from .walk import WalkKeeping

if TYPE_CHECKING:
    # The first frame waits for nothing but Textual: the engine, the knowledge base, the log
    # reader and the renderers are imported (and the knowledge base loaded) after it is drawn.
    # Screens are imported where they are first shown, for the same reason (the leaf screen
    # brings the report renderers); they never import this module, so there is no cycle.
    from ..engine import Answer, Ask, Done
    from ..kb.model import KnowledgeBase
    from ..logs.model import Diagnosis
    from ..session import Session
    from ..verify import Verification

__all__ = ["LogState", "MachineState", "Outcome", "WizardApp", "print_outcome", "run_tui"]


@dataclass
class Outcome:
    """What :func:`run_tui` does after the screen is restored."""

    code: int = Exit.OK
    done: Done | None = None
    saved: list[str] = field(default_factory=list)
    verification: Verification | None = None
    """The last check of the next start's log against ``done``'s checklist, if one was made."""
    signum: int | None = None
    """The signal that ended the wizard (SIGTERM, SIGHUP, …), if one did."""
    kb_problems: list[str] | None = None
    """Set when the knowledge base failed to load: what ``oomwizard lint`` would report first."""


class WizardApp(WalkKeeping, App[Outcome], inherit_bindings=False):
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = True
    TITLE = "oomwizard"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Copies a mouse selection when there is one (see action_cancel), else quits.
        Binding("ctrl+c", "cancel", "Quit", show=False, priority=True, id="wizard.cancel"),
        Binding("q", "quit_app", "tui.quit", id="wizard.quit"),
        # Shown in the footer only where q types a letter (an input has focus): the footer lists the
        # first visible binding of each action.
        Binding("ctrl+q", "quit_app", "tui.quit", key_display="^q", priority=True, id="wizard.quit_anywhere"),
        Binding("f", "facts", "tui.facts", id="wizard.facts"),
        Binding("g", "glossary", "onboard.glossary", show=False, id="wizard.glossary"),  # listed on the onboarding screens
        # On a question ? and F1 explain the question (the screen's own bindings win); F2 always works.
        Binding("question_mark,f1,f2", "keys", "tui.keys", key_display="?", show=False, id="wizard.keys"),
        # One submit key everywhere: Ctrl+S submits any box (the paste boxes bind it themselves).
        Binding("ctrl+s", "submit_box", show=False, id="wizard.submit"),
    ]

    def __init__(
        self,
        opts: LaunchOptions,
        *,
        kb: KnowledgeBase | None = None,
        sources: Sources | None = None,
        environ: dict[str, str] | None = None,
        watchdog: Watchdog | None = None,
    ) -> None:
        super().__init__()
        self.opts = opts
        self.watchdog = watchdog
        self.lang = opts.lang
        self._kb_loaded: KnowledgeBase | None = kb
        self._kb_lock = threading.Lock()
        self._walk: Session | None = None
        self._then_background = False
        """Set while the first log is read: the knowledge base and detection start after it."""
        self.sources = sources or default_sources()
        self._read_count = 0
        self._reading_stopped = threading.Event()
        self.environ = dict(os.environ if environ is None else environ)
        self.machine = MachineState()
        self.log_state = LogState()
        self.user_facts = FactSet()
        """``--set`` values and overrides made in the facts screen (kind ``answered``)."""
        self.user_facts.update(opts.overrides)
        self.keeper: Any = None
        """Saves the walk after every change, for ``--resume`` (see :mod:`oomwizard.bundle.resume`);
        made after the first frame (it reads the log's ends and the saved walks)."""
        self.resumable: Any = None
        """The last unfinished walk, offered on the welcome screen (looked for after the first frame)."""
        self.outcome = Outcome()
        self.clipboard_runner = clipboard.load_tmux_buffer
        self.title = ui("tui.title", self.lang)
        if self.lang == "zh" or cjk.needed(self._names(opts.effective_logs())):
            cjk.enable()  # the first frame may show CJK text; otherwise enabled right after it
        keymap = keymap_from(self.environ)
        if keymap:
            self.set_keymap(keymap)
        self._rebuild_facts()

    # --- text ------------------------------------------------------------------------------

    def t(self, key: str, **fmt: object) -> str:
        return ui(key, self.lang, **fmt)

    # --- the knowledge base and the walk, loaded after the first frame ------------------------

    @property
    def kb(self) -> KnowledgeBase:
        """The knowledge base; loaded by a worker after the first frame, or here if asked sooner."""
        with self._kb_lock:
            if self._kb_loaded is None:
                from ..kb.loader import get_kb

                self._kb_loaded = get_kb()
            return self._kb_loaded

    @property
    def session(self) -> Session:
        """The walk through the tree, made on first use (it needs the knowledge base)."""
        if self._walk is None:
            from ..session import Session

            self._walk = Session(self.kb, FactSet(), lang=self.lang)
            self._walk.on_change = self.keep
            self._rebuild_facts()
        return self._walk

    # --- what the screens read and ask (see :class:`~.view.Wizard`) ---------------------------

    @property
    def facts(self) -> FactSet:
        return self.session.facts

    @property
    def answers(self) -> Mapping[str, Answer]:
        return self.session.answers

    def saved(self, path: str) -> None:
        self.outcome.saved.append(path)

    def has_logs(self) -> bool:
        return bool(self.opts.effective_logs())

    def step(self) -> Ask | Done:
        return self.session.current()

    def answered(self) -> bool:
        return bool(self.session.order)

    def answer(self, question: str, value: str) -> Ask | Done:
        return self.session.answer(question, value)

    def accept(self) -> Ask | Done:
        return self.session.accept()

    def step_back(self) -> Ask | Done:
        return self.session.back()

    def tell(self, *kinds: type[Message]) -> None:
        """Post each kind of message to every screen on the stack (each screen its own copy)."""
        for screen in self.screen_stack:
            for kind in kinds:
                screen.post_message(kind())

    def _load_kb(self) -> None:
        from ..kb.yamlsrc import KBError

        try:
            self.kb  # noqa: B018 - loads it
        except KBError as e:
            self.from_thread(self._kb_broken, [str(p) for p in e.problems[:20]])

    def _kb_broken(self, problems: list[str]) -> None:
        self.outcome.code = Exit.KB_INVALID
        self.outcome.kb_problems = problems
        self.exit(self.outcome)

    # --- screens ------------------------------------------------------------------------------

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        add_screen_styles(self.stylesheet, screen)
        return super().push_screen(screen, *args, **kwargs)

    def switch_screen(self, screen: Any) -> Any:
        add_screen_styles(self.stylesheet, screen)
        return super().switch_screen(screen)

    # --- start-up ---------------------------------------------------------------------------

    async def on_mount(self) -> None:
        self._catch_signals()
        logs = self.opts.effective_logs()
        if logs:
            # The first frame is the diagnosis screen, reading. The welcome screen is made when Back
            # leads there (leave_diagnosis), so the first frame does not wait for a screen not shown.
            from .screens.diagnosis import DiagnosisScreen

            self.log_state = LogState("reading", self._names(logs))
            await self.push_screen(DiagnosisScreen())
        else:
            from .screens.welcome import WelcomeScreen

            await self.push_screen(WelcomeScreen())
        self.call_after_refresh(self._after_first_frame)

    def leave_diagnosis(self) -> None:
        """Back from the diagnosis screen: to the screen under it, or the welcome screen at the bottom."""
        from .screens.welcome import WelcomeScreen

        if len(self.screen_stack) > 2:  # Textual's default screen is at the bottom
            self.pop_screen()
        else:
            self.switch_screen(WelcomeScreen())

    @staticmethod
    def _names(paths: list[str]) -> str:
        return ", ".join(Path(p).name for p in paths)

    def _after_first_frame(self) -> None:
        """Work starts once the first screen is on the terminal: the walk's keeper (it reads the
        saved walks; the last unfinished one is looked for in a worker), then a log given is read
        (its diagnosis is on the screen), then the knowledge base loads and the machine is detected."""
        cjk.enable()  # before anything else is drawn: detection, a log or a paste may bring CJK text
        if self.opts.keep_state:
            from ..bundle.resume import Keeper

            self.keeper = Keeper(self.opts)
            if not (self.opts.logs or self.opts.demo or self.opts.resume or self.opts.replay):
                self.in_thread(self.keeper.store.latest_unfinished, self._resumable_found, lambda _e: None, "resumable")
        logs = self.opts.effective_logs()
        if logs:
            self._then_background = True
            self.read_logs(logs)
        elif self.opts.resume_screen in ("question", "leaf"):  # a resumed walk without a log
            self.prefill()
            self.opts.resume_screen = None
            self.open_questions()
        else:
            self._background()

    def _resumable_found(self, walk: Any) -> None:
        if walk is not None:
            self.resumable = walk
            self.tell(ResumeOffered)

    def _background(self) -> None:
        self._then_background = False
        if self._kb_loaded is None:
            self.run_worker(self._load_kb, thread=True, group="kb", exit_on_error=False)
        if self.machine.status == "idle":
            self.start_machine()

    def scenario_text(self, sid: str) -> tuple[Any, Any] | None:
        """A scenario's (title, summary): from the knowledge base once loaded, before that from
        its scenario file alone, so a diagnosis shows without waiting for the whole base."""
        if self._kb_loaded is None:
            from ..kb.titles import scenario_titles

            found = scenario_titles()
            if found:
                return found.get(sid)
        sc = self.kb.scenarios.get(sid)
        return (sc.title, sc.summary) if sc is not None else None

    # --- facts -------------------------------------------------------------------------------

    def _rebuild_facts(self) -> None:
        facts = FactSet()
        if self.machine.result is not None:
            facts.update(self.machine.result.facts)
        if self.log_state.diagnosis is not None:
            facts.update(self.log_state.diagnosis.facts)
        facts.update(self.user_facts)
        if self._walk is not None:
            self._walk.replace_facts(facts)

    def override_fact(self, name: str, raw: str) -> Fact:
        """Set a fact the way the operator typed it; raises ``FactValueError`` with a clear message."""
        fact = self.session.override(name, raw)
        self.user_facts.add(fact)
        self._rebuild_facts()
        self.tell(FactsChanged)
        self.keep()
        return fact

    def choose_scenario(self, scenario: str | None) -> None:
        """The operator picked a scenario on the diagnosis screen (None: the log's best match)."""
        self.user_facts.remove("diagnosis")
        if scenario is not None:
            best = self.log_state.diagnosis.best if self.log_state.diagnosis else None
            if best is None or best.scenario != scenario:
                self.user_facts.add(Fact("diagnosis", scenario, "chosen on the diagnosis screen", kind="answered"))
        self._rebuild_facts()
        self.keep()

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
        self.run_worker(abandonable(job, done, failed, InputProblem), group=group, exclusive=True, exit_on_error=False)

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
        self._read(self.t("tui.welcome.paste"), lambda progress, stop: self.sources.diagnose_text(text, "pasted"))

    def on_unmount(self) -> None:
        self._reading_stopped.set()  # a log being watched stops being read

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
        self.tell(LogRead, FactsChanged)
        screen, self.opts.resume_screen = self.opts.resume_screen, None
        if screen in ("question", "leaf"):
            self.open_questions()
        self.keep()
        if self._then_background:
            # After the screen has drawn the diagnosis (it hears LogRead first): the knowledge base
            # and detection threads must not compete with that frame.
            self.screen.call_after_refresh(self._background)

    def _log_failed(self, error: str) -> None:
        from ..text.output import clean_text
        from .screens.diagnosis import DiagnosisScreen

        error = " ".join(clean_text(error).split())  # it may quote the file name or its content
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
        self.opts.demo = True
        self.opts.logs = []
        self.opts.machine = None
        self.machine = MachineState()
        self.start_machine()
        self.read_logs(self.opts.effective_logs())

    # --- navigation --------------------------------------------------------------------------

    def open_questions(self) -> None:
        from .screens.question import QuestionScreen

        self.push_screen(QuestionScreen())
        self.keep()

    def show_step(self, step: Ask | Done) -> None:
        """Called by the question screen after each answer."""
        from ..engine import Done
        from .screens.leaf import LeafScreen

        if isinstance(step, Done):
            self.push_screen(LeafScreen(step))
            self.keep()

    # --- clipboard ---------------------------------------------------------------------------

    def copy_text(self, text: str, on_tmux: Callable[[bool], None] | None = None) -> str:
        """Send ``text`` to the terminal's clipboard; returns how (``terminal``, ``tmux``, ``screen``).

        Under tmux the text also goes into tmux's paste buffer, in a worker (it runs ``tmux``);
        ``on_tmux`` hears whether that worked.
        """
        plan = clipboard.plan(text, self.environ)
        if plan.via == "terminal":
            self.copy_to_clipboard(text)  # Textual's own OSC 52
        else:
            self._passthrough(text, plan.sequences)
        if plan.via == "tmux":
            runner = self.clipboard_runner

            def load() -> None:
                ok = bool(runner(text))
                if on_tmux is not None:
                    self.from_thread(on_tmux, ok)

            self.run_worker(load, thread=True, group="tmux-buffer", exit_on_error=False)
        return plan.via

    def _passthrough(self, text: str, sequences: tuple[str, ...]) -> None:
        """OSC 52 wrapped for tmux or screen, which Textual cannot send: the one place that writes
        to Textual's driver and sets what ``App.clipboard`` returns, as ``copy_to_clipboard`` does."""
        self._clipboard = text
        driver = self._driver
        if driver is not None:
            for seq in sequences:
                driver.write(seq)
            driver.flush()

    # --- actions -----------------------------------------------------------------------------

    def _leaf_screen(self) -> Any:
        """The fix being shown: the top-most leaf screen, even under the facts screen or a dialog."""
        for screen in reversed(self.screen_stack):
            if getattr(screen, "KIND", "") == "leaf":
                return screen
        return None

    def _finish(self, code: int) -> None:
        self.outcome.code = code
        leaf = self._leaf_screen()
        self.outcome.done = leaf.done if leaf is not None else None
        checked = leaf.checked_log if leaf is not None else None
        self.outcome.verification = checked.verification if checked is not None else None
        self.keep(finished=code == Exit.OK and leaf is not None)
        self.exit(self.outcome)

    def action_quit_app(self) -> None:
        self._finish(Exit.OK)

    async def action_quit(self) -> None:
        """Textual's own quit would end without the fix; end like ``q`` instead."""
        self._finish(Exit.OK)

    def action_cancel(self) -> None:
        """Ctrl+C: with text selected by the mouse, copy it (as terminals do); otherwise quit."""
        selected = self.screen.get_selected_text()
        if selected and selected.strip():
            from ..text.output import clean_text

            text = clean_text(selected)
            via = self.copy_text(text)
            self.notify(self.t("tui.selection_copied", lines=len(text.splitlines()), via=via),
                        timeout=4, markup=False)
            return
        self._finish(Exit.CANCELLED)

    # --- signals -----------------------------------------------------------------------------

    def _catch_signals(self) -> None:
        """SIGTERM, SIGHUP, SIGINT, SIGQUIT end the wizard like Ctrl+C: Textual restores the terminal."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop = asyncio.get_running_loop()
            for signum in HANDLED:
                loop.add_signal_handler(signum, self.on_signal, signum)

    def on_signal(self, signum: int) -> None:
        if self.outcome.signum is not None:
            return
        self.outcome.signum = signum
        code = exit_code(signum)
        if self.watchdog is not None:
            self.watchdog.arm(code)
        self._finish(code)

    def action_facts(self) -> None:
        from .screens.facts import FactsScreen

        if not isinstance(self.screen, FactsScreen):
            self.push_screen(FactsScreen())

    def action_glossary(self) -> None:
        from .screens.browse import open_glossary

        open_glossary(self)

    async def action_submit_box(self) -> None:
        from textual.widgets import Input

        if isinstance(self.focused, Input):
            await self.focused.action_submit()

    def action_keys(self) -> None:
        from .screens.keys import KeysScreen

        if not isinstance(self.screen, KeysScreen):
            self.push_screen(KeysScreen(self.screen))

    def get_system_commands(self, screen: Any) -> Any:
        """The command palette (Ctrl+P): this screen's actions by name, the key map, the theme."""
        from textual.app import SystemCommand

        from .screens.keys import palette_entries

        for name, keys, action, node in palette_entries(screen):
            yield SystemCommand(name, keys, lambda a=action, n=node: self.call_later(self.run_action, a, n))
        yield SystemCommand(self.t("tui.keys"), "? F1 F2", self.action_keys)
        yield SystemCommand("Theme", "", self.action_change_theme)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer asks this for every key it draws, the first frame's too: a screen module not
        # imported yet cannot be on the screen, so it is not imported here.
        facts = sys.modules.get(f"{__package__}.screens.facts")
        return not (action == "facts" and facts is not None and isinstance(self.screen, facts.FactsScreen))


def _provides_the_view(app: WizardApp) -> Wizard:
    """Never called: mypy checks here that the app gives its screens everything :class:`Wizard` lists."""
    return app


def _width() -> int:
    return max(60, min(100, shutil.get_terminal_size((88, 24)).columns - 1))


def run_tui(opts: LaunchOptions, sources: Sources | None = None) -> int:
    watchdog = Watchdog()
    app = WizardApp(opts, watchdog=watchdog, sources=sources)  # the knowledge base loads after the first frame
    # Until the app is mounted and catches them in its event loop, a signal restores and ends at once.
    previous = {s: signal.signal(s, lambda n, _f: watchdog.abort(exit_code(n))) for s in HANDLED}
    try:
        outcome = app.run(inline=opts.inline, mouse=not opts.inline)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if outcome is None:
        # Textual already printed the traceback of a crash; say nothing more.
        return Exit.ERROR if app.return_code else Exit.OK
    if outcome.kb_problems is not None:
        print("oomwizard: the knowledge base is broken; run `oomwizard lint` for details:", file=sys.stderr)
        for problem in outcome.kb_problems:
            print(f"  {problem}", file=sys.stderr)
        return int(outcome.code)
    if outcome.signum != getattr(signal, "SIGHUP", None):  # after a hang-up nobody reads the screen
        from ..stdio import OutputError

        with contextlib.suppress(OSError, OutputError):
            print_outcome(outcome, opts.lang, sys.stdout, sys.stderr)
    return int(outcome.code)


def print_outcome(outcome: Outcome, lang: str, out: TextIO, err: TextIO, width: int | None = None) -> None:
    """After the screen is restored: the fix (if the wizard ended on one) into the scrollback."""
    from ..report.leaf import leaf_text
    from ..report.runthis import run_this_text
    from ..report.verification import verification_text
    from ..text.output import safe_stream

    out, err = safe_stream(out), safe_stream(err)
    if outcome.done is not None:
        done = outcome.done
        out.write("\n" + leaf_text(done.leaf, done.facts, done.path, lang, width=width or _width()))
        if outcome.verification is not None:
            out.write("\n" + verification_text(outcome.verification, lang, width=width or _width()))
        closing = run_this_text(done.leaf, done.facts, lang, width=width or _width())
        if closing:  # last, so the scrollback ends with what to run and how to check it
            out.write("\n" + closing)
    for path in outcome.saved:
        print(ui("tui.save.done", lang, path=path), file=err)
    out.flush()
