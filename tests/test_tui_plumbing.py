"""How the wizard's parts talk: messages to every screen, the keymap, the start-up order, no private API.

Driven on the fixture knowledge base with stand-in inputs, except the source scan.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, screen_text, settle, until
from snapshot_apps.stand_ins import StandIns, fixture_kb, make_app
from textual.widgets import Static

from oomwizard.bundle.resume import Store, Walk, log_key
from oomwizard.frontend.inputs import default_sources
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions
from oomwizard.tui.app import WizardApp
from oomwizard.tui.keymap import parse_keymap
from oomwizard.tui.screens.diagnosis import DiagnosisScreen
from oomwizard.tui.screens.facts import FactsScreen
from oomwizard.tui.screens.welcome import WelcomeScreen

SIZE = (80, 24)
LOG = __file__
TUI = Path(__file__).resolve().parent.parent / "oomwizard" / "tui"


@run_async
async def test_a_screen_under_another_hears_the_machine_arrive() -> None:
    gate = threading.Event()
    app = make_app(stand_ins=StandIns(gate=gate))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.machine.status == "running", "detection started", workers=False)
        await press(pilot, "f")
        assert isinstance(app.screen, FactsScreen)
        welcome = app.screen_stack[-2]
        assert isinstance(welcome, WelcomeScreen)
        line = welcome.query_one("#machine-line", Static)
        assert "reading GPUs" in str(line.render())
        gate.set()
        await settle(pilot)
        assert "H200" in str(app.screen.query_one("#facts-machine", Static).render())
        assert "H200" in str(line.render()), "the welcome screen, under the facts screen, redrew too"


def test_keymap_entries() -> None:
    assert parse_keymap("wizard.facts=x; question.accept_all = ctrl+a , A") == {
        "wizard.facts": "x", "question.accept_all": "ctrl+a,A"}
    assert parse_keymap("") == {}
    assert parse_keymap("no-equals;=x;wizard.facts=;wizard.quit=q,,") == {}


@run_async
async def test_oomwizard_keymap_moves_a_key_and_the_footer_shows_it() -> None:
    app = make_app(environ={"OOMWIZARD_KEYMAP": "wizard.facts=x"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert " x Facts" in screen_text(app).splitlines()[-1]
        await press(pilot, "f")
        assert isinstance(app.screen, WelcomeScreen), "f no longer opens the facts"
        await press(pilot, "x")
        assert isinstance(app.screen, FactsScreen)


@run_async
async def test_with_a_log_the_first_frame_is_the_diagnosis_alone_and_back_opens_the_welcome_screen() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        assert not any(isinstance(s, WelcomeScreen) for s in app.screen_stack)
        await press(pilot, "b")
        assert isinstance(app.screen, WelcomeScreen)
        assert "H200" in str(app.screen.query_one("#machine-line", Static).render())
        await press(pilot, "down", "down", "down", "down", "enter")  # the demo, from the welcome screen
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        await press(pilot, "b")
        assert isinstance(app.screen, WelcomeScreen) and len(app.screen_stack) == 2


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "oomwizard"


def test_the_unfinished_walk_is_looked_for_after_the_first_frame(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Store().save(Walk(key=log_key([str(DEMO_LOG)], str(DEMO_MACHINE)), logs=[str(DEMO_LOG)],
                      machine=str(DEMO_MACHINE), screen="question", answers=[]))
    looked: list[str] = []
    real = Store.latest_unfinished

    def spy(self: Store) -> object:
        looked.append(threading.current_thread().name)
        return real(self)

    monkeypatch.setattr(Store, "latest_unfinished", spy)
    app = WizardApp(LaunchOptions(keep_state=True), kb=fixture_kb(), sources=StandIns().sources(), environ={})
    assert looked == [] and app.resumable is None and app.keeper is None, "no start-up I/O before the first frame"

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert looked == ["oomwizard-background"], "once, in a worker thread"
            actions = app.screen.query_one("#actions")
            assert actions.get_option_at_index(0).id == "resume" and actions.highlighted == 0  # type: ignore[attr-defined]

    run_async(walk)()


def _textual_private_names() -> set[str]:
    """What Textual's classes under ours keep to themselves: ``def _x(`` and ``self._x =`` in the
    source of every Textual class in the bases of a class of ``oomwizard.tui``."""
    import oomwizard.tui

    bases: set[type] = set()
    for info in pkgutil.walk_packages(oomwizard.tui.__path__, "oomwizard.tui."):
        for obj in vars(importlib.import_module(info.name)).values():
            if inspect.isclass(obj) and obj.__module__.startswith("oomwizard.tui"):
                bases.update(b for b in obj.__mro__ if b.__module__.startswith("textual"))
    src = "\n".join(inspect.getsource(b) for b in bases)
    return set(re.findall(r"def (_[a-z]\w*)\(", src)) | set(re.findall(r"self\.(_[a-z]\w*)\s*[:=]", src))


def _private_uses(files: list[Path], textual_names: set[str]) -> list[str]:
    """``x._name`` where ``_name`` is one of Textual's internals and not a name our code defines
    (``super()._name`` included), as ``file:line .name``."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in files}
    ours = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ours.add(node.name)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and node.attr not in textual_names):
                ours.add(node.attr)
    out = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "super":
                out.append(f"{path.name}:{node.lineno} super().{node.attr}")
            elif node.attr in textual_names and node.attr not in ours:
                out.append(f"{path.name}:{node.lineno} .{node.attr}")
    return sorted(out)


def test_the_tui_uses_no_private_textual_api_but_the_clipboard_passthrough() -> None:
    found = _private_uses(sorted(TUI.rglob("*.py")), _textual_private_names())
    outside = [hit for hit in found if not hit.startswith("clipboard.py:")]
    assert outside == []
    # clipboard.py: only _passthrough (OSC 52 wrapped for tmux/screen, which Textual cannot send)
    source = (TUI / "clipboard.py").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(source, 1) if "def _passthrough(" in line)
    assert found and all(start < int(hit.split(":")[1].split()[0]) <= start + 10 for hit in found), found
    assert {hit.split()[-1] for hit in found} == {"._driver", "._clipboard"}


def _private_modules(path: Path) -> list[str]:
    """Imports of Textual's or Rich's private modules (``textual._wrap``, ``from rich import _wrap``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] in ("textual", "rich") and any(x.startswith("_") for x in parts[1:]):
                out.append(f"{path.name}:{node.lineno} {name}")
    return out


def test_only_the_cjk_line_breaking_reaches_into_private_modules() -> None:
    """Textual has no hook for breaking lines between CJK characters; ``cjk.enable`` swaps the
    wrappers' word patterns, guarded so that nothing happens if they move. Nothing else may."""
    found = [hit for p in sorted(TUI.rglob("*.py")) for hit in _private_modules(p)]
    assert found and all(hit.startswith("cjk.py:") for hit in found), found


def test_the_private_api_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("class S:\n    def f(self, node):\n        super()._on_key(node)\n"
                      "        return node._bindings.key_to_bindings, self._compositor, self._mine\n"
                      "    def g(self):\n        self._mine = 1\n", encoding="utf-8")
    assert _private_uses([sample], {"_bindings", "_compositor", "_on_key"}) == [
        "sample.py:3 super()._on_key", "sample.py:4 ._bindings", "sample.py:4 ._compositor"]
    imports = tmp_path / "imports.py"
    imports.write_text("from textual import _wrap\nimport rich._wrap\nfrom textual.widgets import Static\n",
                       encoding="utf-8")
    assert _private_modules(imports) == ["imports.py:1 textual._wrap", "imports.py:2 rich._wrap"]


def test_the_knowledge_base_loads_in_a_worker_after_the_demo_diagnosis(
        state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import oomwizard.kb.loader as loader

    loads: list[bool] = []
    real = loader.get_kb

    def spy() -> object:
        loads.append(threading.current_thread() is threading.main_thread())
        return real()

    monkeypatch.setattr(loader, "get_kb", spy)
    app = WizardApp(LaunchOptions(demo=True, keep_state=True), sources=default_sources(), environ={})

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, DiagnosisScreen)
            assert "OOM while warming up the sampler" in screen_text(app)

    run_async(walk)()
    # Keeping the walk when the diagnosis arrives must not load it on the screen's thread.
    assert loads == [False], "loaded once, by a worker thread"
    assert any(Path(p).name.startswith("walk-") for p in state.iterdir())


def test_the_demo_diagnosis_is_drawn_before_the_keeper_and_the_cjk_patterns(
        state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither is needed to draw an English diagnosis of an English log: both wait until it is on
    the screen, and the walk is saved then."""
    from oomwizard.tui import cjk
    from oomwizard.tui.screens import diagnosis as diagnosis_screen

    seen: list[tuple[object, int]] = []
    real = diagnosis_screen.DiagnosisScreen._show

    def spy(self: diagnosis_screen.DiagnosisScreen, diag: object) -> None:
        seen.append((self.app.keeper, cjk.patterns.cache_info().currsize))
        real(self, diag)  # type: ignore[arg-type]

    monkeypatch.setattr(diagnosis_screen.DiagnosisScreen, "_show", spy)
    cjk.patterns.cache_clear()
    app = WizardApp(LaunchOptions(demo=True, keep_state=True, lang="en"), sources=default_sources(), environ={})

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert "OOM while warming up the sampler" in screen_text(app)

    run_async(walk)()
    assert seen == [(None, 0)]
    assert app.keeper is not None and cjk.patterns.cache_info().currsize == 1
    assert any(Path(p).name.startswith("walk-") for p in state.iterdir())


def test_a_diagnosis_with_chinese_text_gets_the_cjk_patterns_before_it_is_drawn() -> None:
    from oomwizard.logs.diagnose import diagnose_text
    from oomwizard.tui.reading import _shows_cjk

    def titles(sid: str) -> None:
        return None

    english = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                            "capacity of 23.57 GiB of which 1.10 GiB is free.\n", "vllm.log")
    assert english.matches and not _shows_cjk(english, "en", titles)
    chinese = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB（显存不足）. GPU 0 "
                            "has a total capacity of 23.57 GiB of which 1.10 GiB is free.\n", "vllm.log")
    assert chinese.matches and _shows_cjk(chinese, "en", titles)


def _slow_first_read(gate: threading.Event, slow: Path):  # type: ignore[no-untyped-def]
    import dataclasses

    real = default_sources()

    def paths(ps: list[str], progress: object = None):  # type: ignore[no-untyped-def]
        if ps == [str(slow)]:
            gate.wait(20)
        return real.diagnose_paths(ps, progress)  # type: ignore[arg-type]

    return dataclasses.replace(real, diagnose_paths=paths)


def _gated_app(tmp_path: Path) -> tuple[WizardApp, threading.Event, Path]:
    """The wizard reading a copy of the demo log, held until the test sets the gate."""
    first = tmp_path / "first.log"
    first.write_bytes(DEMO_LOG.read_bytes())
    gate = threading.Event()
    app = WizardApp(LaunchOptions(logs=[str(first)], keep_state=True, lang="en"),
                    sources=_slow_first_read(gate, first), environ={})
    return app, gate, first


def test_a_log_opened_while_the_first_is_still_read_is_the_one_the_walk_is_kept_for(
        state: Path, tmp_path: Path) -> None:
    app, gate, _ = _gated_app(tmp_path)
    second = tmp_path / "second.log"
    second.write_bytes(DEMO_LOG.read_bytes())

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app._read_count == 1, "the first read begun", workers=False)
            app.read_logs([str(second)])  # as the welcome screen's "open a log" does
            await until(pilot, lambda: app.keeper is not None, "the walk kept", workers=False)
            gate.set()

    run_async(walk)()
    assert app.keeper.walk.logs == [str(second)]


def test_a_pasted_log_read_first_is_not_kept(state: Path, tmp_path: Path) -> None:
    app, gate, _ = _gated_app(tmp_path)

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app._read_count == 1, "the first read begun", workers=False)
            app.read_pasted(DEMO_LOG.read_text(encoding="utf-8"))
            await until(pilot, lambda: app.log_state.status == "done" and app.machine.status != "idle", "diagnosis",
                        workers=False)
            gate.set()

    run_async(walk)()
    assert app.keeper is None
    assert not state.exists() or not any(p.name.startswith("walk-") for p in state.iterdir())


def test_a_walk_begun_before_the_first_diagnosis_is_saved(state: Path, tmp_path: Path) -> None:
    app, gate, first = _gated_app(tmp_path)

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app._read_count == 1, "the first read begun", workers=False)
            app.keep()  # what an answer, a correction or a change of screen does
            gate.set()

    run_async(walk)()
    assert app.keeper is not None and app.keeper.walk.logs == [str(first)]
    assert any(p.name.startswith("walk-") for p in state.iterdir())


def test_every_screen_but_the_diagnosis_gets_the_cjk_patterns(state: Path) -> None:
    from oomwizard.tui import cjk

    app = WizardApp(LaunchOptions(demo=True, lang="en"), sources=default_sources(), environ={})
    gate = threading.Event()
    app.sources = _slow_first_read(gate, DEMO_LOG)

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app._read_count == 1, "the first read begun", workers=False)
            cjk.patterns.cache_clear()
            app.push_screen(FactsScreen())
            await pilot.pause()
            assert cjk.patterns.cache_info().currsize == 1
            gate.set()

    run_async(walk)()
