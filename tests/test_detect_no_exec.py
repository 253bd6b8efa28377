"""Detection never starts a program another user chose: a planted vLLM-looking process whose
"python" records that it ran is read from its files by `detect`, `diagnose --detect` and the
wizard's detection, and only a safe `--python` is ever started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_site import add_dist, add_torch

from oomwizard.cli import main
from oomwizard.facts import processes
from oomwizard.frontend.inputs import default_sources
from oomwizard.frontend.options import DEMO_LOG

REPO = Path(__file__).resolve().parent.parent
REAL_PYTHON = os.path.realpath(sys.executable)
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def fake_venv(root: Path, marker: Path) -> Path:
    """A venv layout whose bin/python is a script that touches ``marker`` and then behaves as
    Python (``exec -a`` keeps its own path as argv[0], so the venv is found)."""
    site = root / "lib" / f"python{XY}" / "site-packages"
    add_dist(site, "vllm", "0.11.0")
    add_torch(site, "2.8.0+cu128", cuda="12.8")
    (root / "pyvenv.cfg").write_text(f"home = {os.path.dirname(REAL_PYTHON)}\ninclude-system-site-packages = false\nversion = {sys.version.split()[0]}\n")
    (root / "bin").mkdir()
    py = root / "bin" / "python"
    py.write_text(f'#!/bin/bash\ntouch "{marker}"\nexec -a "$0" "{REAL_PYTHON}" "$@"\n')
    py.chmod(0o755)
    return py


def sleeping_vllm(root: Path) -> Path:
    """A folder holding a ``vllm.entrypoints.openai.api_server`` module that only sleeps."""
    mod = root / "vllm" / "entrypoints" / "openai"
    mod.mkdir(parents=True)
    for d in (root / "vllm", root / "vllm" / "entrypoints", mod):
        (d / "__init__.py").write_text("")
    (mod / "api_server.py").write_text("import time\ntime.sleep(600)\n")
    return root


@pytest.fixture
def planted(tmp_path):
    """Two running "servers" of another user's making: one names the fake interpreter by its
    absolute path, the other as `python` found on its own PATH. Both really run this Python."""
    marker = tmp_path / "interpreter-ran"
    py = fake_venv(tmp_path / "venv", marker)
    mods = sleeping_vllm(tmp_path / "mods")
    env = {"PATH": f"{py.parent}:/usr/bin:/bin", "PYTHONPATH": str(mods)}
    args = ["-m", "vllm.entrypoints.openai.api_server", "--model", "x", "--api-key", "sk-secret"]
    procs = [subprocess.Popen([a0, *args], executable=REAL_PYTHON, env=env, stdin=subprocess.DEVNULL) for a0 in (str(py), "python")]
    try:
        assert all(p.poll() is None for p in procs)
        yield {"marker": marker, "python": py, "pids": [p.pid for p in procs], "tmp": tmp_path}
    finally:
        for p in procs:
            p.kill()
            p.wait()


def cli(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, text=True, env=env, timeout=120)


def site_of(py: Path) -> Path:
    return py.parent.parent / "lib" / f"python{XY}" / "site-packages"


def assert_read_from_files(interpreters: list[dict], pid: int, py: Path) -> None:
    (entry,) = [i for i in interpreters if f"runs vLLM (process {pid})" in i["roles"]]
    assert entry["path"] == str(py)
    assert entry["read"] == "files" and "error" not in entry
    assert entry["versions"]["vllm"] == "0.11.0"
    assert entry["versions"]["torch"] == "2.8.0+cu128" and entry["torch_cuda"] == "12.8"
    assert entry["files"]["vllm"] == str(site_of(py) / "vllm-0.11.0.dist-info" / "METADATA")
    assert entry["python_version"] == sys.version.split()[0]


def test_detect_reads_the_planted_server_from_files(planted):
    # `vllm` on this PATH points at the same interpreter: it is not started either
    vllm = planted["python"].parent / "vllm"
    vllm.write_text(f"#!{planted['python']}\nimport sys\n")
    vllm.chmod(0o755)
    proc = cli("detect", "--format", "json", path=f"{vllm.parent}:{os.environ['PATH']}")
    assert not planted["marker"].exists(), "detect started the planted interpreter"
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_pid = {s["pid"]: s for s in data["processes"]["servers"]}
    absolute, on_path = planted["pids"]
    assert by_pid[absolute]["interpreter"]["path"] == by_pid[on_path]["interpreter"]["path"] == str(planted["python"])
    assert_read_from_files(data["interpreters"], absolute, planted["python"])
    assert "sk-secret" not in proc.stdout
    assert not planted["marker"].exists()


@pytest.fixture
def only_planted(planted, monkeypatch):
    """The real /proc, listed down to the planted processes: other vLLM-looking processes on a
    shared machine would otherwise decide which environment the facts come from."""
    real = processes.list_processes
    keep = set(planted["pids"])
    monkeypatch.setattr(processes, "list_processes", lambda root: [p for p in real(root) if p.pid in keep])
    return planted


def test_diagnose_detect_reads_versions_from_files(only_planted, capsys):
    planted = only_planted
    assert main(["diagnose", str(DEMO_LOG), "--detect", "--format", "json"]) == 0
    assert not planted["marker"].exists(), "diagnose --detect started the planted interpreter"
    facts = json.loads(capsys.readouterr().out)["facts"]
    metadata = site_of(planted["python"]) / "vllm-0.11.0.dist-info" / "METADATA"
    # the demo log states its own vLLM version; the torch version comes from the planted venv
    assert facts["torch_version"]["value"] == "2.8.0+cu128"
    assert facts["torch_version"]["source"] == f"{site_of(planted['python'])}/torch-2.8.0+cu128.dist-info/METADATA (environment of {planted['python']})"
    assert facts["python_version"]["source"] == f"version in {planted['python'].parent.parent}/pyvenv.cfg"
    assert facts["torch_cuda"]["source"] == f"{site_of(planted['python'])}/torch/version.py (environment of {planted['python']})"
    assert metadata.exists()
    assert not planted["marker"].exists()


def test_the_wizards_detection_reads_files_only(only_planted):
    planted = only_planted
    result = default_sources().detect_machine(None)  # what the TUI's worker and plain mode call
    assert not planted["marker"].exists(), "the wizard's detection started the planted interpreter"
    torch = result.facts.get("torch_version")
    assert str(torch.value) == "2.8.0+cu128"
    assert torch.source == f"{site_of(planted['python'])}/torch-2.8.0+cu128.dist-info/METADATA (environment of {planted['python']})"
    assert str(result.facts.value("vllm_version")) == "0.11.0"
    assert not planted["marker"].exists()


# --- --python: started only when safe ------------------------------------------------------------


def test_a_safe_python_is_started(tmp_path):
    marker = tmp_path / "ran"
    py = fake_venv(tmp_path / "venv", marker)
    proc = cli("detect", "--python", str(py), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    pk = json.loads(proc.stdout)["packages"]
    assert (pk["python"], pk["roles"], pk["read"]) == (str(py), ["--python"], "ran")
    assert pk["versions"]["vllm"] == "0.11.0" and pk["torch_cuda"] == "12.8"
    assert marker.exists()


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_python_others_can_write_is_refused(tmp_path, what):
    marker = tmp_path / "ran"
    py = fake_venv(tmp_path / "venv", marker)
    target = py if what == "file" else py.parent
    target.chmod(0o777)
    for args in (["detect", "--python", str(py)], ["diagnose", str(DEMO_LOG), "--detect", "--python", str(tmp_path / "venv")]):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "refusing to run it" in lines[0]
        assert f"{target} is writable by other users (mode 777)" in lines[0]
        assert proc.stdout == ""
    # the wizard refuses before it looks for a terminal
    assert main(["--python", str(py)]) == 2
    assert not marker.exists()


def test_a_python_behind_a_link_in_a_writable_folder_is_refused(tmp_path):
    marker = tmp_path / "ran"
    py = fake_venv(tmp_path / "venv", marker)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "python").symlink_to(py)
    assert main(["detect", "--python", str(shared / "python")]) == 2
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_a_python_owned_by_another_user_is_refused(tmp_path, capsys):
    marker = tmp_path / "ran"
    py = fake_venv(tmp_path / "venv", marker)
    os.chown(py, 65534, 65534)
    assert main(["detect", "--python", str(py)]) == 2
    assert f"{py} belongs to nobody (uid 65534), not to you or root" in capsys.readouterr().err
    assert not marker.exists()
