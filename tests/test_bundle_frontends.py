"""The support bundle from the wizard: ``r`` on the diagnosis and fix screens, the offer in plain mode."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from schemas import validate_output
from snapshot_apps.pilot import press, run_async, settle

from oomwizard.frontend.inputs import default_sources
from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb
from oomwizard.tui.app import WizardApp

ROOT = Path(__file__).resolve().parent.parent
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"


def _bundles(folder: Path) -> list[Path]:
    return sorted(folder.glob("oomwizard-report-*"))


def test_r_on_the_fix_writes_the_walk_beside_the_saved_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oomwizard.tui.screens.diagnosis import DiagnosisScreen
    from oomwizard.tui.screens.leaf import LeafScreen

    monkeypatch.chdir(tmp_path)
    saved = tmp_path / "fixes"
    saved.mkdir()
    app = WizardApp(LaunchOptions(logs=[str(DEMO_LOG)], machine=str(DEMO_MACHINE)), kb=get_kb(),
                    sources=default_sources(), environ={})

    async def walk() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, DiagnosisScreen)
            await press(pilot, "r")
            await settle(pilot)
            first = _bundles(tmp_path)
            assert [p.suffix for p in first] == [".json", ".md"]
            for p in first:
                p.unlink()
            for _ in range(15):
                if isinstance(app.screen, LeafScreen):
                    break
                await press(pilot, "enter")
            assert isinstance(app.screen, LeafScreen)
            app.outcome.saved.append(str(saved / "fix.sh"))  # as the save dialog records it
            await press(pilot, "r")
            await settle(pilot)
            await press(pilot, "q")

    run_async(walk)()
    files = _bundles(saved)
    assert [p.suffix for p in files] == [".json", ".md"]
    doc = json.loads(files[0].read_text())
    validate_output(doc)
    assert doc["walk"] == "interactive" and doc["leaf"]["id"] == app.return_value.done.leaf.id
    assert doc["answers"] and {a["question"] for a in doc["answers"]} <= {p["question"] for p in doc["path"]}
    assert doc["machine_source"] == "file" and doc["log"]["inputs"][0]["lines"]
    assert all(str(p) in app.return_value.saved for p in files)  # and printed on exit with the saves


def test_plain_mode_offers_the_bundle_at_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from oomwizard.plain import run_plain

    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        # Enter through every question (the suggestions), then "no" to saving the fix and to checking
        # a log, "yes" to the bundle
        inp.send_text("\r" * 7 + "nny")
        inp.close()
        code = run_plain(LaunchOptions(logs=[str(DEMO_LOG)], machine=str(DEMO_MACHINE)), kb=get_kb(),
                         sources=default_sources(), prompt_kwargs={"input": inp, "output": DummyOutput()},
                         numbered=False, out=out, err=err)
    assert code == 0, err.getvalue()
    files = _bundles(tmp_path)
    assert [p.suffix for p in files] == [".json", ".md"], err.getvalue()
    assert str(files[0]) in err.getvalue()
    validate_output(json.loads(files[0].read_text()))
