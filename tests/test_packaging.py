"""The wheel is what ships in support kits: it must run anywhere, with its own copy of the knowledge base.

Builds the wheel, installs it into a fresh virtual environment (no system site packages, no editable
source tree on the path) and runs the commands from an unrelated folder. Each command must behave
exactly as it does from the source tree, and the program must read the knowledge base bundled in
the wheel, not the one in this checkout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _clean_env(extra_path: Path | None = None) -> dict[str, str]:
    """No OOMWIZARD_KB, no PYTHONPATH, no virtualenv of ours: only what a fresh shell would have."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                                                          "PIP_CACHE_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy",
                                                          "https_proxy", "no_proxy", "SSL_CERT_FILE", "PIP_CERT")}
    paths = ([str(extra_path)] if extra_path else []) + ["/usr/local/bin", "/usr/bin", "/bin"]
    keep["PATH"] = os.pathsep.join(paths)
    keep.setdefault("LANG", "C.UTF-8")
    return keep


def _local_wheels(into: Path) -> Path:
    """Wheels already on this machine (``OOMWIZARD_WHEELHOUSE``, or pip's cache), to install offline first."""
    into.mkdir()
    sources = [Path(p) for p in os.environ.get("OOMWIZARD_WHEELHOUSE", "").split(os.pathsep) if p]
    cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True).stdout.strip()
    if cache:
        sources.append(Path(cache))
    for src in sources:
        for whl in src.rglob("*.whl") if src.is_dir() else ():
            target = into / whl.name
            if not target.exists():
                shutil.copy(whl, target)
    return into


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("pkg")
    dist = tmp / "dist"
    # Build with the hatchling already installed when there is one (offline); otherwise pip fetches it.
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    build = _run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", *isolation, "-w", str(dist), "-q"],
        cwd=tmp,
        env={**os.environ},
    )
    assert build.returncode == 0, build.stdout + build.stderr
    [wheel] = list(dist.glob("oomwizard-*.whl"))
    env_dir = tmp / "venv"
    try:
        venv.EnvBuilder(with_pip=True, system_site_packages=False, clear=True).create(env_dir)
    except (OSError, subprocess.CalledProcessError) as e:  # no venv (or no ensurepip) on this machine
        pytest.skip(f"cannot create a virtual environment here ({e}); the wheel was built but not installed")
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = str(bindir / "python")
    env = _clean_env()
    wheels = _local_wheels(tmp / "wheelhouse")
    offline = _run([py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels), str(wheel)], cwd=tmp, env=env)
    if offline.returncode != 0:
        online = _run([py, "-m", "pip", "install", "-q", str(wheel)], cwd=tmp, env=env, timeout=540)
        assert online.returncode == 0, "installing the wheel's dependencies failed (offline and from the index):\n" + online.stderr[-3000:]
    return bindir


def _here(*args: str) -> subprocess.CompletedProcess[str]:
    """The same command from the source tree, for comparison."""
    env = {**_clean_env(), "PYTHONPATH": str(REPO)}
    return _run([sys.executable, "-m", "oomwizard", *args], cwd=REPO, env=env, timeout=120)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_wheel_runs_from_anywhere_with_its_bundled_knowledge_base(installed: Path, tmp_path: Path) -> None:
    env = _clean_env(installed)
    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    py = str(installed / "python")

    where = _run([py, "-c", "import sys, oomwizard, oomwizard.kb.loader as l; print(oomwizard.__file__); print(l.default_root()); print(sys.prefix != sys.base_prefix)"],
                 cwd=elsewhere, env=env)
    assert where.returncode == 0, where.stderr
    module, root, isolated = where.stdout.split("\n")[:3]
    site = Path(module).resolve().parent
    assert REPO not in Path(module).resolve().parents, f"imported from the source tree: {module}"
    assert Path(root).resolve() == site / "_kb", f"knowledge base read from {root}, not from the wheel"
    assert isolated == "True"
    for sub in ("decision_trees/tree.yaml", "decision_trees/scenarios.yaml", "content/en", "content/zh"):
        assert (site / "_kb" / sub).exists(), sub
    assert (site / "data" / "vllm_releases.json").is_file()
    assert (site / "data" / "compiled" / "diagnosis.json").is_file()  # the rules without a YAML parse
    assert (site / "report" / "html" / "style.css").is_file()
    demo = REPO / "oomwizard" / "demo"
    if demo.is_dir():
        assert sorted(p.name for p in (site / "demo").iterdir() if p.is_file()) == sorted(
            p.name for p in demo.iterdir() if p.is_file() and p.suffix != ".pyc"
        )

    version = _run([str(installed / "oomwizard"), "--version"], cwd=elsewhere, env=env)
    assert version.returncode == 0 and version.stdout.strip().startswith("oomwizard "), version.stderr

    for args in (("show", "workspace-locked", "--format", "json"), ("lint", "--format", "json"), ("scenarios",)):
        mine = _run([py, "-m", "oomwizard", *args] if args[0] == "scenarios" else [str(installed / "oomwizard"), *args], cwd=elsewhere, env=env)
        ref = _here(*args)
        assert (mine.returncode, mine.stdout) == (ref.returncode, ref.stdout), f"{args}: installed copy differs\n{mine.stderr[-2000:]}"

    show = _here("show", "workspace-locked", "--format", "json")
    if show.returncode == 0:
        assert json.loads(show.stdout)["id"] == "workspace-locked"
