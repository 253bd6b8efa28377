"""``diagnose --output FILE`` writes the file the wizard's save writes, and keeps an existing one."""

from __future__ import annotations

from pathlib import Path

from snapshot_apps.pilot import press, run_async, settle
from textual.widgets import Input

from oomwizard.cli import main
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions
from oomwizard.i18n import ui
from oomwizard.kb.loader import get_kb
from oomwizard.tui.app import WizardApp
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.save import SaveScreen


async def _tui_save(target: Path, lang: str) -> None:
    """The demo in the wizard: Enter on every suggestion to the leaf, then `s` to ``target``."""
    app = WizardApp(LaunchOptions(logs=[str(DEMO_LOG)], machine=str(DEMO_MACHINE), lang=lang), kb=get_kb())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for _ in range(12):
            if isinstance(app.screen, LeafScreen):
                break
            await press(pilot, "enter")
            await settle(pilot)
        assert isinstance(app.screen, LeafScreen)
        await press(pilot, "s")
        assert isinstance(app.screen, SaveScreen)
        app.screen.query_one(Input).value = str(target)
        await press(pilot, "enter")
        assert app.outcome.saved == [str(target.resolve())]


def _without_path(script: str, lang: str) -> str:
    head, _, rest = script.partition(f"# {ui('path', lang)}:\n")
    assert rest, "the script names the path it came by"
    return head + rest[rest.index("set -u\n"):]


@run_async
async def test_the_same_script_as_the_wizards_save(tmp_path: Path) -> None:
    for lang in ("en", "zh"):
        tui, cli = tmp_path / f"tui-{lang}.sh", tmp_path / f"cli-{lang}.sh"
        await _tui_save(tui, lang)
        code = main(["diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--lang", lang, "--output", str(cli)])
        assert code == 0
        ours, theirs = cli.read_text(encoding="utf-8"), tui.read_text(encoding="utf-8")
        assert ours.startswith("#!/bin/sh") and "fix_1()" in ours
        # Byte for byte but for the comment on how each answer came (Enter on a suggestion in
        # the wizard is "accepted"; diagnose takes it without asking, "auto").
        accepted = f"[{ui('engine.how.accepted', lang)}: "
        assert accepted in theirs and accepted not in ours
        assert _without_path(ours, lang) == _without_path(theirs, lang)


def test_an_existing_file_is_kept_without_force(tmp_path: Path, capsys) -> None:
    target = tmp_path / "fix.sh"
    target.write_text("keep me\n")
    argv = ["diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(target)]
    assert main(argv) == 1
    assert target.read_text() == "keep me\n"
    assert "exists; pass --force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    assert "fix_1()" in target.read_text()
    md = tmp_path / "fix.md"
    assert main(["diagnose", str(DEMO_LOG), "--output", str(md)]) == 0
    assert md.read_text().startswith("# ")


def test_nothing_is_saved_without_a_fix(tmp_path: Path, capsys) -> None:
    log = Path(__file__).parent / "logs" / "healthy_startup.log"
    target = tmp_path / "fix.sh"
    assert main(["diagnose", str(log), "--output", str(target)]) == 6
    assert not target.exists()
    assert "nothing saved" in capsys.readouterr().err


def test_a_folder_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["diagnose", str(DEMO_LOG), "--output", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err
