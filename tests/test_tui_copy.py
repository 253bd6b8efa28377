"""The leaf on the real demo: copy gives only the commands that apply, and the fix is on the first screen.

The demo's log says vLLM 0.11.0, where the fix that counts CUDA graphs in the budget (two spellings,
for >=0.18,<0.20 and >=0.20) does not exist: it must be listed last, dimmed, and copying it must
put nothing on the clipboard. On a version where it applies, copy gives that version's spelling
alone; with no version known, one spelling live and the other commented out.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import enter_until_leaf, press, run_async, screen_text, settle
from textual.widgets import Button

from oomwizard.engine import Done
from oomwizard.facts.model import Fact, FactSet
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions
from oomwizard.tui.app import WizardApp, print_outcome
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.widgets.commands import CommandBlock, FixCard

pytestmark = pytest.mark.skipif(not (DEMO_LOG.exists() and DEMO_MACHINE.exists()), reason="demo files not present")

VARIANTS = "count-cudagraphs-in-budget"
ENV = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"


def demo_app(version: str | None = None) -> WizardApp:
    overrides = FactSet()
    if version is not None:
        overrides.add(Fact("vllm_version", version, "answered", kind="answered"))
    return WizardApp(LaunchOptions(demo=True, overrides=overrides), environ={})


async def to_leaf(pilot) -> LeafScreen:  # type: ignore[no-untyped-def]
    screen = await enter_until_leaf(pilot)
    assert screen.done.leaf.id == "sampler-warmup", screen.done.leaf.id
    return screen


def card_of(screen: LeafScreen, fix_id: str) -> FixCard:
    return next(c for c in screen.query(FixCard) if c.rendered.fix.id == fix_id)


async def focus_and_copy(pilot, card: FixCard) -> None:  # type: ignore[no-untyped-def]
    for _ in range(40):  # Tab through the screen as an operator would
        if pilot.app.focused is card:
            break
        await press(pilot, "tab")
    assert pilot.app.focused is card
    await press(pilot, "c")


def live_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


@run_async
async def test_a_fix_that_does_not_apply_is_last_dimmed_and_copies_nothing() -> None:
    app = demo_app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await to_leaf(pilot)
        assert str(app.session.facts.value("vllm_version")) == "0.11.0"
        cards = list(screen.query(FixCard))
        card = card_of(screen, VARIANTS)
        assert card is cards[-1] and card.number == len(cards)
        assert all(c.rendered.available for c in cards[:-1])
        assert card.has_class("unavailable") and not card.query(Button)
        assert not card.query(CommandBlock) and "0.11.0" in card.not_available
        app._clipboard = "untouched"
        await focus_and_copy(pilot, card)
        assert app.clipboard == "untouched"
        assert any("Nothing copied" in str(n.message) for n in app._notifications)


@run_async
async def test_on_a_version_where_it_applies_copy_gives_that_spelling_alone() -> None:
    app = demo_app("0.19.0")
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await to_leaf(pilot)
        card = card_of(screen, VARIANTS)
        assert card.rendered.available and card.query(Button)
        await focus_and_copy(pilot, card)
        copied = app.clipboard
        assert f"export {ENV}=1" in copied
        assert "unset" not in copied and "# vLLM" not in copied
        assert sum(1 for ln in live_lines(copied) if ln.startswith("vllm serve")) == 1


@run_async
async def test_with_no_version_known_one_spelling_is_live_and_the_other_commented_out() -> None:
    app = demo_app()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await to_leaf(pilot)
        facts = screen.done.facts.copy()
        facts.remove("vllm_version")
        await app.push_screen(LeafScreen(Done(screen.done.leaf, screen.done.path, facts)))
        await settle(pilot)
        unknown = app.screen
        assert isinstance(unknown, LeafScreen)
        card = card_of(unknown, VARIANTS)
        assert card.rendered.available and len(card.rendered.variants) == 2
        await focus_and_copy(pilot, card)
        live = live_lines(app.clipboard)
        assert sum(1 for ln in live if ln.startswith("vllm serve")) == 1
        assert live[0] == f"unset {ENV}"  # the newest release's spelling
        assert f"# export {ENV}=1" in app.clipboard.splitlines()
        # on the card: the spelling Copy gives first and said so, the other marked and dimmed
        marks = [str(w.render()) for w in card.query(".fix-variant")]
        assert len(marks) == 2 and "Copy gives this spelling" in marks[0] and marks[1].startswith("for vLLM >=0.18,<0.20 instead")
        blocks = list(card.query(CommandBlock))
        assert not blocks[0].has_class("other") and blocks[1].has_class("other")


# --- 80x24: the fix on the first screen, the scrollback ending with it --------------------------


@run_async
async def test_at_80x24_the_first_screen_shows_a_command_and_how_to_verify() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await to_leaf(pilot)
        text = screen_text(app)
        assert "$ vllm serve meta-llama/" in text, text
        assert "oomwizard verify sampler-warmup NEW.LOG" in text, text
        assert "--gpu-memory-utilization 0.93" in text  # the top fix, filled in for this log
        # c with nothing but the body focused copies what "Run this" shows
        await press(pilot, "c")
        assert app.clipboard.startswith("vllm serve ") and "--gpu-memory-utilization 0.93" in app.clipboard


@run_async
async def test_keys_scroll_the_leaf() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await to_leaf(pilot)
        body = screen.query_one("#fix-scroll")
        assert body.scroll_y == 0
        await press(pilot, "down")
        assert body.scroll_y == 1
        await press(pilot, "pagedown")
        assert body.scroll_y > 5
        await press(pilot, "end")
        assert body.scroll_y == body.max_scroll_y > 0
        await press(pilot, "home")
        assert body.scroll_y == 0
        await press(pilot, "tab")  # a fix has the focus: the arrows still scroll
        assert isinstance(app.focused, FixCard)
        before = body.scroll_y
        await press(pilot, "end")
        assert body.scroll_y == body.max_scroll_y and body.scroll_y != before


@run_async
async def test_the_scrollback_ends_with_the_commands_and_verify() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await to_leaf(pilot)
        await press(pilot, "q")
    outcome = app.return_value
    assert outcome is not None and outcome.done is not None
    out = io.StringIO()
    print_outcome(outcome, "en", out, io.StringIO(), width=80)
    tail = out.getvalue().rstrip("\n").splitlines()[-6:]
    assert tail[-1] == "oomwizard verify sampler-warmup NEW.LOG"
    assert any(ln.startswith("vllm serve ") and "--gpu-memory-utilization 0.93" in ln for ln in tail), tail
    assert not any(ln.startswith("$") for ln in tail)


@pytest.mark.parametrize("lang", ["en", "zh"])
@run_async
async def test_the_closing_block_is_wrapped_by_terminal_cells(lang: str) -> None:
    """The "Run this" heading and the line before verify fit the terminal (two cells a Chinese
    character); only the commands keep their length, so they paste whole."""
    from oomwizard.report.runthis import run_this, run_this_text
    from oomwizard.text.cells import cell_len

    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await to_leaf(pilot)
        await press(pilot, "q")
    done = app.return_value.done
    for width in (60, 80):
        text = run_this_text(done.leaf, done.facts, lang, width=width)
        commands = run_this(done.leaf, done.facts, lang).commands.splitlines()
        prose = [ln for ln in text.splitlines() if ln not in commands and not ln.startswith("oomwizard verify")]
        assert prose and prose[0].startswith("== ")
        assert max(cell_len(ln) for ln in prose) <= width, prose
