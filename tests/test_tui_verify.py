"""Checking the next start's log from the fix screen (``v``), keyboard only, on the fixture knowledge base.

The fixture leaf ``sampler-warmup`` has one automatic check (the warm-up error must be absent) and
one for the operator; the logs below are written in vLLM 0.11's message formats, with the colour
codes and process prefixes real logs carry. The check itself is the real :func:`oomwizard.verify.verify`.
"""

from __future__ import annotations

import io
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, screen_text, settle
from snapshot_apps.stand_ins import WARMUP_LINE, fixture_kb, make_app
from textual.widgets import Input, Static, TabbedContent, TextArea

from oomwizard.exitcodes import Exit
from oomwizard.expr import Condition
from oomwizard.frontend.verdicts import check_path, looks_binary, verdicts
from oomwizard.i18n import Text
from oomwizard.kb.model import AutoCheck, Check
from oomwizard.tui.app import print_outcome
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.verify import VerifyScreen
from oomwizard.tui.widgets.checklist import ChecklistItem

SIZE = (80, 24)
LOG = __file__
CORE = "\x1b[1;36m(EngineCore_DP0 pid=50102)\x1b[0;0m"
API = "\x1b[1;36m(APIServer pid=50011)\x1b[0;0m"
GOOD_START = [
    f"{API} INFO 11-29 03:40:01 [api_server.py:1896] vLLM API server version 0.11.0",
    f"{CORE} INFO 11-29 03:41:10 [gpu_worker.py:298] Available KV cache memory: 58.10 GiB",
    f"{CORE} INFO 11-29 03:41:10 [kv_cache_utils.py:1087] GPU KV cache size: 1,268,960 tokens",
    f"{CORE} INFO 11-29 03:41:52 [core.py:210] init engine (profile, create kv cache, warmup model) took 71.84 seconds",
    f"{API} INFO 11-29 03:41:54 [api_server.py:1971] Starting vLLM API server 0 on http://0.0.0.0:8000",
    f"{API} INFO:     Application startup complete.",
]
FAILED_AGAIN = [*GOOD_START[:3], WARMUP_LINE.replace("1024", "512")]


def write(folder: Path, name: str, lines: list[str]) -> str:
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


async def to_leaf_checklist(pilot) -> LeafScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    await press(pilot, "enter", "a")  # diagnosis: continue; accept every suggestion
    leaf = pilot.app.screen
    assert isinstance(leaf, LeafScreen)
    return leaf


async def check(pilot, path: str, typed: bool = False) -> None:  # type: ignore[no-untyped-def]
    """v, the path (its file name typed key by key and completed, or all filled in), Enter, wait.

    Typed, the folder is filled in first: a temporary folder's path is ~90 keys, each a turn of the
    app, and completion works on the last part alone."""
    await press(pilot, "v")
    assert isinstance(pilot.app.screen, VerifyScreen)
    box = pilot.app.screen.query_one("#verify-path", Input)
    assert box.has_focus
    if typed:
        folder = path[: path.rindex("/") + 1]
        box.value = folder
        await press(pilot, "end", *path[len(folder):-4], "right")  # the file name is completed: → takes it
        assert box.value == path
    else:
        box.value = path
    await press(pilot, "enter")
    await settle(pilot)


def items(leaf: LeafScreen) -> list[ChecklistItem]:
    return list(leaf.query(ChecklistItem))


def summary_text(leaf: LeafScreen) -> str:
    """What was read, then the verdict on the whole fix."""
    return "\n".join(str(leaf.query_one(f"#{i}", Static).render()) for i in ("verify-summary", "verify-verdict"))


@run_async
async def test_a_good_start_ticks_the_automatic_item_and_leaves_the_manual_one(tmp_path: Path) -> None:
    log = write(tmp_path, "next.log", GOOD_START)
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        assert "press v" in str(leaf.query_one("#verify-hint", Static).render())  # the Fix tab says how
        await check(pilot, log, typed=True)
        assert isinstance(app.screen, LeafScreen)
        assert leaf.query_one(TabbedContent).active == "checklist"
        auto, manual = items(leaf)
        assert auto.checked and auto.verdict is not None and auto.verdict.status == "pass"
        assert not manual.checked and manual.verdict is not None and manual.verdict.status == "manual"
        text = summary_text(leaf)
        assert "Checked against next.log." in text
        assert "The server finished starting (next.log:4)." in text
        assert "Every automatic check passed" in text
        assert leaf.query_one("#verify-verdict").has_class("success")
        assert "[x] The new log shows" in screen_text(app)


@run_async
async def test_a_failed_start_unticks_the_item_and_shows_the_deciding_line(tmp_path: Path) -> None:
    log = write(tmp_path, "again.log", FAILED_AGAIN)
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await press(pilot, "2", "space")  # ticked by hand before the check
        auto = items(leaf)[0]
        assert auto.checked
        await check(pilot, log)
        assert not auto.checked
        assert auto.verdict is not None and auto.verdict.status == "fail"
        assert auto.verdict.where == "again.log:4"
        assert "warming up sampler with 512 dummy requests" in auto.verdict.line
        assert "\x1b" not in auto.verdict.line
        assert auto.has_class("-fail")
        text = screen_text(app)
        assert "[!] The new log shows" in text
        assert "FAILED — the log still shows it" in text
        assert "again.log:4" in text
        assert "did not work yet: see the items marked [!] below" in summary_text(leaf)
        assert leaf.query_one("#verify-verdict").has_class("error")


@run_async
async def test_a_log_that_stops_early_proves_nothing(tmp_path: Path) -> None:
    log = write(tmp_path, "early.log", GOOD_START[:3])
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await check(pilot, log)
        auto = items(leaf)[0]
        assert not auto.checked and auto.verdict is not None and auto.verdict.status == "unproven"
        assert "[?] The new log shows" in screen_text(app)
        text = summary_text(leaf)
        assert "ends before the server was ready" in text and "does not prove the fix yet" in text


@run_async
async def test_a_path_that_does_not_exist_is_explained_and_nothing_is_lost(tmp_path: Path) -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await press(pilot, "v")
        await press(pilot, "enter")
        assert "Give a path or paste" in str(app.screen.query_one("#verify-message", Static).render())
        await press(pilot, *list("/nonexistent/gone.log"), "enter")
        assert isinstance(app.screen, VerifyScreen)
        message = app.screen.query_one("#verify-message", Static)
        assert "No such file" in str(message.render()) and message.has_class("error")
        app.screen.query_one("#verify-path", Input).value = str(tmp_path)
        await press(pilot, "enter")
        assert "is a folder" in str(app.screen.query_one("#verify-message", Static).render())
        await press(pilot, "escape")
        assert app.screen is leaf and leaf.checked_log is None
        assert all(i.verdict is None for i in items(leaf))


@run_async
async def test_a_binary_file_is_called_so(tmp_path: Path) -> None:
    blob = tmp_path / "core.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    assert looks_binary(str(blob))
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await check(pilot, str(blob))
        assert "core.bin looks like a binary file" in summary_text(leaf)
        assert items(leaf)[0].verdict is not None and items(leaf)[0].verdict.status == "unproven"


@run_async
async def test_a_pasted_log_is_checked_and_no_temporary_path_is_left_behind() -> None:
    before = set(Path(tempfile.gettempdir()).glob("oomwizard-*"))
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await press(pilot, "v", "tab")
        area = app.screen.query_one("#verify-paste", TextArea)
        assert area.has_focus
        area.insert("\n".join(FAILED_AGAIN))
        await press(pilot, "ctrl+s")
        await settle(pilot)
        assert app.screen is leaf
        checked = leaf.checked_log
        assert checked is not None and checked.what == "the pasted log"
        auto = items(leaf)[0]
        assert auto.verdict is not None and auto.verdict.where == "the pasted log:4"
        assert checked.verification.inputs == ["the pasted log"]
    assert set(Path(tempfile.gettempdir()).glob("oomwizard-*")) == before


@run_async
async def test_the_check_survives_a_redraw_and_is_printed_after_the_fix_on_quit(tmp_path: Path) -> None:
    log = write(tmp_path, "next.log", GOOD_START)
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await check(pilot, log)
        app.override_fact("sampler_dummy_requests", "256")  # a correction redraws the leaf
        await settle(pilot)
        assert items(leaf)[0].checked and items(leaf)[0].verdict is not None
        assert "Every automatic check passed" in summary_text(leaf)
        await press(pilot, "q")
    outcome = app.return_value
    assert outcome is not None and outcome.verification is not None
    out, err = io.StringIO(), io.StringIO()
    print_outcome(outcome, "en", out, err, width=80)
    printed = out.getvalue()
    fix, checked = printed.split("== Checking the fix")
    assert "--max-num-seqs 128" in fix
    assert "[x] The new log shows" in checked and "Every automatic check passed" in checked


@run_async
async def test_chinese_verdicts(tmp_path: Path) -> None:
    log = write(tmp_path, "again.log", FAILED_AGAIN)
    app = make_app(logs=[LOG], lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await check(pilot, log)
        text = screen_text(app)
        assert "未通过 — 日志中仍然出现" in text and "again.log:4" in text
        assert "修复尚未生效：见下面标有 [!] 的项目。" in summary_text(leaf)


@run_async
async def test_quit_from_a_screen_above_the_fix_still_prints_it() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_leaf_checklist(pilot)
        await press(pilot, "f", "q")  # the facts screen, opened from the fix
    assert app.return_value is not None and app.return_value.done is not None
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_leaf_checklist(pilot)
        await press(pilot, "s")  # the save dialog: q types into the file name, Ctrl+Q quits
        await press(pilot, "ctrl+q")
    assert app.return_value is not None and app.return_value.code == Exit.OK
    assert app.return_value.done is not None and app.return_value.done.leaf.id == "sampler-warmup"
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_leaf_checklist(pilot)
        await press(pilot, "v", "ctrl+c")
    assert app.return_value is not None and app.return_value.code == Exit.CANCELLED
    assert app.return_value.done is not None


@run_async
async def test_a_checklist_with_nothing_automatic_does_not_offer_the_check() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "down", "enter", "a")  # the second scenario: max_model_len does not fit
        leaf = app.screen
        assert isinstance(leaf, LeafScreen) and leaf.done.leaf.id == "kv-cache-too-small"
        assert "Check new log" not in screen_text(app).splitlines()[-1]
        assert not leaf.query("#verify-button") and not leaf.query("#verify-hint")
        await press(pilot, "v")
        assert app.screen is leaf


def test_every_reason_verify_gives_reads_in_chinese(tmp_path: Path) -> None:
    t = Text("t", "t")
    checks = (
        Check(t, AutoCheck(log_absent="warming up sampler")),  # the log still shows it
        Check(t, AutoCheck(log_present="Application startup complete")),  # not in the log
        Check(t, AutoCheck(log_absent="Traceback")),  # the log ends before the server was ready
        Check(t, AutoCheck(fact=Condition.parse("weights_gib > 0"))),  # the log does not say
        Check(t, AutoCheck(fact=Condition.parse("kv_cache_tokens > 100000000"))),  # not true in the new log
    )
    leaf = replace(fixture_kb().leaves["sampler-warmup"], checks=checks)
    log = write(tmp_path, "again.log", FAILED_AGAIN)
    found = verdicts(check_path(leaf, log, "zh").verification, "zh")
    assert [v.status for v in found] == ["fail", "unproven", "unproven", "unknown", "fail"]
    details = [v.note.split(" — ", 1)[1] for v in found]
    assert all(not d[:1].isascii() for d in details), details


@run_async
async def test_a_file_name_with_escape_codes_is_shown_harmlessly(tmp_path: Path) -> None:
    log = write(tmp_path, "next\x1b]52;c;cm0gLXJmIH4=\x07.log", FAILED_AGAIN)
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        leaf = await to_leaf_checklist(pilot)
        await check(pilot, log)
        auto = items(leaf)[0]
        assert auto.verdict is not None and auto.verdict.status == "fail"
        shown = auto.verdict.where + summary_text(leaf) + screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown
        assert "cm0gLXJmIH4=" not in shown
