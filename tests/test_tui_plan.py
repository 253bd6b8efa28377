"""The plan screen from a capacity leaf (``p``): it opens on the leaf's facts and re-plans as settings change.

The fixture leaf ``sampler-warmup`` names Qwen/Qwen3-32B on vLLM 0.11.0, and the stand-in machine
an H200 (150,754,820,096 bytes); the arithmetic is the real planner's.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, settle, until
from snapshot_apps.stand_ins import make_app
from textual.widgets import Input, Static

from oomwizard.plan.planner import plan
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.plan import PlanScreen, bar, inputs_from_facts

SIZE = (80, 24)


@run_async
async def test_p_opens_the_plan_and_the_verdict_follows_the_context_length() -> None:
    app = make_app(logs=[__file__])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "a")
        leaf = app.screen
        assert isinstance(leaf, LeafScreen)
        await press(pilot, "p")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        verdict = screen.query_one("#plan-verdict", Static)
        assert str(verdict.render()).startswith("vLLM starts")
        expected = plan(screen.inputs.but(max_model_len=40960), model=screen.model)
        assert f"{expected.value('kv_tokens'):,} tokens" in str(verdict.render())
        box = screen.query_one("#plan-util", Input)
        box.value = "0.3"  # 0.3 x 140.4 GiB cannot hold Qwen3-32B's 61 GiB of weights and a 40K request
        await until(pilot, lambda: not str(verdict.render()).startswith("vLLM starts"), "the verdict redrawn")
        assert str(verdict.render()).startswith("vLLM does not start")
        assert len(str(screen.query_one("#plan-bar", Static).render())) == 56
        await press(pilot, "escape")
        assert isinstance(app.screen, LeafScreen)


def test_bar_and_inputs_from_facts() -> None:
    from oomwizard.facts.model import Fact, FactSet

    facts = FactSet.of([Fact("model", "meta-llama/Llama-3.1-8B-Instruct", "t"),
                        Fact("gpu_mem_total_bytes", 80 << 30, "t"), Fact("vllm_version", "0.21.0", "t")])
    inp = inputs_from_facts(facts)
    p = plan(inp)
    cells = bar(p)
    assert len(cells) == 56 and cells.startswith("W") and "K" in cells
    assert cells.count("W") == round(56 * p.value("weights_bytes_per_gpu") / (80 << 30))
    assert inputs_from_facts(FactSet.of([Fact("model", "x", "t")])) is None  # no GPU size: no plan screen
