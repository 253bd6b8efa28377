"""``--replay BUNDLE``: a bundle recomputes to the same diagnosis and fix on another machine."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot_apps.pilot import press, run_async, screen_text, settle

from oomwizard.bundle.build import BundleInput, bundle_body, noninteractive, read_logs
from oomwizard.bundle.formats import finish, identities_for
from oomwizard.bundle.replay import BundleError, load_bundle, replay
from oomwizard.cli import main
from oomwizard.engine import Answer
from oomwizard.facts.model import FactSet
from oomwizard.facts.saved import load_report
from oomwizard.frontend.options import LaunchOptions
from oomwizard.kb.loader import get_kb

ROOT = Path(__file__).resolve().parent.parent
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"


def _ranking(diag: dict) -> list[tuple[str, float]]:
    return [(m["scenario"], m["score"]) for m in diag["matches"]]


def _commands(leaf: dict) -> list[tuple[str, str]]:
    return [(f["id"], v["command"]) for f in leaf["fixes"] for v in f["variants"]]


def _round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str], log: Path, *extra: str) -> tuple[dict, dict]:
    bundle = tmp_path / "b.json"
    assert main(["report", "--log", str(log), "--machine", str(DEMO_MACHINE), "--output", str(bundle), *extra]) == 0
    capsys.readouterr()
    assert main(["diagnose", "--replay", str(bundle), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return json.loads(bundle.read_text()), out


def test_report_then_replay_gives_the_same_ranking_leaf_and_commands(tmp_path: Path, capsys) -> None:
    doc, again = _round_trip(tmp_path, capsys, DEMO_LOG)
    assert _ranking(again) == _ranking(doc["diagnosis"]) and again["matches"]
    assert again["leaf"]["id"] == doc["leaf"]["id"] == doc["summary"]["leaf"]
    assert _commands(again["leaf"]) == _commands(doc["leaf"])
    assert [(s["question"], s["answer"]) for s in again["leaf"]["path"]] == [(s["question"], s["answer"]) for s in doc["path"]]
    assert all(f["source"] == "replayed from b.json" for f in again["facts"].values())
    assert again["facts"]["vllm_version"]["detail"].startswith("vllm-serve.log:")


def test_a_redacted_bundle_replays_to_the_same_commands(tmp_path: Path, capsys) -> None:
    log = tmp_path / "n.log"
    text = DEMO_LOG.read_text().replace("'host': '0.0.0.0'", "'host': '10.20.30.40'")
    text = text.replace("meta-llama/Llama-3.3-70B-Instruct", "/home/alicewong/models/Llama-3.3-70B-Instruct")
    log.write_text(text)
    doc, again = _round_trip(tmp_path, capsys, log)
    assert "alicewong" not in json.dumps(doc) and "10.20.30.40" not in json.dumps(doc)
    assert _ranking(again) == _ranking(doc["diagnosis"])
    assert _commands(again["leaf"]) == _commands(doc["leaf"])
    assert any("--host 192.0.2.1" in c for _, c in _commands(again["leaf"]))


def test_a_bundle_of_a_replay_replays_too(tmp_path: Path) -> None:
    from oomwizard.bundle.build import BundleInput
    from oomwizard.bundle.frontend import write_walk_bundle

    first = tmp_path / "b.json"
    assert main(["report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(first)]) == 0
    rp = replay(str(first), get_kb())
    w = BundleInput(get_kb(), "en", diagnosis=rp.diagnosis, machine=rp.machine.data, machine_source="replayed",
                    facts=rp.facts(), replayed_from=str(first), log_paths=[str(first)])
    paths = write_walk_bundle(w, tmp_path)
    second = replay(paths[0], get_kb())
    assert [m.scenario for m in second.diagnosis.matches] == [m.scenario for m in rp.diagnosis.matches]


def _bundle_with_answer(tmp_path: Path) -> Path:
    kb = get_kb()
    diag, kept = read_logs([str(DEMO_LOG)])
    report = load_report(str(DEMO_MACHINE))
    facts = report.facts
    facts.update(diag.facts)
    done = noninteractive(kb, facts, diag, FactSet(), "en")
    # the walk as the wizard records it: every step answered or accepted, one answer changed
    answers = {s.question: Answer(s.answer, s.source) for s in done.path}
    answers["changed_recently"] = Answer("first_run")
    b = BundleInput(kb, "en", diag, kept, report.data, "file", answers=answers,
                    order=[s.question for s in done.path], interactive=True)
    doc = finish(bundle_body(b), identities_for())
    path = tmp_path / "walk.json"
    path.write_text(json.dumps(doc))
    return path


def test_plain_replay_fills_in_the_answers_and_marks_the_facts(tmp_path: Path) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from oomwizard.bundle.frontend import replay_sources
    from oomwizard.plain import run_plain

    opts = LaunchOptions(replay=str(_bundle_with_answer(tmp_path)))
    sources = replay_sources(opts)
    out, err = io.StringIO(), io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("\r" * 12)
        inp.close()
        code = run_plain(opts, kb=get_kb(), sources=sources, prompt_kwargs={"input": inp, "output": DummyOutput()},
                         numbered=True, line_input=io.StringIO("\n" * 12), out=out, err=err)
    text = out.getvalue()
    assert code == 0, err.getvalue()
    label = next(c.label("en") for c in get_kb().questions["changed_recently"].choices if c.id == "first_run")
    assert f"{label}  [answered" in text
    assert get_kb().questions["changed_recently"].text("en") not in text.split("==")[0]  # never asked
    assert "replayed from walk.json" in err.getvalue() or "replayed from walk.json" in text


def test_tui_replay_shows_every_fact_as_replayed(tmp_path: Path) -> None:
    from oomwizard.bundle.frontend import replay_sources
    from oomwizard.tui.app import WizardApp
    from oomwizard.tui.screens.leaf import LeafScreen

    bundle = tmp_path / "b.json"
    assert main(["report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(bundle)]) == 0
    opts = LaunchOptions(replay=str(bundle))
    app = WizardApp(opts, kb=get_kb(), sources=replay_sources(opts), environ={})
    seen: dict[str, str] = {}

    async def walk() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert {f.source for f in app.session.facts} == {"replayed from b.json"}
            await press(pilot, "f")
            seen["facts"] = screen_text(app)
            await press(pilot, "escape")
            for _ in range(15):
                if isinstance(app.screen, LeafScreen):
                    break
                await press(pilot, "enter")
            assert isinstance(app.screen, LeafScreen)
            seen["leaf"] = app.screen.done.leaf.id
            await press(pilot, "q")

    run_async(walk)()
    assert "replayed from b.json" in seen["facts"]
    assert seen["leaf"] == json.loads(bundle.read_text())["leaf"]["id"]


def _write(tmp_path: Path, doc: object) -> str:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("g") / "b.json"
    assert main(["report", "--log", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--output", str(out)]) == 0
    return json.loads(out.read_text())


def test_broken_bundles_are_refused_with_the_field_and_exit_4(tmp_path: Path, good: dict, capsys) -> None:
    cases: list[tuple[object, str]] = [
        (json.loads(DEMO_MACHINE.read_text()), "expected 'oomwizard/report/v1'"),
        ([], "not an `oomwizard report"),
    ]
    bad = json.loads(json.dumps(good))
    bad["log"]["inputs"][0]["lines"][3]["pieces"][0][0] = "7"
    cases.append((bad, "log.inputs[0].lines[3].pieces[0][0]: expected a line number"))
    bad = json.loads(json.dumps(good))
    bad["machine"]["gpus"][0]["memory"]["total"] = -1
    cases.append((bad, "machine.gpus[0].memory.total: -1 is negative"))
    bad = json.loads(json.dumps(good))
    bad["answers"] = [{"question": 3}]
    cases.append((bad, "answers[0].question: expected a string"))
    for doc, words in cases:
        path = _write(tmp_path, doc)
        with pytest.raises(BundleError, match=None) as e:
            load_bundle(path)
        assert words in str(e.value)
        assert main(["diagnose", "--replay", path]) == 4
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


def test_files_that_are_not_a_bundle(tmp_path: Path, capsys) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(33 * 1024**2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    text = tmp_path / "t.json"
    text.write_text("{not json")
    for path, words in ((big, "more than the 32 MiB a saved bundle can be"), (fifo, "not a regular file"),
                        (tmp_path, "a folder"), (text, "not valid JSON"), (tmp_path / "none", "No such file")):
        assert main(["diagnose", "--replay", str(path)]) == 4
        assert words in capsys.readouterr().err


def test_a_replayed_bundle_says_the_readers_remarks_in_the_operators_language(tmp_path: Path) -> None:
    # A log with binary data in it: the reader's remark is kept in both languages and replayed so.
    log = tmp_path / "vllm.log"
    log.write_bytes(DEMO_LOG.read_bytes() + bytes(range(32)) * 64 + b"\n")
    bundle = tmp_path / "b.json"
    assert main(["report", "--log", str(log), "--machine", str(DEMO_MACHINE), "--output", str(bundle)]) == 0
    doc = load_bundle(str(bundle))
    assert doc["log"]["warnings"] and len(doc["log"]["warnings_zh"]) == len(doc["log"]["warnings"])
    rp = replay(str(bundle), get_kb())
    assert rp.diagnosis is not None and rp.diagnosis.warnings
    assert [w.en for w in rp.diagnosis.warnings] == doc["log"]["warnings"]
    assert all(any("\u4e00" <= c <= "\u9fff" for c in w.zh) for w in rp.diagnosis.warnings)
    # a bundle from before the Chinese was kept replays its English to both
    del doc["log"]["warnings_zh"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc), encoding="utf-8")
    assert all(w.zh == w.en for w in replay(str(old), get_kb()).diagnosis.warnings)
