"""The key map: ``?`` and F1 on every screen (on a question, after "why we ask"), and the palette.

What the screen underneath can do right now comes from its own active bindings, so the map never
lists a key that does nothing there; the keys that work everywhere follow. The command palette
(Ctrl+P) offers the same actions by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ...i18n import UI, ui
from ..widgets.footer import WizardFooter
from .base import WizardModal

EVERYWHERE = ("tab", "arrows", "lists", "submit", "select", "palette", "keys", "quit")
"""Rows of the key map that hold on every screen (``tui.keys.<row>`` holds the key and its meaning)."""


def screen_keys(screen: Screen[object]) -> list[tuple[str, str, str, object]]:
    """(keys, description, action, node) for each action the screen can run now, in binding order."""
    app = screen.app
    lang = getattr(app, "lang", "en")
    ours = {ui(k, lang) for k in UI if k.startswith("tui.")}
    rows: dict[tuple[str, int], tuple[list[str], str, str, object]] = {}
    for active in screen.active_bindings.values():
        b = active.binding
        if not b.description or not active.enabled or b.system or b.action in ("keys", "command_palette", "cancel"):
            continue
        if b.description not in ours:
            continue  # Textual's own scrolling and focus keys: listed once, under "everywhere"
        slot = rows.setdefault((b.action, id(active.node)), ([], b.description, b.action, active.node))
        display = app.get_key_display(b)
        if display not in slot[0]:
            slot[0].append(display)
    return [(" ".join(keys), desc, action, node) for keys, desc, action, node in rows.values()]


def _grid(rows: list[tuple[str, str]]) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(ratio=1, overflow="fold")
    for keys, desc in rows:
        grid.add_row(keys, desc)
    return grid


def key_map(screen: Screen[object], lang: str) -> Group:
    """The map: this screen's keys, then the keys that work everywhere (hanging indents when wrapped)."""
    here = [(keys, desc) for keys, desc, _a, _n in screen_keys(screen)]
    everywhere = []
    for row in EVERYWHERE:
        keys, _, desc = ui(f"tui.keys.{row}", lang).partition("|")
        everywhere.append((keys, desc))
    return Group(
        RichText(ui("tui.keys.here", lang), style="bold underline"), _grid(here), RichText(""),
        RichText(ui("tui.keys.everywhere", lang), style="bold underline"), _grid(everywhere),
    )


class KeysScreen(WizardModal):
    STYLES = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,f1", "close", "tui.back", id="keys.close")]

    def __init__(self, under: Screen[object]) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Content.assemble((self.t("tui.keys.title"), "bold")), id="help-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(key_map(self.under, self.wizard.lang), id="keys-map")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()
        super().on_mount()

    def action_close(self) -> None:
        self.dismiss(None)


def palette_entries(screen: Screen[object]) -> Iterable[tuple[str, str, str, object]]:
    """(name, help, action, node) for the command palette: this screen's actions by name."""
    for keys, desc, action, node in screen_keys(screen):
        yield desc, keys, action, node
