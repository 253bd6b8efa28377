"""Another Python environment's package versions, read from its files alone.

The interpreter of a running vLLM server is named by that process (its argv, its PATH, a
shebang), so it may belong to any user of the machine: starting it would run their program as
whoever runs oomwizard, usually root. Here nothing is executed or imported. ``pyvenv.cfg``, the
interpreter's name and its ``lib/pythonX.Y`` folders give the site-packages list (the way
:func:`.metadata_probe.site_dirs` builds it inside an interpreter), then ``*.dist-info/METADATA``,
``*.egg-info/PKG-INFO``, ``torch/version.py`` and ``vllm/_version.py`` give the versions, the
``.py`` files parsed as text. Every version keeps the file it was read from.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from typing import Any

from . import metadata_probe as mp

_VER_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_NAME_VER_RE = re.compile(r"^(?:python|pypy)(\d+)\.(\d+)")
# ``__version__ = '2.8.0'`` (torch/version.py), ``__version__ = version = '0.11.0'`` (setuptools-scm);
# a bare annotation (``__version__: str``) has no ``=`` and does not match.
_VERSION_ASSIGN_RE = re.compile(r"^__version__\s*(?::[^=\n]*)?=\s*(?:version\s*=\s*)?(['\"])([^'\"\n]+)\1", re.M)


def _prefix(python: str) -> str:
    """The install prefix of an interpreter outside a venv: ``/usr`` for ``/usr/bin/python3``.
    Python itself follows the symlinks of such an interpreter to find its prefix."""
    d = os.path.dirname(os.path.realpath(python))
    return os.path.dirname(d) if os.path.basename(d) in ("bin", "Scripts") else d


def python_version(python: str, venv: str | None, cfg: dict[str, str], prefix: str) -> tuple[str | None, str | None]:
    """``(X.Y[.Z], where it was read)`` without running the interpreter."""
    for key in ("version", "version_info"):
        m = _VER_RE.search(cfg.get(key, ""))
        if m and venv:
            return ".".join(g for g in m.groups() if g), f"{key} in {os.path.join(venv, 'pyvenv.cfg')}"
    for name in (python, os.path.realpath(python)):
        m = _NAME_VER_RE.match(os.path.basename(name))
        if m:
            return f"{m.group(1)}.{m.group(2)}", f"the interpreter's file name {name}"
    for meta in sorted(glob.glob(os.path.join(glob.escape(prefix), "conda-meta", "python-[0-9]*.json"))):
        m = _VER_RE.search(os.path.basename(meta))
        if m:
            return ".".join(g for g in m.groups() if g), meta
    libs = sorted({m.group(0) for d in glob.glob(os.path.join(glob.escape(venv or prefix), "lib*", "python3.*")) if (m := _VER_RE.search(os.path.basename(d)))})
    if len(libs) == 1:
        return libs[0], f"the only lib/python{libs[0]} folder of {venv or prefix}"
    return None, None


def system_dirs(prefix: str, xy: str) -> list[str]:
    """Site folders of an interpreter installed at ``prefix`` (upstream and Debian layouts)."""
    py = f"python{xy}"
    cands = [os.path.join(prefix, lib, py, "site-packages") for lib in ("lib", "lib64")]
    if os.path.normpath(prefix) == "/usr":
        cands.append(f"/usr/local/lib/{py}/dist-packages")
    cands += [os.path.join(prefix, "lib", "python3", "dist-packages"), os.path.join(prefix, "lib", py, "dist-packages")]
    out: list[str] = []
    for c in cands:
        if os.path.isdir(c) and os.path.realpath(c) not in {os.path.realpath(o) for o in out}:
            out.append(c)
    return out


def site_dirs_of(python: str, home: str | None = None) -> dict[str, Any]:
    """Where ``python`` would look for packages: ``{"dirs", "venv", "prefix", "python_version",
    "python_version_source"}``. ``home`` is the owner's home folder, for its user site-packages."""
    venv = mp.venv_root(python)
    cfg = mp.read_cfg(os.path.join(venv, "pyvenv.cfg")) if venv else {}
    prefix = venv or _prefix(python)
    version, version_src = python_version(python, venv, cfg, prefix)
    xy = ".".join(version.split(".")[:2]) if version else None
    dirs: list[str] = []
    if venv:
        if xy:
            dirs += mp.venv_site_dirs(venv, f"python{xy}", ["lib", "lib64"])
        if cfg.get("include-system-site-packages", "false").lower() == "true" and xy:
            base = cfg.get("base-prefix") or (os.path.dirname(cfg["home"].rstrip("/")) if cfg.get("home") else None)
            if base:
                dirs += [d for d in system_dirs(base, xy) if d not in dirs]
    elif xy:
        user = os.path.join(home, ".local", "lib", f"python{xy}", "site-packages") if home else None
        if user and os.path.isdir(user):
            dirs.append(user)
        dirs += [d for d in system_dirs(prefix, xy) if d not in dirs]
    return {"dirs": dirs, "venv": venv, "prefix": prefix, "python_version": version, "python_version_source": version_src}


def _module_version(paths: Sequence[str], rel: str) -> dict[str, Any] | None:
    """A version written in a package's own ``.py`` file (a checkout without metadata)."""
    for p in paths:
        path = os.path.join(p, rel)
        text = mp.read_head(path, 16384)
        if text is None:
            continue
        m = _VERSION_ASSIGN_RE.search(text)
        if m:
            return {"version": m.group(2), "location": p, "dist": rel.split("/")[0], "also": [], "file": path}
    return None


def read_env(python: str, wanted: Sequence[str], extra_paths: Sequence[str] = (), home: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """The same data as :func:`.metadata_probe.probe`, for ``python``, from files only:
    ``(data, None)`` or ``(None, reason)``."""
    where = site_dirs_of(python, home)
    dirs = where["dirs"]
    if not dirs:
        if where["python_version"] is None:
            return None, f"cannot tell which Python version {python} is from its files (no pyvenv.cfg, no lib/pythonX.Y folder)"
        return None, f"no site-packages folder found for {python} under {where['prefix']}"
    paths = [p for p in extra_paths if p] + dirs + mp.pth_paths(dirs)
    found = mp.find_packages(paths, wanted)
    if "torch" not in found:
        hit = _module_version(paths, "torch/version.py")
        if hit:
            found["torch"] = hit
    if "vllm" not in found:
        hit = _module_version(paths, "vllm/_version.py")
        if hit:
            found["vllm"] = hit
    torch = found.get("torch")
    base = os.path.basename(python).lower()
    return {
        "python": python,
        "python_version": where["python_version"],
        "python_version_source": where["python_version_source"],
        "implementation": "pypy" if base.startswith("pypy") else None,
        "prefix": where["prefix"],
        "venv": where["venv"],
        "paths": paths,
        "packages": found,
        "torch_build": mp.torch_build(torch["location"]) if torch else None,
        "read": "files",
    }, None

