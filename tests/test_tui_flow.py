"""The full-screen wizard driven with the keyboard only, on the fixture knowledge base.

Inputs are stand-ins (a diagnosed sampler warm-up log, an H200 machine) so each test walks a known
path; the screens, the session and the rendering underneath are the real ones.
"""

from __future__ import annotations

import base64
import io
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import (
    enter_until_leaf,
    press,
    question_id,
    run_async,
    screen_text,
    settle,
    to_questions,
    until,
)
from snapshot_apps.stand_ins import (
    HOSTILE_LINE,
    StandIns,
    fixture_kb,
    h200_machine,
    make_app,
    no_gpu_machine,
)
from textual.widgets import DataTable, Input, Markdown, OptionList, Static, TabbedContent, TextArea

from oomwizard.engine import Ask, Done
from oomwizard.exitcodes import Exit
from oomwizard.frontend.inputs import MachineResult, Sources, default_sources
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE, LaunchOptions
from oomwizard.tui.app import Outcome, WizardApp, print_outcome, run_tui
from oomwizard.tui.screens.diagnosis import DiagnosisScreen
from oomwizard.tui.screens.facts import FactsScreen
from oomwizard.tui.screens.help import HelpScreen
from oomwizard.tui.screens.leaf import LeafScreen
from oomwizard.tui.screens.question import QuestionScreen
from oomwizard.tui.screens.save import SaveScreen
from oomwizard.tui.screens.welcome import WelcomeScreen
from oomwizard.tui.widgets.checklist import ChecklistItem
from oomwizard.tui.widgets.commands import CommandBlock, FixCard

SIZE = (80, 24)
LOG = __file__  # any readable file: the stand-in diagnosis does not read it


# --- the main path ----------------------------------------------------------------------------


@run_async
async def test_enter_on_every_suggestion_reaches_the_leaf_with_this_machines_numbers() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        asked = []
        while isinstance(app.screen, QuestionScreen):
            step = app.session.current()
            assert isinstance(step, Ask)
            assert step.suggestion is not None, f"{step.question.id} has no suggestion"
            asked.append(step.question.id)
            await press(pilot, "enter")
        leaf = app.screen
        assert isinstance(leaf, LeafScreen)
        assert leaf.done.leaf.id == "sampler-warmup"
        assert asked == ["symptom", "vllm_version", "engine", "gpu_arch"]
        assert [s.how for s in leaf.done.path] == ["accepted"] * 4
        assert leaf.done.path[-1].source == "NVML"
        # The first fix is applied to the command line the log recorded, with the halved value.
        first = leaf.query_one("#fix-1", FixCard)
        block = first.query_one(CommandBlock)
        assert "--max-num-seqs 512" in block.script
        assert "--max-num-seqs 1024" not in block.script
        assert "512" in screen_text(app) and "dummy requests" in screen_text(app)


@run_async
async def test_a_changed_answer_takes_another_branch() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        options = app.screen.query_one("#choices", OptionList)
        assert options.highlighted == 0  # the suggestion (sampler) is pre-selected
        await press(pilot, "down", "enter")  # max_model_len does not fit, against the log
        assert question_id(app) == "vllm_version"
        screen = await enter_until_leaf(pilot)
        assert screen.done.leaf.id == "kv-cache-too-small"
        assert screen.done.path[0].how == "answered"
        assert screen.done.path[0].answer == "kv_too_small"
        # the context length is computed from the KV cache size the log printed
        assert "--max-model-len 1302528" in screen.query_one(CommandBlock).script


@run_async
async def test_back_from_a_question_and_from_the_leaf() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "engine"
        await press(pilot, "b")
        assert question_id(app) == "vllm_version"
        await press(pilot, "escape")
        assert question_id(app) == "symptom"
        await press(pilot, "b")  # nothing answered: back to the diagnosis
        assert isinstance(app.screen, DiagnosisScreen)
        await press(pilot, "enter")
        await enter_until_leaf(pilot)
        await press(pilot, "b")
        assert isinstance(app.screen, QuestionScreen)
        assert question_id(app) == "gpu_arch"
        assert "gpu_arch" not in app.session.answers


@run_async
async def test_help_shows_why_we_ask() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.question.id == "symptom"
        markdown = app.screen.query_one(Markdown)
        assert "decides which branch" in markdown.source
        await press(pilot, "escape")
        assert isinstance(app.screen, QuestionScreen)
        assert question_id(app) == "symptom"


@run_async
async def test_accept_all_stops_at_the_leaf_when_everything_is_suggested() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "a")
        assert isinstance(app.screen, LeafScreen)
        assert app.screen.done.leaf.id == "sampler-warmup"


# --- versions, facts -------------------------------------------------------------------------


@run_async
async def test_version_input_validates_and_q_types_instead_of_quitting() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "enter")
        assert question_id(app) == "vllm_version"
        box = app.screen.query_one("#version-input", Input)
        assert box.value == "0.11.0"  # pre-filled from the log
        box.value = ""
        await press(pilot, "q", "x")
        assert app.is_running and box.value == "qx"
        await press(pilot, "enter")
        assert question_id(app) == "vllm_version"  # rejected
        box.value = "v0.8.5"
        await press(pilot, "enter")
        assert question_id(app) == "engine"
        assert app.session.answers["vllm_version"].value == "0.8.5"
        assert app.session.answers["vllm_version"].source == "answered"
        # 0.8.5 is below the auto rule's range: no suggestion for the engine any more
        step = app.session.current()
        assert isinstance(step, Ask) and step.suggestion is None
        # the cursor rests on "Not sure", which asserts nothing
        options = app.screen.query_one("#choices", OptionList)
        assert options.get_option_at_index(options.highlighted or 0).id == "unknown"


@run_async
async def test_dont_know_a_version() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "enter", "tab", "enter")
        assert question_id(app) == "engine"
        assert app.session.answers["vllm_version"].value == "unknown"


@run_async
async def test_facts_override_is_validated_and_changes_the_suggestions() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "enter", "enter")
        assert question_id(app) == "engine"
        await press(pilot, "f")
        assert isinstance(app.screen, FactsScreen)
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=table.get_row_index("gpu_arch"))
        await press(pilot, "enter")
        box = app.screen.query_one("#editor-input", Input)
        assert box.value == "hopper"
        box.value = "pascal"
        await press(pilot, "enter")
        error = str(app.screen.query_one("#editor-error").render())
        assert "expected one of" in error and "pascal" in error
        assert app.session.facts.value("gpu_arch") == "hopper"
        box.value = "ampere"
        await press(pilot, "enter")
        fact = app.session.facts.get("gpu_arch")
        assert fact is not None and fact.value == "ampere" and fact.kind == "answered"
        assert "hopper" in screen_text(app)  # the machine reading stays visible as an alternative
        await press(pilot, "escape")
        assert isinstance(app.screen, QuestionScreen)
        await press(pilot, "enter")
        step = app.session.current()
        assert isinstance(step, Ask) and step.question.id == "gpu_arch"
        assert step.suggestion is not None and step.suggestion.answer == "ampere"


@run_async
async def test_set_any_fact_by_name() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "f", "n")
        box = app.screen.query_one("#editor-input", Input)
        box.value = "no_such_fact"
        await press(pilot, "enter")
        assert "no_such_fact" in str(app.screen.query_one("#editor-error").render())
        box.value = "max_num_se"  # a unique prefix is enough
        await press(pilot, "enter")
        box.value = "2,048"
        await press(pilot, "enter")
        assert app.session.facts.value("max_num_seqs") == 2048


# --- the leaf: copy, save, checklist, exit ------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, data: str) -> None:
        self.written.append(data)

    def flush(self) -> None:
        pass


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@run_async
async def test_copy_sends_osc52_to_the_terminal() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        leaf = await enter_until_leaf(pilot)
        recorder = Recorder()
        app._driver.write = recorder.write  # type: ignore[method-assign,union-attr]
        await press(pilot, "c")
        script = leaf.query_one("#fix-1", FixCard).copy_text
        assert recorder.written == [f"\x1b]52;c;{_b64(script)}\a"]
        assert app.clipboard == script


@run_async
async def test_copy_under_tmux_wraps_the_sequence_and_fills_the_paste_buffer() -> None:
    si = StandIns()
    app = make_app(logs=[LOG], stand_ins=si, environ={"TMUX": "/tmp/tmux-0/default,1,0"})
    buffered: list[str] = []
    app.clipboard_runner = lambda text: buffered.append(text) or True  # type: ignore[func-returns-value]
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        leaf = await enter_until_leaf(pilot)
        recorder = Recorder()
        app._driver.write = recorder.write  # type: ignore[method-assign,union-attr]
        await press(pilot, "tab", "tab", "tab")  # from the body: fix 1, its copy button, then fix 2
        assert leaf.query_one("#fix-2", FixCard).has_focus
        await press(pilot, "c")
        await settle(pilot)
        script = leaf.query_one("#fix-2", FixCard).copy_text
        assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in script
        assert recorder.written == [f"\x1bPtmux;\x1b\x1b]52;c;{_b64(script)}\a\x1b\\"]
        assert buffered == [script]
        assert any("tmux's paste buffer" in n.message for n in app._notifications)


@run_async
async def test_the_save_box_takes_ctrl_s_and_completes_a_path_with_tab(tmp_path: Path) -> None:
    (tmp_path / "runbooks").mkdir()
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await enter_until_leaf(pilot)
        await press(pilot, "s")
        box = app.screen.query_one("#save-input", Input)
        box.value = str(tmp_path / "run")
        box.cursor_position = len(box.value)
        await until(pilot, lambda: box._suggestion != "", "the completion offered")
        await press(pilot, "tab")
        assert box.value == str(tmp_path / "runbooks") + "/"
        box.value += "fix.sh"
        await press(pilot, "ctrl+s")  # the same submit key as every other box
        assert isinstance(app.screen, LeafScreen)
        assert (tmp_path / "runbooks" / "fix.sh").read_text().startswith("#!/bin/sh")


@run_async
async def test_save_never_overwrites_silently(tmp_path: Path) -> None:
    app = make_app(logs=[LOG])
    target = tmp_path / "fix.sh"
    target.write_text("keep me\n")
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await enter_until_leaf(pilot)
        await press(pilot, "s")
        assert isinstance(app.screen, SaveScreen)
        box = app.screen.query_one(Input)
        assert box.value == "./oomwizard-fix-sampler-warmup.sh"
        box.value = str(target)
        await press(pilot, "enter")
        assert isinstance(app.screen, SaveScreen)
        assert "exists" in str(app.screen.query_one("#save-message").render())
        assert target.read_text() == "keep me\n"
        await press(pilot, "enter")  # the second Enter confirms
        assert isinstance(app.screen, LeafScreen)
        text = target.read_text()
        assert text.startswith("#!/bin/sh")
        assert "--max-num-seqs 512" in text
        assert app.outcome.saved == [str(target.resolve())]
        # Markdown by extension
        await press(pilot, "s")
        box = app.screen.query_one(Input)
        box.value = str(tmp_path / "fix.md")
        await press(pilot, "enter")
        md = (tmp_path / "fix.md").read_text()
        assert md.startswith("# The sampler warm-up ran out of memory")
        assert "```bash" in md and "- [ ]" in md


@run_async
async def test_checklist_has_real_checkboxes_marking_automatic_checks() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        leaf = await enter_until_leaf(pilot)
        await press(pilot, "2")
        assert leaf.query_one(TabbedContent).active == "checklist"
        items = list(leaf.query(ChecklistItem))
        assert len(items) == 2
        assert items[0].auto_label and not items[1].auto_label
        assert items[0].has_focus
        await press(pilot, "space")
        assert items[0].checked
        await press(pilot, "down")
        assert items[1].has_focus
        await press(pilot, "enter")
        assert items[1].checked
        await press(pilot, "enter")
        assert not items[1].checked


@run_async
async def test_quit_on_the_leaf_returns_the_fix_to_print_and_prints_it() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await enter_until_leaf(pilot)
        await press(pilot, "q")
    outcome = app.return_value
    assert isinstance(outcome, Outcome)
    assert outcome.code == Exit.OK
    assert isinstance(outcome.done, Done) and outcome.done.leaf.id == "sampler-warmup"
    out, err = io.StringIO(), io.StringIO()
    print_outcome(outcome, "en", out, err, width=80)
    printed = out.getvalue()
    assert "== The sampler warm-up ran out of memory ==" in printed
    assert "$ vllm serve Qwen/Qwen3-32B" in printed and "--max-num-seqs 512" in printed
    assert "[ ] Send a request with the largest batch" in printed
    assert err.getvalue() == ""


@run_async
async def test_quit_elsewhere_prints_nothing() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "q")
    outcome = app.return_value
    assert isinstance(outcome, Outcome) and outcome.done is None
    out, err = io.StringIO(), io.StringIO()
    print_outcome(outcome, "en", out, err)
    assert out.getvalue() == "" and err.getvalue() == ""


@run_async
async def test_ctrl_c_quits_cleanly_even_while_typing() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        await press(pilot, "enter")
        assert app.screen.query_one("#version-input", Input).has_focus
        await press(pilot, "ctrl+c")
    assert app.return_value is not None and app.return_value.code == Exit.CANCELLED


# --- start-up, detection, inputs --------------------------------------------------------------


@run_async
async def test_detection_runs_in_the_background_and_fills_in_suggestions_late() -> None:
    gate = threading.Event()
    app = make_app(stand_ins=StandIns(gate=gate))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "reading GPUs" in screen_text(app), "detection under way", workers=False)
        assert isinstance(app.screen, WelcomeScreen)
        assert app.machine.status == "running"
        assert "reading GPUs" in screen_text(app)
        # answer questions while detection is still running
        app.screen.query_one("#actions", OptionList).highlighted = 3
        await press(pilot, "enter")
        assert isinstance(app.screen, QuestionScreen)
        await press(pilot, "enter")  # symptom: nothing known, "Not sure"
        app.screen.query_one("#version-input", Input).value = "0.11.0"
        await press(pilot, "enter", "enter")
        assert question_id(app) == "gpu_arch"
        step = app.session.current()
        assert isinstance(step, Ask) and step.suggestion is None
        gate.set()
        await settle(pilot)
        step = app.session.current()
        assert isinstance(step, Ask) and step.suggestion is not None and step.suggestion.answer == "hopper"
        options = app.screen.query_one("#choices", OptionList)
        assert options.get_option_at_index(options.highlighted or 0).id == "hopper"
        assert "from NVML" in screen_text(app)


@run_async
async def test_detection_failure_is_reported_not_fatal() -> None:
    app = make_app(stand_ins=StandIns(detect_error=RuntimeError("NVML exploded")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.machine.status == "failed"
        assert "NVML exploded" in screen_text(app)
        assert isinstance(app.screen, WelcomeScreen)


@run_async
async def test_no_gpu_and_no_log_puts_the_demo_first_and_enter_opens_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WelcomeScreen, "_demo_available", lambda self: True)
    si = StandIns(machine=no_gpu_machine())
    app = make_app(stand_ins=si)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        actions = app.screen.query_one("#actions", OptionList)
        assert actions.get_option_at_index(0).id == "demo"
        assert actions.highlighted == 0
        text = screen_text(app)
        assert "the demo shows" in text
        assert "libnvidia-ml.so.1 was not found" in text
        assert "⏎ Choose" in text  # the footer says what Enter does
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        assert si.read_paths == [[str(DEMO_LOG)]]
        assert app.machine.result is not None and app.machine.result.replayed_from == str(DEMO_MACHINE)


class _DemoIsAnH200(StandIns):
    """This box has no GPU; the demo's machine report (replayed) is an H200's."""

    def _replay(self, path: str) -> MachineResult:
        return MachineResult(h200_machine().facts, replayed_from=path)


@run_async
async def test_back_from_the_demo_this_machine_is_read_again_and_the_demos_facts_are_gone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WelcomeScreen, "_demo_available", lambda self: True)
    app = make_app(stand_ins=_DemoIsAnH200(machine=no_gpu_machine()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")  # the demo, first where there is no GPU
        await until(pilot, lambda: app.log_state.status == "done" and app.machine.status == "done", "the demo read")
        app.choose_scenario("profile-run-oom")  # a choice made in the demo
        assert app.session.facts.value("gpu_arch") is not None  # the demo's H200
        await press(pilot, "b")
        assert isinstance(app.screen, WelcomeScreen)
        await until(pilot, lambda: app.machine.status == "done", "this machine read again")
        assert app.machine.result is not None and app.machine.result.replayed_from is None
        assert "libnvidia-ml.so.1 was not found" in screen_text(app) and "H200" not in screen_text(app)
        assert app.log_state.status == "idle" and not app.has_logs() and not app.opts.demo
        facts = app.session.facts
        assert facts.value("gpu_arch") is None and facts.get("diagnosis") is None and facts.get("vllm_version") is None
        assert app.screen.query_one("#actions", OptionList).get_option_at_index(0).id == "demo"  # offered again


@run_async
async def test_with_a_gpu_the_demo_stays_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WelcomeScreen, "_demo_available", lambda self: True)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        actions = app.screen.query_one("#actions", OptionList)
        assert actions.get_option_at_index(0).id == "open_log"
        assert "the demo shows" not in screen_text(app)


@run_async
async def test_open_a_log_validates_the_path(tmp_path: Path) -> None:
    si = StandIns()
    app = make_app(stand_ins=si)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "enter")  # open a log file
        box = app.screen.query_one("#path-input", Input)
        assert box.has_focus
        box.value = str(tmp_path / "missing.log")
        await press(pilot, "enter")
        assert "No such file" in screen_text(app)
        box.value = str(tmp_path)
        await press(pilot, "enter")
        assert "is a folder" in " ".join(screen_text(app).split())  # the long path wraps the message
        assert si.read_paths == []
        log = tmp_path / "vllm.log.gz"
        log.write_bytes(b"\x1f\x8b")
        box.value = str(log)
        await press(pilot, "enter")
        await settle(pilot)
        assert si.read_paths == [[str(log)]]
        assert isinstance(app.screen, DiagnosisScreen)


@pytest.mark.parametrize("rows", [10, 14, 18, 20, 24])
@run_async
async def test_the_path_box_is_scrolled_into_view_on_a_short_terminal(rows: int) -> None:
    app = make_app(stand_ins=StandIns())
    async with app.run_test(size=(80, rows)) as pilot:
        await settle(pilot)
        await press(pilot, "enter")  # open a log file
        box = app.screen.query_one("#path-input", Input)
        keys = app.screen.query_one("#path-message")  # the keys under it, not the input alone
        body = app.screen.query_one("#welcome-body")
        await until(pilot, lambda: keys.region.height > 0 and body.region.contains_region(keys.region)
                    and body.region.contains_region(box.region), "the path box and its keys on screen")
        assert box.has_focus


@run_async
async def test_an_unreadable_log_returns_to_the_welcome_screen_with_the_reason() -> None:
    si = StandIns()
    app = make_app(logs=["/nonexistent/vllm.log"], stand_ins=si)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert app.log_state.status == "failed"
        assert "no such file" in (app.log_state.error or "")


@run_async
async def test_paste_a_log() -> None:
    si = StandIns()
    app = make_app(stand_ins=si)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "down", "enter")
        area = app.screen.query_one(TextArea)
        assert area.has_focus
        await press(pilot, "ctrl+s")
        assert si.pasted == []  # nothing pasted: refused
        area.insert("RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests.")
        await press(pilot, "ctrl+s")
        await settle(pilot)
        assert si.pasted and "256 dummy requests" in si.pasted[0]
        assert isinstance(app.screen, DiagnosisScreen)


@run_async
async def test_a_paste_from_a_colour_console_shows_and_diagnoses_the_text_without_its_escapes() -> None:
    from textual import events

    si = StandIns()
    app = make_app(stand_ins=si)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "down", "enter")
        area = app.screen.query_one(TextArea)
        coloured = ("\x1b[1;36m(EngineCore_DP0 pid=48213)\x1b[0;0m ERROR 10-14 09:14:46 [core.py:708] RuntimeError: "
                    "CUDA out of memory occurred when warming up sampler with 1024 dummy requests.\n")
        app.post_message(events.Paste(coloured * 2))  # as the terminal delivers a bracketed paste
        await until(pilot, lambda: "dummy requests" in area.text, "the paste in the box")
        assert "\x1b" not in area.text and area.text.startswith("(EngineCore_DP0 pid=48213) ERROR")
        assert area.text.count("\n") == 2  # one paste, not two
        await press(pilot, "ctrl+s")
        await settle(pilot)
        assert si.pasted == [area.text]


@run_async
async def test_log_text_never_reaches_the_terminal_raw() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = app.screen.query_one("#diag-detail")
        rendered = "\n".join(str(w.render()) for w in detail.query(Static))
        assert "GPU KV cache size: 1,302,528 tokens" in rendered
        assert "\x1b" not in rendered and "\x07" not in rendered
        assert "cm0gLXJmIH4=" not in rendered  # the OSC 52 payload is dropped with its sequence
        assert "\x1b" in HOSTILE_LINE  # (the input really was hostile)


@run_async
async def test_choosing_the_second_scenario_on_the_diagnosis_screen() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "94%" in screen_text(app)
        await press(pilot, "down", "enter")
        step = app.session.current()
        assert isinstance(step, Ask)
        assert step.suggestion is not None and step.suggestion.answer == "kv_too_small"


@run_async
async def test_chinese() -> None:
    app = make_app(logs=[LOG], lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        text = screen_text(app)
        assert "故障表现是什么？" in text
        assert "返回" in text  # footer in Chinese
        await enter_until_leaf(pilot)
        text = screen_text(app)
        assert "sampler 预热时显存不足" in text
        assert "修复" in text


@run_async
async def test_fixture_kb_is_complete() -> None:
    kb = fixture_kb()
    assert set(kb.leaves) == {"sampler-warmup", "kv-cache-too-small", "oom-triage"}


# --- the real thing: bundled demo, real log reader, real knowledge base ------------------------


@pytest.mark.skipif(not (DEMO_LOG.exists() and DEMO_MACHINE.exists()), reason="demo files not present")
@run_async
async def test_demo_end_to_end_with_the_real_reader_and_knowledge_base() -> None:
    app = WizardApp(LaunchOptions(demo=True), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        assert app.log_state.diagnosis is not None and app.log_state.diagnosis.best is not None
        scenario = app.log_state.diagnosis.best.scenario
        leaf = await enter_until_leaf(pilot, limit=30)
        assert scenario in leaf.done.leaf.scenarios
        scripts = [block.script for block in leaf.query(CommandBlock)]
        assert scripts and any("vllm serve" in s for s in scripts)
        await press(pilot, "q")
    outcome = app.return_value
    assert outcome is not None and outcome.done is not None
    out, err = io.StringIO(), io.StringIO()
    print_outcome(outcome, "en", out, err, width=80)
    assert f"[{outcome.done.leaf.id}]" in out.getvalue()


@run_async
async def test_a_correction_while_on_the_leaf_redraws_its_commands() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        leaf = await enter_until_leaf(pilot)
        assert "--max-num-seqs 512" in leaf.query_one("#fix-1", FixCard).copy_text
        app.override_fact("sampler_dummy_requests", "256")  # as if corrected on the facts screen
        await settle(pilot)
        assert "--max-num-seqs 128" in leaf.query_one("#fix-1", FixCard).copy_text
        assert app.screen is leaf and not leaf._moved


# --- the footer and the suggestion at 80x24 ---------------------------------------------------


@run_async
async def test_the_footer_always_says_how_to_go_on() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "⏎ Continue with this" in screen_text(app).splitlines()[-1]
        await press(pilot, "enter")
        footer = screen_text(app).splitlines()[-1]
        assert "⏎ Choose" in footer and "? Why we ask" in footer and "q Quit" in footer
        await press(pilot, "enter")  # the version box: q and ? type, so the footer names F1 and Ctrl+Q
        footer = screen_text(app).splitlines()[-1]
        assert "F1 Why we ask" in footer and "^q Quit" in footer
        assert "? Why we ask" not in footer and "q Quit" not in footer.replace("^q Quit", "")
        await press(pilot, "f1")
        assert isinstance(app.screen, HelpScreen) and app.screen.question.id == "vllm_version"


@run_async
async def test_chinese_footer() -> None:
    app = make_app(logs=[LOG], lang="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "⏎ 以此继续" in screen_text(app).splitlines()[-1]
        await press(pilot, "enter")
        assert "⏎ 选择" in screen_text(app).splitlines()[-1]


@pytest.mark.skipif(not (DEMO_LOG.exists() and DEMO_MACHINE.exists()), reason="demo files not present")
@run_async
async def test_every_suggestion_and_its_source_is_visible_at_80x24_on_the_real_tree() -> None:
    """Long lists (the first question has over a dozen choices) must not push the source off screen."""
    app = WizardApp(LaunchOptions(demo=True), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await to_questions(pilot)
        seen_long_list = False
        for _ in range(30):
            if not isinstance(app.screen, QuestionScreen):
                break
            step = app.session.current()
            assert isinstance(step, Ask)
            text = screen_text(app)
            if step.question.kind == "choice" and len(step.question.choices) > 10:
                seen_long_list = True
            if step.suggestion is not None:
                line = next((ln for ln in text.splitlines() if "Suggested:" in ln), None)
                assert line is not None, f"{step.question.id}: suggestion not on screen\n{text}"
                assert "from " in text.split("Suggested:", 1)[1]
                facts = [app.session.facts.get(n) for n in step.suggestion.facts]
                if any(f is not None and f.kind == "log" for f in facts):
                    assert "vllm-serve.log:" in text, text  # the file and line, not a long path
            await press(pilot, "enter")
        assert seen_long_list
        assert isinstance(app.screen, LeafScreen)


@run_async
async def test_a_wrapped_choice_keeps_a_hanging_indent() -> None:
    app = make_app(logs=[LOG])
    async with app.run_test(size=(60, 24)) as pilot:
        await to_questions(pilot)
        lines = screen_text(app).splitlines()
        first = next(i for i, ln in enumerate(lines) if '★ "CUDA out of memory occurred' in ln)
        column = lines[first].index("★") + 2
        continuation = lines[first + 1]
        assert continuation[:column].strip() == "" and continuation[column] != " ", lines[first : first + 2]


# --- inputs that are not what they should be --------------------------------------------------


def real_reader(stand_ins: StandIns) -> Sources:
    """The real log reader with the stand-in machine."""
    real = default_sources()
    fixed = stand_ins.sources()
    return Sources(real.diagnose_paths, real.diagnose_text, fixed.detect_machine, fixed.replay_machine)


@run_async
async def test_a_paste_with_nothing_recognisable_says_so_and_the_questions_still_work() -> None:
    si = StandIns()
    app = WizardApp(LaunchOptions(), kb=fixture_kb(), sources=real_reader(si), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "down", "enter")
        app.screen.query_one(TextArea).insert("hello from the wrong window\nnothing to see here\n")
        await press(pilot, "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        text = screen_text(app)
        assert "No known out-of-memory failure was recognised" in text
        assert "no out-of-memory error or other failure this tool knows was found" in text
        await press(pilot, "enter")
        assert isinstance(app.screen, QuestionScreen) and question_id(app) == "symptom"


@run_async
async def test_a_binary_file_given_as_the_log_is_called_so(tmp_path: Path) -> None:
    blob = tmp_path / "core.12345"
    blob.write_bytes(bytes(range(256)) * 64)
    si = StandIns()
    app = WizardApp(LaunchOptions(logs=[str(blob)]), kb=fixture_kb(), sources=real_reader(si), environ={})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DiagnosisScreen)
        assert "looks like a binary file" in screen_text(app)


def test_a_broken_knowledge_base_ends_the_wizard_and_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It loads after the first frame; when it is broken the wizard ends and says why on stderr."""
    from textual.app import App

    (tmp_path / "decision_trees").mkdir()
    (tmp_path / "decision_trees" / "tree.yaml").write_text("start: [\n", encoding="utf-8")
    monkeypatch.setenv("OOMWIZARD_KB", str(tmp_path))
    monkeypatch.setattr(WizardApp, "run", lambda self, **kw: App.run(self, headless=True))
    assert run_tui(LaunchOptions()) == Exit.KB_INVALID
    err = capsys.readouterr().err
    assert "the knowledge base is broken" in err and "oomwizard lint" in err and "tree.yaml" in err


@pytest.mark.parametrize("cols", [60, 80, 100, 200])
@run_async
async def test_the_facts_table_shows_every_cell_whole_at_every_width(cols: int) -> None:
    """No fact name, value or source is cut: each row is as tall as its longest cell needs in its
    column, and the columns together fit the screen."""
    from rich.cells import cell_len

    app = WizardApp(LaunchOptions(demo=True), environ={})  # the real demo: names, paths, long sources
    async with app.run_test(size=(cols, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        assert isinstance(app.screen, FactsScreen)
        table = app.screen.query_one("#facts-table", DataTable)
        widths = [c.width for c in table.columns.values()]
        assert sum(widths) + 7 <= max(40, cols)
        assert table.row_count == len(app.session.facts) > 10
        for key, row in table.rows.items():
            cells = table.get_row(key)
            need = max(-(-cell_len(str(c)) // w) for c, w in zip(cells, widths, strict=True))
            assert row.height >= need, (key.value, [str(c) for c in cells], widths)
            assert all(not str(c).endswith("…") for c in cells)
