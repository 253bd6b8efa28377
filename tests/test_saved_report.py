"""`--machine FILE` is read only when it is a bounded regular file, and a value that cannot be
real stops with exit 4 and the field's name instead of turning into a fix."""

from __future__ import annotations

import copy
import json
import os

import pytest

from oomwizard.cli import main
from oomwizard.facts.saved import LIMIT, ReportError, load_report
from oomwizard.frontend.inputs import InputProblem, default_sources
from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE

DEMO = json.loads(DEMO_MACHINE.read_text())


def edited(tmp_path, change) -> str:
    data = copy.deepcopy(DEMO)
    change(data)
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(data))
    return str(path)


def run(capsys, *args: str) -> tuple[int, str]:
    rc = main(list(args))
    err = capsys.readouterr().err
    return rc, err


def gpu(data):
    return data["gpus"][0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: gpu(d)["memory"].update(total=-1), "gpus[0].memory.total: -1 is negative; it must be a size in bytes"),
        (lambda d: gpu(d)["memory"].update(total=10**20), "gpus[0].memory.total: 100000000000000000000 bytes is more than 16 TiB"),
        (lambda d: gpu(d)["memory"].update(free=gpu(d)["memory"]["total"] + 1), "gpus[0].memory.free: 150754820097 is more than the total (150754820096)"),
        (lambda d: gpu(d)["memory"].update(used="lots"), "gpus[0].memory.used: expected a size in bytes, found a string"),
        (lambda d: gpu(d)["memory"].update(total=True), "gpus[0].memory.total: expected a size in bytes, found true/false"),
        (lambda d: d.update(gpus="lots"), "gpus: expected a list, found a string"),
        (lambda d: d.update(gpus=[3]), "gpus[0]: expected an object, found int"),
        (lambda d: d["processes"].update(servers={"pid": 1}), "processes.servers: expected a list, found an object"),
        (lambda d: d["processes"].update(servers=[{"pid": "x"}]), "processes.servers[0].pid: expected a process id, found a string"),
        (lambda d: d["processes"].update(servers=[{"pid": 7, "settings": {"gpu_memory_utilization": 1.5}}]), "gpu_memory_utilization: 1.5 is not between 0 and 1"),
        (lambda d: d["packages"]["versions"].update(vllm=[0, 11]), "packages.versions.vllm: expected a version string, found a list"),
        (lambda d: d["host"].update(mem_total=-5), "host.mem_total: -5 is negative"),
    ],
)
def test_impossible_values_name_the_field(tmp_path, capsys, change, words):
    path = edited(tmp_path, change)
    for args in (["diagnose", str(DEMO_LOG), "--machine", path], ["show", "sampler-warmup", "--machine", path]):
        rc, err = run(capsys, *args)
        assert rc == 4
        assert err.startswith(f"oomwizard: machine description {path}: ")
        assert words in err and len(err.strip().splitlines()) == 1
    with pytest.raises(InputProblem, match="machine description"):
        default_sources().replay_machine(path)  # the wizard's replay says the same


def test_the_saved_demo_machine_still_replays(capsys):
    rc, err = run(capsys, "diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE), "--format", "json")
    assert rc == 0, err
    assert str(load_report(str(DEMO_MACHINE)).facts.value("gpu_mem_total_bytes")) == "150754820096"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: os.mkfifo(p), "not a regular file (a device, FIFO or socket)"),
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file (a device, FIFO or socket)"),
        (lambda p: p.mkdir(), "it is a folder"),
        (lambda p: (p.touch(), os.truncate(p, LIMIT + 1)), "more than the 16 MiB a saved report can be"),
        (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "its JSON nests too deeply"),
        (lambda p: p.write_bytes(b'{"gpus": "\xff"}'), "not UTF-8 text (byte 10)"),
        (lambda p: p.write_text('{"gpus": [}'), "not valid JSON: Expecting value"),
        (lambda p: p.write_text("[1, 2]"), "(an object), found a list"),
    ],
)
def test_files_that_are_not_a_report(tmp_path, capsys, make, words):
    path = tmp_path / "machine.json"
    make(path)
    rc, err = run(capsys, "diagnose", str(DEMO_LOG), "--machine", str(path))
    assert rc == 4 and words in err and "Traceback" not in err
    with pytest.raises(ReportError, match="machine description"):
        load_report(str(path))


def test_a_missing_file(tmp_path, capsys):
    rc, err = run(capsys, "show", "sampler-warmup", "--machine", str(tmp_path / "nope.json"))
    assert rc == 4 and err.strip() == f"oomwizard: cannot read machine description {tmp_path / 'nope.json'}: No such file or directory"
