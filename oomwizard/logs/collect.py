"""Logical lines in, what happened out: failures with their tracebacks, facts, start-up progress.

The collector keeps one traceback per writing process (ranks interleave their lines), follows
chained exceptions (``The above exception was the direct cause …``) so a wrapper's frames and
the inner OOM's frames count together, and remembers how far start-up had got when each error
was printed, with the neighbours that can place an error that has no frames of its own (worker
methods, tracebacks printed below a message, progress bars). Every fact keeps a short history,
so the diagnosis can use the value in force when the error happened. It holds only what it
needs: current tracebacks, the facts, and bounded lists of failures and marks.
"""

from __future__ import annotations

from typing import Any

from ..facts.catalog import CATALOG, FactValueError, coerce
from ..facts.model import Fact
from . import errors, finish, marks
from . import facts as fact_rules
from .clean import ELIDED_RE as _ELIDED_RE
from .failure import (
    EVIDENCE_WIDTH,
    MAX_FAILURES,
    MAX_FRAMES,
    MAX_HISTORY,
    MAX_MARKS,
    MAX_PROCS,
    Failure,
    Frame,
    Run,
    Traceback,
    sanitize,
)
from .lines import Logical
from .model import where
from .signatures import FRAME_RE, SERVING_LOOPS, WARMUP_CUT, WARMUP_RAISERS, Signature
from .triggers import (
    _CALL_RE,
    _CODE_RE,
    _EXC_RE,
    _FACT_TRIGGER_RE,
    _SIG_TRIGGER_RE,
    _TIMELINE_RE,
    _words,
    scanner,
    trigger_words,
)

__all__ = ["EVIDENCE_WIDTH", "Collector", "Failure", "Frame", "Run", "Traceback", "_words", "sanitize", "scanner",
           "trigger_words"]



class Collector:
    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}
        self.failures: list[Failure] = []
        self.failures_dropped = 0
        self.runs: list[Run] = [Run(0, 0)]
        self.tracebacks: dict[str, Traceback] = {}
        self.private: dict[str, Any] = {}
        self.gpu_indices: set[int] = set()
        self.file = ""
        self.files: list[str] = []
        self.unfinished: set[str] = set()
        """Inputs whose reading stopped early (a damaged gzip, a read error): their end is not the log's end."""
        """Inputs in the order they were read."""
        self._line: Logical | None = None
        self._open: tuple[Failure, Signature | None, str, Logical, int, int] | None = None
        """A message still missing numbers that the next lines may hold: ``(failure, signature
        (None for PyTorch's OOM), text so far, its logical line, last line read, lines left)``."""
        self.history: dict[str, list[list[Any]]] = {}
        """The values a fact took, in reading order: ``[first position, fact there, last position,
        fact there]`` per stretch of equal values (a position is ``(input index, line)``)."""
        self._derived: set[str] = set()
        self._last_tb = ""
        """The process whose traceback a header or frame last extended."""
        self._elided: str | None = None
        """After an elision line: the process whose traceback the next frame or exception continues."""

    # --- facts --------------------------------------------------------------------------------
    def put(self, name: str, raw: Any) -> None:
        lg = self._line
        if lg is None:
            return
        if name.startswith("_"):
            if name == "_gpu_index":
                self.gpu_indices.add(int(raw))
            else:
                self.private[name] = (raw, self.file, lg.line, sanitize(lg.shown))
            return
        if name not in CATALOG:
            return
        fact = _log_fact(name, raw, self.file, lg.line, sanitize(lg.shown, 300))
        if fact is None or fact.value == "":
            return
        self.facts[name] = fact
        value = fact.value
        pos = (len(self.files) - 1, lg.line)
        hist = self.history.setdefault(name, [])
        if hist and hist[-1][3].value == value:
            hist[-1][2:] = [pos, fact]
        else:
            if len(hist) >= MAX_HISTORY:
                del hist[1]  # keep the first value: the one in force before anything changed it
            hist.append([pos, fact, pos, fact])

    def put_at(self, name: str, raw: Any, file: str, line: int, detail: str) -> None:
        fact = _log_fact(name, raw, file, line, detail)
        if fact is not None:
            self.facts[name] = fact

    # --- lines --------------------------------------------------------------------------------
    @property
    def run(self) -> Run:
        return self.runs[-1]

    def feed(self, lg: Logical) -> None:
        text = lg.text
        if self._open is not None and errors.continue_open(self, lg):
            return
        marks.marks(self, lg)
        if _ELIDED_RE.match(text):
            self._elided = self._last_tb
            return
        tb, header, found, last = self._frames(lg)
        if (header or found) and not _SIG_TRIGGER_RE.search(text, last):
            return
        if "above exception" in text:
            if tb is not None and tb.closed:
                tb.chained = True
            return
        open_tb = tb if tb is not None and not tb.closed and tb.frames else None
        if open_tb is not None and not found and self._source_line(open_tb, text):
            return
        self._errors(lg, open_tb, found, last)

    def _frames(self, lg: Logical) -> tuple[Traceback | None, bool, int, int]:
        """A traceback's header and frames on this line: ``(its process's traceback, header seen,
        frames found, end of the last frame)``."""
        text = lg.text
        key = lg.proc
        if self._elided is not None:
            self._rejoin(self._elided, key, text)
        tb = self.tracebacks.get(key)
        header = "Traceback" in text and "most recent call last" in text
        if header:
            inherited = tb.frames if tb is not None and tb.closed and tb.chained else []
            if len(self.tracebacks) >= MAX_PROCS and key not in self.tracebacks:
                self.tracebacks.pop(next(iter(self.tracebacks)))
            tb = self.tracebacks[key] = Traceback(list(inherited[-MAX_FRAMES:]), file=self.file, line=lg.line,
                                                  run=self.run.index)
            if len(self.run.tracebacks) < MAX_MARKS:
                self.run.tracebacks.append((self.file, lg.line, key, tb))
            self._last_tb = key
        found = 0
        last = 0
        if 'File "' not in text:
            return tb, header, found, last
        # A traceback flattened onto one line (a paste that lost its newlines) holds many frames.
        for m in FRAME_RE.finditer(text):
            if tb is None or tb.closed:
                tb = self.tracebacks[key] = Traceback(file=self.file, line=lg.line, run=self.run.index)
            if len(tb.frames) < MAX_FRAMES:
                tb.frames.append(Frame(m.group("path"), m.group("func")))
                tb.tail, tb.awaiting = "", True
            found += 1
            last = m.end()
            self._last_tb = key
            if self.run.phase != "serving" and m.group("func") in SERVING_LOOPS:
                self.run.phase = "serving"
                self.run.progressed = True
        return tb, header, found, last

    def _rejoin(self, before: str, key: str, text: str) -> None:
        """The first frame or exception after an elision line continues the traceback open before
        it, even under another prefix (the two parts were copied from different views)."""
        self._elided = None
        tb = self.tracebacks.get(before)
        if before == key or tb is None or tb.closed or not ('File "' in text or _EXC_RE.match(text)):
            return
        mine = self.tracebacks.get(key)
        if mine is None or mine.closed:
            self.tracebacks[key] = self.tracebacks.pop(before)
            tb.awaiting = False

    @staticmethod
    def _source_line(tb: Traceback, text: str) -> bool:
        """A line of an open traceback that is no frame: the source line under the last frame (its
        call names the next step) or more code. True when it is code, with nothing more to read."""
        source = False
        if tb.awaiting:
            tb.awaiting = False
            if not _EXC_RE.match(text):
                call = _CALL_RE.search(text)
                tb.tail = call.group(1) if call else ""
                source = True  # known by its place: a logger may have stripped its indentation
        if _CODE_RE.match(text):
            tb.code.append(text.strip()[:240])
            return True
        if source and len(tb.code) < MAX_FRAMES:
            tb.code.append(text.strip()[:240])
        return False

    def _errors(self, lg: Logical, tb: Traceback | None, found: int, last: int) -> None:
        """The exception that closes ``tb`` (the open traceback of this process, if any), the
        messages that name their cause, start-up marks and facts."""
        text = lg.text
        exc = _EXC_RE.match(text) or (_EXC_RE.match(text[last:].lstrip(" ^~")) if found else None)
        frames: list[Frame] = []
        code: list[str] = []
        if (exc or found) and tb is not None:
            frames, code = list(tb.frames), list(tb.code)
            tb.closed = True
        exc_type = (exc.group("inner") or exc.group("type")) if exc else None
        kept = len(self.failures) + self.failures_dropped
        if _SIG_TRIGGER_RE.search(text):
            errors.signatures(self, lg, frames, code, exc_type)
        if (exc_type == "RuntimeError" and frames and frames[-1].func in WARMUP_RAISERS
                and len(self.failures) + self.failures_dropped == kept):
            self._new_failure(lg, 0, signature=WARMUP_CUT, frames=frames, code=code, exc_type=exc_type, is_oom=True)
        if _TIMELINE_RE.search(text):
            marks.timeline(self, text, lg)
        if _FACT_TRIGGER_RE.search(text):
            fact_rules.extract(text, self.put)

    def _new_failure(self, lg: Logical, offset: int, **kw: Any) -> Failure | None:
        if len(self.failures) >= MAX_FAILURES:
            self.failures_dropped += 1
            return None
        f = Failure(
            file=self.file,
            line=lg.line_at(offset),
            text=sanitize(lg.shown_from(offset) if lg.starts else lg.shown),
            proc=lg.proc,
            rank=lg.rank,
            run=self.run.index,
            timeline=self.run.phase,
            **kw,
        )
        if self.run.mm_profile:
            f.hints.add("mm_encoder")
        f.sleep_state, f.sleep_mark = self.run.sleep, self.run.sleep_mark
        self.failures.append(f)
        return f

    # --- end ----------------------------------------------------------------------------------
    def finish(self) -> None:
        """What needs the whole log: neighbours of each error, then the derived facts."""
        finish.short_blocks(self)
        finish.cut_tracebacks(self)
        finish.link(self)
        finish.ended(self)
        self.derive()

    def settle(self, file: str, line: int) -> bool:
        """Make every fact the value in force at ``file:line`` (:func:`.finish.settle`)."""
        return finish.settle(self, file, line)

    def derive(self) -> None:
        """Facts that need the whole log (:func:`.finish.derive`)."""
        finish.derive(self)


def _log_fact(name: str, raw: Any, file: str, line: int, detail: str) -> Fact | None:
    """A catalogue fact read from a log line, or None (not a fact of the catalogue, or no value of its type)."""
    if name not in CATALOG:
        return None
    try:
        value = coerce(name, raw)
    except FactValueError:
        return None
    if value is None:
        return None
    return Fact(name, value, where(file, line), kind="log", detail=detail, file=file, line=line)
