"""SVG snapshots of the main screens at 80x24 and at 120x36 (``-m "not snapshot"`` skips them).

Update after an intended change with ``python -m pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the report (``snapshot_report.html``) before committing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, settle
from snapshot_apps.wizard_fixed import NEXT_START, build

pytestmark = pytest.mark.snapshot

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 36), id="120x36")]


def keys_then_settle(*keys: str):  # type: ignore[no-untyped-def]
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await press(pilot, *keys)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_welcome(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(with_log=False), terminal_size=size, run_before=keys_then_settle())


@pytest.mark.parametrize("size", SIZES)
def test_diagnosis(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle())


@pytest.mark.parametrize("size", SIZES)
def test_question_with_a_suggestion(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle("enter", "enter", "enter"))


@pytest.mark.parametrize("size", SIZES)
def test_version_question(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle("enter", "enter"))


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle("enter", "question_mark"))


@pytest.mark.parametrize("size", SIZES)
def test_leaf(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle("enter", "a"))


@pytest.mark.parametrize("size", SIZES)
def test_leaf_checklist(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=keys_then_settle("enter", "a", "2", "space"))


def check_next_start(*keys: str):  # type: ignore[no-untyped-def]
    """To the fix, then v and the log of a restart that failed again (the path is filled in, then Enter)."""

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await press(pilot, "enter", "a", *keys, "v")
        pilot.app.screen.query_one("#verify-path").value = NEXT_START
        await press(pilot, "enter")
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_leaf_checklist_checked_against_the_next_start(snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=size, run_before=check_next_start())


def test_leaf_checklist_checked_chinese(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(lang="zh"), terminal_size=(80, 24), run_before=check_next_start())


def test_verify_dialog(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=(80, 24), run_before=keys_then_settle("enter", "a", "v"))


def test_leaf_chinese(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(lang="zh"), terminal_size=(80, 24), run_before=keys_then_settle("enter", "a"))


def test_facts(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(build(), terminal_size=(80, 24), run_before=keys_then_settle("enter", "f"))


def test_welcome_without_a_gpu(snap_compare, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from oomwizard.tui.screens.welcome import WelcomeScreen

    monkeypatch.setattr(WelcomeScreen, "_demo_available", lambda self: True)
    assert snap_compare(build(with_log=False, gpu=False), terminal_size=(80, 24), run_before=keys_then_settle())
