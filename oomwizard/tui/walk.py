"""The wizard's walk kept on disk and written as a support bundle (mixed into the app).

:meth:`WalkKeeping.keep` runs after every answer, correction and change of screen, so
``--resume`` (or the welcome screen's offer) continues where a dropped session stopped;
:meth:`WalkKeeping.action_report` (``r``) writes the walk as a support bundle beside the saved
fix. The work itself is in :mod:`oomwizard.bundle`; this only reads the app's state.
"""

from __future__ import annotations

from typing import Any


class WalkKeeping:
    """Methods of :class:`~.app.WizardApp` that keep and bundle the walk."""

    # provided by the app
    keeper: Any
    resumable: Any
    opts: Any
    session: Any
    _walk: Any
    user_facts: Any
    machine: Any
    log_state: Any
    outcome: Any
    kb: Any
    lang: str
    screen_stack: Any
    read_logs: Any
    _rebuild_facts: Any
    open_questions: Any
    _leaf_screen: Any
    notify: Any
    t: Any
    in_thread: Any
    start_machine: Any
    _make_keeper: Any

    def _screen_kind(self) -> str:
        """The top-most screen a walk resumes on (``WizardScreen.KIND``); below them all, the welcome."""
        for screen in reversed(self.screen_stack):
            kind = getattr(screen, "KIND", "")
            if kind:
                return str(kind)
        return "welcome"

    def keep(self, finished: bool = False) -> None:
        """Save the walk as it stands now (after every answer, correction and change of screen);
        the keeper is made here when the first thing to save comes before the first diagnosis is
        drawn (a walk begun while a slow log is read)."""
        if self.keeper is None:
            self._make_keeper()
            if self.keeper is None:
                return
        leaf = self._leaf_screen()
        chosen = self.user_facts.get("diagnosis")
        # Before the walk is made (it needs the whole knowledge base) nothing is answered: saving
        # must not load the base on the screen's thread, before the diagnosis is drawn.
        walk = self._walk
        self.keeper.save(screen=self._screen_kind(), answers=walk.answers if walk is not None else {},
                         order=walk.order if walk is not None else [],
                         overrides=self.user_facts, scenario=str(chosen.value) if chosen else None,
                         leaf=leaf.done.leaf.id if leaf is not None else None, finished=finished)

    def resume_last(self) -> None:
        """The welcome screen's offer: continue the last unfinished walk where it stopped."""
        from ..bundle.resume import resume_into

        walk, self.resumable = self.resumable, None
        if walk is None:
            return
        for note in resume_into(self.opts, walk):
            self.notify(note, severity="warning", timeout=10, markup=False)
        self.user_facts.update(self.opts.overrides)
        from .view import MachineState

        self.machine = MachineState()
        self.start_machine()
        if self.keeper is not None:
            self.keeper.rekey(self.opts.effective_logs())
        if self.opts.logs:
            self.read_logs(self.opts.logs)
        else:
            self._rebuild_facts()
            self.prefill()
            self.open_questions()

    def prefill(self) -> None:
        """Answers of a replayed or resumed walk, filled in once (the log they followed is read)."""
        for qid in self.opts.order:
            if qid in self.opts.answers:
                self.session.answers[qid] = self.opts.answers[qid]
                self.session.order.append(qid)
        self.opts.answers, self.opts.order = {}, []

    def walk_state(self) -> Any:
        """What a support bundle of this walk holds (see :mod:`oomwizard.bundle.frontend`)."""
        from ..bundle.build import BundleInput
        from ..bundle.frontend import machine_source

        leaf = self._leaf_screen()
        m = self.machine.result
        return BundleInput(
            self.kb, self.lang, diagnosis=self.log_state.diagnosis, machine=m.data if m is not None else None,
            machine_source=machine_source(bool(self.opts.replay), m), facts=self.session.facts.copy(),
            overrides=self.user_facts.copy(), answers=dict(self.session.answers), order=list(self.session.order),
            done=leaf.done if leaf is not None else None, replayed_from=getattr(self.opts, "replay", None),
            log_paths=self.opts.effective_logs())

    def action_report(self) -> None:
        """Write the support bundle beside the saved fix, in a worker (it reads the logs again)."""
        from ..bundle.frontend import folder_for, write_walk_bundle

        state, folder = self.walk_state(), folder_for(self.outcome.saved)
        self.notify(self.t("tui.report.running"), timeout=3, markup=False)

        def done(paths: list[str]) -> None:
            self.outcome.saved.extend(paths)
            self.notify(self.t("tui.report.done", paths=", ".join(paths)), timeout=12, markup=False)

        def failed(error: str) -> None:
            from ..text.output import clean_text  # only on a failure: not before the first frame

            self.notify(self.t("tui.report.failed", error=" ".join(clean_text(error).split())), severity="error",
                        timeout=10, markup=False)

        self.in_thread(lambda: write_walk_bundle(state, folder), done, failed, "report")
