"""Every known fact with its value and where it came from; the operator can correct any of them.

A corrected value is checked with :func:`~oomwizard.facts.catalog.coerce` (a version must be a
version, a size a size) and then beats the log and the machine. Opened from the welcome screen's
"detect this machine" it also shows how detection is going.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.coordinate import Coordinate
from textual.suggester import SuggestFromList
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import CellDoesNotExist

from ...facts.catalog import CATALOG, FactValueError
from ...facts.model import json_value
from ...frontend.inputs import colon, fact_title, format_value, machine_summary
from ...text.output import clean_text
from ..messages import FactsChanged, MachineDetected
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen


def _flat(text: str) -> str:
    return " ".join(clean_text(text).split())


class FactsScreen(WizardScreen):
    STYLES = "facts.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b,escape", "close", "tui.back", id="facts.back"),
        Binding("n", "new_fact", "tui.facts.add", id="facts.add"),
        Binding("r", "redetect", "tui.machine.redetect", id="facts.redetect"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._editing: str | None = None
        self._asking_name = False

    def compose(self) -> ComposeResult:
        yield TitleBar(self.t("tui.facts.title"))
        yield Static(id="facts-machine")
        yield DataTable(id="facts-table", cursor_type="row", zebra_stripes=False)
        yield Static(id="fact-detail")
        with Vertical(id="fact-editor"):
            yield Static(id="editor-label")
            yield Input(id="editor-input")
            yield Static(id="editor-error")
        yield Static(Content(self.t("tui.facts.help")), id="facts-help")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self.query_one("#fact-editor").display = False
        self._columns()
        self.query_one("#facts-table", DataTable).focus()

    def on_resize(self) -> None:
        if self.ready:
            self._columns()

    def _columns(self) -> None:
        self.facts_changed()

    def _fit_columns(self, table: DataTable[Text], rows: list[tuple[str, str, str]]) -> None:
        """Column widths that make the table shortest: every cell shown whole, a longer one wrapped
        onto more lines of its row (nothing cut, nothing scrolling sideways), the widths chosen
        among the cells' own widths so the fewest lines are spent on wrapping."""
        width = max(40, self.size.width or self.app.size.width) - 7  # borders, cell padding, scrollbar
        heads = (self.t("tui.facts.name"), self.t("tui.facts.value"), self.t("tui.facts.source"))
        cells = [tuple(cell_len(c) for c in r) for r in rows]
        name_w, value_w = _shortest(cells, [cell_len(h) for h in heads], width)
        table.clear(columns=True)
        for key, head, w in zip(("name", "value", "source"), heads, (name_w, value_w, width - name_w - value_w),
                                strict=True):
            table.add_column(head, key=key, width=w)

    def on_machine_detected(self, _: MachineDetected) -> None:
        self.facts_changed()

    def on_facts_changed(self, _: FactsChanged) -> None:
        self.facts_changed()

    def facts_changed(self) -> None:
        if not self.ready:
            return
        w = self.wizard
        m = w.machine
        line: Content
        if m.status == "running":
            line = Content.assemble(
                (f"{self.t('tui.machine.label')}{colon(self.wizard.lang)}", "bold"),
                "… " + self.t("tui.machine.detecting"),
            )
        elif m.status == "failed":
            line = Content.assemble(
                (f"{self.t('tui.machine.label')}{colon(self.wizard.lang)}", "bold"),
                self.t("tui.machine.failed", error=m.error or "?"),
            )
        elif m.result is not None:
            text = machine_summary(m.result, w.lang)
            warn = "".join(f"\n  ! {_flat(x)}" for x in m.result.remarks(w.lang))
            line = Content.assemble((f"{self.t('tui.machine.label')}{colon(self.wizard.lang)}", "bold"), text, warn)
        else:
            line = Content("")
        self.query_one("#facts-machine", Static).update(line)
        table = self.query_one("#facts-table", DataTable)
        current = None
        if table.row_count and table.cursor_row is not None:
            try:
                current = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
            except CellDoesNotExist:
                current = None
        facts = sorted(w.facts, key=lambda f: list(CATALOG).index(f.name) if f.name in CATALOG else 999)
        rows: list[tuple[str, str, str]] = []
        for f in facts:
            source = _flat(f.source)
            others = [a for a in w.facts.alternatives(f.name) if json_value(a.value) != json_value(f.value)]
            if others:
                alt = ", ".join(
                    f"{_flat(format_value(a.name, a.value, w.lang))} ({_flat(a.source)})" for a in others[:2]
                )
                source += "  " + self.t("tui.facts.other", others=alt)
            rows.append((fact_title(f.name, w.lang), _flat(format_value(f.name, f.value, w.lang)), source))
        self._fit_columns(table, rows)
        for f, (name, value, source) in zip(facts, rows, strict=True):
            table.add_row(Text(name, overflow="fold"), Text(value, style="bold", overflow="fold"),
                          Text(source, overflow="fold"), key=f.name, height=None)
        if not facts:
            table.add_row(Text(self.t("tui.facts.none")), Text(""), Text(""), key="__none__")
        if current is not None and current in w.facts:
            table.move_cursor(row=table.get_row_index(current))
        self._show_detail(current if current in w.facts else (facts[0].name if facts else None))

    @on(DataTable.RowHighlighted, "#facts-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.row_key.value)

    def _show_detail(self, name: str | None) -> None:
        """The highlighted fact in full, wrapped: the table's columns cut long names, values and sources."""
        w = self.wizard
        fact = w.facts.get(name) if name else None
        box = self.query_one("#fact-detail", Static)
        if fact is None:
            box.update("")
            return
        parts: list[str | tuple[str, str]] = [
            (fact_title(fact.name, w.lang), "bold"), f" ({fact.name}) = ",
            (_flat(format_value(fact.name, fact.value, w.lang)), "bold"), "\n",
            (f"{self.t('tui.facts.source')}{colon(w.lang)}", "dim"), _flat(fact.source),
        ]
        others = [a for a in w.facts.alternatives(fact.name) if json_value(a.value) != json_value(fact.value)]
        for a in others:
            parts += ["\n", (f"{self.t('tui.facts.other', others='')}", "dim"),
                      f"{_flat(format_value(a.name, a.value, w.lang))} ({_flat(a.source)})"]
        box.update(Content.assemble(*parts))

    # --- editing -----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#facts-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        name = event.row_key.value
        if name and name in CATALOG:
            self._edit(name)

    def _edit(self, name: str) -> None:
        w = self.wizard
        spec = CATALOG[name]
        self._editing = name
        self._asking_name = False
        self.query_one("#fact-editor").display = True
        self.query_one("#editor-label", Static).update(
            Content(
                self.t(
                    "tui.facts.edit",
                    title=spec.title(w.lang),
                    name=name,
                    type=spec.type + (f": {', '.join(spec.values)}" if spec.values else ""),
                )
            )
        )
        box = self.query_one("#editor-input", Input)
        fact = w.facts.get(name)
        box.suggester = SuggestFromList(list(spec.values)) if spec.values else None
        box.value = "" if fact is None else _flat(str(json_value(fact.value)))
        self.query_one("#editor-error", Static).update("")
        box.focus()

    def action_new_fact(self) -> None:
        self._editing = None
        self._asking_name = True
        self.query_one("#fact-editor").display = True
        self.query_one("#editor-label", Static).update(Content(self.t("tui.facts.new_name")))
        box = self.query_one("#editor-input", Input)
        box.suggester = SuggestFromList(list(CATALOG), case_sensitive=False)
        box.value = ""
        self.query_one("#editor-error", Static).update("")
        box.focus()

    @on(Input.Submitted, "#editor-input")
    def _submitted(self, event: Input.Submitted) -> None:
        error = self.query_one("#editor-error", Static)
        raw = event.value.strip()
        if self._asking_name:
            starts = [n for n in CATALOG if n.startswith(raw)] if raw else []
            if raw not in CATALOG and len(starts) == 1:
                raw = starts[0]  # what the completion offered
            if raw not in CATALOG:
                error.update(Content(self.t("tui.facts.unknown_name", name=_flat(raw))))
                return
            self._edit(raw)
            return
        name = self._editing
        if name is None:
            return
        try:
            fact = self.wizard.override_fact(name, raw)
        except FactValueError as e:
            error.update(Content(_flat(e.text(self.wizard.lang))))
            return
        self.notify(
            self.t("tui.facts.set", name=name, value=_flat(format_value(name, fact.value, self.wizard.lang))),
            markup=False,
        )
        self._close_editor()
        table = self.query_one("#facts-table", DataTable)
        table.move_cursor(row=table.get_row_index(name))

    def _close_editor(self) -> None:
        self._editing = None
        self._asking_name = False
        self.query_one("#fact-editor").display = False
        self.query_one("#facts-table", DataTable).focus()

    def action_close(self) -> None:
        if self.query_one("#fact-editor").display:
            self._close_editor()
            return
        self.app.pop_screen()

    def action_redetect(self) -> None:
        self.wizard.start_machine()


def _shortest(cells: list[tuple[int, ...]], heads: list[int], width: int) -> tuple[int, int]:
    """(name, value) widths, from the cells' own widths, for which the rows take the fewest lines
    (a cell of n cells in a column of w takes ceil(n / w) lines; ties: the wider source)."""
    least = [max(8, h) for h in heads]

    def options(i: int) -> list[int]:
        own = {n for c in cells for n in (c[i],) if least[i] <= n <= width // 2}
        return sorted(own | {least[i]})

    best: tuple[int, int, int, int] | None = None
    for name_w in options(0):
        for value_w in options(1):
            source_w = width - name_w - value_w
            if source_w < least[2]:
                continue
            lines = sum(max(-(-n // name_w), -(-v // value_w), -(-src // source_w), 1) for n, v, src in cells)
            key = (lines, -source_w, name_w, value_w)
            if best is None or key < best:
                best = key
    if best is None:  # too narrow for all three: an even split
        third = max(1, width // 3)
        return third, third
    return best[2], best[3]
