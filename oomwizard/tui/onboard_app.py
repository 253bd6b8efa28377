"""``oomwizard browse`` / ``tour`` on a terminal: the wizard's app, opened on the onboarding screen.

The welcome screen stays underneath, so leaving browse or the tour lands where ``oomwizard`` starts
and every path of the wizard (a leaf, the questions, the demo) works as usual from there.
"""

from __future__ import annotations

import sys
from typing import Any

from textual.screen import Screen

from ..exitcodes import Exit
from ..frontend.options import LaunchOptions
from ..frontend.problems import print_kb_broken
from . import cjk
from .app import WizardApp, print_outcome


class OnboardApp(WizardApp):
    def __init__(self, opts: LaunchOptions, first: str, query: str = "", **kwargs: object) -> None:
        super().__init__(opts, **kwargs)  # type: ignore[arg-type]
        cjk.enable()  # the first screen shows the knowledge base's text, before the wizard's first-frame work
        self.first = first
        self.query_text = query

    async def on_mount(self) -> None:
        # Textual runs WizardApp.on_mount (welcome screen, detection) after this one: go on top of it.
        self.call_after_refresh(lambda: self.push_screen(first_screen(self.first, self.query_text)))


def first_screen(name: str, query: str = "") -> Screen[Any]:
    if name == "tour":
        from .screens.tour import TourScreen

        return TourScreen()
    from .screens.browse import BrowseScreen, GlossaryScreen

    return GlossaryScreen(query=query) if name == "glossary" else BrowseScreen(query)


def run_onboard(first: str, lang: str, query: str) -> int:
    from ..kb.loader import get_kb
    from ..kb.yamlsrc import KBError

    try:
        kb = get_kb()
    except KBError as e:
        print_kb_broken(e.problems, lang, sys.stderr)
        return Exit.KB_INVALID
    app = OnboardApp(LaunchOptions(lang=lang), first, query, kb=kb)
    outcome = app.run()
    if outcome is None:
        return Exit.ERROR if app.return_code else Exit.OK
    print_outcome(outcome, lang, sys.stdout, sys.stderr)
    return int(outcome.code)
