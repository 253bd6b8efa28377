"""The first frame depends on nothing it does not draw: modules, stylesheets, the CJK line breaking.

What is imported and parsed before the first frame is read in a fresh interpreter (this test
process has imported every screen already); the stylesheets added later are checked in Pilot.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import run_async, settle, until
from snapshot_apps.stand_ins import make_app

from oomwizard.tui import cjk
from oomwizard.tui.styles import SCREENS, add_screen_styles

FIRST_FRAME = r"""
import json, sys
from oomwizard.frontend.options import LaunchOptions
from oomwizard.tui import app as appmod, cjk

seen = {}

def at_first_frame(self):
    seen["modules"] = sorted(m for m in sys.modules if m.startswith("oomwizard"))
    seen["styles"] = sorted(path for path, _ in self.stylesheet.source if path.endswith(".tcss"))
    seen["cjk"] = cjk.patterns.cache_info().currsize
    seen["screen"] = type(self.screen).__name__
    self.exit(None)

appmod.WizardApp._after_first_frame = at_first_frame

async def main():
    app = appmod.WizardApp(LaunchOptions(lang=sys.argv[1], demo=sys.argv[2] == "demo"), environ={})
    async with app.run_test(size=(80, 24)) as pilot:
        while not seen:
            await pilot.pause()

import asyncio
asyncio.run(main())
print(json.dumps(seen))
"""

LATER = ("oomwizard.tui.screens.facts", "oomwizard.tui.screens.leaf", "oomwizard.tui.screens.question",
         "oomwizard.engine", "oomwizard.kb.loader", "oomwizard.logs.diagnose", "oomwizard.logs.reader",
         "oomwizard.text.redact", "oomwizard.report.leaf", "oomwizard.bundle.resume")
"""Modules only later screens and the work after the first frame need."""


def first_frame(lang: str, demo: bool) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, lang, "demo" if demo else "welcome"],
                         capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_welcome_frame_imports_and_parses_only_what_it_draws(lang: str) -> None:
    seen = first_frame(lang, demo=False)
    assert seen["screen"] == "WelcomeScreen"
    modules = seen["modules"]
    assert isinstance(modules, list) and "oomwizard.tui.screens.welcome" in modules
    assert [m for m in (*LATER, "oomwizard.tui.screens.diagnosis") if m in modules] == []
    assert [Path(p).name for p in seen["styles"]] == ["app.tcss"]  # type: ignore[union-attr]
    # Chinese text is on the first frame: its line breaking is there from the start.
    assert seen["cjk"] == (1 if lang == "zh" else 0)


def test_the_demo_frame_adds_the_diagnosis_stylesheet_alone() -> None:
    seen = first_frame("en", demo=True)
    assert seen["screen"] == "DiagnosisScreen"
    # The log's name it shows passes the output boundary (text.output, which redacts), so that is here.
    assert [m for m in LATER if m in seen["modules"] and m != "oomwizard.text.redact"] == []  # type: ignore[operator]
    assert [Path(p).name for p in seen["styles"]] == ["app.tcss", "diagnosis.tcss"]  # type: ignore[union-attr]


@run_async
async def test_a_screen_shown_later_is_styled_by_its_own_stylesheet() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        question_css = str(SCREENS / "question.tcss")
        assert not app.stylesheet.has_source(question_css)
        app.open_questions()
        await until(pilot, lambda: app.screen.query("#q-body"), "the question screen")
        assert app.stylesheet.has_source(question_css)
        body = app.screen.query_one("#q-body")
        assert tuple(body.styles.padding) == (1, 2, 0, 2)  # question.tcss: padding: 1 2 0 2
        assert not add_screen_styles(app.stylesheet, app.screen)  # a second one adds nothing


def test_every_named_stylesheet_exists_and_no_two_style_the_same_id() -> None:
    from oomwizard.tui.screens import base

    named = {cls.STYLES for cls in _subclasses(base.WizardNode)} - {""}
    files = {p.name for p in SCREENS.glob("*.tcss")}
    assert named == files
    owners: dict[str, str] = {}
    for path in [SCREENS.parent / "app.tcss", *sorted(SCREENS.glob("*.tcss"))]:
        text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
        for selector in re.findall(r"([^{}]+)\{", text):
            for ident in set(re.findall(r"#[\w-]+", selector)):
                assert owners.setdefault(ident, path.name) == path.name, (ident, owners[ident], path.name)


def _subclasses(cls: type) -> set[type]:
    import importlib
    import pkgutil

    import oomwizard.tui.screens as screens

    for mod in pkgutil.iter_modules(screens.__path__):
        importlib.import_module(f"{screens.__name__}.{mod.name}")
    out, todo = set(), [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.add(sub)
            todo.append(sub)
    return out


PLAIN_WORD, PLAIN_CHUNK = re.compile(r"\s*\S+\s*"), re.compile(r"\S+\s*|\s+")


def _tokens(pattern: re.Pattern[str], text: str) -> list[str]:
    out, pos = [], 0
    while (m := pattern.match(text, pos)) is not None and m.end() > pos:
        out.append(m.group())
        pos = m.end()
    return out


@given(st.text(st.characters(max_codepoint=ord(cjk.FIRST) - 1)))
def test_text_that_does_not_need_the_cjk_patterns_wraps_as_without_them(text: str) -> None:
    """What lets the English first frame be drawn before the patterns are compiled."""
    assert not cjk.needed(text)
    word, chunk = cjk.patterns()
    assert _tokens(word, text) == _tokens(PLAIN_WORD, text)
    assert _tokens(chunk, text) == _tokens(PLAIN_CHUNK, text)


_MIXED = st.text(st.sampled_from([*"ab .-/'0", " ", "\n", "…", "（", "）", "，", "显", "存", "█", "é", "—"]), max_size=12)


@given(_MIXED)
def test_the_patterns_are_only_skipped_where_they_change_nothing(text: str) -> None:
    """Text with an ellipsis, box drawing or accents but no break the patterns add (a shortened
    log line ending in ``…``) is drawn before they are compiled, and wraps the same."""
    if not cjk.needed(text):
        word, chunk = cjk.patterns()
        assert _tokens(word, text) == _tokens(PLAIN_WORD, text)
        assert _tokens(chunk, text) == _tokens(PLAIN_CHUNK, text)


def test_a_shortened_english_line_does_not_need_them() -> None:
    assert not cjk.needed("Of the allocated memory 137.05 GiB is allocated by PyTorch, and 311.48 MiB is reserved …")
    assert not cjk.needed("█████▌     | 27/67 [00:02<00:03] … done")


def test_text_that_needs_them_does_wrap_otherwise() -> None:
    word, _ = cjk.patterns()
    for text in ("显存不够", "a（b", "日志.log", "abc…def"):
        assert cjk.needed(text)
        assert _tokens(word, text) != _tokens(PLAIN_WORD, text), text


@run_async
async def test_the_footer_is_rebuilt_only_when_its_keys_change() -> None:
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        keys = list(app.screen.query(FooterKey))
        assert keys and "^q" not in {k.key_display for k in keys}
        app.screen.refresh_bindings()  # the same keys: nothing is rebuilt
        await settle(pilot)
        assert list(app.screen.query(FooterKey)) == keys
        await pilot.press("enter")  # "Open a log file": the path box takes the focus, q types a letter
        await until(pilot, lambda: any(k.key_display == "^q" for k in app.screen.query(FooterKey)), "^q shown")
        assert not set(app.screen.query(FooterKey)) & set(keys)
