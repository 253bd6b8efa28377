"""``oomwizard.pyz``: the tool and its dependencies for one interpreter, in one file.

Built shiv-style rather than with shiv: the start-up code (:mod:`.pyzboot`) is ours, about a
hundred lines of standard library, so building needs nothing beyond pip and the cache follows
``XDG_CACHE_HOME`` (shiv's goes to ``~/.shiv``). The dependencies are laid out by pip itself
(``pip install --target``, from the kit's wheels only) and zipped, in sorted order with fixed time
stamps, into an inner ``payload.zip`` whose sha256 names the cache folder: equal contents, one
cache entry; a new build, a new one. The outer archive holds only that and ``__main__.py``, so
Python reads a two-entry zip directory at start, not one of thousands of files.
"""

from __future__ import annotations

import compileall
import hashlib
import io
import json
import os
import py_compile
import re
import shutil
import zipfile
from importlib import resources
from pathlib import Path

from ..i18n import ui
from .pip import PipResult, install_target
from .selfwheel import ZIP_DATE
from .targets import Target, this_python


def _payload(site: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in site.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(site).as_posix(), ZIP_DATE)
            info.external_attr = (0o755 if os.access(path, os.X_OK) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


_MESSAGE = re.compile(r"@(en|zh):([a-z0-9_.-]+)@")


def bootstrap_source(digest: str, target: Target, version: str) -> str:
    """The boot code with this archive's values and its messages from the catalogue (``"@en:KEY@"``,
    written inside a Python string literal, so escaped as one)."""
    text = resources.files("oomwizard.kit").joinpath("pyzboot.py").read_text(encoding="utf-8")
    text = _MESSAGE.sub(lambda m: json.dumps(ui(m.group(2), m.group(1)), ensure_ascii=False)[1:-1], text)
    for key, value in (("@HASH@", digest), ("@PYTHON@", target.python), ("@PLATFORM@", target.platform),
                       ("@VERSION@", version)):
        text = text.replace(key, value)
    return text


def build_pyz(out: Path, target: Target, wheels: Path, version: str, work: Path) -> PipResult | None:
    """Write ``out``; returns pip's result when pip could not lay the files out, else None."""
    site = work / "site"
    result = install_target(f"oomwizard=={version}", target, str(site), str(wheels))
    if result.returncode != 0:
        return result
    shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts: the archive is the entry point
    if target.python == this_python():
        # Byte-code that stays valid whatever time stamps the unpacked files get.
        compileall.compile_dir(str(site), quiet=1, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    write_archive(out, site, target, version)
    return None


def write_archive(out: Path, site: Path, target: Target, version: str) -> str:
    """``out`` from the ``site`` folder; returns the payload's sha256 (the cache folder's name)."""
    payload = _payload(site)
    digest = hashlib.sha256(payload).hexdigest()
    tmp = out.with_name(out.name + ".part")
    with tmp.open("wb") as f:
        f.write(f"#!/usr/bin/env python{target.python}\n".encode())
        with zipfile.ZipFile(f, "w") as zf:
            main = zipfile.ZipInfo("__main__.py", ZIP_DATE)
            main.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(main, bootstrap_source(digest, target, version))
            inner = zipfile.ZipInfo("payload.zip", ZIP_DATE)
            inner.compress_type = zipfile.ZIP_STORED  # read in place when unpacking
            zf.writestr(inner, payload)
    tmp.chmod(0o755)
    os.replace(tmp, out)
    return digest
