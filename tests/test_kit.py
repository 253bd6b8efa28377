"""``oomwizard kit``: the pieces, without network (the whole kit: tests/test_kit_e2e.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from oomwizard.cli import main
from oomwizard.exitcodes import Exit
from oomwizard.kit import files, install_sh
from oomwizard.kit.build import MARKER
from oomwizard.kit.pip import run_pip
from oomwizard.kit.selfwheel import write_wheel
from oomwizard.kit.targets import PYTHONS, Target, TargetError, parse_platform, parse_python, targets, this_python

ROOT = Path(__file__).resolve().parent.parent
HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"

# --- targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "want"), [("3.11", "3.11"), ("311", "3.11"), ("cp310", "3.10"), (" 3.13 ", "3.13")])
def test_python_versions_accepted(text: str, want: str) -> None:
    assert parse_python(text) == want


@pytest.mark.parametrize("text", ["3.9", "3.14", "2.7", "3", "python3", "3.11.4", ""])
def test_python_versions_refused_with_the_choices(text: str) -> None:
    with pytest.raises(TargetError, match=re.escape(", ".join(PYTHONS))):
        parse_python(text)


@pytest.mark.parametrize(("text", "want"), [
    ("manylinux_2_28_x86_64", (28, "x86_64")),
    ("manylinux_2_17_aarch64", (17, "aarch64")),
    ("manylinux2014_aarch64", (17, "aarch64")),
    ("manylinux-2-34-x86_64", (34, "x86_64")),
])
def test_platforms_accepted(text: str, want: tuple[int, str]) -> None:
    assert parse_platform(text) == want


@pytest.mark.parametrize("text", ["win_amd64", "macosx_14_0_arm64", "manylinux_2_28_ppc64le", "manylinux_2_12_x86_64",
                                  "musllinux_1_2_x86_64", "linux_x86_64", "manylinux_2_99_x86_64", "x86_64"])
def test_platforms_refused(text: str) -> None:
    with pytest.raises(TargetError, match="manylinux_2_N_ARCH"):
        parse_platform(text)


def test_every_python_on_every_platform_once() -> None:
    got = targets(["3.10", "310", "3.12"], ["manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "manylinux_2_28_x86_64"])
    assert [(t.python, t.platform) for t in got] == [
        ("3.10", "manylinux_2_28_x86_64"), ("3.10", "manylinux_2_28_aarch64"),
        ("3.12", "manylinux_2_28_x86_64"), ("3.12", "manylinux_2_28_aarch64"),
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the default platform is read from glibc")
def test_defaults_are_this_interpreter_and_machine() -> None:
    [t] = targets(None, None)
    assert t.python == this_python() == HERE
    import platform

    assert t.arch == platform.machine()
    assert t.glibc == int(os.confstr("CS_GNU_LIBC_VERSION").split(".")[1])


def test_a_newer_glibc_accepts_the_older_manylinux_tags() -> None:
    tags = Target("3.11", 28, "x86_64").platform_tags()
    assert tags[0] == "manylinux_2_28_x86_64"
    for older in ("manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux2010_x86_64",
                  "manylinux1_x86_64", "manylinux_2_5_x86_64"):
        assert older in tags
    assert "manylinux_2_29_x86_64" not in tags
    arm = Target("3.11", 28, "aarch64").platform_tags()
    assert "manylinux2014_aarch64" in arm
    assert not [t for t in arm if "x86_64" in t or "manylinux1" in t or "manylinux2010" in t]


def test_pip_is_told_the_abi_and_binary_only() -> None:
    args = Target("3.12", 28, "aarch64").pip_args()
    assert "--only-binary=:all:" in args
    assert [args[i + 1] for i, a in enumerate(args) if a == "--abi"] == ["cp312", "abi3", "none"]
    assert args[args.index("--python-version") + 1] == "3.12"
    assert args[args.index("--implementation") + 1] == "cp"


def _dependency_markers() -> dict[str, str]:
    """Each dependency's marker as pyproject.toml declares it."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert deps
    out = {}
    for item in re.findall(r'^\s*"([^"]+)"', deps.group(1), re.M):
        name, _, marker = item.partition(";")
        out[re.split(r"[<>=!~ \[]", name)[0].lower()] = marker.strip()
    return out


def test_target_markers_select_hyperscan_on_both_arches_and_evaluate_per_python() -> None:
    from pip._vendor.packaging.markers import Marker

    hyperscan = Marker(_dependency_markers()["hyperscan"])
    for arch in ("x86_64", "aarch64"):
        env = Target("3.12", 28, arch).marker_environment()
        assert hyperscan.evaluate(env)
    assert not hyperscan.evaluate({**Target("3.12", 28, "x86_64").marker_environment(), "platform_machine": "ppc64le"})
    old = Marker('python_version < "3.11"')
    assert old.evaluate(Target("3.10", 28, "x86_64").marker_environment())
    assert not old.evaluate(Target("3.12", 28, "x86_64").marker_environment())


def _probe_wheel(where: Path) -> None:
    """A one-file wheel named kitprobe, for pip to find offline."""
    info = "kitprobe-1.0.dist-info"
    write_wheel(where / "kitprobe-1.0-py3-none-any.whl", [
        ("kitprobe.py", b"X = 1\n"),
        (f"{info}/METADATA", b"Metadata-Version: 2.1\nName: kitprobe\nVersion: 1.0\n"),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ], info)


@pytest.mark.parametrize(("target", "marker", "fetched"), [
    (Target("3.10", 28, "x86_64"), 'python_version < "3.11"', True),
    (Target("3.12", 28, "x86_64"), 'python_version < "3.11"', False),
    (Target(HERE, 28, "aarch64"), 'platform_machine == "aarch64"', True),
    (Target(HERE, 28, "x86_64"), 'platform_machine == "aarch64"', False),
])
def test_pip_evaluates_markers_for_the_target_not_for_this_interpreter(
        tmp_path: Path, target: Target, marker: str, fetched: bool) -> None:
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    _probe_wheel(links)
    r = run_pip(["download", "--disable-pip-version-check", "--no-index", "--find-links", str(links),
                 *target.pip_args(), "--dest", str(dest), f"kitprobe; {marker}"], target)
    assert r.returncode == 0, r.output
    assert (dest / "kitprobe-1.0-py3-none-any.whl").exists() == fetched, r.output


# --- the command's refusals (all before any download) ----------------------------------------


def _kit(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["kit", *args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("args", "needle"), [
    (["--python", "3.9"], "unsupported Python version '3.9'"),
    (["--python", "3.11", "2.7"], "unsupported Python version '2.7'"),
    (["--platform", "win_amd64"], "unsupported platform 'win_amd64'"),
    (["--platform", "manylinux_2_28_x86_64", "manylinux_2_28_riscv64"], "unsupported platform"),
])
def test_unknown_python_or_platform_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     args: list[str], needle: str) -> None:
    code, err = _kit([str(tmp_path / "kit"), *args], capsys)
    assert code == Exit.USAGE
    assert needle in err
    assert not (tmp_path / "kit").exists()
    assert not list(tmp_path.iterdir())


def test_a_folder_with_other_files_is_refused_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    code, err = _kit([str(tmp_path), "--python", HERE, "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.ERROR
    assert "--force" in err and "not empty" in err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    code, err = _kit([str(tmp_path), "--python", HERE, "--platform", "manylinux_2_28_x86_64", "--lang", "zh"], capsys)
    assert code == Exit.ERROR and "不为空" in err and "--force" in err


def test_a_file_in_the_way_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kit").write_text("x", encoding="utf-8")
    code, err = _kit([str(tmp_path / "kit"), "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.USAGE and "is not a folder" in err


def _prebuilt(dest: Path) -> tuple[Path, object]:
    """Stands in for the oomwizard wheel: one that needs a distribution no index has."""
    from oomwizard.i18n import Text

    dest.mkdir(parents=True, exist_ok=True)
    info = "oomwizard-0.0.0.dist-info"
    path = dest / "oomwizard-0.0.0-py3-none-any.whl"
    write_wheel(path, [(f"{info}/METADATA", b"Metadata-Version: 2.1\nName: oomwizard\nVersion: 0.0.0\n"
                                             b"Requires-Dist: kitprobe-not-here\n"),
                       (f"{info}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")], info)
    return path, Text("prebuilt", "prebuilt")


def _pip_env(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    for var in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    import oomwizard.kit.build as build

    monkeypatch.setattr(build, "make_wheel", _prebuilt)


def test_no_index_reachable_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """pip pointed at an index nobody listens on: the message says kits are built on a connected machine."""
    _pip_env(monkeypatch, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0")
    code, err = _kit([str(tmp_path / "kit"), "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.NO_INDEX, err
    assert "cannot reach a package index" in err and "connected machine" in err
    assert not (tmp_path / "kit").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".oomwizard-kit-")]


def test_a_dependency_without_a_wheel_is_not_called_a_network_problem(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "links").mkdir()
    _pip_env(monkeypatch, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path / "links"))
    code, err = _kit([str(tmp_path / "kit"), "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.ERROR, err
    assert "no complete set of wheels" in err and "kitprobe-not-here" in err
    assert "cannot reach" not in err
    assert not (tmp_path / "kit").exists()


# --- SHA256SUMS, install.sh, README ----------------------------------------------------------


def _fake_kit(root: Path, version: str = "9.9.9", pythons: tuple[str, ...] = (HERE,)) -> Path:
    (root / "wheels").mkdir(parents=True)
    (root / "wheels" / "a-1.0-py3-none-any.whl").write_bytes(b"not really a wheel")
    (root / "docs" / "en").mkdir(parents=True)
    (root / "docs" / "en" / "index.html").write_text("<p>kb</p>", encoding="utf-8")
    ts = [Target(p, 17, os.uname().machine if os.uname().machine in ("x86_64", "aarch64") else "x86_64") for p in pythons]
    (root / "TARGETS").write_text(install_sh.targets_file(version, ts), encoding="utf-8")
    (root / "install.sh").write_text(install_sh.install_sh(version), encoding="utf-8")
    (root / MARKER).write_text("kit\n", encoding="utf-8")
    (root / files.SUMS).write_text(files.sha256sums(root), encoding="utf-8")
    return root


def test_sha256sums_lists_every_file_but_itself_sorted(tmp_path: Path) -> None:
    kit = _fake_kit(tmp_path / "kit")
    lines = (kit / files.SUMS).read_text(encoding="utf-8").splitlines()
    names = [line.split("  ", 1)[1] for line in lines]
    assert all(re.fullmatch(r"[0-9a-f]{64}  [^ ].*", line) for line in lines)
    assert names == sorted(names)
    assert set(names) == {p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file()} - {files.SUMS}
    import hashlib

    assert lines[names.index("TARGETS")].split()[0] == hashlib.sha256((kit / "TARGETS").read_bytes()).hexdigest()


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs sha256sum")
def test_sha256sum_checks_the_list_and_catches_a_change(tmp_path: Path) -> None:
    kit = _fake_kit(tmp_path / "kit")
    ok = subprocess.run(["sha256sum", "-c", "--strict", files.SUMS], cwd=kit, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (kit / "wheels" / "a-1.0-py3-none-any.whl").write_bytes(b"changed")
    bad = subprocess.run(["sha256sum", "-c", files.SUMS], cwd=kit, capture_output=True, text=True)
    assert bad.returncode != 0 and "a-1.0-py3-none-any.whl: FAILED" in bad.stdout


def test_names_sha256sum_would_escape_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a\\b").write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="sha256sum cannot list"):
        files.sha256sums(tmp_path)


def test_install_sh_is_posix_sh_and_does_what_it_says() -> None:
    text = install_sh.install_sh("1.2.3")
    assert text.startswith("#!/bin/sh\n")
    assert "\nset -eu\n" in text
    assert "VERSION='1.2.3'" in text and "@VERSION@" not in text
    pip = text[text.index("-m pip"):text.index('"oomwizard==$VERSION"')]
    for flag in ("--no-index", '--find-links "$KIT/wheels"', "--compile", "--isolated"):
        assert flag in pip
    assert "PIP_CONFIG_FILE=/dev/null" in text
    assert '"$VENV/bin/oomwizard" --version' in text
    for sh in ("sh", "dash", "bash"):
        if shutil.which(sh):
            r = subprocess.run([sh, "-n"], input=text, capture_output=True, text=True)
            assert r.returncode == 0, f"{sh}: {r.stderr}"


def _install(kit: Path, venv: Path, **env: str) -> subprocess.CompletedProcess[str]:
    shell = shutil.which("dash") or "sh"
    return subprocess.run([shell, str(kit / "install.sh"), str(venv)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHON": sys.executable, **env})


def test_install_sh_stops_on_a_damaged_kit_before_making_a_venv(tmp_path: Path) -> None:
    kit = _fake_kit(tmp_path / "kit")
    (kit / "docs" / "en" / "index.html").write_text("<p>cut short", encoding="utf-8")
    r = _install(kit, tmp_path / "venv")
    assert r.returncode == 1
    assert "damaged or incomplete" in r.stderr and "工具包已损坏" in r.stderr
    assert "docs/en/index.html" in r.stderr
    assert not (tmp_path / "venv").exists()


def test_install_sh_names_the_pythons_it_holds_when_this_one_is_missing(tmp_path: Path) -> None:
    other = next(p for p in PYTHONS if p != HERE)
    kit = _fake_kit(tmp_path / "kit", pythons=(other,))
    r = _install(kit, tmp_path / "venv")
    assert r.returncode == 1
    assert f"no wheels for cpython {HERE}" in r.stderr and "没有适用于" in r.stderr
    assert f"Python {other} on manylinux_2_17_" in r.stderr
    assert f"--python {HERE}" in r.stderr
    assert not (tmp_path / "venv").exists()


def test_install_sh_refuses_a_folder_that_is_not_a_venv(tmp_path: Path) -> None:
    kit = _fake_kit(tmp_path / "kit")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "data").write_text("keep", encoding="utf-8")
    r = _install(kit, tmp_path / "busy")
    assert r.returncode == 1 and "is not a virtual environment" in r.stderr
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["data"]


def test_readme_in_english_and_chinese() -> None:
    from oomwizard.i18n import Text

    ts = targets(["3.11", "3.12"], ["manylinux_2_28_x86_64"])
    text = files.readme("1.2.3", ts, Text("rebuilt", "重新打包"), ["a.whl", "b.whl"], "oomwizard.pyz")
    en, zh = text.split("\n---\n")
    assert "offline support kit" in en and "## Install" in en and "sh install.sh" in en and "rebuilt" in en
    assert "离线支持工具包" in zh and "## 安装" in zh and "sh install.sh" in zh and "重新打包" in zh
    for part in (en, zh):
        assert "| 3.11 | manylinux_2_28_x86_64 |" in part and "| 3.12 | manylinux_2_28_x86_64 |" in part
        assert "oomwizard.pyz" in part and "SHA256SUMS" in part
    assert not re.search(r"[\u4e00-\u9fff]", en)


def test_targets_file_lines_for_install_sh() -> None:
    text = install_sh.targets_file("1.0", targets(["3.10"], ["manylinux_2_28_aarch64"]))
    assert text.splitlines()[1:] == ["3.10 aarch64 28 manylinux_2_28_aarch64"]


def test_rewritten_wheel_record_matches_its_files(tmp_path: Path) -> None:
    _probe_wheel(tmp_path)
    with zipfile.ZipFile(tmp_path / "kitprobe-1.0-py3-none-any.whl") as zf:
        record = zf.read("kitprobe-1.0.dist-info/RECORD").decode().splitlines()
        import base64
        import hashlib

        for line in record:
            name, digest, size = line.split(",")
            if name.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data)
    assert json.dumps(record)


def test_install_sh_checks_the_sums_with_python_where_sha256sum_is_missing(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("dirname", "awk", "grep", "ls"):
        found = shutil.which(tool)
        assert found, tool
        (bindir / tool).symlink_to(found)
    other = next(p for p in PYTHONS if p != HERE)
    kit = _fake_kit(tmp_path / "kit", pythons=(other,))
    r = _install(kit, tmp_path / "venv", PATH=str(bindir))
    assert "checksums: OK" in r.stderr and "no wheels for" in r.stderr, r.stderr  # got past the sums, then stopped
    (kit / "TARGETS").write_text("tampered\n", encoding="utf-8")
    r = _install(kit, tmp_path / "venv", PATH=str(bindir))
    assert r.returncode == 1 and "TARGETS: FAILED" in r.stderr and "damaged or incomplete" in r.stderr


def test_a_python_without_pip_is_told_how_to_get_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    code, err = _kit([str(tmp_path / "kit"), "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.ERROR and "ensurepip" in err
    assert not (tmp_path / "kit").exists()


def test_refusals_speak_chinese_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _kit([str(tmp_path / "kit"), "--platform", "win_amd64", "--lang", "zh"], capsys)
    assert code == Exit.USAGE and "不支持的平台 'win_amd64'" in err
    code, err = _kit([str(tmp_path / "kit"), "--python", "3.9", "--lang", "zh"], capsys)
    assert code == Exit.USAGE and "不支持的 Python 版本 '3.9'" in err


def test_a_staging_folder_left_by_a_killed_build_does_not_block_the_next(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".oomwizard-kit-abc123").mkdir()
    import oomwizard.kit.build as build

    seen: list[Path] = []

    def stop(stage: Path, *a: object) -> int:
        seen.append(stage)
        return Exit.ERROR

    monkeypatch.setattr(build, "_assemble", stop)
    code, err = _kit([str(tmp_path), "--platform", "manylinux_2_28_x86_64"], capsys)
    assert code == Exit.ERROR and "not empty" not in err
    assert seen and seen[0].parent == tmp_path and not seen[0].exists()


@pytest.mark.parametrize(("lang", "words"), [("en", "cannot run"), ("zh", "无法运行")])
def test_a_python_that_cannot_be_started_is_said_in_the_operators_language(tmp_path: Path, lang: str,
                                                                            words: str) -> None:
    missing = str(tmp_path / "no-such-python")
    r = run_pip(["--version"], python=missing)
    assert r.returncode == 127 and r.output == "" and r.failure is not None
    said = r.tail(lang=lang)
    assert said.startswith(f"{words} {missing}") and "No such file" in said
