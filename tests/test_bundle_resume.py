"""Resume: the walk is saved after every answer; a hang-up or a kill -9 loses at most the one being typed."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, settle

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))
from panes import Pane, needs_tmux

from oomwizard.bundle.resume import Keeper, resume_options
from oomwizard.bundle.state import MAX_ENTRIES, Store, Walk, log_key, state_dir
from oomwizard.frontend.inputs import default_sources
from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb

ROOT = Path(__file__).resolve().parent.parent
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "oomwizard"


def _saved(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("walk-*.json"))]


# --- the store ---------------------------------------------------------------------------------


def test_state_lives_under_xdg_state_home_or_local_state() -> None:
    assert state_dir({"XDG_STATE_HOME": "/x/state", "HOME": "/h"}) == Path("/x/state/oomwizard")
    assert state_dir({"HOME": "/h"}) == Path("/h/.local/state/oomwizard")
    assert state_dir({"XDG_STATE_HOME": "relative", "HOME": "/h"}) == Path("/h/.local/state/oomwizard")


def test_saving_is_private_and_leaves_no_temporary_file(state: Path) -> None:
    store = Store()
    path = store.save(Walk(key="k1", answers=[{"question": "q", "value": "v", "source": "answered"}]))
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in state.iterdir()] == ["walk-k1.json"]
    assert store.load("k1").answers[0]["value"] == "v"


def test_a_damaged_or_foreign_file_is_skipped_with_a_warning(state: Path) -> None:
    store = Store()
    store.save(Walk(key="good", screen="question"))
    (state / "walk-bad1.json").write_text('{"version": 1, "key": "bad1", "answers": [')
    (state / "walk-bad2.json").write_text(json.dumps({"version": 1, "key": "bad2", "answers": [{"question": 3}]}))
    (state / "walk-bad3.json").write_bytes(b"\xff\xfe")
    (state / "walk-bad4.json").write_text(json.dumps({"version": 1, "screen": "elsewhere"}))
    assert [w.key for w in store.walks()] == ["good"]
    assert len(store.warnings) == 4 and all("ignoring the saved walk" in w.en for w in store.warnings)


def _aged(store: Store, key: str, updated: float) -> None:
    store.save(Walk(key=key))
    data = json.loads(store.path(key).read_text())
    data["updated"] = updated
    store.path(key).write_text(json.dumps(data))


def test_old_walks_and_those_beyond_the_newest_are_pruned(state: Path) -> None:
    store, now = Store(), time.time()
    _aged(store, "old", now - 15 * 24 * 3600)
    _aged(store, "recent", now - 13 * 24 * 3600)
    assert store.prune(now) == 1 and [w.key for w in store.walks()] == ["recent"]
    for i in range(MAX_ENTRIES + 5):
        _aged(store, f"k{i:02d}", now - i * 60)
    assert store.prune(now) == 6  # the 5 oldest of the new ones, and "recent"
    assert sorted(w.key for w in store.walks()) == [f"k{i:02d}" for i in range(MAX_ENTRIES)]


def test_the_key_follows_the_log(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(DEMO_LOG.read_text())
    first = log_key([str(log)])
    assert log_key([str(log)]) == first and log_key([str(log)], str(DEMO_MACHINE)) != first
    with log.open("a") as fh:
        fh.write("one more line\n")
    assert log_key([str(log)]) != first


# --- the full-screen wizard ----------------------------------------------------------------------


def _app(opts: LaunchOptions):
    from oomwizard.tui.app import WizardApp

    return WizardApp(opts, kb=get_kb(), sources=default_sources(), environ={})


def _opts(**kw) -> LaunchOptions:
    return LaunchOptions(logs=[str(DEMO_LOG)], machine=str(DEMO_MACHINE), keep_state=True, **kw)


def test_every_answer_is_on_disk_before_the_next_question_and_a_hangup_resumes_there(state: Path) -> None:
    from oomwizard.tui.screens.question import QuestionScreen

    app = _app(_opts())
    seen: list[tuple[list[str], list[str]]] = []
    asked: dict[str, str] = {}

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await press(pilot, "enter")  # diagnosis -> questions
            assert isinstance(app.screen, QuestionScreen)
            for _ in range(3):
                await press(pilot, "enter")
                on_disk = [a["question"] for a in _saved(state)[0]["answers"]]
                seen.append((on_disk, list(app.session.order)))
            asked["next"] = app.session.current().question.id
            app.on_signal(signal.SIGHUP)
            await pilot.pause()

    run_async(walk)()
    assert app.return_value.code == 129
    assert [len(d) for d, _ in seen] == [1, 2, 3] and all(d == s for d, s in seen)
    saved = _saved(state)[0]
    assert saved["screen"] == "question" and not saved["finished"]

    opts = LaunchOptions(resume=True, keep_state=True)
    ok, notes = resume_options(opts)
    assert ok and notes == [] and opts.logs == [str(DEMO_LOG)] and opts.resume_screen == "question"
    again = _app(opts)

    async def resumed() -> None:
        async with again.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert isinstance(again.screen, QuestionScreen)
            assert again.session.order == seen[-1][1]
            assert again.session.current().question.id == asked["next"]
            await press(pilot, "q")

    run_async(resumed)()


def test_a_walk_that_reached_its_fix_resumes_on_the_fix(state: Path) -> None:
    from oomwizard.tui.screens.leaf import LeafScreen

    app = _app(_opts())

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            for _ in range(15):
                if isinstance(app.screen, LeafScreen):
                    break
                await press(pilot, "enter")
            app.on_signal(signal.SIGHUP)
            await pilot.pause()

    run_async(walk)()
    saved = _saved(state)[0]
    assert saved["screen"] == "leaf" and saved["leaf"] == app.return_value.done.leaf.id and not saved["finished"]
    opts = LaunchOptions(resume=True, keep_state=True)
    assert resume_options(opts)[0]
    again = _app(opts)

    async def resumed() -> None:
        async with again.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert isinstance(again.screen, LeafScreen) and again.screen.done.leaf.id == saved["leaf"]
            await press(pilot, "q")

    run_async(resumed)()
    assert _saved(state)[0]["finished"]  # quitting on the fix ends the walk: nothing left to offer
    assert Store().latest_unfinished() is None


def test_the_welcome_screen_offers_the_last_unfinished_walk(state: Path) -> None:
    from textual.widgets import OptionList

    from oomwizard.tui.screens.question import QuestionScreen

    key = log_key([str(DEMO_LOG)], str(DEMO_MACHINE))
    Store().save(Walk(key=key, logs=[str(DEMO_LOG)], machine=str(DEMO_MACHINE), screen="question",
                      answers=[{"question": "symptom", "value": "sampler", "source": "answered"}]))
    (state / "walk-broken.json").write_text("{")
    app = _app(LaunchOptions(keep_state=True))

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            actions = app.screen.query_one("#actions", OptionList)
            assert actions.get_option_at_index(0).id == "resume"
            assert "vllm-serve.log · 1 answer" in str(actions.get_option_at_index(0).prompt)
            actions.highlighted = 0
            await press(pilot, "enter")
            await settle(pilot)
            assert isinstance(app.screen, QuestionScreen)
            assert app.session.answers["symptom"].value == "sampler"
            await press(pilot, "q")

    run_async(walk)()


def test_a_changed_log_is_read_again_and_its_old_answers_dropped(state: Path, tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(DEMO_LOG.read_text())
    opts = LaunchOptions(logs=[str(log)], keep_state=True)
    k = Keeper(opts)
    k.save(screen="question", answers={}, order=[])
    with log.open("a") as fh:
        fh.write("more\n")
    opts = LaunchOptions(resume=True, keep_state=True)
    ok, notes = resume_options(opts)
    assert ok and "changed since this walk was saved" in notes[0] and opts.answers == {}


def test_nothing_to_resume_says_so(state: Path) -> None:
    state.mkdir(parents=True)
    (state / "walk-x.json").write_text("not json")
    ok, notes = resume_options(LaunchOptions(resume=True))
    assert not ok and "damaged" in notes[0] and "no unfinished walk" in notes[-1]


# --- a real process, killed -----------------------------------------------------------------------


def _spawn(env: dict[str, str], *args: str) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execvpe(sys.executable, [sys.executable, "-m", "oomwizard", "--plain", *args], env)
    return pid, fd


def _read_until(fd: int, needle: str, limit_s: float = 90) -> str:
    """Output up to ``needle`` (a prompt); the limit only stops a hung child from hanging the test."""
    buf, end = "", time.monotonic() + limit_s
    while needle not in buf:
        if time.monotonic() > end:
            raise AssertionError(f"no {needle!r} in: {buf[-1500:]}")
        if select.select([fd], [], [], 1)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            buf += data.decode(errors="replace")
    return buf


def _wait_for(check, what: str, limit_s: float = 90) -> None:
    """Wait until ``check()`` holds; the limit only stops a hung child from hanging the test."""
    end = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


def _answers(folder: Path) -> int:
    try:
        return len(_saved(folder)[0]["answers"])
    except (IndexError, ValueError, KeyError):
        return -1


@pytest.mark.parametrize("kill_after", [0, 1, 3])
def test_kill_9_loses_at_most_the_answer_being_typed(tmp_path: Path, kill_after: int) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "VIRTUAL_ENV", "PYTHONPATH")}
    env.update(TERM="dumb", XDG_STATE_HOME=str(tmp_path / "xdg"), COLUMNS="100", LINES="40")
    folder = tmp_path / "xdg" / "oomwizard"
    kb = get_kb()
    from oomwizard.cli import main

    bundle = tmp_path / "b.json"  # its path: the questions the walk asks, in order
    assert main(["report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(bundle)]) == 0
    path = [s["question"] for s in json.loads(bundle.read_text())["path"]]
    pid, fd = _spawn(env, "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE))
    try:
        _read_until(fd, kb.questions[path[0]].text("en"))
        _wait_for(lambda: _answers(folder) == 0, "the walk saved before the first question")
        for k in range(1, kill_after + 1):
            os.write(fd, b"\r")  # accept the suggestion
            _wait_for(lambda k=k: _answers(folder) == k, f"answer {k} saved")
        os.write(fd, b"3")  # an answer being typed
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    saved = _saved(folder)
    assert len(saved) == 1 and [a["question"] for a in saved[0]["answers"]] == path[:kill_after]
    assert not saved[0]["finished"] and not list(folder.glob(".walk-*"))
    pid, fd = _spawn(env, "--resume")
    try:
        out = _read_until(fd, kb.questions[path[kill_after]].text("en"))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert not any(kb.questions[q].text("en") in out for q in path[:kill_after])  # not asked again
    assert [a["question"] for a in _saved(folder)[0]["answers"]] == path[:kill_after]


@pytest.mark.skipif(needs_tmux, reason="needs tmux")
def test_a_real_hangup_of_the_full_screen_wizard_resumes_at_the_same_question(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    folder = tmp_path / "xdg" / "oomwizard"
    kb = get_kb()
    (tmp_path / "p1").mkdir()
    pane = Pane(tmp_path / "p1", ["--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE)], env=env)
    try:
        pane.wait_for("the diagnosis", lambda: _saved_screen(folder) == "diagnosis")
        pane.tmux("send-keys", "-t", "w", "Enter")
        pane.wait_for("the first question", lambda: _saved_screen(folder) == "question")
        pane.tmux("send-keys", "-t", "w", "Enter")
        pane.wait_for("the first answer saved", lambda: _answers(folder) == 1)
        pid = pane.program_pid()
        assert pid is not None
        os.kill(pid, signal.SIGHUP)
        assert pane.exit_code() == 129
    finally:
        pane.close()
    saved = _saved(folder)[0]
    done = [a["question"] for a in saved["answers"]]
    (tmp_path / "p2").mkdir()
    pane = Pane(tmp_path / "p2", ["--resume"], env=env)
    try:
        nxt = [q for q in kb.questions.values() if q.id not in done]
        pane.wait_for("the next question", lambda: any(q.text("en")[:40] in pane.screen() for q in nxt))
        assert kb.questions[done[0]].text("en")[:40] not in pane.screen()
        pane.tmux("send-keys", "-t", "w", "C-q")
        assert pane.exit_code() == 0
    finally:
        pane.close()


def _saved_screen(folder: Path) -> str | None:
    try:
        return _saved(folder)[0]["screen"]
    except (IndexError, ValueError, KeyError):
        return None


@pytest.mark.parametrize(("n", "en", "zh"), [(0, "no question answered yet", "尚未回答问题"), (1, "1 answer", "1 个回答"),
                                             (3, "3 answers", "3 个回答")])
def test_a_walk_is_described_by_how_far_it_got(n: int, en: str, zh: str) -> None:
    from oomwizard.bundle.resume import describe

    walk = Walk(key="k", logs=["/var/log/vllm.log"], updated=1000.0,
                answers=[{"question": f"q{i}", "value": "v", "source": "answered"} for i in range(n)])
    assert describe(walk, "en", now=1000.0 + 7200) == f"vllm.log · {en} · 2 h ago"
    assert describe(walk, "zh", now=1000.0 + 120) == f"vllm.log · {zh} · 2 min 前"
