"""Keys that mean the same on every screen: help, the palette, Back, Tab, j/k, Ctrl+C on a selection.

Driven on the fixture knowledge base with stand-in inputs (a sampler warm-up log, an H200).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rich.console import Console
from snapshot_apps.pilot import enter_until_leaf, press, question_id, run_async, screen_text, settle, until
from snapshot_apps.stand_ins import make_app
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, OptionList, Static

from oomwizard.exitcodes import Exit
from oomwizard.tui.screens.diagnosis import DiagnosisScreen
from oomwizard.tui.screens.facts import FactsScreen
from oomwizard.tui.screens.help import HelpScreen
from oomwizard.tui.screens.keys import KeysScreen
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.question import QuestionScreen
from oomwizard.tui.screens.save import SaveScreen
from oomwizard.tui.screens.welcome import WelcomeScreen

SIZE = (80, 24)
LOG = __file__


def drawn(renderable: object) -> str:
    console = Console(width=70, file=io.StringIO())
    with console.capture() as out:
        console.print(renderable)
    return out.get().strip()


async def open_keys(pilot, key: str = "question_mark") -> str:  # type: ignore[no-untyped-def]
    under = pilot.app.screen
    await press(pilot, key)
    assert isinstance(pilot.app.screen, KeysScreen), (type(under).__name__, pilot.app.screen)
    text = screen_text(pilot.app)
    await press(pilot, "escape")
    assert pilot.app.screen is under
    return text


@run_async
async def test_question_mark_shows_the_keys_of_every_screen() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=(100, 50)) as pilot:  # tall enough to hold the whole map
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        text = await open_keys(pilot)
        assert "Continue with this" in text and "Back" in text
        await press(pilot, "enter")
        assert isinstance(app.screen, QuestionScreen)
        await press(pilot, "question_mark")  # on a question, ? explains the question, then the keys …
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#help-keys", Static).content)
        keys = console.export_text()
        assert "Accept all suggestions" in keys and "Ctrl+P" in keys
        await press(pilot, "escape")
        text = await open_keys(pilot, "f2")  # … and F2 shows the keys
        assert "Accept all suggestions" in text
        leaf = await enter_until_leaf(pilot)
        text = await open_keys(pilot, "f1")
        for action in ("Copy", "Save", "Check new log", "Back", "Quit", "Facts"):
            assert action in text, action
        assert "Ctrl+P" in text
        await press(pilot, "f")
        assert isinstance(app.screen, FactsScreen)
        text = await open_keys(pilot)
        assert "Set a fact" in text
        await press(pilot, "b")  # b leaves the facts screen like everywhere else
        assert app.screen is leaf


@run_async
async def test_the_welcome_screen_has_keys_too() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        text = await open_keys(pilot)
        assert "Quit" in text and "Everywhere" in text


@run_async
async def test_the_command_palette_runs_this_screens_actions() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await enter_until_leaf(pilot)
        assert "^p" in screen_text(app).splitlines()[-1]
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        for ch in "Save":
            await press(pilot, ch)

        def offered() -> bool:
            found = app.screen.query(CommandList)
            return bool(found) and found.first().option_count > 0 and \
                "Save" in str(found.first().get_option_at_index(0).prompt)

        await until(pilot, offered, "the palette offers Save")
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, SaveScreen)


@run_async
async def test_ctrl_c_copies_a_mouse_selection_and_quits_without_one() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await enter_until_leaf(pilot)
        await pilot.mouse_down("#run-this-commands", offset=(2, 0))
        await pilot.hover("#run-this-commands", offset=(20, 0))
        await pilot.mouse_up("#run-this-commands", offset=(20, 0))
        await until(pilot, app.screen.get_selected_text, "a mouse selection")
        selected = app.screen.get_selected_text()
        assert selected and "vllm serve" in selected
        # from the command's first cell: the "$ " drawn before it is not part of what is copied
        await pilot.mouse_down("#run-this-commands", offset=(0, 0))
        await pilot.hover("#run-this-commands", offset=(20, 1))
        await pilot.mouse_up("#run-this-commands", offset=(20, 1))
        await until(pilot, lambda: (app.screen.get_selected_text() or "").startswith("vllm"), "a selection from the prompt")
        selected = app.screen.get_selected_text()
        assert selected.startswith("vllm serve") and "$ " not in selected, selected
        await press(pilot, "ctrl+c")
        assert app.is_running and app.return_value is None
        assert app.clipboard == selected
        assert any("Selected text" in str(n.message) for n in app._notifications)
        app.screen.clear_selection()
        await press(pilot, "ctrl+c")
    assert app.return_value is not None and app.return_value.code == Exit.CANCELLED


@run_async
async def test_b_in_the_empty_version_box_goes_back_and_types_after_a_digit() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        assert box.has_focus
        box.value = ""
        await press(pilot, "b")
        assert question_id(app) == "symptom" and box.value == ""
        await press(pilot, "enter")
        assert question_id(app) == "vllm_version"
        box.value = "0.11.0rc1"  # letters after a digit still type
        box.cursor_position = len(box.value)
        await press(pilot, "b")
        assert question_id(app) == "vllm_version" and box.value == "0.11.0rc1b"


@run_async
async def test_b_on_a_version_answer_brought_back_by_back_goes_back_again_and_keeps_it() -> None:
    """Back fills the box with the suggested answer, selected: a b there would replace it, so it
    goes back, as in an empty box, and the answer stays."""
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "vllm_version"
        suggested = app.screen.query_one("#version-input", Input).value
        assert suggested
        await press(pilot, "enter")  # the log's version accepted
        assert question_id(app) != "vllm_version"
        await press(pilot, "b")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        assert box.value == suggested and sorted(box.selection) == [0, len(suggested)]  # brought back, selected
        await press(pilot, "b")
        assert question_id(app) == "symptom"
        await press(pilot, "enter")
        assert app.screen.query_one("#version-input", Input).value == suggested


@run_async
async def test_back_shows_the_version_the_user_typed_not_the_suggestion() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        assert box.value and box.value != "0.10.1"  # the suggestion is another version
        box.value = "0.10.1"
        await press(pilot, "enter")
        assert question_id(app) != "vllm_version"
        await press(pilot, "b")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        assert box.value == "0.10.1"


@run_async
async def test_back_lights_the_choice_the_user_picked_and_keeps_the_star_on_the_suggestion() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        first = question_id(app)
        options = app.screen.query_one("#choices", OptionList)
        suggested = options.highlighted
        assert suggested is not None
        assert drawn(options.get_option_at_index(suggested).prompt).startswith("★")
        await press(pilot, "j")
        picked = options.get_option_at_index(options.highlighted).id
        await press(pilot, "enter")
        await press(pilot, "b")
        assert question_id(app) == first
        options = app.screen.query_one("#choices", OptionList)
        assert options.get_option_at_index(options.highlighted).id == picked
        assert drawn(options.get_option_at_index(suggested).prompt).startswith("★")  # still the suggestion
        assert not drawn(options.get_option_at_index(options.highlighted).prompt).startswith("★")


@run_async
async def test_question_mark_in_the_empty_version_box_opens_the_help_and_types_after_a_digit() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        question = app.screen
        box.value = ""
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen) and box.value == ""
        await press(pilot, "escape")
        assert app.screen is question
        box.value = "0.1"
        box.cursor_position = len(box.value)
        await press(pilot, "question_mark")
        assert app.screen is question and box.value == "0.1?"


@run_async
async def test_j_and_k_move_in_lists() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        options = app.screen.query_one("#choices", OptionList)
        start = options.highlighted
        await press(pilot, "j")
        assert options.highlighted == start + 1
        await press(pilot, "k")
        assert options.highlighted == start


@run_async
async def test_tab_completes_a_path_and_moves_on_with_nothing_to_complete(tmp_path: Path) -> None:
    (tmp_path / "vllm-serve-0142.log").write_text("x\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")  # open a log
        box = app.screen.query_one("#path-input", Input)
        assert box.has_focus
        box.value = f"{tmp_path}/"  # the folder filled in (~90 keys); the file's name typed key by key
        await pilot.press("end")
        for ch in "vllm-s":
            await pilot.press(ch)
        await settle(pilot)  # the suggester runs in a worker, then posts its suggestion
        await press(pilot, "tab")
        assert box.value == f"{tmp_path}/vllm-serve-0142.log" and box.has_focus
        await press(pilot, "tab")  # nothing left to complete: Tab moves on
        assert not box.has_focus


@run_async
async def test_ctrl_s_submits_a_one_line_box_as_enter_does() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")
        app.screen.query_one("#path-input", Input).value = "/nonexistent/dir/vllm.log"
        await press(pilot, "ctrl+s")
        message = str(app.screen.query_one("#path-message").render())
        assert "/nonexistent/dir/vllm.log" in message or "no such" in message.lower(), message


@run_async
async def test_the_highlighted_fact_is_shown_in_full_at_80_columns() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        long = "/srv/models/" + "very-long-directory-name/" * 4 + "Qwen3-32B"
        app.override_fact("model", long)
        await press(pilot, "f")
        table = app.screen.query_one("#facts-table")
        table.move_cursor(row=table.get_row_index("model"))

        def flat() -> str:
            return "".join(line.strip() for line in screen_text(app).splitlines())

        await until(pilot, lambda: long in flat(), "the highlighted fact in full")
        assert long in flat(), screen_text(app)


@run_async
async def test_correcting_an_answered_fact_keeps_the_answers_and_back_returns_one_step() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await enter_until_leaf(pilot)
        assert set(app.session.answers) == {"symptom", "vllm_version", "engine", "gpu_arch"}
        await press(pilot, "f")
        app.override_fact("vllm_version", "0.12.0")  # as if typed on the facts screen
        await press(pilot, "escape")
        assert isinstance(app.screen, LeafScreen)
        # The version question is answered again from the new value; the answers after it stay.
        assert set(app.session.answers) == {"symptom", "vllm_version", "engine", "gpu_arch"}
        assert app.session.answers["vllm_version"].value == "0.12.0"
        await press(pilot, "b")
        await settle(pilot)
        assert isinstance(app.screen, QuestionScreen) and question_id(app) == "gpu_arch"


@run_async
async def test_accept_all_says_where_it_stopped_and_why() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.override_fact("vllm_version", "0.10.0")  # the engine question loses its suggestion
        await press(pilot, "enter")
        assert question_id(app) == "symptom"
        await press(pilot, "a")
        assert question_id(app) == "engine"
        messages = [str(n.message) for n in app._notifications]
        assert any("Accepted 2 suggestion(s)" in m and "Which vLLM engine ran it?" in m for m in messages), messages
        footer = screen_text(app).splitlines()[-1]
        count = len(app._notifications)
        await press(pilot, "a")  # greyed out here: nothing happens and nothing more is said
        assert question_id(app) == "engine" and len(app._notifications) == count
        assert "Accept all" in footer


@run_async
async def test_page_keys_scroll_the_diagnosis_and_enter_still_continues() -> None:
    from oomwizard.frontend.options import LaunchOptions
    from oomwizard.tui.app import WizardApp

    app = WizardApp(LaunchOptions(demo=True), environ={})  # the real demo: a long diagnosis
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        body = app.screen.query_one("#diag-body")
        focused = app.focused
        assert body.max_scroll_y > 0 and body.scroll_y == 0
        await press(pilot, "pagedown")
        assert body.scroll_y > 0 and app.focused is focused
        assert "Continue with this" in screen_text(app).splitlines()[-1]
        await press(pilot, "pageup")
        assert body.scroll_y == 0
        await press(pilot, "end")
        assert body.scroll_y == body.max_scroll_y and app.focused is focused
        await press(pilot, "home")
        assert body.scroll_y == 0
        # the arrows pick a match, then go on scrolling the page past the list's last one
        options = app.screen.query_one("#scenarios", OptionList)
        for _ in range(options.option_count - 1 - (options.highlighted or 0)):
            await press(pilot, "down")
        last = options.highlighted
        assert last == options.option_count - 1 and body.scroll_y == 0
        await press(pilot, "down", "down")
        assert body.scroll_y == 2 and options.highlighted == last
        for _ in range(last):  # back up the list from where it is, the page staying
            await press(pilot, "up")
        assert options.highlighted == 0 and body.scroll_y == 2
        await press(pilot, "up")
        assert body.scroll_y == 1  # past the first match: the page scrolls back up
        await press(pilot, "up", "up")
        assert body.scroll_y == 0 and options.highlighted == 0
        await press(pilot, "home", "tab")  # the list keeps the focus: Enter still continues
        assert app.focused is focused
        assert "Continue with this" in screen_text(app).splitlines()[-1]
        await press(pilot, "enter")
        assert isinstance(app.screen, QuestionScreen)
