"""Writing a bundle to text and to a file: shared by ``oomwizard report`` and the wizards' ``r``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..i18n import msg
from .build import BundleInput, bundle_body
from .formats import finish, identities_for, render

SUFFIX = {"markdown": ".md", "json": ".json", "html": ".html"}


def _err(msg: str) -> None:
    print(f"oomwizard: {msg}", file=sys.stderr)


def format_for(path: str | None, given: str | None) -> str:
    """``--format``, else the output file's extension, else Markdown."""
    if given:
        return given
    suffix = Path(path).suffix.lower() if path else ""
    return {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "markdown")


def bundle_text(b: BundleInput, fmt: str, redact: bool) -> str:
    from ..text.output import clean_text

    doc = finish(bundle_body(b), identities_for() if redact else None)
    same = replays_same(doc)
    doc["log"]["replays_same"] = same
    if not same:
        _err(REPLAY_DIFFERS(b.lang))
    return clean_text(render(doc, fmt, b.lang))


REPLAY_DIFFERS = msg("bundle.output.replay_differs")


def replays_same(doc: dict[str, Any]) -> bool:
    """Whether the diagnosis recomputed from the bundle's (redacted) lines ranks as the original."""
    from .replay import diagnosis_of

    again = diagnosis_of(doc)
    mine = [m["scenario"] for m in (doc.get("diagnosis") or {}).get("matches") or []]
    return mine == ([m.scenario for m in again.matches] if again is not None else [])


def write_file(path: str, text: str) -> str:
    """Write ``text`` to ``path`` (mode 0600: a bundle describes a machine) via a temporary file."""
    target = Path(path).expanduser()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return str(target.resolve())
