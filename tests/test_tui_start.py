"""The wizard's first frame is drawn before the knowledge base loads and before detection starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import run_async, screen_text, settle
from snapshot_apps.stand_ins import StandIns

from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb
from oomwizard.kb.titles import scenario_titles
from oomwizard.tui.app import WizardApp
from oomwizard.tui.screens.welcome import WelcomeScreen


@run_async
async def test_the_welcome_screen_is_drawn_before_the_knowledge_base_and_detection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[bool, bool, bool, str]] = []
    after = WizardApp._after_first_frame

    def spy(self: WizardApp) -> None:
        seen.append((isinstance(self.screen, WelcomeScreen), "Open a log file" in screen_text(self),
                     self._kb_loaded is None, self.machine.status))
        after(self)

    monkeypatch.setattr(WizardApp, "_after_first_frame", spy)
    app = WizardApp(LaunchOptions(), sources=StandIns().sources(), environ={})  # the real knowledge base
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert seen == [(True, True, True, "idle")]
        assert app._kb_loaded is get_kb() and app.machine.status == "done"


def test_scenario_titles_read_alone_match_the_knowledge_base() -> None:
    titles = scenario_titles()
    kb = get_kb()
    assert set(titles) == set(kb.scenarios) and titles
    for sid, (title, summary) in titles.items():
        assert (title, summary) == (kb.scenarios[sid].title, kb.scenarios[sid].summary)
