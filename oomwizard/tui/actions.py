"""What the keys and commands do on any screen: quit, cancel, signals, facts, keys, the palette
(mixed into the app).

Every way out (``q``, Ctrl+Q, Ctrl+C, Textual's own quit, SIGTERM/SIGHUP/SIGINT/SIGQUIT) goes
through :meth:`AppActions._finish`, which records the fix on the screen stack, if any, for
:func:`~.app.run_tui` to print after the terminal is restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from ..exitcodes import Exit
from ..signals import HANDLED, exit_code

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import App

    from ..signals import Watchdog
    from .outcome import Outcome

    _Base = App[Any]
else:
    _Base = object


class AppActions(_Base):
    """Methods of :class:`~.app.WizardApp` behind its keys, its commands and the signals."""

    if TYPE_CHECKING:  # provided by the app
        outcome: Outcome
        watchdog: Watchdog | None

        def t(self, key: str, **fmt: object) -> str: ...
        def keep(self, finished: bool = False) -> None: ...
        def copy_text(self, text: str, on_tmux: Callable[[bool], None] | None = None) -> str: ...

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
        if action == "submit_box":  # only a one-line box: elsewhere Ctrl+S is the screen's own (the paste boxes)
            from textual.widgets import Input

            return isinstance(self.focused, Input)
        facts = sys.modules.get(f"{__package__}.screens.facts")
        return not (action == "facts" and facts is not None and isinstance(self.screen, facts.FactsScreen))

