"""The guided tour: the demo explained one step at a time, with the demo log's own numbers.

Enter or → goes on, ← back, ``s`` skips the tour; the last step offers to open the demo in the
wizard. The pages come from :func:`oomwizard.onboard.tour.tour_pages`.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ...onboard.data import get_onboarding
from ...onboard.texts import t as ot
from ...onboard.tour import TourPage, tour_pages
from ..widgets.footer import WizardFooter
from .base import TitleBar, WizardScreen


class TourScreen(WizardScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,right,space", "next", "onboard.next", id="tour.next"),
        Binding("left", "prev", "onboard.prev", id="tour.prev"),
        Binding("s,escape", "skip", "onboard.skip", id="tour.skip"),
        Binding("g", "glossary", "onboard.glossary", id="tour.glossary"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.pages: list[TourPage] = tour_pages(self.wizard.kb, get_onboarding(), self.wizard.lang)
        self.index = 0

    def compose(self) -> ComposeResult:
        yield TitleBar(ot("onboard.tour", self.wizard.lang), id="tour-title")
        with VerticalScroll(id="tour-scroll"):
            yield Static(id="tour-page")
        yield Static(Content(ot("onboard.tour_keys", self.wizard.lang)), id="tour-keys")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.ready = True
        self._draw()
        self.query_one("#tour-scroll").focus()

    def _draw(self) -> None:
        lang = self.wizard.lang
        page = self.pages[self.index]
        ob = get_onboarding()
        parts: list[object] = [
            (ot("onboard.tour_step", lang, n=self.index + 1, total=len(self.pages)), "dim"), "\n",
            (page.title, "bold"), "\n\n", page.body, "\n",
        ]
        if page.verify:
            parts += ["\n", (f"{ot('onboard.tour_verify', lang)}: ", "bold"), page.verify, "\n"]
        names = [ob.terms[i].name(lang) for i in page.terms if i in ob.terms]
        if names:
            parts += ["\n", (f"{ot('onboard.terms', lang)}: ", "bold"), ", ".join(names), ("  (g)", "dim")]
        self.query_one("#tour-page", Static).update(Content.assemble(*parts))  # type: ignore[arg-type]

    def action_next(self) -> None:
        if self.index + 1 < len(self.pages):
            self.index += 1
            self._draw()
        else:
            self.action_skip()

    def action_prev(self) -> None:
        if self.index > 0:
            self.index -= 1
            self._draw()

    def action_skip(self) -> None:
        self.app.pop_screen()

    def action_glossary(self) -> None:
        from .browse import GlossaryScreen

        ob = get_onboarding()
        self.app.push_screen(GlossaryScreen([ob.terms[i] for i in self.pages[self.index].terms if i in ob.terms]))
