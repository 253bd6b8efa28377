"""Checking a fix from the wizard: run :func:`oomwizard.verify.verify` on a path or a pasted log.

Free of Textual so it can be tested alone (and used by plain mode). A pasted log goes through a
temporary file, because :func:`verify` reads files; the file is removed at once and every mention
of it is replaced by "the pasted log", so nothing later points at a path that no longer exists.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..i18n import ui
from ..kb.model import Leaf
from ..logs.model import Evidence
from ..text.output import clean_text
from ..text.units import KIB
from ..verify import FAIL, PASS, Verification, verify

SNIFF_BYTES = 64 * KIB
BINARY_SHARE = 0.1
"""Share of control bytes (with a NUL among them) above which a file is not a log."""
_TEXT_CONTROLS = frozenset(b"\t\n\r\x1b\x0c")


@dataclass(frozen=True)
class Verdict:
    """What checking the next start's log said about one checklist item, ready to show."""

    status: str
    """``pass``, ``fail``, ``unproven``, ``unknown`` or ``manual`` (as :mod:`oomwizard.verify`)."""
    note: str
    """The status in words, with the reason (``FAILED — the log still shows it``)."""
    where: str = ""
    """``file:line`` of the deciding log line, if one decided it."""
    line: str = ""
    """That line, already made printable."""


@dataclass
class Checked:
    """One check of the next start's log, as the frontends show it."""

    verification: Verification
    what: str
    """The input in words: a file name, or "the pasted log"."""
    warnings: list[str] = field(default_factory=list)


def shown_name(path: str) -> str:
    """A file as the screen names it: its name alone, made printable (a name can hold escapes too)."""
    return " ".join(clean_text(Path(path).name or path).split())


def looks_binary(path: str) -> bool:
    """True for a file whose start is mostly control bytes (an executable, a core dump, an image)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as gz:
                head = gz.read(SNIFF_BYTES)
    except (OSError, EOFError, gzip.BadGzipFile):
        return False
    if b"\x00" not in head:
        return False
    controls = sum(1 for b in head if b < 0x20 and b not in _TEXT_CONTROLS)
    return controls > BINARY_SHARE * len(head)


def check_path(leaf: Leaf, path: str, lang: str) -> Checked:
    """Verify ``leaf`` against the log at ``path``; raises the reader's ``InputError`` if unreadable."""
    what = shown_name(path)
    warnings = [ui("tui.verify.binary", lang, what=what)] if looks_binary(path) else []
    return Checked(verify(leaf, [path]), what, warnings)


def check_text(leaf: Leaf, text: str, lang: str) -> Checked:
    """Verify ``leaf`` against a pasted log."""
    what = ui("tui.verify.pasted", lang)
    folder = tempfile.mkdtemp(prefix="oomwizard-")
    try:
        path = str(Path(folder) / "pasted.log")
        Path(path).write_text(text, encoding="utf-8", errors="surrogateescape")
        v = verify(leaf, [path])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    def named(hit: Evidence | None) -> Evidence | None:
        return replace(hit, file=what) if hit is not None and hit.file == path else hit

    v.ready_at = named(v.ready_at)
    for r in v.results:
        r.hit = named(r.hit)
    v.inputs = [what if p == path else p for p in v.inputs]
    return Checked(v, what)


def verdicts(v: Verification, lang: str) -> list[Verdict]:
    """One :class:`Verdict` per checklist item, in order."""
    out = []
    for r in v.results:
        note = ui(f"verify.{r.status}", lang)
        if r.reason:
            note += f" — {r.reason_text(lang)}"
        if r.hit is not None:
            out.append(Verdict(r.status, note, f"{shown_name(r.hit.file)}:{r.hit.line}", r.hit.text))
        else:
            out.append(Verdict(r.status, note))
    return out


def summary(checked: Checked, lang: str) -> tuple[str, str, str]:
    """``(what was read, the verdict on the whole fix, how loud)``; loudness is ``error``,
    ``success`` or ``warning``."""
    v = checked.verification
    lines = [ui("tui.verify.checked", lang, what=checked.what), *checked.warnings]
    if v.ready_at is not None:
        where = f"{shown_name(v.ready_at.file)}:{v.ready_at.line}"
        lines.append(ui("verify.ready", lang, where=where))
    else:
        lines.append(ui("verify.not_ready", lang))
    if v.failed:
        return "\n".join(lines), ui("tui.verify.summary_failed", lang), "error"
    if v.proven:
        return "\n".join(lines), ui("verify.summary_proven", lang), "success"
    return "\n".join(lines), ui("verify.summary_unproven", lang), "warning"


def ticks(v: Verification) -> dict[int, bool]:
    """Which items to tick (passed) or untick (failed); the others keep what the operator chose."""
    out: dict[int, bool] = {}
    for i, r in enumerate(v.results):
        if r.status == PASS:
            out[i] = True
        elif r.status == FAIL:
            out[i] = False
    return out
