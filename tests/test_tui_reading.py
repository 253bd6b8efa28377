"""The wizard while a log is read: a progress bar for big inputs, and watching a log as it grows."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from logkit import LOGS
from snapshot_apps.pilot import run_async, screen_text, settle, until
from snapshot_apps.stand_ins import StandIns, fixture_kb
from textual.widgets import ProgressBar

from oomwizard.frontend.inputs import Sources, default_sources
from oomwizard.frontend.options import LaunchOptions
from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.tui.app import WizardApp
from oomwizard.tui.screens.diagnosis import DiagnosisScreen

SIZE = (80, 24)
RUNTIME = LOGS / "runtime_oom_0110_tp2.log"


def _note(app: WizardApp) -> str:
    if not isinstance(app.screen, DiagnosisScreen):
        return ""
    return str(app.screen.query_one("#loading-note").render())


async def _until(pilot, cond) -> None:  # type: ignore[no-untyped-def]
    """The reading (and following) runs while the test writes to the log: wait on it, not on workers."""
    await until(pilot, cond, workers=False)


@run_async
async def test_a_long_read_shows_bytes_and_a_bar_then_the_diagnosis() -> None:
    si = StandIns()
    release = threading.Event()
    fixed = si.sources()

    def slow(paths: list[str], progress) -> object:  # type: ignore[no-untyped-def]
        progress(512 << 20, 1 << 30)
        time.sleep(0.2)  # past the screen's update interval
        progress(768 << 20, 1 << 30)
        release.wait(20)
        return diagnose_paths([str(RUNTIME)])

    sources = Sources(slow, fixed.diagnose_text, fixed.detect_machine, fixed.replay_machine)
    app = WizardApp(LaunchOptions(logs=["big.log"]), kb=fixture_kb(), sources=sources, environ={})
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: isinstance(app.screen, DiagnosisScreen)
                     and app.screen.query_one("#loading-bar", ProgressBar).progress == 768 << 20)
        bar = app.screen.query_one("#loading-bar", ProgressBar)
        assert bar.display and bar.total == 1 << 30
        assert "768 / 1,024 MiB read" in screen_text(app)
        release.set()
        await _until(pilot, lambda: app.log_state.status == "done")
        await settle(pilot)
        assert not app.screen.query_one("#diag-loading").display
        assert "runtime" in screen_text(app).lower()


def _watching(path: Path) -> WizardApp:
    """The wizard on ``--follow --log PATH``: the real reader and follower, a stand-in machine."""
    real, fixed = default_sources(), StandIns().sources()
    sources = Sources(real.diagnose_paths, real.diagnose_text, fixed.detect_machine, fixed.replay_machine,
                      real.follow_path)
    return WizardApp(LaunchOptions(logs=[str(path)], follow=True), kb=fixture_kb(), sources=sources, environ={})


@run_async
async def test_watching_a_log_waits_for_the_crash_then_diagnoses(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log"
    data = RUNTIME.read_bytes()
    head = data.index(b"\n", 200) + 1
    p.write_bytes(data[:head])
    app = _watching(p)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "following " in _note(app) and "vllm.log" in _note(app))
        await asyncio.sleep(0.5)
        assert app.log_state.status == "reading"  # nothing failed yet: still watching
        with open(p, "ab") as fh:
            fh.write(data[head:])
        await _until(pilot, lambda: app.log_state.status == "done")
        diag = app.log_state.diagnosis
        assert diag is not None and diag.matches[0].scenario == "runtime-oom"
        assert [e.line for e in diag.matches[0].evidence] == [e.line for e in diagnose_paths([str(p)]).matches[0].evidence]


@run_async
async def test_quitting_while_watching_stops_the_reader(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log"
    p.write_bytes(b"INFO starting\n")
    earlier = set(threading.enumerate())  # another test's abandoned (stuck) reads may still be alive
    app = _watching(p)
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "following " in _note(app) and "vllm.log" in _note(app))
        readers = [t for t in threading.enumerate()
                   if t.name == "oomwizard-background" and t.is_alive() and t not in earlier]
        assert readers  # the follower, waiting for the log to grow
        app.exit()
    for _ in range(2000):  # turns for the reader to see the stop, not a deadline
        if not any(t.is_alive() for t in readers):
            break
        time.sleep(0.01)
    assert not any(t.is_alive() for t in readers)


@run_async
async def test_w_on_the_diagnosis_watches_the_log_it_read(tmp_path: Path) -> None:
    """After a diagnosis, ``w`` reads the same log again and waits for the next crash in it."""
    p = tmp_path / "vllm.log"
    data = RUNTIME.read_bytes()
    p.write_bytes(data)
    real, fixed = default_sources(), StandIns().sources()
    sources = Sources(real.diagnose_paths, real.diagnose_text, fixed.detect_machine, fixed.replay_machine,
                      real.follow_path)
    app = WizardApp(LaunchOptions(logs=[str(p)]), kb=fixture_kb(), sources=sources, environ={})
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.log_state.status == "done")
        # The state is done before the screen has handled the message that redraws it.
        await _until(pilot, lambda: "Watch log" in screen_text(app))
        first = app.log_state.diagnosis
        await pilot.press("w")
        await _until(pilot, lambda: "following" in _note(app))
        assert "already holds 1 error(s)" in _note(app)  # the crash it just diagnosed
        assert app.log_state.status == "reading"
        with open(p, "ab") as fh:
            fh.write(b"INFO restarting\n" + data)
        await _until(pilot, lambda: app.log_state.status == "done")
        again = app.log_state.diagnosis
        assert first is not None and again is not None and again is not first
        assert max(e.line for e in again.matches[0].evidence) > data.count(b"\n")  # the new crash


@run_async
async def test_no_watching_the_demo() -> None:
    app = WizardApp(LaunchOptions(demo=True), kb=fixture_kb(), sources=StandIns().sources(), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.log_state.status == "done")
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        assert "Watch log" not in screen_text(app)
