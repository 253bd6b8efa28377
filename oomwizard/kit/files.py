"""The kit's own files besides the wheels: ``SHA256SUMS`` and the README (English, then Chinese)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..i18n import LANGS, Text, ui
from ..text.units import MIB
from .targets import Target

SUMS = "SHA256SUMS"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
    return h.hexdigest()


def sha256sums(root: Path) -> str:
    """Every file under ``root`` but the list itself, as ``sha256sum -c`` reads it (``HEX  name``,
    sorted, names relative to ``root``). Names ``sha256sum`` would escape are refused, not mangled."""
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        if name == SUMS:
            continue
        if any(c in name for c in "\\\n\r") or name.startswith("-"):
            raise ValueError(f"a kit file name sha256sum cannot list: {name!r}")
        lines.append(f"{sha256_file(path)}  {name}")
    return "\n".join(lines) + "\n"


def readme(version: str, targets: list[Target], wheel_origin: Text, wheels: list[str], pyz: str | None) -> str:
    pythons = ", ".join(dict.fromkeys(t.python for t in targets))
    table = "\n".join(f"| {t.python} | {t.platform} |" for t in targets)
    parts = []
    for lang in LANGS:
        one_file = ui("kit.readme.pyz", lang, pyz=pyz, python=targets[0].python) if pyz else ""
        parts.append(ui("kit.readme", lang, version=version, pythons=pythons, table=table, wheels=len(wheels),
                        origin=wheel_origin(lang), pyz=one_file))
    return "\n---\n\n".join(parts)

