"""The key bar at the bottom of every screen: Textual's footer, rebuilt only when what it shows changes.

Textual rebuilds its footer (every key a new widget, mounted and styled) after each change of the
screen's bindings: a focus, a screen on the stack. Several come before a screen's first frame
(the welcome screen's: the screen pushed, the menu focused, the bindings refreshed after it), and
each rebuild drew the same keys. This one rebuilds when the keys it would draw (their labels,
keys, enabled state, the palette key) differ from the ones it drew last.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer


class WizardFooter(Footer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._drawn_keys: object = None

    def shown_keys(self) -> object:
        """Everything ``Footer.compose`` reads to draw the keys, comparable from one call to the next."""
        active = self.screen.active_bindings
        shown = tuple((b, self.app.get_key_display(b), enabled, tooltip)
                      for _node, b, enabled, tooltip in active.values() if b.show)
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return (shown, palette and palette[1:], self.compact, self.show_command_palette, self.combine_groups,
                self.app.ENABLE_COMMAND_PALETTE)

    async def recompose(self) -> None:
        if self.is_attached:  # a footer whose screen has gone is left to Textual (it does nothing)
            keys = self.shown_keys()
            if keys == self._drawn_keys and self.children:
                return
            self._drawn_keys = keys
        await super().recompose()
