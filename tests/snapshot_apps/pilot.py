"""Helpers for driving the wizard with Textual's Pilot in plain (non-async) pytest tests."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(fn: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """Run an async test in its own event loop (no asyncio plugin needed); fixtures still apply."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def screen_text(app: Any) -> str:
    """Everything visible on the current screen, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def settle(pilot: Any) -> None:
    """Let background workers (detection, log reading) finish and the screen catch up."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def press(pilot: Any, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()
