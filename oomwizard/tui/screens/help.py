"""“Why we ask”: the question's article from content/<lang>/questions/<id>.md, as Markdown, then
the key map of the question screen (``?`` and F1 are the key map on every other screen)."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Markdown, Static

from ...kb.model import Question
from ..widgets.footer import WizardFooter
from .base import WizardModal


class HelpScreen(WizardModal):
    STYLES = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f1", "close", "tui.back", id="help.close"),
    ]

    def __init__(self, question: Question, under: Screen[Any] | None = None) -> None:
        super().__init__()
        self.question = question
        self.under = under

    def compose(self) -> ComposeResult:
        w = self.wizard
        art = w.kb.article("questions", self.question.id, w.lang)
        with Vertical(id="help-box"):
            title = art.title if art and art.title else self.t("tui.help")
            yield Static(Content.assemble((f"{self.t('tui.help')} · ", "dim"), (title, "bold")), id="help-title")
            with VerticalScroll(id="help-scroll"):
                if not (art and art.title.strip() == self.question.text(w.lang).strip()):
                    yield Static(Content(self.question.text(w.lang)), id="help-question")
                if art is not None:
                    yield Markdown(art.body, id="help-body")
                else:
                    yield Static(Content(self.t("tui.help.none")), id="help-body")
                if self.under is not None:
                    from .keys import key_map

                    yield Static(key_map(self.under, w.lang), id="help-keys")
        yield WizardFooter()

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
