"""The oomwizard wheel a kit carries: the very version that builds the kit.

From a source tree (a checkout, or an editable install of one) pip builds it (``pip wheel
--no-deps``). From an installed wheel there is no tree: the wheel is put back together from the
installed files the distribution's ``RECORD`` lists, each checked against its recorded hash, so a
kit never carries a copy someone edited after installing it. Scripts are left out (pip writes
them again from ``entry_points.txt``), and so is what the installer added (``INSTALLER``,
``REQUESTED``, ``direct_url.json``) and the byte-code.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import oomwizard

from .. import __version__
from ..i18n import Text, TextError, msg

INSTALLER_FILES = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class WheelError(TextError, RuntimeError):
    """The wheel could not be made; the message (in both languages) says why and what to do."""


def source_tree() -> Path | None:
    """The checkout this copy runs from, or None when it runs from an installed wheel."""
    root = Path(oomwizard.__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "oomwizard"' in text and (root / "decision_trees").is_dir() else None


def make_wheel(dest: Path) -> tuple[Path, Text]:
    """The wheel, in ``dest``, and how it was made (for the kit's README and the log)."""
    dest.mkdir(parents=True, exist_ok=True)
    tree = source_tree()
    if tree is not None:
        return build_from_tree(tree, dest), msg("kit.selfwheel.built_from_its_source")
    return rebuild_installed(dest), msg("kit.selfwheel.rebuilt_from_the_installed")


def build_from_tree(tree: Path, dest: Path) -> Path:
    # The build backend when it is already here (no download); otherwise pip fetches it.
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", *isolation,
         "-w", str(dest), str(tree)],
        capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL,
    )
    wheels = sorted(dest.glob(f"oomwizard-{__version__}-*.whl"))
    if proc.returncode != 0 or not wheels:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise WheelError(msg("kit.wheel.pip_failed").format(tree=tree, tail=tail))
    return wheels[-1]


def _installed_distribution() -> metadata.Distribution:
    """The distribution whose files are the ``oomwizard`` package being run."""
    here = Path(oomwizard.__file__).resolve()
    for dist in metadata.distributions(path=[str(here.parent.parent)]):
        if (dist.metadata["Name"] or "").lower() != "oomwizard":
            continue
        for f in dist.files or ():
            if str(f).replace("\\", "/") == "oomwizard/__init__.py" and Path(str(dist.locate_file(f))).resolve() == here:
                return dist
    raise WheelError(msg("kit.wheel.not_installed").format(version=__version__, folder=here.parent))


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def rebuild_installed(dest: Path) -> Path:
    dist = _installed_distribution()
    if dist.version != __version__:
        raise WheelError(msg("kit.wheel.version_mismatch").format(installed=dist.version, version=__version__))
    entries: list[tuple[str, bytes]] = []
    info_dir = ""
    for f in dist.files or ():
        name = str(f).replace("\\", "/")
        parts = name.split("/")
        if name.startswith("../") or "__pycache__" in parts or name.endswith(".pyc"):
            continue
        if parts[0].endswith(".dist-info"):
            info_dir = parts[0]
            if parts[-1] in INSTALLER_FILES and len(parts) == 2:
                continue
        data = Path(str(dist.locate_file(f))).read_bytes()
        if f.hash is None or f.hash.mode != "sha256":
            raise WheelError(msg("kit.wheel.no_hash").format(name=name))
        if _digest(data) != f"sha256={f.hash.value}":
            raise WheelError(msg("kit.wheel.changed").format(name=name))
        entries.append((name, data))
    if not info_dir or not any(n == f"{info_dir}/WHEEL" for n, _ in entries):
        raise WheelError(msg("kit.wheel.no_wheel_metadata"))
    path = dest / f"oomwizard-{__version__}-py3-none-any.whl"
    write_wheel(path, entries, info_dir)
    return path


def write_wheel(path: Path, entries: list[tuple[str, bytes]], info_dir: str) -> None:
    """A wheel of ``entries`` with a fresh RECORD; fixed time stamps, so equal inputs give equal bytes."""
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in sorted(entries):
        writer.writerow([name, _digest(data), str(len(data))])
    writer.writerow([f"{info_dir}/RECORD", "", ""])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in [*sorted(entries), (f"{info_dir}/RECORD", record.getvalue().encode())]:
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
