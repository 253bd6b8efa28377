"""Another environment read from its files: which site-packages, which versions, from which file;
and which interpreters may be started at all."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_site import add_dist, add_torch

from oomwizard.facts.envfiles import read_env, site_dirs_of
from oomwizard.facts.packages import read_shebang, summarize, wanted_names
from oomwizard.facts.trust import check_python, unsafe_reason

# vllm/_version.py as setuptools-scm writes it (vllm 0.11.0's, version changed): the annotation
# comes first and has no value.
VLLM_VERSION_PY = """__all__ = ["__version__", "__version_tuple__", "version", "version_tuple"]
TYPE_CHECKING = False
version: str
__version__: str
__version__ = version = '0.11.1.dev3+g1234abc'
__version_tuple__ = version_tuple = (0, 11, 1, 'dev3', 'g1234abc')
"""


def interpreter(path: Path, marker: Path | None = None) -> Path:
    """A file where the interpreter would be; it records it ran, which it must never do here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch {marker}\n" if marker else "#!/bin/sh\n")
    path.chmod(0o755)
    return path


def venv(root: Path, cfg: str, xy: str, marker: Path | None = None) -> tuple[Path, Path]:
    py = interpreter(root / "bin" / "python", marker)
    (root / "pyvenv.cfg").write_text(cfg)
    site = root / "lib" / f"python{xy}" / "site-packages"
    site.mkdir(parents=True)
    return py, site


def read(py: Path, **kw) -> dict:
    data, err = read_env(str(py), wanted_names(), **kw)
    assert err is None, err
    return data


def test_venv_of_another_python_version(tmp_path):
    marker = tmp_path / "ran"
    py, site = venv(tmp_path / "v", "home = /opt/py312/bin\ninclude-system-site-packages = false\nversion_info = 3.12.3\n", "3.12", marker)
    add_dist(site, "vllm", "0.20.0")
    add_torch(site, "2.11.0+cu130", cuda="13.0")
    data = read(py)
    s = summarize(data)
    assert (s["versions"]["vllm"], s["versions"]["torch"], s["torch_cuda"]) == ("0.20.0", "2.11.0+cu130", "13.0")
    assert s["read"] == "files"
    assert s["files"] == {"vllm": f"{site}/vllm-0.20.0.dist-info/METADATA", "torch": f"{site}/torch-2.11.0+cu130.dist-info/METADATA"}
    assert s["torch_version_file"] == f"{site}/torch/version.py"
    assert (data["python_version"], data["python_version_source"]) == ("3.12.3", f"version_info in {tmp_path / 'v'}/pyvenv.cfg")
    assert data["venv"] == str(tmp_path / "v") and data["paths"] == [str(site)]
    assert not marker.exists()


def test_include_system_site_packages_adds_the_base_after_the_venv(tmp_path):
    base = tmp_path / "base"
    base_site = base / "lib" / "python3.10" / "site-packages"
    add_dist(base_site, "torch", "2.7.1")
    add_dist(base_site, "transformers", "4.50.0")
    cfg = f"home = {base}/bin\ninclude-system-site-packages = true\nversion_info = 3.10.12.final.0\n"
    py, site = venv(tmp_path / "v", cfg, "3.10")
    add_dist(site, "torch", "2.8.0")
    s = summarize(read(py))
    assert s["versions"]["torch"] == "2.8.0" and s["versions"]["transformers"] == "4.50.0"
    assert s["shadowed"] == {"torch": [f"2.7.1 in {base_site}"]}
    assert s["python_version"] == "3.10.12"


def test_system_interpreter_with_user_site(tmp_path):
    prefix, home = tmp_path / "usr", tmp_path / "home"
    py = interpreter(prefix / "bin" / "python3.9")
    add_dist(prefix / "lib" / "python3.9" / "site-packages", "vllm", "0.10.2")
    user = home / ".local" / "lib" / "python3.9" / "site-packages"
    add_dist(user, "vllm", "0.11.0")
    data = read(py, home=str(home))
    assert summarize(data)["versions"]["vllm"] == "0.11.0"  # the user site comes first, as in Python
    assert data["python_version"] == "3.9" and data["python_version_source"] == f"the interpreter's file name {py}"
    assert data["venv"] is None and data["prefix"] == str(prefix)
    assert summarize(read(py))["versions"]["vllm"] == "0.10.2"  # no home known: no user site


def test_a_symlinked_python_is_named_by_its_target(tmp_path):
    prefix = tmp_path / "opt"
    real = interpreter(prefix / "bin" / "python3.13")
    add_dist(prefix / "lib" / "python3.13" / "site-packages", "torch", "2.9.1")
    link = tmp_path / "bin" / "python3"
    link.parent.mkdir()
    link.symlink_to(real)
    data = read(link)
    assert data["prefix"] == str(prefix) and summarize(data)["versions"]["torch"] == "2.9.1"


def test_conda_prefix_version_from_conda_meta(tmp_path):
    prefix = tmp_path / "conda" / "envs" / "serve"
    py = interpreter(prefix / "bin" / "python")
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "python-3.11.9-h955ad1f_0.json").write_text("{}")
    add_dist(prefix / "lib" / "python3.11" / "site-packages", "vllm", "0.11.0")
    data = read(py)
    assert data["python_version"] == "3.11.9" and data["python_version_source"].endswith("python-3.11.9-h955ad1f_0.json")
    assert summarize(data)["versions"]["vllm"] == "0.11.0"


def test_version_from_the_only_lib_folder(tmp_path):
    py, site = venv(tmp_path / "v", "home = /usr/bin\n", "3.12")
    add_dist(site, "vllm", "0.16.0")
    data = read(py)
    assert data["python_version"] == "3.12" and "only lib/python3.12" in data["python_version_source"]


def test_nothing_to_go_on_is_a_sentence(tmp_path):
    py = interpreter(tmp_path / "x" / "bin" / "python")
    data, err = read_env(str(py), wanted_names())
    assert data is None and "cannot tell which Python version" in err
    (tmp_path / "x" / "pyvenv.cfg").write_text("version = 3.11.7\n")
    assert "no site-packages folder found" in read_env(str(py), wanted_names())[1]


def test_checkout_versions_from_version_files(tmp_path):
    """An editable vLLM (a .pth line to a checkout, no dist-info) and a torch with only version.py."""
    py, site = venv(tmp_path / "v", "version = 3.11.7\n", "3.11")
    checkout = tmp_path / "src" / "vllm"
    (checkout / "vllm").mkdir(parents=True)
    (checkout / "vllm" / "_version.py").write_text(VLLM_VERSION_PY)
    (site / "__editable__.vllm.pth").write_text(f"{checkout}\nimport os; os.system('touch {tmp_path}/pth-ran')\n")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.10.0a0+git1234'\ncuda: Optional[str] = '12.9'\nhip = None\n")
    s = summarize(read(py))
    assert s["versions"]["vllm"] == "0.11.1.dev3+g1234abc"
    assert s["files"]["vllm"] == f"{checkout}/vllm/_version.py"
    assert s["versions"]["torch"] == "2.10.0a0+git1234" and s["torch_cuda"] == "12.9"
    assert s["files"]["torch"] == f"{site}/torch/version.py"
    assert not (tmp_path / "pth-ran").exists()


def test_fifos_and_devices_are_not_read(tmp_path):
    """A foreign venv can put a FIFO or /dev/zero where a file should be: skipped, no hang."""
    py, site = venv(tmp_path / "v", "version = 3.11.7\n", "3.11")
    add_dist(site, "vllm", "0.11.0")
    (site / "torch-2.8.0.dist-info").mkdir()
    os.mkfifo(site / "torch-2.8.0.dist-info" / "METADATA")
    (site / "transformers-4.0.dist-info").mkdir()
    (site / "transformers-4.0.dist-info" / "METADATA").symlink_to("/dev/zero")
    os.mkfifo(site / "evil.pth")
    s = summarize(read(py))
    assert s["versions"]["vllm"] == "0.11.0"
    assert s["versions"]["torch"] is None and s["versions"]["transformers"] is None
    fifo_script = tmp_path / "vllm"
    os.mkfifo(fifo_script)
    assert read_shebang(fifo_script) is None


def test_site_dirs_of_a_venv_match_what_python_lists(tmp_path):
    """Our venv: the files give the same site-packages as the interpreter itself."""
    import site

    if sys.prefix == sys.base_prefix:
        pytest.skip("tests are not running in a venv")
    got = site_dirs_of(os.path.join(sys.prefix, "bin", "python"))
    assert [os.path.realpath(d) for d in got["dirs"]] == [os.path.realpath(d) for d in site.getsitepackages([sys.prefix])]
    assert got["python_version"] == ".".join(map(str, sys.version_info[:3]))


# --- which interpreter may be started ------------------------------------------------------------


def test_a_venv_under_a_sticky_shared_folder_is_accepted(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    py, _ = venv(shared / "v", "version = 3.11.7\n", "3.11")
    assert unsafe_reason(str(py)) is None
    assert check_python(str(shared / "v")) == (str(py), None)


@pytest.mark.parametrize(
    ("mode_of", "mode", "words", "words_zh"),
    [
        ("bin", 0o775, "folder {bin} is writable by its group (mode 775)", "文件夹 {bin} 可被其所属组写入（权限 775）"),
        ("file", 0o644, "{file} is not executable", "{file} 不可执行"),
        ("file", 0o757, "{file} is writable by other users (mode 757)", "{file} 可被其他用户写入（权限 757）"),
        ("venv", 0o777, "folder {venv} is writable by other users (mode 777)", "文件夹 {venv} 可被其他用户写入（权限 777）"),
    ],
)
def test_unsafe_interpreters(tmp_path, mode_of, mode, words, words_zh):
    py, _ = venv(tmp_path / "v", "version = 3.11.7\n", "3.11")
    target = {"bin": py.parent, "file": py, "venv": tmp_path / "v"}[mode_of]
    target.chmod(mode)
    paths = {"bin": py.parent, "file": py, "venv": tmp_path / "v"}
    want, want_zh = words.format(**paths), words_zh.format(**paths)
    reason = unsafe_reason(str(py))
    assert reason is not None and (reason.en, reason.zh) == (want, want_zh)
    path, refused = check_python(str(py))
    assert path is None and refused is not None
    assert (refused.en, refused.zh) == (f"--python {py}: refusing to run it: {want}", f"--python {py}：拒绝运行它：{want_zh}")


def test_a_link_is_judged_where_it_leads(tmp_path):
    open_dir = tmp_path / "open"
    real = interpreter(open_dir / "python3")
    open_dir.chmod(0o777)
    link = interpreter(tmp_path / "safe" / "x").parent / "python"
    link.symlink_to(real)
    reason = unsafe_reason(str(link))
    assert reason is not None and reason.en == f"folder {open_dir} is writable by other users (mode 777)"
    fifo = tmp_path / "safe" / "python3"
    os.mkfifo(fifo)
    reason = unsafe_reason(str(fifo))
    assert reason is not None and reason.en == f"{fifo} is not a regular file"
