"""One JSON envelope for every command's machine-readable output.

Scripts that consume ``--format json`` key on ``schema`` to know what they hold and which
version of its shape; ``tool`` says which oomwizard wrote it. The body keys follow. Each kind
has a JSON Schema shipped beside the package (``oomwizard/schemas/<kind>.v1.json``) that the
tests validate real outputs against.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from . import __version__

TOOL_NAME = "oomwizard"
SCHEMA_PREFIX = "oomwizard/"


def schema_id(kind: str, version: int = 1) -> str:
    """The ``schema`` value for one kind of document, e.g. ``oomwizard/diagnose/v1``."""
    return f"{SCHEMA_PREFIX}{kind}/v{version}"


def envelope(kind: str, body: dict[str, Any], version: int = 1) -> dict[str, Any]:
    """``body`` wrapped with ``schema`` and ``tool`` first; body keys never override them."""
    doc: dict[str, Any] = {
        "schema": schema_id(kind, version),
        "tool": {"name": TOOL_NAME, "version": __version__},
    }
    for key, value in body.items():
        if key not in doc:
            doc[key] = value
    return doc


def kind_of(doc: Any) -> tuple[str, int] | None:
    """``(kind, version)`` of a document written by :func:`envelope`, or ``None``."""
    if not isinstance(doc, dict):
        return None
    sid = doc.get("schema")
    if not isinstance(sid, str) or not sid.startswith(SCHEMA_PREFIX):
        return None
    kind, _, ver = sid[len(SCHEMA_PREFIX):].rpartition("/v")
    if not kind or not ver.isdigit():
        return None
    return kind, int(ver)


def schema_text(kind: str, version: int = 1) -> str:
    """The shipped JSON Schema for ``kind`` (raises FileNotFoundError for an unknown kind)."""
    return (resources.files("oomwizard") / "schemas" / f"{kind}.v{version}.json").read_text("utf-8")
