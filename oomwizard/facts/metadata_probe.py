"""Read installed package versions from metadata files only, never by importing the packages.

This file runs in two places: inside oomwizard (``find_packages(sys.path, ...)``, and for other
environments through :mod:`.envfiles`) and, as its own source text, in the interpreter the
operator names with ``--python`` (``python -I -S -c <this file> '<json>'``). It therefore uses the
standard library alone and syntax that Python 3.8 understands, and never imports a third-party
module: importing torch takes seconds, and a package's import-time hooks are none of our business.
Its readers take regular files only and a bounded head of each.

Under ``-S`` the interpreter has not set up its site-packages (and has run no ``.pth`` hooks), so
:func:`site_dirs` rebuilds that list the way ``site`` would, without executing anything.

Annotations are never evaluated (``from __future__ import annotations``), so the builtin generics
they use cost an old interpreter nothing.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_NORMALIZE_RE = re.compile(r"[-_.]+")
_VERSION_PY_RE = re.compile(r"^(__version__|cuda|hip|xpu|git_version)\s*(?::[^=\n]*)?=\s*(?:(['\"])(.*?)\2|None)", re.M)
HEAD_LIMIT = 65536


def read_head(path: str, limit: int = HEAD_LIMIT) -> str | None:
    """The first ``limit`` bytes of a regular file as text, or None.

    Another user's environment may hold a FIFO or a link to /dev/zero where a METADATA file
    should be: opening without blocking and refusing anything but a regular file keeps detection
    from hanging or filling memory."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def normalize(name: str) -> str:
    """PEP 503 form: ``Flashinfer_Python`` -> ``flashinfer-python``."""
    return _NORMALIZE_RE.sub("-", name).lower()


def venv_root(executable: str) -> str | None:
    """The venv an interpreter path belongs to (``pyvenv.cfg`` beside or above it), or None."""
    exe_dir = os.path.dirname(os.path.abspath(executable))
    for cand in (exe_dir, os.path.dirname(exe_dir)):
        if os.path.isfile(os.path.join(cand, "pyvenv.cfg")):
            return cand
    return None


def read_cfg(path: str) -> dict[str, str]:
    """``pyvenv.cfg`` as ``{key: value}`` (keys lower-case); empty when unreadable."""
    out: dict[str, str] = {}
    for line in (read_head(path) or "").splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key.strip().lower()] = value.strip()
    return out


def venv_site_dirs(venv: str, ver: str, libdirs: list[str]) -> list[str]:
    """The site-packages folders that exist in a venv, for ``ver`` (``python3.12``)."""
    dirs: list[str] = []
    seen: set[str] = set()
    for cand in [os.path.join(venv, d, ver, "site-packages") for d in libdirs] + [os.path.join(venv, "Lib", "site-packages")]:
        real = os.path.realpath(cand)
        if real not in seen and os.path.isdir(cand):
            seen.add(real)
            dirs.append(cand)
    return dirs


def site_dirs(executable: str | None = None) -> list[str]:
    """site-packages of this interpreter as ``site`` would list them, without running any hook."""
    import site  # with -S, importing site does not run site.main()

    executable = executable or sys.executable
    venv = venv_root(executable)
    prefixes: list[str] = []
    include_system = True
    dirs: list[str] = []
    if venv:
        cfg = read_cfg(os.path.join(venv, "pyvenv.cfg"))
        include_system = cfg.get("include-system-site-packages", "false").lower() == "true"
        # Not site.getsitepackages(): Debian's patched copy answers dist-packages for any prefix
        # when it cannot tell it is in a venv, which it cannot under -S.
        ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        dirs.extend(venv_site_dirs(venv, ver, [getattr(sys, "platlibdir", "lib"), "lib"]))
    if include_system:
        for p in (sys.base_prefix, sys.base_exec_prefix):
            if p not in prefixes:
                prefixes.append(p)
    if not venv:
        try:
            user = site.getusersitepackages()
        except Exception:  # noqa: BLE001 - site hooks of another interpreter may raise anything
            user = None
        if user and os.path.isdir(user):
            dirs.append(user)
    try:
        found = site.getsitepackages(prefixes)
    except Exception:  # noqa: BLE001 - site hooks of another interpreter may raise anything
        found = []
    for d in found:
        if d not in dirs and os.path.isdir(d):
            dirs.append(d)
    return dirs


def pth_paths(dirs: list[str]) -> list[str]:
    """Directories named by plain lines of ``*.pth`` files; lines that run code are skipped."""
    out: list[str] = []
    for d in dirs:
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            text = read_head(os.path.join(d, name))
            if text is None:
                continue
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                full = os.path.normpath(os.path.join(d, line))
                if full not in out and full not in dirs and os.path.isdir(full):
                    out.append(full)
    return out


def _dist_name(entry: str) -> str | None:
    """``torch-2.8.0.dist-info`` -> ``torch``; ``vllm.egg-info`` -> ``vllm``."""
    if entry.endswith(".dist-info"):
        stem = entry[: -len(".dist-info")]
    elif entry.endswith(".egg-info"):
        stem = entry[: -len(".egg-info")]
    else:
        return None
    return stem.split("-", 1)[0]


def _read_version(path: str) -> tuple[str | None, str | None]:
    """``(version, file)`` from a ``*.dist-info``/``*.egg-info`` directory (or an egg-info file)."""
    candidates = [path]
    if os.path.isdir(path):
        candidates = [os.path.join(path, "METADATA"), os.path.join(path, "PKG-INFO")]
    for cand in candidates:
        text = read_head(cand)
        if text is None:
            continue
        for line in text.splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip(), cand
            if not line.strip():
                break
    return None, None


def find_packages(paths: Iterable[str], wanted: Iterable[str]) -> dict[str, dict[str, Any]]:
    """For each wanted distribution name, the first install found along ``paths``.

    Returns ``{normalized name: {"version", "location", "dist", "also": [...]}}``; ``also`` lists
    further installs of the same name later on the path (shadowed, but a sign of a mixed-up env).
    """
    want = {normalize(w) for w in wanted}
    found: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for p in paths:
        if not p or not os.path.isdir(p):
            continue
        real = os.path.realpath(p)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = os.listdir(p)
        except OSError:
            continue
        for entry in entries:
            name = _dist_name(entry)
            if name is None:
                continue
            key = normalize(name)
            if key not in want:
                continue
            version, source = _read_version(os.path.join(p, entry))
            if version is None:
                continue
            if key in found:
                if found[key]["location"] != p:
                    found[key]["also"].append({"version": version, "location": p})
                continue
            found[key] = {"version": version, "location": p, "dist": name, "also": [], "file": source}
    return found


def torch_build(location: str | None) -> dict[str, str | None] | None:
    """``cuda``/``hip``/``xpu`` build versions from ``torch/version.py`` under ``location``."""
    if not location:
        return None
    path = os.path.join(location, "torch", "version.py")
    text = read_head(path, 8192)
    if text is None:
        return None
    out: dict[str, str | None] = {"file": path}
    for m in _VERSION_PY_RE.finditer(text):
        out[m.group(1)] = m.group(3) if m.group(2) else None
    return out


def probe(paths: list[str], wanted: Iterable[str]) -> dict[str, Any]:
    """Everything the caller needs about one interpreter's packages, as JSON-able data."""
    found = find_packages(paths, wanted)
    torch = found.get("torch")
    info = sys.version_info
    return {
        "python": sys.executable,
        "python_version": f"{info[0]}.{info[1]}.{info[2]}",
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "venv": venv_root(sys.executable),
        "paths": [p for p in paths if p],
        "packages": found,
        "torch_build": torch_build(torch["location"]) if torch else None,
    }


def main(argv: list[str]) -> None:
    """Entry point in another interpreter: ``argv[1]`` is ``{"wanted": [...], "extra_paths": [...]}``."""
    request = json.loads(argv[1]) if len(argv) > 1 else {}
    dirs = site_dirs()
    paths = list(request.get("extra_paths") or []) + dirs + pth_paths(dirs)
    sys.stdout.write(json.dumps(probe(paths, request.get("wanted") or [])))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
