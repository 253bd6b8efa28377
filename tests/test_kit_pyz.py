"""``oomwizard.pyz`` start-up: unpacked once into the cache, atomically, safe with two at once.

The archives here are written by the real writer (:func:`oomwizard.kit.pyz.write_archive`) around
a stand-in ``oomwizard`` package that prints where it was imported from, so each run is a real
start of a real archive, in a fresh interpreter.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from oomwizard.exitcodes import Exit
from oomwizard.i18n import ui
from oomwizard.kit import pyzboot
from oomwizard.kit.pyz import bootstrap_source, write_archive
from oomwizard.kit.targets import Target

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"
CLI = "import oomwizard\n\ndef main():\n    print(oomwizard.__file__)\n    return 0\n"


def _archive(tmp: Path, python: str = HERE, body: str = CLI) -> tuple[Path, str]:
    site = tmp / "site-src"
    (site / "oomwizard").mkdir(parents=True)
    (site / "oomwizard" / "__init__.py").write_text("", encoding="utf-8")
    (site / "oomwizard" / "cli.py").write_text(body, encoding="utf-8")
    out = tmp / "oomwizard.pyz"
    digest = write_archive(out, site, Target(python, 28, "x86_64"), "0.0.0")
    return out, digest


def _start(archive: Path, cache: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.Popen([sys.executable, str(archive), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _run(archive: Path, cache: Path) -> tuple[int, str, str]:
    p = _start(archive, cache)
    out, err = p.communicate(timeout=60)
    return p.returncode, out.strip(), err


def test_cache_root_follows_xdg_cache_home_when_absolute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/op")
    assert pyzboot.cache_root({"XDG_CACHE_HOME": "/var/cache/op"}) == "/var/cache/op/oomwizard/pyz"
    assert pyzboot.cache_root({"XDG_CACHE_HOME": "relative/cache"}) == "/home/op/.cache/oomwizard/pyz"
    assert pyzboot.cache_root({}) == "/home/op/.cache/oomwizard/pyz"


def test_the_archive_holds_two_entries_and_the_hash_names_its_payload(tmp_path: Path) -> None:
    archive, digest = _archive(tmp_path)
    assert archive.read_bytes().startswith(f"#!/usr/bin/env python{HERE}\n".encode())
    with zipfile.ZipFile(archive) as zf:
        assert sorted(zf.namelist()) == ["__main__.py", "payload.zip"]
        assert hashlib.sha256(zf.read("payload.zip")).hexdigest() == digest
        assert f'PAYLOAD_HASH = "{digest}"' in zf.read("__main__.py").decode()


def test_first_run_unpacks_later_runs_reuse(tmp_path: Path) -> None:
    archive, digest = _archive(tmp_path)
    cache = tmp_path / "cache"
    code, out, err = _run(archive, cache)
    folder = cache / "oomwizard" / "pyz" / digest
    assert code == 0, err
    assert Path(out) == folder / "site" / "oomwizard" / "__init__.py"
    assert (folder / pyzboot.MARK).is_file()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    (folder / "site" / "left-by-first-run").write_text("x", encoding="utf-8")
    inode = folder.stat().st_ino
    code, out2, err = _run(archive, cache)
    assert code == 0 and out2 == out, err
    assert folder.stat().st_ino == inode and (folder / "site" / "left-by-first-run").exists()
    assert sorted(p.name for p in folder.parent.iterdir()) == [digest]


def test_a_new_build_gets_a_new_folder(tmp_path: Path) -> None:
    a, da = _archive(tmp_path / "a")
    b, db = _archive(tmp_path / "b", body=CLI + "# changed\n")
    assert da != db
    cache = tmp_path / "cache"
    assert _run(a, cache)[0] == 0 and _run(b, cache)[0] == 0
    assert sorted(p.name for p in (cache / "oomwizard" / "pyz").iterdir()) == sorted([da, db])


def test_runs_starting_at_once_all_succeed_with_one_copy(tmp_path: Path) -> None:
    archive, digest = _archive(tmp_path)
    cache = tmp_path / "cache"
    procs = [_start(archive, cache) for _ in range(6)]
    results = [(p.wait(timeout=120), p.stdout.read().strip() if p.stdout else "", p.stderr.read() if p.stderr else "")
               for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert all(code == 0 for code, _, _ in results), results
    assert len({out for _, out, _ in results}) == 1
    assert sorted(p.name for p in (cache / "oomwizard" / "pyz").iterdir()) == [digest]


def test_a_run_killed_while_unpacking_leaves_nothing_that_counts(tmp_path: Path) -> None:
    archive, digest = _archive(tmp_path)
    root = tmp_path / "cache" / "oomwizard" / "pyz"
    root.mkdir(parents=True, mode=0o700)
    (root / f".{digest[:16]}-killed" / "site").mkdir(parents=True)  # what a killed run leaves
    (root / digest / "site").mkdir(parents=True)  # a copy someone emptied by hand: no mark
    code, out, err = _run(archive, tmp_path / "cache")
    assert code == 0, err
    assert Path(out) == root / digest / "site" / "oomwizard" / "__init__.py"
    assert (root / digest / pyzboot.MARK).is_file()


def test_a_cache_others_can_write_to_is_refused(tmp_path: Path) -> None:
    archive, _ = _archive(tmp_path)
    root = tmp_path / "cache" / "oomwizard" / "pyz"
    root.mkdir(parents=True)
    root.chmod(0o777)
    code, out, err = _run(archive, tmp_path / "cache")
    assert code == Exit.ERROR == pyzboot.ERROR
    assert "writable by others" in err and "无法将" in err and "可被他人写入或不属于你" in err
    assert out == "" and list(root.iterdir()) == []


def test_another_python_is_told_which_one_to_use(tmp_path: Path) -> None:
    other = "3.10" if HERE != "3.10" else "3.11"
    archive, _ = _archive(tmp_path, python=other)
    code, out, err = _run(archive, tmp_path / "cache")
    assert code == Exit.ERROR and out == ""
    assert f"CPython {other}" in err and f"python{other}" in err and "请用" in err
    assert not (tmp_path / "cache").exists()


def test_a_damaged_archive_says_so(tmp_path: Path) -> None:
    archive, _ = _archive(tmp_path)
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        info = zf.getinfo("payload.zip")
    start = len(f"#!/usr/bin/env python{HERE}\n") + info.header_offset + 30 + len(info.filename)
    data[start:start + 64] = b"\0" * 64  # the inner zip's first entry header
    archive.write_bytes(bytes(data))
    code, _, err = _run(archive, tmp_path / "cache")
    assert code == Exit.ERROR and "damaged" in err
    root = tmp_path / "cache" / "oomwizard" / "pyz"
    assert list(root.iterdir()) == []  # neither a finished copy nor the temporary one


def test_a_payload_that_is_not_what_its_hash_says_is_not_cached(tmp_path: Path) -> None:
    archive, digest = _archive(tmp_path)
    with zipfile.ZipFile(archive) as zf:
        main, payload = zf.read("__main__.py").decode(), zf.read("payload.zip")
    forged = tmp_path / "forged.pyz"
    with zipfile.ZipFile(forged, "w") as zf:
        zf.writestr("__main__.py", main.replace(digest, "0" * 64))
        zf.writestr("payload.zip", payload)
    code, out, err = _run(forged, tmp_path / "cache")
    assert code == Exit.ERROR and out == ""
    assert "do not match their sha256" in err
    assert list((tmp_path / "cache" / "oomwizard" / "pyz").iterdir()) == []


def test_the_boot_code_carries_its_messages_from_the_catalogue() -> None:
    """The boot code runs before the catalogue is unpacked: building the archive writes the strings in."""
    source = bootstrap_source("0" * 64, Target(HERE, 28, "x86_64"), "0.0.0")
    assert "@en:" not in source and "@zh:" not in source
    for key in ("kit.pyz.wrong_python", "kit.pyz.cannot_unpack"):
        assert ui(key, "en") in source and ui(key, "zh") in source
    compile(source, "__main__.py", "exec")
