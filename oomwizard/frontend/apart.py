"""The wizard's first log, diagnosed in a child process started before Textual is imported.

Reading and diagnosing a log is pure Python: the log reader's imports and its rules' patterns
cost about as much CPU as Textual's start-up, and a thread of the wizard's own would take turns
with the screen for the one interpreter lock. Where the process may run on two CPUs or more, the
log named on the command line (or the demo's) is read by ``python -m oomwizard.frontend.apart``
while the wizard starts, so the diagnosis is often ready when the first frame is. The child runs
the same function as the wizard's thread would (:func:`.inputs._diagnose_paths`) and sends back
the pickled :class:`~oomwizard.logs.model.Diagnosis`; it is the wizard's own interpreter on the
wizard's own package, so nothing but this program's objects is ever unpickled.

Anything unexpected (the child cannot start, dies, or sends what cannot be read) falls back to
reading the log in the wizard's thread as before, so a failure shows exactly as it would have;
an input the reader refuses comes back as the same :class:`.inputs.InputProblem`. Standard
input, named pipes and ``--follow`` are never read here: their data can be read only once.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import stat
import struct
import subprocess
import sys
import threading
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from ..logs.model import Diagnosis
    from ..logs.reader import Progress
    from .inputs import Sources
    from .options import LaunchOptions

_HEAD = struct.Struct("<cQ")
"""A frame: its kind (``P`` progress, ``R`` the diagnosis, ``E`` an input problem) and length."""
_PROGRESS = struct.Struct("<qq")
_LARGEST = 256 << 20
"""No diagnosis pickles to more (a few KiB is usual): a longer frame is not one of the child's."""
NICE = 10
"""How much lower the child's scheduling priority is than the wizard's."""
_EVERY = 0.1
"""Seconds between the child's progress reports (the screen shows ten a second at most)."""


def cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def readable_once_only(path: str) -> bool:
    """Whether reading ``path`` would take data nobody can read again (stdin, a pipe, a socket)."""
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # the child reports it exactly as the wizard would
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


class Apart:
    """A child process diagnosing ``paths``; :meth:`result` waits for its answer."""

    def __init__(self, paths: list[str], proc: subprocess.Popen[bytes]) -> None:
        self.paths = list(paths)
        self._proc = proc
        self._taken = False
        self._lock = threading.Lock()
        atexit.register(self.close)

    def take(self, paths: list[str]) -> bool:
        """Whether this child reads ``paths``, once: a later read of the same log (after a
        change on disk, or another log) is the wizard's own."""
        with self._lock:
            if self._taken or list(paths) != self.paths:
                return False
            self._taken = True
            return True

    def result(self, progress: Progress | None = None) -> Diagnosis:
        """The child's diagnosis; :class:`.inputs.InputProblem` for an input it refused;
        :class:`ChildFailed` when it gave no answer (the caller then reads the log itself)."""
        from ..i18n import Text
        from ..logs.model import Diagnosis
        from .inputs import InputProblem

        out = self._proc.stdout
        assert out is not None
        try:
            while True:
                head = _read(out, _HEAD.size)
                kind, size = _HEAD.unpack(head)
                if kind not in (b"P", b"R", b"E") or size > _LARGEST:
                    raise ChildFailed(f"not a frame: {kind!r}, {size} bytes")
                body = _read(out, size)
                if kind == b"P":
                    done, total = _PROGRESS.unpack(body)
                    if progress is not None:
                        progress(done, total if total >= 0 else None)
                elif kind == b"R":
                    diag = pickle.loads(body)
                    if not isinstance(diag, Diagnosis):
                        raise ChildFailed(f"not a diagnosis: {type(diag).__name__}")
                    return diag
                else:
                    text = pickle.loads(body)
                    raise InputProblem(text if isinstance(text, Text) else str(text))
        except (InputProblem, ChildFailed):
            raise
        except Exception as e:  # noqa: BLE001 - whatever broke, the wizard reads the log itself
            raise ChildFailed(f"{type(e).__name__}: {e}") from None
        finally:
            self.close()

    def close(self) -> None:
        """End the child (it may still be reading a large log nobody waits for)."""
        with contextlib.suppress(OSError):
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            if self._proc.stdout is not None:
                self._proc.stdout.close()


class ChildFailed(Exception):
    """The child ended without an answer: read the log in the wizard instead."""


def _read(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("the child ended early")
    return data


def start(opts: LaunchOptions) -> Apart | None:
    """The child for the wizard's first log, or None where reading it in the wizard is right:
    no log, plain mode (nothing to draw meanwhile), ``--follow``, data readable once, one CPU."""
    logs = opts.effective_logs()
    if not logs or opts.plain or opts.follow or cpus() < 2 or not sys.executable:
        return None
    if any(readable_once_only(p) for p in logs):
        return None
    env = dict(os.environ)
    # The wizard's own import path (a kit's unpacked archive, an editable install): the child
    # imports exactly the modules the wizard would.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "oomwizard.frontend.apart", *logs],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True,  # the terminal's Ctrl+C is the wizard's; it ends the child
        )
    except OSError:
        return None
    return Apart(logs, proc)


def with_child(sources: Sources, apart: Apart | None) -> Sources:
    """``sources`` whose first read of the child's logs is the child's answer."""
    if apart is None:
        return sources
    from dataclasses import replace

    from .inputs import InputProblem

    own = sources.diagnose_paths

    def diagnose_paths(paths: list[str], progress: Progress | None = None) -> Diagnosis:
        if apart.take(paths):
            try:
                return apart.result(progress)
            except InputProblem:
                raise
            except ChildFailed:
                pass
        return own(paths, progress)

    return replace(sources, diagnose_paths=diagnose_paths)


# --- the child -------------------------------------------------------------------------------


def _send(out: IO[bytes], kind: bytes, body: bytes) -> None:
    out.write(_HEAD.pack(kind, len(body)))
    out.write(body)
    out.flush()


def child(paths: list[str]) -> int:
    """Diagnose ``paths`` and write the frames to stdout. A diagnosis that raises ends the child
    without an answer (its traceback goes to a stderr nobody reads): the wizard then reads the log
    itself and shows the failure as it always would."""
    from .inputs import InputProblem, _diagnose_paths

    out = sys.stdout.buffer
    last = [0.0]

    def progress(done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - last[0] >= _EVERY:
            last[0] = now
            _send(out, b"P", _PROGRESS.pack(done, -1 if total is None else total))

    try:
        diag = _diagnose_paths(paths, progress)
    except InputProblem as e:
        _send(out, b"E", pickle.dumps(e.text, protocol=pickle.HIGHEST_PROTOCOL))
        return 0
    _send(out, b"R", pickle.dumps(diag, protocol=pickle.HIGHEST_PROTOCOL))
    return 0


def _main(argv: list[str]) -> int:
    with contextlib.suppress(AttributeError, OSError):
        os.nice(NICE)  # where CPUs are short, the wizard's screen comes first
    try:
        return child(argv)
    except BrokenPipeError:  # the wizard stopped waiting
        return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

