"""A kit built here installs and runs with the network cut: the support-kit promise, end to end.

Builds a kit for this interpreter and machine (its wheels come from the package index, so this
needs network, and is skipped with the reason when there is none), then, in a network namespace
without network (``unshare -rn``; where that is not allowed, with every socket refused in the
child Pythons), installs it into a fresh venv with ``install.sh`` and diagnoses the demo log from
that venv and from ``oomwizard.pyz``. Both diagnoses must equal the source tree's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from oomwizard import __version__
from oomwizard.exitcodes import Exit

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "oomwizard" / "demo" / "vllm-serve.log"
HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"

sys.path.insert(0, str(Path(__file__).parent / "hostile"))
from netblock import BLOCK as _BLOCK  # noqa: E402 - the same network block as the no-network suite


def _netns() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Runs a command with no network: in a namespace without interfaces, else with sockets refused."""
    home = tmp_path_factory.mktemp("home")
    block = tmp_path_factory.mktemp("block")
    (block / "sitecustomize.py").write_text(_BLOCK, encoding="utf-8")
    ns = _netns()

    def run(cmd: list[str], **env: str) -> subprocess.CompletedProcess[str]:
        base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **env}
        if ns:
            cmd = ["unshare", "-rn", *cmd]
        else:
            base["PYTHONPATH"] = str(block)
        return subprocess.run(cmd, capture_output=True, text=True, env=base, timeout=300, cwd=home)

    run.netns = ns  # type: ignore[attr-defined]
    return run


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kit") / "oomwizard-kit"
    r = subprocess.run([sys.executable, "-m", "oomwizard", "kit", str(out), "--pyz"], capture_output=True, text=True,
                       timeout=500, env={**os.environ, "PYTHONPATH": str(REPO)})
    if r.returncode == Exit.NO_INDEX:
        pytest.skip("no package index is reachable from this machine, so no kit can be built here:\n" + r.stderr[-800:])
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def venv(kit: Path, offline, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    target = tmp_path_factory.mktemp("venv") / "oomwizard"
    r = offline(["sh", str(kit / "install.sh"), str(target)], PYTHON=sys.executable)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "NETWORK ATTEMPT" not in r.stderr
    assert "checksums: OK" in r.stderr
    assert r.stdout.strip() == f"oomwizard {__version__}"
    return target


def _reference() -> dict:
    r = subprocess.run([sys.executable, "-m", "oomwizard", "diagnose", str(DEMO), "--format", "json"], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _same_diagnosis(out: str, ref: dict) -> None:
    got = json.loads(out)
    assert got["matches"][0]["scenario"] == "sampler-warmup"
    assert got["leaf"]["id"] == ref["leaf"]["id"]
    for key in ("matches", "leaf", "oom_messages", "confidence", "facts"):
        assert got[key] == ref[key], key


def test_the_kit_holds_what_it_says(kit: Path) -> None:
    names = {p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file()}
    assert {"install.sh", "README.md", "SHA256SUMS", "TARGETS", "oomwizard.pyz", "docs/index.html"} <= names
    wheels = sorted(p.name for p in (kit / "wheels").glob("*.whl"))
    for dist in ("oomwizard-", "textual-", "numpy-", "google_re2-", "pyyaml-", "questionary-", "nvidia_ml_py-"):
        assert any(w.lower().startswith(dist) for w in wheels), dist
    if os.uname().machine in ("x86_64", "aarch64"):
        assert any(w.startswith("hyperscan-") for w in wheels)
    if shutil.which("sha256sum"):
        r = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=kit, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:]
    readme = (kit / "README.md").read_text(encoding="utf-8")
    assert "## Install" in readme and "## 安装" in readme
    assert (kit / "TARGETS").read_text(encoding="utf-8").splitlines()[1].startswith(f"{HERE} {os.uname().machine} ")


def test_installed_offline_and_diagnoses_the_demo_log(venv: Path, offline) -> None:  # type: ignore[no-untyped-def]
    where = offline([str(venv / "bin" / "python"), "-c", "import oomwizard; print(oomwizard.__file__)"])
    package = Path(where.stdout.strip()).parent
    assert venv in package.parents and REPO not in package.parents, where.stdout + where.stderr
    assert list((package / "__pycache__").glob("cli.*.pyc")), "byte-code was not compiled at install"
    r = offline([str(venv / "bin" / "oomwizard"), "diagnose", str(DEMO), "--format", "json"])
    assert r.returncode == 0, r.stderr
    assert "NETWORK ATTEMPT" not in r.stderr
    _same_diagnosis(r.stdout, _reference())


def test_the_single_file_runs_offline_too(kit: Path, offline, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache"
    version = offline([sys.executable, str(kit / "oomwizard.pyz"), "--version"], XDG_CACHE_HOME=str(cache))
    assert (version.returncode, version.stdout.strip()) == (0, f"oomwizard {__version__}"), version.stderr
    [folder] = (cache / "oomwizard" / "pyz").iterdir()
    r = offline([sys.executable, str(kit / "oomwizard.pyz"), "diagnose", str(DEMO), "--format", "json"],
                XDG_CACHE_HOME=str(cache))
    assert r.returncode == 0, r.stderr
    assert "NETWORK ATTEMPT" not in r.stderr
    _same_diagnosis(r.stdout, _reference())
    assert [p.name for p in (cache / "oomwizard" / "pyz").iterdir()] == [folder.name]


def test_an_installed_copy_rebuilds_its_own_wheel(kit: Path, venv: Path, offline, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """From an installed wheel (no source tree) the kit's oomwizard wheel is put back together,
    file for file the one that was installed; an installed file changed since is refused."""
    code = ("import sys; from pathlib import Path; from oomwizard.kit.selfwheel import make_wheel, WheelError\n"
            "try:\n    p, how = make_wheel(Path(sys.argv[1])); print(p); print(how.en)\n"
            "except WheelError as e:\n    print('refused:', e); sys.exit(3)\n")
    r = offline([str(venv / "bin" / "python"), "-c", code, str(tmp_path / "out")])
    assert r.returncode == 0, r.stdout + r.stderr
    path, how = r.stdout.strip().splitlines()
    assert how.startswith("rebuilt from the installed files")
    [original] = (kit / "wheels").glob(f"oomwizard-{__version__}-*.whl")
    with zipfile.ZipFile(original) as a, zipfile.ZipFile(path) as b:
        def contents(z: zipfile.ZipFile) -> dict[str, bytes]:
            return {n: z.read(n) for n in z.namelist() if not n.endswith("/RECORD") and not n.endswith("/")}
        assert contents(a) == contents(b)
    reinstall = offline([str(venv / "bin" / "python"), "-m", "pip", "install", "--isolated", "--no-index", "--dry-run",
                         "--find-links", str(kit / "wheels"), path], PIP_CONFIG_FILE=os.devnull)
    assert reinstall.returncode == 0, reinstall.stderr
    site = next((venv / "lib").glob("python*/site-packages"))
    with (site / "oomwizard" / "report" / "export.py").open("a", encoding="utf-8") as f:
        f.write("\n# edited after install\n")
    r = offline([str(venv / "bin" / "python"), "-c", code, str(tmp_path / "again")])
    assert r.returncode == 3 and "oomwizard/report/export.py was changed after oomwizard was installed" in r.stdout


def _other_python() -> tuple[str, str] | None:
    """Another supported CPython on this machine (on PATH or under pyenv), preferring the oldest."""
    from oomwizard.kit.targets import PYTHONS

    roots = sorted(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"), "versions").glob("3.*/bin"))
    for version in PYTHONS:
        if version == HERE:
            continue
        for cand in [shutil.which(f"python{version}"), *(str(r / f"python{version}") for r in roots)]:
            if cand and os.access(cand, os.X_OK):
                r = subprocess.run([cand, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"],
                                   capture_output=True, text=True)
                if r.returncode == 0 and r.stdout.strip() == version:
                    return version, cand
    return None


def test_a_kit_for_another_python_and_arch_is_complete_and_installs_offline(
        offline, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Built here for another Python (its own markers and wheels) and for aarch64: that Python
    installs it with the network cut and gives the same diagnosis; pip lays out the aarch64 target
    from the kit alone, hyperscan included."""
    other = _other_python()
    if other is None:
        pytest.skip("no other supported CPython on this machine")
    version, python = other
    from oomwizard.kit.pip import install_target
    from oomwizard.kit.targets import Target, this_platform

    kit = tmp_path / "kit"
    r = subprocess.run([sys.executable, "-m", "oomwizard", "kit", str(kit), "--python", version,
                        "--platform", this_platform(), "manylinux_2_28_aarch64"],
                       capture_output=True, text=True, timeout=500, env={**os.environ, "PYTHONPATH": str(REPO)})
    if r.returncode == Exit.NO_INDEX:
        pytest.skip("no package index is reachable from this machine:\n" + r.stderr[-800:])
    assert r.returncode == 0, r.stderr[-3000:]
    abi = "cp" + version.replace(".", "")
    wheels = [p.name for p in (kit / "wheels").glob("*.whl")]
    for dist in ("numpy-", "hyperscan-", "google_re2-", "pyyaml-"):
        for arch in ("aarch64", os.uname().machine):
            assert [w for w in wheels if w.lower().startswith(dist) and f"-{abi}-" in w and arch in w], (dist, arch)
    layout = install_target(f"oomwizard=={__version__}", Target(version, 28, "aarch64"), str(tmp_path / "arm"),
                            str(kit / "wheels"))
    assert layout.returncode == 0, layout.tail(20)
    assert (tmp_path / "arm" / "hyperscan").is_dir() and (tmp_path / "arm" / "oomwizard" / "cli.py").is_file()
    venv = tmp_path / "venv"
    inst = offline(["sh", str(kit / "install.sh"), str(venv)], PYTHON=python)
    assert inst.returncode == 0, inst.stderr[-3000:]
    assert inst.stdout.strip() == f"oomwizard {__version__}"
    d = offline([str(venv / "bin" / "oomwizard"), "diagnose", str(DEMO), "--format", "json"])
    assert d.returncode == 0, d.stderr
    _same_diagnosis(d.stdout, _reference())
    here = offline(["sh", str(kit / "install.sh"), str(tmp_path / "venv-here")], PYTHON=sys.executable)
    assert here.returncode == 1 and f"no wheels for cpython {HERE}" in here.stderr
