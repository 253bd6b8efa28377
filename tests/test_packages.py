"""Package versions from metadata files (never imports), here and in another interpreter."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_site import add_dist, add_torch, make_venv, vllm_site

from oomwizard.facts import metadata_probe
from oomwizard.facts.packages import (
    Interpreter,
    choose,
    interpreter_for,
    probe_other,
    read_shebang,
    same_env,
    summarize,
    vllm_on_path,
    wanted_names,
)


def test_find_versions_from_dist_info(tmp_path):
    site = vllm_site(tmp_path / "site-packages")
    raw = metadata_probe.probe([str(site)], wanted_names())
    s = summarize(raw)
    assert s["versions"] == {
        "vllm": "0.11.0",
        "torch": "2.8.0+cu128",
        "triton": "3.4.0",
        "flashinfer": "0.3.1",
        "deep_gemm": None,
        "transformers": "4.56.2",
        "nccl": "2.27.3",
        "xformers": "0.0.32.post1",
        "flash_attn": None,
        "ray": None,
        "nvidia_ml_py": None,
        "pynvml": None,
    }
    assert s["distributions"]["flashinfer"] == "flashinfer-python"
    assert s["distributions"]["nccl"] == "nvidia-nccl-cu12"
    assert s["torch_cuda"] == "12.8" and s["torch_hip"] is None
    assert s["torch_version_file"].endswith("torch/version.py")
    assert "numpy" not in raw["packages"]


def test_torch_rocm_build(tmp_path):
    site = tmp_path / "sp"
    add_torch(site, "2.8.0+rocm6.3", cuda=None, hip="6.3.42131-fa1d09cbd")
    s = summarize(metadata_probe.probe([str(site)], wanted_names()))
    assert s["torch_cuda"] is None and s["torch_hip"] == "6.3.42131-fa1d09cbd"


def test_other_spellings(tmp_path):
    site = tmp_path / "sp"
    add_dist(site, "deep_gemm", "2.1.0")
    add_dist(site, "flashinfer", "0.2.5")  # the old distribution name
    add_dist(site, "nvidia-nccl-cu13", "2.28.9")
    d = site / "vllm.egg-info"  # a `setup.py develop` checkout
    d.mkdir()
    (d / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.11.1.dev42+g1234abc.cu128\n")
    s = summarize(metadata_probe.probe([str(site)], wanted_names()))
    assert s["versions"]["deep_gemm"] == "2.1.0"
    assert s["versions"]["flashinfer"] == "0.2.5"
    assert s["versions"]["nccl"] == "2.28.9"
    assert s["versions"]["vllm"] == "0.11.1.dev42+g1234abc.cu128"


def test_first_on_path_wins_and_shadowed_is_reported(tmp_path):
    user, venv = tmp_path / "user", tmp_path / "venv"
    add_dist(user, "torch", "2.7.0")
    add_torch(venv, "2.8.0+cu128")
    s = summarize(metadata_probe.probe([str(user), str(venv)], wanted_names()))
    assert s["versions"]["torch"] == "2.7.0"
    assert s["shadowed"] == {"torch": [f"2.8.0+cu128 in {venv}"]}
    # torch/version.py is looked up beside the distribution that wins: none there
    assert s["torch_cuda"] is None


def test_pth_path_lines_are_followed_but_code_is_not_run(tmp_path):
    site, src = tmp_path / "sp", tmp_path / "src"
    add_dist(src, "vllm", "0.12.0")
    site.mkdir()
    marker = tmp_path / "ran"
    (site / "easy-install.pth").write_text(f"{src}\nimport os; open({str(marker)!r}, 'w')\n# comment\n")
    assert metadata_probe.pth_paths([str(site)]) == [str(src)]
    assert not marker.exists()


# --- another interpreter ------------------------------------------------------------------------


def test_probe_other_interpreter_reads_its_venv(tmp_path):
    py, site = make_venv(tmp_path / "venv")
    vllm_site(site)
    data, error = probe_other(str(py))
    assert error is None
    s = summarize(data)
    assert s["versions"]["vllm"] == "0.11.0"
    assert s["versions"]["torch"] == "2.8.0+cu128"
    assert s["torch_cuda"] == "12.8"
    assert data["python"] == str(py)
    assert data["venv"] == str(tmp_path / "venv")
    assert data["paths"][0] == str(site)
    # nothing from oomwizard's own environment leaks in
    assert s["versions"]["nvidia_ml_py"] is None


def test_probe_other_extra_paths_like_pythonpath(tmp_path):
    py, _ = make_venv(tmp_path / "venv")
    src = tmp_path / "checkout"
    add_dist(src, "vllm", "0.20.0")
    data, error = probe_other(str(py), [str(src)])
    assert error is None and summarize(data)["versions"]["vllm"] == "0.20.0"


def _script(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("#!/bin/sh\necho boom >&2\nexit 3\n", "exited with status 3: boom"),
        ("#!/bin/sh\necho not json\n", "unexpected"),
        ("#!/bin/sh\necho 'Unknown option: -I' >&2\nexit 2\n", "too old"),
    ],
)
def test_probe_other_failures_are_sentences(tmp_path, body, words):
    data, error = probe_other(_script(tmp_path / "python", body))
    assert data is None and words in error


def test_probe_other_timeout(tmp_path):
    data, error = probe_other(_script(tmp_path / "python", "#!/bin/sh\nsleep 5\n"), timeout=0.3)
    assert data is None and "did not answer within 0.3 s" in error


def test_probe_other_refuses_an_interpreter_others_can_replace(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "bin").mkdir()
    py = _script(tmp_path / "bin" / "python", f"#!/bin/sh\ntouch {marker}\n")
    (tmp_path / "bin").chmod(0o777)
    data, error = probe_other(py)
    assert data is None and error == f"not started: folder {tmp_path / 'bin'} is writable by other users (mode 777)"
    assert not marker.exists()


def test_probe_other_missing_and_not_executable(tmp_path):
    assert probe_other(str(tmp_path / "nope"))[1] == f"{tmp_path / 'nope'} does not exist"
    f = tmp_path / "plain"
    f.write_text("x")
    assert "not executable" in probe_other(str(f))[1]


# --- finding interpreters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("#!/opt/venv/bin/python3\n# -*- coding: utf-8 -*-\nimport re\n", "/opt/venv/bin/python3"),
        ("#!/opt/venv/bin/python3 -E\n", "/opt/venv/bin/python3"),
        ("#!/bin/sh\n'''exec' \"/very/long/path/venv/bin/python3\" \"$0\" \"$@\"\n' '''\n", "/very/long/path/venv/bin/python3"),
        ("import sys\n", None),
    ],
)
def test_read_shebang(tmp_path, text, want):
    p = tmp_path / "vllm"
    p.write_text(text)
    assert read_shebang(p) == want


def test_interpreter_for_accepts_venv_dir_and_script(tmp_path):
    py, _ = make_venv(tmp_path / "venv")
    assert interpreter_for(str(tmp_path / "venv")) == (str(py), None)
    script = tmp_path / "venv" / "bin" / "vllm"
    script.write_text(f"#!{py}\nimport sys\n")
    assert interpreter_for(str(script)) == (str(py), None)
    missing, folder = interpreter_for(str(tmp_path / "missing"))[1], interpreter_for(str(tmp_path))[1]
    assert missing is not None and missing.en.endswith("does not exist") and missing.zh.endswith("不存在")
    assert folder is not None and "without bin/python" in folder.en and "没有 bin/python" in folder.zh


def test_vllm_on_path(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "vllm", "#!/opt/vllm-venv/bin/python3\nimport sys\n")
    assert vllm_on_path(str(bin_dir)) == (str(bin_dir / "vllm"), "/opt/vllm-venv/bin/python3")
    assert vllm_on_path(str(tmp_path / "empty")) is None


def test_same_env(tmp_path):
    py, _ = make_venv(tmp_path / "venv")
    py3 = py.parent / "python3"
    py3.symlink_to(py)
    assert same_env(str(py), str(py3))
    # a venv is not its base interpreter, although both resolve to the same binary
    assert not same_env(str(py), os.path.realpath(sys.executable))


def test_choose_prefers_the_environment_with_vllm():
    no_vllm = Interpreter("/a/python", ["--python"], data={"packages": {}})
    with_vllm = Interpreter("/b/python", ["runs oomwizard"], data={"packages": {"vllm": {"version": "0.11.0", "location": "/b"}}})
    failed = Interpreter("/c/python", ["runs vLLM (process 1)"], error="boom")
    assert choose([failed, no_vllm, with_vllm]) is with_vllm
    assert choose([failed, no_vllm]) is no_vllm
    assert choose([failed]) is None
