"""The answer: what happened, why, and the commands that fix it, cheapest first.

Commands are computed for this machine by :func:`~oomwizard.report.leaf.render_fixes` and shown
in wrapping blocks (never clipped), each with the arithmetic behind its numbers. ``c`` copies the
focused fix through the terminal (OSC 52, tmux-aware), ``s`` saves everything to a file; nothing
is ever run. The checklist uses real checkboxes, and marks the items a tool can verify from the
next log; ``v`` takes that log (a path or a paste), checks it in a worker, ticks what passed and
shows the line that decided each failure.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Markdown, Static, TabbedContent, TabPane

from ...engine import Done
from ...frontend.verdicts import Checked, check_path, check_text, summary, ticks, verdicts
from ...i18n import said
from ...report.leaf import render_fixes
from ...report.runthis import run_this, run_this_heading
from ...text.output import clean_text
from ..messages import FactsChanged
from ..widgets.checklist import ChecklistItem
from ..widgets.commands import CommandBlock, FixCard
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen
from .leaf_text import leaf_details, leaf_summary


class LeafScreen(WizardScreen):
    STYLES = "leaf.tcss"
    KIND = "leaf"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "tui.copy", id="leaf.copy"),
        Binding("s", "save", "tui.save", id="leaf.save"),
        Binding("v", "verify", "tui.verify", id="leaf.verify"),
        Binding("p", "plan", "tui.plan", show=False, id="leaf.plan"),  # capacity leaves; see check_action
        Binding("r", "app.report", "tui.report", show=False, id="leaf.report"),
        Binding("b,escape", "back", "tui.back", id="leaf.back"),
        Binding("1", "show_tab('fix')", show=False, id="leaf.tab_fix"),
        Binding("2", "show_tab('checklist')", show=False, id="leaf.tab_checklist"),
        Binding("3", "show_tab('details')", show=False, id="leaf.tab_details"),
        Binding("4", "show_tab('article')", show=False, id="leaf.tab_article"),
    ]

    def __init__(self, done: Done) -> None:
        super().__init__()
        self.done = done
        self._checked: set[str] = set()
        """Ticked checklist items, kept when late facts redraw the screen."""
        self._moved = False
        """Facts changed since and the walk no longer ends here."""
        self.checked_log: Checked | None = None
        """The last check of the next start's log, kept across redraws and printed on exit."""
        self._checking: str | None = None
        """What is being checked right now (shown while the worker runs)."""

    # --- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        w = self.wizard
        lang = w.lang
        leaf = self.done.leaf
        yield TitleBar(leaf.title(lang), id="leaf-title")
        with TabbedContent(id="leaf-tabs", initial="fix"):
            with TabPane(f"1 {self.t('tui.leaf.tab.fix')}", id="fix"), VerticalScroll(id="fix-scroll"):
                yield from self._run_this()
                yield Static(leaf_summary(self.wizard, self.done.leaf), id="leaf-summary")
                yield Static(Content.assemble((w.t("fixes"), "bold underline")), classes="section")
                yield from self._fix_cards()
                yield Static(Content(self.t("tui.leaf.never_run")), id="never-run")
                if self._checkable():
                    yield Static(Content(self.t("tui.verify.hint")), id="verify-hint")
            with (
                TabPane(f"2 {self.t('tui.leaf.tab.checklist')}", id="checklist"),
                VerticalScroll(id="checklist-scroll"),
            ):
                yield from self._summary_widgets()
                if self._checkable():
                    yield Button(self.t("tui.verify.button"), id="verify-button", compact=True)
                found = verdicts(self.checked_log.verification, lang) if self.checked_log else []
                for i, c in enumerate(leaf.checks):
                    auto = self.t("tui.leaf.auto_checked") if c.auto else None
                    cid = f"check-{i}"
                    verdict = found[i] if i < len(found) else None
                    yield ChecklistItem(c.text(lang), auto, checked=cid in self._checked, verdict=verdict, id=cid)
            with TabPane(f"3 {self.t('tui.leaf.tab.details')}", id="details"), VerticalScroll(id="details-scroll"):
                yield Static(leaf_details(self.wizard, self.done), id="leaf-details")
            with TabPane(f"4 {self.t('tui.leaf.tab.article')}", id="article"):
                # Filled on first view: parsing and highlighting a long article takes a noticeable
                # fraction of a second, which the fix itself should not wait for.
                yield VerticalScroll(id="article-scroll")
        yield WizardFooter()

    def _run_this(self) -> ComposeResult:
        """First on screen at any size: the top fix's commands for this machine and how to check them."""
        top = run_this(self.done.leaf, self.done.facts, self.wizard.lang)
        if top is None:
            return
        with Vertical(id="run-this"):
            yield Static(Content.assemble((run_this_heading(top, self.wizard.lang), "bold")), id="run-this-title")
            yield CommandBlock(top.commands, id="run-this-commands")
            if top.verify:
                yield Static(Content.assemble(self.t("tui.runthis.verify"), " ", (top.verify, "bold")),
                             id="run-this-verify")
            yield Static(Content(self.t("tui.runthis.keys")), id="run-this-keys")

    def _fix_cards(self) -> ComposeResult:
        for i, rf in enumerate(render_fixes(self.done.leaf, self.done.facts, self.wizard.lang), 1):
            yield FixCard(i, rf, self.wizard.lang, copy_label=self.t("tui.copy"), id=f"fix-{i}")

    def on_mount(self) -> None:
        self.ready = True
        # The body has the focus so that arrows, PgUp/PgDn, Home/End scroll it; Tab reaches each fix.
        self.query_one("#fix-scroll", VerticalScroll).focus(scroll_visible=False)

    @on(ChecklistItem.Toggled)
    def _toggled(self, event: ChecklistItem.Toggled) -> None:
        if event.item.id:
            if event.item.checked:
                self._checked.add(event.item.id)
            else:
                self._checked.discard(event.item.id)

    @on(TabbedContent.TabActivated, "#leaf-tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "article":
            self.load_article()

    def load_article(self) -> None:
        scroll = self.query_one("#article-scroll", VerticalScroll)
        if scroll.children:
            return
        w = self.wizard
        art = w.kb.article("leaves", self.done.leaf.id, w.lang)
        if art is not None:
            scroll.mount(Markdown(art.body, open_links=False, id="leaf-article"))
        else:
            scroll.mount(Static(Content(w.t("tui.help.none")), id="leaf-article"))

    # --- checking the next start's log ------------------------------------------------------

    def _summary_state(self) -> tuple[str, str, str]:
        """Above the checklist: how to check, the check running, or what was read and the verdict."""
        if self._checking is not None:
            return self.t("tui.verify.running", what=self._checking), "", ""
        if self.checked_log is not None:
            return summary(self.checked_log, self.wizard.lang)
        if self._checkable():
            return self.t("tui.verify.hint"), "", ""
        return "", "", ""

    def _summary_widgets(self) -> ComposeResult:
        info, verdict, level = self._summary_state()
        box = Static(Content(info), id="verify-summary")
        box.display = bool(info)
        yield box
        line = Static(Content(verdict), id="verify-verdict", classes=level)
        line.display = bool(verdict)
        yield line

    def _show_summary(self) -> None:
        info, verdict, level = self._summary_state()
        box = self.query_one("#verify-summary", Static)
        box.update(Content(info))
        box.display = bool(info)
        line = self.query_one("#verify-verdict", Static)
        line.remove_class("error", "success", "warning")
        line.update(Content(verdict))
        line.display = bool(verdict)
        if level:
            line.add_class(level)

    def _checkable(self) -> bool:
        """Whether any item of the checklist can be checked from a log (else ``v`` is not offered)."""
        return any(c.auto for c in self.done.leaf.checks)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "plan":
            return self._plan_inputs() is not None
        return self._checkable() if action == "verify" else True

    def _plan_inputs(self) -> object | None:
        """The plan screen is offered on capacity leaves whose facts name a plannable model and a GPU size."""
        if not hasattr(self, "_plan_memo"):
            self._plan_memo = self._find_plan_inputs()
        return self._plan_memo

    def _find_plan_inputs(self) -> object | None:
        from ...plan.errors import PlanError
        from .plan import CAPACITY_LEAVES, inputs_from_facts

        if self.done.leaf.id not in CAPACITY_LEAVES:
            return None
        inputs = inputs_from_facts(self.done.facts)
        if inputs is None:
            return None
        try:
            from ...plan.planner import plan

            plan(inputs)
        except PlanError:
            return None
        return inputs

    def action_plan(self) -> None:
        from .plan import PlanScreen

        inputs = self._plan_inputs()
        if inputs is not None:
            self.app.push_screen(PlanScreen(inputs))  # type: ignore[arg-type]

    def action_verify(self) -> None:
        from .verify import VerifyScreen

        if self.query_one("#leaf-tabs", TabbedContent).active != "checklist":
            self.action_show_tab("checklist")
        self.app.push_screen(VerifyScreen(self.check_log))

    @on(Button.Pressed, "#verify-button")
    def _verify_button(self) -> None:
        self.action_verify()

    def check_log(self, kind: str, value: str) -> None:
        """Check a path (``kind`` ``path``) or pasted text (``paste``) in a worker thread."""
        w = self.wizard
        leaf, lang = self.done.leaf, w.lang
        self._checking = w.t("tui.verify.pasted") if kind == "paste" else clean_text(value)
        self._show_summary()

        def work() -> None:
            try:
                checked = check_text(leaf, value, lang) if kind == "paste" else check_path(leaf, value, lang)
            except Exception as e:  # noqa: BLE001 - an unreadable file must not take the wizard (or the fix) down
                w.from_thread(self._check_failed, said(e, lang) or type(e).__name__)
                return
            w.from_thread(self._check_done, checked)

        self.run_worker(work, thread=True, group="verify", exclusive=True, exit_on_error=False)

    def _check_failed(self, error: str) -> None:
        self._checking = None
        self._show_summary()
        error = " ".join(clean_text(error).split())
        self.notify(self.t("tui.verify.read_failed", error=error), severity="error", timeout=10, markup=False)

    def _check_done(self, checked: Checked) -> None:
        self._checking = None
        self.checked_log = checked
        for i, tick in ticks(checked.verification).items():
            if tick:
                self._checked.add(f"check-{i}")
            else:
                self._checked.discard(f"check-{i}")
        found = verdicts(checked.verification, self.wizard.lang)
        for i, item in enumerate(self.query(ChecklistItem)):
            if i < len(found):
                item.set_verdict(found[i], checked=(f"check-{i}" in self._checked))
        self._show_summary()
        self.query_one("#checklist-scroll", VerticalScroll).scroll_home(animate=False)

    # --- facts arriving late -----------------------------------------------------------------

    def on_facts_changed(self, _: FactsChanged) -> None:
        self.facts_changed()

    def facts_changed(self) -> None:
        """Facts arrived or were corrected: redraw the commands, or warn that the answer moved."""
        if not self.ready:
            return
        step = self.wizard.step()
        if isinstance(step, Done) and step.leaf.id == self.done.leaf.id:
            if step.facts.to_json() != self.done.facts.to_json():
                self.done = step
                self.refresh(recompose=True)
            self._moved = False
        else:
            self._moved = True
            if self.app.screen is self:
                self._warn_moved()

    def on_screen_resume(self) -> None:
        if self.ready and self._moved:
            self._warn_moved()

    def _warn_moved(self) -> None:
        self.notify(self.t("tui.leaf.facts_changed"), severity="warning", timeout=8, markup=False)

    # --- actions -----------------------------------------------------------------------------

    def _focused_card(self) -> FixCard:
        """The fix with the focus; with none focused, the one under "Run this" (else the first)."""
        node = self.app.focused
        while node is not None:
            if isinstance(node, FixCard):
                return node
            node = node.parent  # type: ignore[assignment]
        top = run_this(self.done.leaf, self.done.facts, self.wizard.lang)
        cards = list(self.query(FixCard))
        return next((c for c in cards if top is not None and c.number == top.number), cards[0])

    def copy_fix(self, card: FixCard) -> None:
        if card.not_available:
            msg = self.t("tui.leaf.not_copied", n=card.number, why=card.not_available)
            self.notify(msg, severity="warning", timeout=8, markup=False)
            return
        text = card.copy_text
        if not text.strip():
            self.notify(self.t("tui.leaf.no_commands"), severity="warning", markup=False)
            return
        n = card.number

        def tmux_done(ok: bool) -> None:
            key = "tui.leaf.copied_tmux" if ok else "tui.leaf.copied"
            self.notify(self.t(key, n=n, via="tmux"), timeout=5, markup=False)  # not covering the fixes long

        via = self.wizard.copy_text(text, on_tmux=tmux_done)
        if via != "tmux":
            self.notify(self.t("tui.leaf.copied", n=n, via=via), timeout=5, markup=False)

    def action_copy(self) -> None:
        if self.query(FixCard):
            self.copy_fix(self._focused_card())

    @on(Button.Pressed, ".copy")
    def _copy_button(self, event: Button.Pressed) -> None:
        card = event.button.parent
        if isinstance(card, FixCard):
            self.copy_fix(card)

    def action_save(self) -> None:
        from .save import SaveScreen

        self.app.push_screen(SaveScreen(self.done))

    def action_back(self) -> None:
        """Back to the last question; after a correction moved the answer, to where the walk now goes."""
        if not self._moved:
            self.wizard.step_back()
        self.app.pop_screen()

    def action_show_tab(self, tab: str) -> None:
        """Switch tabs and move the focus into the new tab (focus left behind would switch back)."""
        self.set_focus(None)
        self.query_one("#leaf-tabs", TabbedContent).active = tab
        if tab == "article":
            self.load_article()
        pane = self.query_one(f"#{tab}", TabPane)
        preferred = [*pane.query(FixCard), *pane.query(ChecklistItem), *pane.query(VerticalScroll)]
        if preferred:
            self.call_after_refresh(preferred[0].focus)
