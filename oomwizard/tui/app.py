"""The full-screen wizard: welcome, diagnosis, questions, the fix.

The app owns the :class:`~oomwizard.session.Session` and the facts that feed it: the operator's
``--set`` values and overrides, the log's facts, and this machine's facts, which arrive late from a
worker thread so the first screen never waits on NVML or package scans. Screens see the app through
:class:`~.view.Wizard` (read-only state and requests); when the machine, a log or the facts change,
every screen on the stack gets a message (:mod:`.messages`), so a suggestion can appear under the
operator's cursor while they read.

Here: the state, what the screens read and ask, start-up (the first frame before any loading) and
the screens' order. The rest is mixed in: the machine and the logs read in workers
(:mod:`.reading`), keys, commands and signals (:mod:`.actions`), the walk kept on disk
(:mod:`.walk`), the clipboard (:mod:`.clipboard`); what is printed after the terminal is restored is in :mod:`.outcome`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message

from ..exitcodes import Exit
from ..facts.model import Fact, FactSet
from ..frontend.inputs import Sources, default_sources
from ..frontend.options import LaunchOptions
from ..frontend.problems import print_kb_broken
from ..i18n import ui
from ..onboard import texts as _onboard_texts  # noqa: F401  (registers the onboarding screens' labels)
from ..signals import HANDLED, Watchdog, exit_code
from . import cjk, clipboard
from .actions import AppActions
from .clipboard import ClipboardSending
from .keymap import keymap_from
from .messages import FactsChanged, ResumeOffered
from .outcome import Outcome, print_outcome
from .reading import LogReading
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
    from ..session import Session

__all__ = ["LogState", "MachineState", "Outcome", "WizardApp", "print_outcome", "run_tui"]


class WizardApp(WalkKeeping, LogReading, AppActions, ClipboardSending, App[Outcome], inherit_bindings=False):
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
        # One submit key everywhere: Ctrl+S submits any box (the paste boxes bind it themselves). Before
        # the focused box sees it: a one-line box would otherwise take the key and do nothing with it.
        Binding("ctrl+s", "submit_box", show=False, priority=True, id="wizard.submit"),
        # Textual's own palette binding, with a description the footer can give in the operator's language.
        Binding("ctrl+p", "command_palette", "tui.palette", show=False, priority=True, id="wizard.palette"),
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
        made after the first frame (it reads the log's ends and the saved walks), with a log once
        its diagnosis is drawn or something is to be saved before that."""
        self._keeper_logs: list[str] | None = None
        """The logs the walk follows when they changed before the keeper was made."""
        self._keeper_dropped = False
        """A pasted log's walk is not kept (it cannot be read again)."""
        self._first_frame_drawn = False
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

    def previous(self, question: str) -> str | None:
        return self.session.previous(question)

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
            self.from_thread(self._kb_broken, [str(p) for p in e.problems])

    def _kb_broken(self, problems: list[str]) -> None:
        self.outcome.code = Exit.KB_INVALID
        self.outcome.kb_problems = problems
        self.exit(self.outcome)

    # --- screens ------------------------------------------------------------------------------

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        self._prepare(screen)
        return super().push_screen(screen, *args, **kwargs)

    def switch_screen(self, screen: Any) -> Any:
        self._prepare(screen)
        return super().switch_screen(screen)

    def _prepare(self, screen: Any) -> None:
        """A screen's styles, and the CJK line breaking for every screen but the diagnosis (which
        asks :func:`.reading._shows_cjk`): questions, facts, a paste or a leaf may hold such text."""
        add_screen_styles(self.stylesheet, screen)
        if self._first_frame_drawn and getattr(screen, "KIND", "") != "diagnosis":
            cjk.enable()  # (the first screen is decided in __init__: Chinese, or a CJK log name)

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
        """Back from the diagnosis screen: to the screen under it, or the welcome screen at the bottom.
        Back on the welcome screen, the demo is over (its machine is not this one)."""
        from .screens.welcome import WelcomeScreen

        if len(self.screen_stack) > 2:  # Textual's default screen is at the bottom
            to_welcome = isinstance(self.screen_stack[-2], WelcomeScreen)
            self.pop_screen()
        else:
            to_welcome = True
            self.switch_screen(WelcomeScreen())
        if to_welcome:
            self.leave_demo()

    def _names(self, paths: list[str]) -> str:
        """The logs as the title names them; a log piped in is "standard input", not "-"."""
        return ", ".join(ui("tui.stdin_name", self.lang) if p == "-" else Path(p).name for p in paths)

    def _after_first_frame(self) -> None:
        """Work starts once the first screen is on the terminal. A log given is read first; the
        walk's keeper (it imports the engine) and the CJK patterns (:mod:`.cjk`) wait until its
        diagnosis is drawn (unless needed sooner), then the knowledge base loads and the machine is
        detected (``_background``). Without a log the keeper is made at once. Until then what the
        first frame made is frozen out of the garbage collector's passes, which would otherwise
        walk it again and again (a third of the engine's imports and the diagnosis)."""
        gc.freeze()
        self._first_frame_drawn = True
        logs = self.opts.effective_logs()
        if logs:
            self._then_background = True
            self.read_logs(logs)
            return
        cjk.enable()  # before anything else is drawn: detection or a paste may bring CJK text
        self._make_keeper()
        if self.opts.resume_screen in ("question", "leaf"):  # a resumed walk without a log
            self.prefill()
            self.opts.resume_screen = None
            self.open_questions()
        else:
            self._background()

    def _make_keeper(self) -> None:
        if self.keeper is not None or self._keeper_dropped or not self.opts.keep_state:
            return
        from ..bundle.resume import Keeper

        self.keeper = Keeper(self.opts)
        if self._keeper_logs is not None:
            self.keeper.rekey(self._keeper_logs)
        if not (self.opts.logs or self.opts.demo or self.opts.resume or self.opts.replay):
            self.in_thread(self.keeper.store.latest_unfinished, self._resumable_found, lambda _e: None, "resumable")

    def _resumable_found(self, walk: Any) -> None:
        if walk is not None:
            self.resumable = walk
            self.tell(ResumeOffered)

    def _background(self) -> None:
        gc.unfreeze()  # frozen in _after_first_frame for the first diagnosis
        cjk.enable()
        if self._then_background and self.log_state.status == "done":
            self.keep()  # the first log's diagnosis is drawn: the walk is kept from here
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

    def on_unmount(self) -> None:
        self._reading_stopped.set()  # a log being watched stops being read


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


def _provides_the_view(app: WizardApp) -> Wizard:
    """Never called: mypy checks here that the app gives its screens everything :class:`Wizard` lists."""
    return app


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
        print_kb_broken(outcome.kb_problems, opts.lang, sys.stderr)
        return int(outcome.code)
    if outcome.signum != getattr(signal, "SIGHUP", None):  # after a hang-up nobody reads the screen
        from ..stdio import OutputError

        with contextlib.suppress(OSError, OutputError):
            print_outcome(outcome, opts.lang, sys.stdout, sys.stderr)
    return int(outcome.code)

