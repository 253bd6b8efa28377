"""Browse, glossary, memory and tour screens driven with the keyboard, on the real knowledge base.

The machine is a stand-in (no GPU); the scenarios, leaves, glossary and the diagnosis that a pasted
line goes through are the real ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, screen_text, settle, until
from snapshot_apps.stand_ins import StandIns, no_gpu_machine
from textual.widgets import Input, OptionList

from oomwizard.engine import Ask
from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb
from oomwizard.onboard.browse import search
from oomwizard.onboard.data import get_onboarding
from oomwizard.tui.onboard_app import OnboardApp
from oomwizard.tui.screens.browse import BrowsedLeafScreen, BrowseScreen, GlossaryScreen
from oomwizard.tui.screens.memory import MemoryScreen
from oomwizard.tui.screens.question import QuestionScreen
from oomwizard.tui.screens.tour import TourScreen
from oomwizard.tui.screens.welcome import WelcomeScreen

SIZE = (100, 30)
WARMUP = "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests."
LOCKED = ("AssertionError: Workspace is locked but allocation from 'fused_moe.py:812:apply' requires 24.00 MB, "
          "current size is 16.00 MB. Workspace growth is not allowed after locking.")


def make(first: str, lang: str = "en", query: str = "") -> OnboardApp:
    si = StandIns(machine=no_gpu_machine())
    return OnboardApp(LaunchOptions(lang=lang), first, query, kb=get_kb(), sources=si.sources(), environ={})


def listed(app: OnboardApp) -> list[str]:
    ol = app.screen.query_one("#browse-list", OptionList)
    return [str(ol.get_option_at_index(i).id) for i in range(ol.option_count)]


async def type_filter(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    screen = pilot.app.screen
    box = screen.query_one("#browse-filter", Input)
    box.value = text
    wanted = [e.id for e in search(screen.entries, text, screen.ob).entries]
    await until(pilot, lambda: listed(pilot.app) == wanted, f"the list filtered by {text!r}")


@run_async
async def test_browse_lists_every_scenario_and_filters_as_you_type() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        assert sorted(listed(app)) == sorted(get_kb().scenarios)
        await press(pilot, "-", "-", "e", "n", "a", "b", "l", "e", "-", "l", "o", "r", "a")
        assert listed(app) == ["lora"]
        assert "--enable-lora" in app.screen.query_one(Input).value


@run_async
async def test_browse_filters_by_gpu_generation_and_variable() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_filter(pilot, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
        hits = listed(app)
        assert "cudagraph-capture" in hits and "host-memory" not in hits
        await type_filter(pilot, "blackwell")
        assert listed(app), "a GPU generation finds the scenarios whose leaves name its GPUs"
        assert len(listed(app)) < len(get_kb().scenarios)


@run_async
async def test_pasting_an_error_line_lands_on_its_scenario_through_the_diagnosis() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_filter(pilot, LOCKED)
        assert listed(app)[0] == "workspace-locked"
        text = screen_text(app)
        assert "matched by the log diagnosis" in text
        assert "Workspace is locked but allocation" in text  # the exact message, in the detail pane


@run_async
async def test_enter_opens_the_leaf_with_generic_commands_and_back_returns() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_filter(pilot, WARMUP)
        await press(pilot, "enter", "enter")
        assert isinstance(app.screen, BrowsedLeafScreen)
        assert app.screen.done.leaf.id == "sampler-warmup"
        assert app.screen.done.facts.to_json() == {}
        await press(pilot, "escape")
        assert isinstance(app.screen, BrowseScreen)


@run_async
async def test_w_starts_the_wizard_from_the_scenario() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_filter(pilot, LOCKED)
        await press(pilot, "enter", "w")
        await settle(pilot)
        assert isinstance(app.screen, QuestionScreen)
        assert app.session.facts.value("diagnosis") == "workspace-locked"
        assert isinstance(app.session.current(), Ask)


@run_async
async def test_glossary_key_opens_the_terms_of_the_question_on_screen() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "escape")
        assert isinstance(app.screen, WelcomeScreen)
        app.open_questions()
        await settle(pilot)
        step = app.session.current()
        assert isinstance(step, Ask)
        await press(pilot, "g")
        assert isinstance(app.screen, GlossaryScreen)
        ob = get_onboarding()
        art = app.kb.article("questions", step.question.id, "en")
        expected = ob.terms_in(step.question.text("en") + "\n" + (art.body if art else ""), "en")
        assert expected, "the first question's article names glossary terms"
        assert [t.id for t in app.screen.shown] == [t.id for t in expected]


@run_async
async def test_glossary_in_chinese_filters() -> None:
    app = make("glossary", lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, GlossaryScreen)
        assert len(app.screen.shown) == len(get_onboarding().terms)
        app.screen.query_one("#glossary-filter", Input).value = "碎片"
        await until(pilot, lambda: "碎片" in screen_text(app), "the glossary filtered")
        assert [t.id for t in app.screen.shown][:1] == ["fragmentation"] or "fragmentation" in [t.id for t in app.screen.shown]
        assert "碎片" in screen_text(app)


@run_async
async def test_memory_screen_marks_the_failing_step() -> None:
    app = make("browse")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_filter(pilot, WARMUP)
        await press(pilot, "enter", "m")
        assert isinstance(app.screen, MemoryScreen)
        marked = [line for line in screen_text(app).splitlines() if "▶" in line]
        assert len(marked) == 1 and "Sampler warm-up" in marked[0]


@run_async
async def test_tour_walks_its_steps_and_can_be_skipped() -> None:
    app = make("tour")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TourScreen)
        pages = app.screen.pages
        assert 5 <= len(pages) <= 8
        assert "Step 1 of" in screen_text(app)
        await press(pilot, "enter")
        assert app.screen.index == 1 and pages[1].title in screen_text(app)
        await press(pilot, "left")
        assert app.screen.index == 0
        await press(pilot, "s")
        assert isinstance(app.screen, WelcomeScreen)


@run_async
async def test_welcome_offers_browse_and_tour() -> None:
    si = StandIns(machine=no_gpu_machine())
    from oomwizard.tui.app import WizardApp

    app = WizardApp(LaunchOptions(), kb=get_kb(), sources=si.sources(), environ={})
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        ids = [str(o.id) for o in app.screen.query_one("#actions", OptionList)._options]
        assert "browse" in ids and "tour" in ids
        ol = app.screen.query_one("#actions", OptionList)
        ol.highlighted = ids.index("browse")
        ol.focus()
        await press(pilot, "enter")
        assert isinstance(app.screen, BrowseScreen)


@run_async
async def test_memory_screen_draws_the_budget_of_the_log_read() -> None:
    from oomwizard.frontend.options import DEMO_LOG

    si = StandIns(machine=no_gpu_machine())
    from oomwizard.logs.diagnose import diagnose_paths

    si.diagnosis = diagnose_paths([str(DEMO_LOG)])
    app = OnboardApp(LaunchOptions(logs=[str(DEMO_LOG)]), "browse", "", kb=get_kb(), sources=si.sources(), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(MemoryScreen())
        await settle(pilot)
        from textual.widgets import Static

        bar = str(app.screen.query_one("#memory-budget", Static).render())
        weights = si.diagnosis.facts.value("weights_gib")
        assert f"weights {weights:.2f} GiB" in bar
        assert f"KV cache {si.diagnosis.facts.value('kv_cache_gib'):.2f} GiB" in bar
        marked = [line for line in screen_text(app).splitlines() if "▶" in line]
        assert marked and "Sampler warm-up" in marked[0]  # the log's failure phase


@run_async
async def test_browse_at_80x24_shows_the_step_and_the_exact_message() -> None:
    app = make("browse", lang="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_filter(pilot, "max_num_seqs (512) exceeds available Mamba cache blocks (130)")
        text = screen_text(app)
        assert listed(app)[0] == "mamba-cache-blocks"
        assert "由日志诊断匹配" in text
        assert "确定并分配 KV cache" in text  # the step it fails at, in Chinese
        from textual.widgets import Static

        detail = str(app.screen.query_one("#browse-detail", Static).render())
        assert "max_num_seqs ({max_num_reqs}) exceeds available Mamba cache blocks ({num_blocks})" in detail
        assert "vLLM >=0.20.0" in detail
