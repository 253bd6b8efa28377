"""Plain mode: the same walk as the full-screen wizard, as simple prompts (``--plain``, ``TERM=dumb``).

For terminals where a full-screen interface is a nuisance or impossible: a serial console, an
Emacs shell, a screen reader, a recorded session. Each question comes with the suggested answer as
the default and the place it came from; "back" and "why we ask" are always offered. On a dumb
terminal (``TERM=dumb`` or none) the prompts are bare lines (plain_prompts.py): numbered choices,
typed answers, not one escape sequence.
Without a log it opens on the welcome screen's menu (the demo first where there is no GPU, open a
log, paste one, review the facts, or just answer questions); every question also offers the facts
review, where any fact can be corrected; after the fix it offers to save it, as the TUI's ``s``.
Ctrl+C (or Ctrl+D) at any prompt cancels cleanly with exit code 130; SIGTERM, SIGHUP and SIGQUIT
end the prompt through prompt_toolkit the same way, so its raw mode and hidden cursor are undone,
and exit with 128 + the signal. After the fix is printed the
wizard offers (default no) to check the log of the next start against the fix's checklist; the
printed fix already ends with the ``oomwizard verify`` command for doing that later.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from typing import Any, TextIO

from .engine import UNKNOWN, Ask, Done
from .exitcodes import Exit
from .facts.model import FactSet
from .frontend.inputs import (
    InputProblem,
    MachineResult,
    Sources,
    colon,
    default_sources,
    machine_summary,
    suggestion_source,
)
from .frontend.options import LaunchOptions
from .frontend.problems import print_kb_broken
from .i18n import ui
from .kb.model import KnowledgeBase, Question
from .logs.model import Diagnosis
from .plain_after import offer_report, offer_verify
from .plain_menus import offer_save, review_facts, welcome
from .plain_prompts import LinePrompts, TermPrompts
from .report.diagnosis import diagnosis_text
from .report.leaf import leaf_text
from .report.runthis import run_this_text
from .session import Session
from .signals import HANDLED, SignalExit, Watchdog, exit_code
from .text.cells import wrap
from .text.output import safe_stream
from .versions import Version

BACK = "__back__"
HELP = "__help__"
FACTS = "__facts__"
NONE = "__none__"
WIDTH = 80


class PlainWizard:
    """One walk in plain prompts. ``prompt_kwargs`` (``input``/``output``) drive questionary in
    tests; ``line_input`` the line prompts (``numbered``, and what ``TERM=dumb`` gets)."""

    def __init__(
        self,
        opts: LaunchOptions,
        kb: KnowledgeBase,
        sources: Sources,
        *,
        out: TextIO,
        err: TextIO,
        prompt_kwargs: dict[str, Any] | None = None,
        numbered: bool | None = None,
        line_input: TextIO | None = None,
    ) -> None:
        self.opts = opts
        self.kb = kb
        self.lang = opts.lang
        self.sources = sources
        self.out = out
        self.err = err
        term = os.environ.get("TERM", "")
        self.numbered = numbered if numbered is not None else term in ("", "dumb")
        self.width = max(40, shutil.get_terminal_size((WIDTH, 24)).columns)
        inp = line_input or sys.stdin
        self.prompts: LinePrompts = (
            LinePrompts(inp, out, self.width, self.lang) if self.numbered
            else TermPrompts(inp, out, self.width, self.lang, dict(prompt_kwargs or {}))
        )
        self.session = Session(kb, FactSet(), lang=self.lang)
        self.diagnosis: Diagnosis | None = None
        self.machine: MachineResult | None = None
        self.user_facts = FactSet()
        """Facts the operator set in the facts review; they beat the log and the machine."""
        self.dropped: set[str] = set()
        """Facts the operator set aside (the log's diagnosis, on "none of these")."""
        self.keeper: Any = None
        if opts.keep_state:  # saved after every answer, for --resume after a dropped session
            from .bundle.resume import Keeper

            self.keeper = Keeper(opts)
        self.session.on_change = self.keep

    def keep(self, screen: str = "question", leaf: str | None = None, finished: bool = False) -> None:
        if self.keeper is not None:
            chosen = self.opts.overrides.get("diagnosis") or self.session.facts.get("diagnosis")
            scenario = str(chosen.value) if chosen is not None and chosen.kind == "answered" else None
            self.keeper.save(screen=screen, answers=self.session.answers, order=self.session.order,
                             overrides=self.opts.overrides, scenario=scenario, leaf=leaf, finished=finished)

    def t(self, key: str, **fmt: object) -> str:
        return ui(key, self.lang, **fmt)

    @property
    def text_width(self) -> int:
        """Prose width for the diagnosis and the fix: the terminal's, at most 100 columns."""
        return max(40, min(self.width, 101)) - 1

    # --- inputs --------------------------------------------------------------------------------

    def _machine(self) -> MachineResult | None:
        path = self.opts.effective_machine()
        if not path:
            print(self.t("tui.plain.detecting"), file=self.err, flush=True)
        try:
            return self.sources.replay_machine(path) if path else self.sources.detect_machine(self.opts.python)
        except InputProblem as e:
            print(f"oomwizard: {e.text(self.opts.lang)}", file=self.err)
        except Exception as e:  # noqa: BLE001 - detection must never stop the wizard
            print(f"oomwizard: {self.t('tui.machine.failed', error=f'{type(e).__name__}: {e}')}", file=self.err)
        return None

    def _read(self, logs: list[str]) -> Diagnosis:
        """The logs, with a progress line on a terminal's stderr (or, with ``--follow``, watched
        until the engine dies)."""
        from .progress import ProgressLine

        if self.opts.follow and len(logs) == 1 and self.sources.follow_path is not None:
            return self.sources.follow_path(
                logs[0], lambda key, fields: print(f"oomwizard: {self.t(key, **fields)}", file=self.err), lambda: False)
        line = ProgressLine(", ".join(logs), self.lang, self.err)
        try:
            return self.sources.diagnose_paths(logs, line)
        finally:
            line.clear()

    def rebuild_facts(self) -> None:
        """Machine, then log, then ``--set``, then what was set in the facts review: later wins."""
        facts = FactSet()
        if self.machine is not None:
            facts.update(self.machine.facts)
        if self.diagnosis is not None:
            facts.update(self.diagnosis.facts)
        facts.update(self.opts.overrides)
        facts.update(self.user_facts)
        for name in self.dropped:
            facts.remove(name)
        self.session.replace_facts(facts)

    def show_diagnosis(self, diag: Diagnosis) -> None:
        self.diagnosis = diag
        self.out.write(diagnosis_text(diag, self.lang, self.text_width) + "\n")
        self.out.flush()
        self.rebuild_facts()

    def read_and_show(self, logs: list[str]) -> bool:
        """Read and print the diagnosis of ``logs``; False (and why, on stderr) if one cannot be read."""
        try:
            diag = self._read(logs)
        except InputProblem as e:
            print(f"oomwizard: {e.text(self.opts.lang)}", file=self.err)
            return False
        self.show_diagnosis(diag)
        return True

    def load_machine(self) -> None:
        self.machine = self._machine()
        if self.machine is not None:
            line = f"{self.t('tui.machine.label')}{colon(self.lang)}{machine_summary(self.machine, self.lang)}"
            print("\n".join(wrap(line, self.width - 1, "", "  ")), file=self.err)
        self.rebuild_facts()

    def gather(self) -> int | None:
        """Read the logs and the machine; an exit code if a named input cannot be read. Without a
        log, the welcome menu (demo, open, paste, facts) as the full-screen wizard has it."""
        logs = self.opts.effective_logs()
        if logs and not self.read_and_show(logs):
            return Exit.INPUT
        self.load_machine()
        for qid in self.opts.order:  # a replayed or resumed walk
            if qid in self.opts.answers:
                self.session.answers[qid] = self.opts.answers[qid]
                self.session.order.append(qid)
        if not logs and not self.opts.replay:
            welcome(self)
        return None

    # --- the walk ------------------------------------------------------------------------------

    def choose_scenario(self) -> None:
        diag = self.diagnosis
        if diag is None or len(diag.matches) < 2:
            return
        if self.opts.scenario:  # a resumed walk had chosen already
            self.session.override("diagnosis", self.opts.scenario)
            return
        choices = []
        for m in diag.matches:
            sc = self.kb.scenarios.get(m.scenario)
            choices.append((f"{round(m.score * 100):>3}%  {sc.title(self.lang) if sc else m.scenario}", m.scenario))
        choices.append((self.t("tui.plain.none_of_these"), NONE))
        picked = self.prompts.select(self.t("tui.plain.which_scenario"), choices, diag.matches[0].scenario, "")
        if picked == NONE:
            self.dropped.add("diagnosis")
            self.session.facts.remove("diagnosis")
        elif picked != diag.matches[0].scenario:
            self.user_facts.add(self.session.override("diagnosis", picked))

    def ask(self, step: Ask) -> Ask | Done:
        q = step.question
        sug = step.suggestion
        source = ""
        if sug is not None:
            source = f"★ {self.t('tui.q.suggested')} — {suggestion_source(sug, step, self.lang)}"
        mine = self.session.previous(q.id)  # the user's own answer, before they stepped back
        if q.kind == "version":
            typed = mine if mine is not None and mine != UNKNOWN else None
            return self._ask_version(step, typed or (sug.answer if sug else ""), source)
        choices = []
        for c in q.choices:
            mark = "★ " if sug is not None and c.id == sug.answer else ""
            choices.append((mark + c.label(self.lang), c.id))
        if self.session.order:
            choices.append((self.t("tui.plain.back"), BACK))
        choices.append((self.t("tui.plain.help"), HELP))
        choices.append((self.t("plain.facts"), FACTS))
        default = sug.answer if sug is not None else q.unknown
        if mine is not None and q.choice(mine) is not None:
            default = mine
        picked = self.prompts.select(q.text(self.lang), choices, default, source)
        return self._apply(step, picked)

    def _ask_version(self, step: Ask, default: str, source: str) -> Ask | Done:
        q = step.question
        words = {"back": BACK, "help": HELP, "?": HELP, "facts": FACTS, "unknown": UNKNOWN, "don't know": UNKNOWN}

        def valid(text: str) -> bool | str:
            t = text.strip().lower()
            if t in words or Version.try_parse(t.removeprefix("v")) is not None:
                return True
            return self.t("tui.q.bad_version", value=text.strip())

        instruction = self.t("tui.plain.version_instruction")
        if source:
            self.prompts.say(source)
        raw = self.prompts.text(q.text(self.lang), default, instruction, valid).strip()
        picked = words.get(raw.lower(), raw.removeprefix("v") if raw[:1] in "vV" and raw[1:2].isdigit() else raw)
        return self._apply(step, picked)

    def _apply(self, step: Ask, picked: str) -> Ask | Done:
        if picked == BACK:
            return self.session.back()
        if picked == HELP:
            self.help(step.question)
            return self.session.current()
        if picked == FACTS:
            review_facts(self)
            return self.session.current()
        if step.suggestion is not None and picked == step.suggestion.answer:
            return self.session.accept()
        return self.session.answer(step.question.id, picked)

    def help(self, q: Question) -> None:
        art = self.kb.article("questions", q.id, self.lang)
        text = art.body if art is not None else self.t("tui.help.none")
        title = art.title if art is not None and art.title else self.t("tui.help")
        print(f"\n-- {self.t('tui.help')}: {title} --\n{text.strip()}\n", file=self.out, flush=True)

    def run(self) -> int:
        code = self.gather()
        if code is not None:
            return code
        self.choose_scenario()
        self.keep()
        step = self.session.current()
        while isinstance(step, Ask):
            step = self.ask(step)
        self.keep("leaf", step.leaf.id, finished=True)
        self.out.write("\n" + leaf_text(step.leaf, step.facts, step.path, self.lang, width=self.text_width))
        self.out.flush()
        try:
            offer_save(self, step)
            offer_verify(self, step.leaf)
            offer_report(self, step)
        except (KeyboardInterrupt, EOFError):  # the fix is on the screen: leaving here is no cancel
            print(file=self.out, flush=True)
        # Last, as the full-screen wizard's exit print: the output ends with what to run and how to check it.
        closing = run_this_text(step.leaf, step.facts, self.lang, width=self.text_width)
        if closing:
            self.out.write("\n" + closing)
            self.out.flush()
        return Exit.OK


def run_plain(
    opts: LaunchOptions,
    *,
    kb: KnowledgeBase | None = None,
    sources: Sources | None = None,
    prompt_kwargs: dict[str, Any] | None = None,
    numbered: bool | None = None,
    line_input: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    out = safe_stream(out or sys.stdout)  # the output boundary: no raw escapes, no secrets
    err = safe_stream(err or sys.stderr)
    if kb is None:
        from .kb.loader import get_kb
        from .kb.yamlsrc import KBError

        try:
            kb = get_kb()
        except KBError as e:
            print_kb_broken(e.problems, opts.lang, err)
            return Exit.KB_INVALID
    wizard = PlainWizard(
        opts, kb, sources or default_sources(), out=out, err=err, prompt_kwargs=prompt_kwargs, numbered=numbered,
        line_input=line_input,
    )
    caught: list[int] = []
    previous = _catch_signals(caught, Watchdog())
    try:
        return wizard.run()
    except SignalExit as e:
        if e.signum != getattr(signal, "SIGHUP", None):  # after a hang-up nobody reads the screen
            with contextlib.suppress(OSError, ValueError):
                print("\n" + ui("tui.plain.cancelled", opts.lang), file=err)
        return e.code
    except (KeyboardInterrupt, EOFError):
        print("\n" + ui("tui.plain.cancelled", opts.lang), file=err)
        return Exit.CANCELLED
    except Exception:
        if caught:  # a terminal that hung up fails the prompt's last redraw; the signal is the story
            return exit_code(caught[0])
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _catch_signals(caught: list[int], watchdog: Watchdog) -> dict[int, Any]:
    """SIGTERM, SIGHUP, SIGQUIT end the current prompt through prompt_toolkit, or unwind between prompts.

    SIGINT is left to prompt_toolkit (its Ctrl+C) and Python (KeyboardInterrupt), which already end
    with 130. Should the prompt not end, the watchdog restores the terminal and exits.
    """

    def handler(signum: int, frame: Any) -> None:
        caught.append(signum)
        watchdog.arm(exit_code(signum))
        from prompt_toolkit.application.current import get_app_or_none

        app = get_app_or_none()
        loop = getattr(app, "loop", None)
        if app is not None and app.is_running and loop is not None:
            loop.call_soon_threadsafe(_end_prompt, app, signum)
            return
        raise SignalExit(signum)

    previous: dict[int, Any] = {}
    if _main_thread():
        for signum in HANDLED:
            if signum != signal.SIGINT:
                previous[signum] = signal.signal(signum, handler)
    return previous


def _end_prompt(app: Any, signum: int) -> None:
    if app.is_running and app.future is not None and not app.future.done():
        app.exit(exception=SignalExit(signum))


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
