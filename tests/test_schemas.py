"""Every command's JSON output carries the envelope and matches the schema shipped for its kind.

Real outputs: the demo, every test log against each captured machine, every leaf, a saved report
replayed with ``--machine``. The shipped files are the generator's output, so they cannot drift.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

import jsonschema
import pytest
from schemas import validate_output

from oomwizard.cli import main
from oomwizard.envelope import schema_text
from oomwizard.facts.machine import MachineReport
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE
from oomwizard.kb.loader import get_kb

REPO = Path(__file__).resolve().parent.parent
LOGS = sorted((REPO / "tests" / "logs").glob("*.log"))
MACHINES = [
    DEMO_MACHINE,
    REPO / "tests/fixtures/machine/h200/busy.json",
    REPO / "tests/fixtures/machine/h200/idle.json",
    REPO / "tests/fixtures/machine/h200x2/detect.json",
]
KINDS = ("diagnose", "detect", "show", "verify", "export", "scenarios", "lint")


def _gen():
    spec = importlib.util.spec_from_file_location("gen_schemas", REPO / "scripts" / "gen_schemas.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def run_json(capsys, *argv: str, codes: tuple[int, ...] = (0,)) -> dict:
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code in codes, (argv, code)
    return json.loads(out)


def test_shipped_schemas_are_the_generated_ones() -> None:
    gen = _gen()
    built = gen.build()
    assert sorted(built) == sorted(KINDS)
    for kind, schema in built.items():
        assert schema_text(kind) == gen.render(schema), f"run python scripts/gen_schemas.py ({kind})"
        jsonschema.Draft202012Validator.check_schema(schema)


def test_demo_outputs_of_every_command(capsys) -> None:
    machine = str(DEMO_MACHINE)
    docs = {
        "diagnose": run_json(capsys, "diagnose", str(DEMO_LOG), "--format", "json", "--machine", machine),
        "detect": run_json(capsys, "detect", "--format", "json"),
        "show": run_json(capsys, "show", "sampler-warmup", "--format", "json", "--machine", machine),
        "verify": run_json(capsys, "verify", "sampler-warmup", str(DEMO_LOG), "--format", "json", codes=(8,)),
        "export": run_json(capsys, "export", "--format", "json"),
        "scenarios": run_json(capsys, "scenarios", "--format", "json"),
        "lint": run_json(capsys, "lint", "--format", "json"),
    }
    for kind, doc in docs.items():
        assert list(doc)[:2] == ["schema", "tool"]
        assert validate_output(doc) == kind
    leaf = docs["diagnose"]["leaf"]
    assert leaf["id"] == "sampler-warmup"
    assert [f["number"] for f in leaf["fixes"]] == list(range(1, len(leaf["fixes"]) + 1))
    assert [c["number"] for c in docs["verify"]["checks"]] == [c["number"] for c in leaf["checklist"]]
    assert {s["id"] for s in docs["scenarios"]["scenarios"]} == set(get_kb().scenarios)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda p: p.parent.name + "/" + p.stem)
def test_diagnose_every_log_on_every_machine(capsys, machine: Path) -> None:
    seen = set()
    # every log on the demo and the busy machine; every third elsewhere (the suite shares 2 cores)
    logs = LOGS if machine in MACHINES[:2] else LOGS[::3]
    for log in logs:
        doc = run_json(capsys, "diagnose", str(log), "--format", "json", "--machine", str(machine), codes=(0, 6))
        validate_output(doc)
        if doc["leaf"]:
            seen.add(doc["leaf"]["id"])
    assert len(seen) >= (10 if logs is LOGS else 5)  # many leaves reached: their shapes are exercised


def test_show_and_verify_every_leaf(capsys) -> None:
    kb = get_kb()
    log = str(REPO / "tests" / "logs" / "healthy_startup.log")
    for leaf in kb.leaves:
        validate_output(run_json(capsys, "show", leaf, "--format", "json"))
        validate_output(run_json(capsys, "show", leaf, "--format", "json", "--set", "vllm_version=0.20.0"))
        validate_output(run_json(capsys, "verify", leaf, log, "--format", "json", codes=(0, 8, 9)))


@pytest.mark.parametrize("machine", MACHINES, ids=lambda p: p.parent.name + "/" + p.stem)
def test_saved_reports_replay_as_detect_documents(machine: Path) -> None:
    doc = MachineReport.from_json(json.loads(machine.read_text())).to_json()
    assert validate_output(doc) == "detect"
    again = MachineReport.from_json(json.loads(json.dumps(doc))).to_json()
    assert again == doc  # the envelope replays to itself


def test_machine_refuses_another_commands_output(capsys, tmp_path: Path) -> None:
    diag = tmp_path / "diag.json"
    diag.write_text(json.dumps(run_json(capsys, "diagnose", str(DEMO_LOG), "--format", "json")))
    assert main(["diagnose", str(DEMO_LOG), "--machine", str(diag)]) == 4
    assert "output of `oomwizard diagnose`" in capsys.readouterr().err


@pytest.mark.parametrize("mutate", [
    lambda d: d["leaf"]["fixes"][0].pop("number"),
    lambda d: d["leaf"]["fixes"][0].__setitem__("cost", "cheap"),
    lambda d: d["leaf"]["checklist"][0].__setitem__("number", 0),
    lambda d: d["leaf"].__setitem__("commands", []),
    lambda d: d["tool"].__setitem__("name", "other"),
    lambda d: d["facts"]["model"].__setitem__("kind", "guess"),
    lambda d: d["matches"][0].__setitem__("score", 2),
    lambda d: d.pop("warnings"),
], ids=["no-fix-number", "bad-cost", "check-number-0", "extra-key", "tool-name", "fact-kind", "score", "missing-key"])
def test_the_schemas_refuse_a_wrong_document(capsys, mutate) -> None:
    doc = run_json(capsys, "diagnose", str(DEMO_LOG), "--format", "json", "--machine", str(DEMO_MACHINE))
    validate_output(copy.deepcopy(doc))
    mutate(doc)
    with pytest.raises(jsonschema.ValidationError):
        validate_output(doc)


def test_json_output_needs_an_envelope() -> None:
    from oomwizard.cli import _json

    with pytest.raises(TypeError):
        _json({"x": 1})


def test_a_redacted_key_before_a_newline_keeps_the_json_whole(capsys) -> None:
    """A server command with ``--api-key`` on a replayed machine: the key is read from a variable
    and the JSON escapes around it (``\\"``, ``\\n``) survive the output boundary whole."""
    log = str(REPO / "tests/logs/nvml_assert_mig_serving_v0_063.log")
    machine = str(REPO / "tests/fixtures/machine/h200/busy.json")
    main(["diagnose", log, "--format", "json", "--machine", machine])
    out = capsys.readouterr().out
    doc = json.loads(out)
    commands = [v["command"] for f in doc["leaf"]["fixes"] for v in f["variants"]]
    keyed = [c for c in commands if "--api-key" in c]
    assert keyed and all('--api-key "$VLLM_API_KEY"' in c and "\n" in c for c in keyed)
    assert "sk-" not in out


def test_detect_documents_of_busy_mig_and_mixed_machines(tmp_path: Path) -> None:
    """Detection over fake NVML and /proc (servers, a leftover worker, MIG, mixed GPUs): the
    shapes a laptop's detection never shows."""
    sys.path.insert(0, str(REPO / "tests" / "fixtures" / "machine"))
    from fake_nvml import FakeNVML, mig_spec, mixed_spec
    from test_detect import busy_machine, detect

    proc, nv, _py = busy_machine(tmp_path / "busy")
    reports = [detect(tmp_path / "busy", nv, proc, {"PATH": "/usr/bin", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})]
    (tmp_path / "mig").mkdir()
    reports.append(detect(tmp_path / "mig", FakeNVML(mig_spec())))
    (tmp_path / "mixed").mkdir()
    reports.append(detect(tmp_path / "mixed", FakeNVML(mixed_spec()), env={"CUDA_VISIBLE_DEVICES": "1"}))
    for r in reports:
        doc = json.loads(json.dumps(r.to_json()))
        assert validate_output(doc) == "detect"
    assert reports[0].to_json()["processes"]["servers"]  # the busy machine's server is in the document


def test_an_enveloped_document_passes_the_json_writer_unchanged(capsys) -> None:
    from oomwizard.cli import _json
    from oomwizard.envelope import envelope

    doc = envelope("plan", {"gpus": 2})
    _json(doc)
    assert json.loads(capsys.readouterr().out) == doc
    _json({"ok": True, "problems": []}, "lint")
    assert validate_output(json.loads(capsys.readouterr().out)) == "lint"
