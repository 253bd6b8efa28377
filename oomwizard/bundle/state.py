"""An unfinished walk, kept on disk as the operator goes, so a dropped session can be resumed.

A dropped SSH connection (SIGHUP) or a killed process must not cost the answers given so far.
After every answer, correction or change of screen the walk is written again: to a temporary file
in the same folder, flushed, then renamed over the old one, so a reader (or a ``kill -9`` at any
moment) sees the old state or the new one, never half of one. At most the answer being typed is
lost. The folder is ``$XDG_STATE_HOME/oomwizard`` (else ``~/.local/state/oomwizard``), mode 0700,
files 0600: answers and overrides may name models and paths. A walk is keyed by its log's
identity (path, size, modification time, and a hash of its first and last 64 KiB), so the same
log resumes the same walk and a log that changed starts a new one. Walks older than
:data:`MAX_AGE_S` or beyond the :data:`MAX_ENTRIES` newest are pruned. A file that cannot be
read or has the wrong shape is skipped with a warning, never a traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import Text, TextError, msg
from ..text.units import KIB, MIB

VERSION = 1
MAX_AGE_S = 14 * 24 * 3600
MAX_ENTRIES = 20
MAX_FILE = MIB
"""A walk is a few KiB; anything bigger is not one of ours."""
BLOCK = 64 * KIB
SCREENS = ("welcome", "diagnosis", "question", "leaf")


def state_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path(env.get("HOME") or Path.home()) / ".local" / "state"
    return root / "oomwizard"


def _ensure_dir(d: Path) -> Path:
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if d.stat().st_mode & 0o077:
            os.chmod(d, 0o700)
    return d


def log_key(paths: list[str], machine: str | None = None, replay: str | None = None) -> str:
    """The identity of what the walk follows: each log's path, size, mtime and first/last block
    (only of a regular file: a FIFO or device is named, never opened)."""
    h = hashlib.sha256()
    for p in paths:
        h.update(b"log\0" + os.path.realpath(p).encode("utf-8", "surrogateescape") + b"\0")
        try:
            st = os.stat(p)
            h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
            if not stat.S_ISREG(st.st_mode):  # a FIFO or device: opening it could block
                continue
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
            with os.fdopen(fd, "rb") as fh:
                h.update(fh.read(BLOCK))
                if st.st_size > BLOCK:
                    fh.seek(max(BLOCK, st.st_size - BLOCK))
                    h.update(fh.read(BLOCK))
        except OSError:
            h.update(b"unreadable")
    for tag, extra in (("machine", machine), ("replay", replay)):
        if extra:
            h.update(f"{tag}\0{os.path.realpath(extra)}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:32]


@dataclass
class Walk:
    key: str
    logs: list[str] = field(default_factory=list)
    machine: str | None = None
    replay: str | None = None
    lang: str = "en"
    screen: str = "welcome"
    answers: list[dict[str, str]] = field(default_factory=list)
    """``{"question", "value", "source"}`` in the order given."""
    overrides: dict[str, str] = field(default_factory=dict)
    """Facts the operator set, as typed (re-checked on resume like ``--set``)."""
    scenario: str | None = None
    """The scenario chosen on the diagnosis screen, when not the log's best match."""
    leaf: str | None = None
    finished: bool = False
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    version: int = VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class StateWarning(TextError):
    """A saved walk that is skipped; the message (in both languages) says which file and why."""


def _skipped(path: Path, why: Text | str) -> StateWarning:
    return StateWarning(msg("bundle.state.skipped").format(path=path, why=why))


def _check(data: Any, path: Path) -> Walk:
    def bad(why: Text) -> StateWarning:
        return _skipped(path, why)

    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise bad(msg("bundle.state.other_version"))
    w = Walk(key=str(data.get("key", "")))
    for name, types in (("logs", list), ("answers", list), ("overrides", dict), ("screen", str), ("lang", str),
                        ("finished", bool), ("created", (int, float)), ("updated", (int, float))):
        if name in data:
            if not isinstance(data[name], types) or (types is not bool and isinstance(data[name], bool)):
                raise bad(msg("bundle.state.wrong_type").format(name=name))
            setattr(w, name, data[name])
    for name in ("machine", "replay", "scenario", "leaf"):
        v = data.get(name)
        if v is not None and not isinstance(v, str):
            raise bad(msg("bundle.state.wrong_type").format(name=name))
        setattr(w, name, v)
    if not all(isinstance(p, str) for p in w.logs) or w.screen not in SCREENS:
        raise bad(msg("bundle.state.bad_logs_or_screen"))
    for a in w.answers:
        if not (isinstance(a, dict) and all(isinstance(a.get(k), str) for k in ("question", "value", "source"))):
            raise bad(msg("bundle.state.bad_answer"))
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in w.overrides.items()):
        raise bad(msg("bundle.state.bad_override"))
    return w


class Store:
    """The saved walks in one folder."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or state_dir()
        self.warnings: list[Text] = []

    def path(self, key: str) -> Path:
        return self.folder / f"walk-{key}.json"

    def save(self, walk: Walk) -> Path:
        """Write ``walk`` atomically (temp file, fsync, rename); mode 0600."""
        _ensure_dir(self.folder)
        walk.updated = time.time()
        fd, tmp = tempfile.mkstemp(prefix=".walk-", suffix=".tmp", dir=self.folder)  # 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(walk.to_json(), fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path(walk.key))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return self.path(walk.key)

    def _read(self, path: Path) -> Walk | None:
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_FILE + 1)
            if len(raw) > MAX_FILE:
                raise _skipped(path, msg("bundle.state.too_large").format(kib=MAX_FILE >> 10))
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise _skipped(path, msg("bundle.state.not_json")) from None
            return _check(data, path)
        except StateWarning as e:
            self.warnings.append(e.text)
        except OSError as e:
            self.warnings.append(_skipped(path, e.strerror or str(e)).text)
        return None

    def load(self, key: str) -> Walk | None:
        p = self.path(key)
        return self._read(p) if p.exists() else None

    def walks(self) -> list[Walk]:
        """Every readable walk, newest first."""
        if not self.folder.is_dir():
            return []
        out = [w for p in sorted(self.folder.glob("walk-*.json")) if (w := self._read(p)) is not None]
        return sorted(out, key=lambda w: w.updated, reverse=True)

    def latest_unfinished(self) -> Walk | None:
        return next((w for w in self.walks() if not w.finished and (w.answers or w.screen != "welcome")), None)

    def prune(self, now: float | None = None) -> int:
        """Remove walks older than :data:`MAX_AGE_S` and beyond the :data:`MAX_ENTRIES` newest."""
        now = time.time() if now is None else now
        if not self.folder.is_dir():
            return 0
        stamped = []
        for p in self.folder.glob("walk-*.json"):
            w = self._read(p)
            stamped.append((w.updated if w is not None else p.stat().st_mtime, p))
        stamped.sort(reverse=True)
        gone = 0
        for i, (t, p) in enumerate(stamped):
            if i >= MAX_ENTRIES or now - t > MAX_AGE_S:
                with contextlib.suppress(OSError):
                    p.unlink()
                    gone += 1
        for p in self.folder.glob(".walk-*.tmp"):  # a writer killed between create and rename
            with contextlib.suppress(OSError):
                if now - p.stat().st_mtime > 3600:
                    p.unlink()
        return gone
