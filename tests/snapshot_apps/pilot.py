"""The one set of helpers for driving the wizard with Textual's Pilot in plain (non-async) pytest tests.

Tests wait for what they need, never for a time: :func:`until` lets the app run (its workers
finish, its message queues drain) until a condition holds, and fails with the screen's text after
a generous number of turns, so a slow, loaded machine only makes a test slower, not red.

``scripts/screenshots.py`` drives the app with these too (it puts ``tests/`` on its path): they
stay out of the installed package, which has no use for them.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from textual.pilot import Pilot

from oomwizard.engine import Ask
from oomwizard.tui.screens.diagnosis import DiagnosisScreen
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.question import QuestionScreen

T = TypeVar("T")
TURNS = 400
"""How many turns :func:`until` gives a condition: far more than any test needs, to end a hang."""
THREAD_TURNS = 3000
"""The same without waiting for workers: each turn is a short pause that lets a reading thread run."""


def run_async(fn: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """Run an async test in its own event loop (no asyncio plugin needed); fixtures still apply."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def screen_text(app: Any) -> str:
    """Everything visible on the current screen, as plain text.

    Textual has no public call for the composed screen as text (``export_screenshot`` gives SVG
    split into styled runs), so this one test helper reads the screen's compositor.
    """
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(pilot: Pilot[Any], cond: Callable[[], object], what: str = "", *, workers: bool = True) -> None:
    """Let the app run until ``cond()`` is true; each turn waits for the running workers (unless
    ``workers`` is false: a worker that only ends when the test acts, such as following a log)
    and for the app to be idle."""
    for _ in range(TURNS if workers else THREAD_TURNS):
        if cond():
            return
        if workers:
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
        else:
            await pilot.pause(0.01)  # a turn for the reading thread, not a deadline
    raise AssertionError(f"never happened: {what or cond}; on screen:\n{screen_text(pilot.app)}")


async def settle(pilot: Pilot[Any]) -> None:
    """Until no worker runs (one that finishes may start the next: a log, then detection) and the
    screens have handled what the workers posted."""
    await until(pilot, lambda: not any(w.is_running for w in pilot.app.workers), "workers done")
    await pilot.pause()
    await pilot.pause()


async def press(pilot: Pilot[Any], *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()


def question_id(app: Any) -> str | None:
    step = app.session.current()
    return step.question.id if isinstance(step, Ask) else None


async def to_questions(pilot: Pilot[Any]) -> None:
    """From start-up with a log: wait for the diagnosis, continue with the best match."""
    await settle(pilot)
    assert isinstance(pilot.app.screen, DiagnosisScreen), pilot.app.screen
    await press(pilot, "enter")
    assert isinstance(pilot.app.screen, QuestionScreen), pilot.app.screen


async def enter_until_leaf(pilot: Pilot[Any], limit: int = 30) -> LeafScreen:
    """Enter (the suggestion, or the highlighted choice) until the fix is on the screen."""
    await settle(pilot)
    for _ in range(limit):
        if isinstance(pilot.app.screen, LeafScreen):
            break
        await press(pilot, "enter")
        await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LeafScreen), screen
    return screen
