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

import re
from collections.abc import Iterator
from typing import Any

from ..facts.catalog import CATALOG, FactValueError, coerce
from ..facts.model import Fact
from . import facts as fact_rules
from . import finish
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
from .signatures import (
    FRAME_RE,
    GPU_BLOCKS_RE,
    METHOD_RE,
    MM_PROFILE_RE,
    MM_PROFILE_TRIGGERS,
    OOM_RE,
    PROGRESS_RE,
    SERVING_LOOPS,
    SERVING_SOURCES,
    SIGNATURES,
    SLEEP_MARKS,
    SLEEP_PARTIAL_TAGS,
    TIMELINE,
    WARMUP_CUT,
    WARMUP_RAISERS,
    Signature,
)
from .torch_oom import parse_torch_oom
from .triggers import (
    _CALL_RE,
    _CODE_RE,
    _DEATH_RE,
    _EXC_RE,
    _FACT_TRIGGER_RE,
    _NCCL_OOM_RE,
    _PHASE_ORDER,
    _RUN_START_RE,
    _SERVING_RE,
    _SIG_TRIGGER_RE,
    _SLEEP_RE,
    _TIMELINE_RE,
    _TRIED_RE,
    CONTINUE_LINES,
    _words,
    scanner,
    trigger_words,
)

__all__ = ["EVIDENCE_WIDTH", "Collector", "Failure", "Frame", "Run", "Traceback", "_words", "sanitize", "scanner",
           "trigger_words"]


def _matching(text: str, frames: list[Frame]) -> Iterator[tuple[Signature, re.Match[str]]]:
    """Each message rule whose trigger, pattern and (when it names some) frames hold on ``text``."""
    for sig in SIGNATURES:
        if not any(t in text for t in sig.triggers):
            continue
        m = sig.pattern.search(text)
        if not m:
            continue
        if sig.frames is not None and not any(sig.frames.search(fr.path) or sig.frames.search(fr.func)
                                              for fr in frames):
            continue
        yield sig, m


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
        try:
            value = coerce(name, raw)
        except FactValueError:
            return
        if value is None or value == "":
            return
        fact = self.facts[name] = Fact(
            name, value, where(self.file, lg.line), kind="log",
            detail=sanitize(lg.shown, 300), file=self.file, line=lg.line,
        )
        pos = (len(self.files) - 1, lg.line)
        hist = self.history.setdefault(name, [])
        if hist and hist[-1][3].value == value:
            hist[-1][2:] = [pos, fact]
        else:
            if len(hist) >= MAX_HISTORY:
                del hist[1]  # keep the first value: the one in force before anything changed it
            hist.append([pos, fact, pos, fact])

    def put_at(self, name: str, raw: Any, file: str, line: int, detail: str) -> None:
        if name not in CATALOG:
            return
        try:
            value = coerce(name, raw)
        except FactValueError:
            return
        if value is not None:
            self.facts[name] = Fact(name, value, where(file, line), kind="log", detail=detail,
                                    file=file, line=line)

    # --- lines --------------------------------------------------------------------------------
    @property
    def run(self) -> Run:
        return self.runs[-1]

    def feed(self, lg: Logical) -> None:
        text = lg.text
        if self._open is not None and self._continue(lg):
            return
        self._marks(lg)
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

    def _marks(self, lg: Logical) -> None:
        """What a line says about the engine's run: a death reported, sleep, serving, a method, a
        multimodal profiling pass."""
        text = lg.text
        run = self.run
        if _DEATH_RE.search(text) and len(run.deaths) < MAX_MARKS:
            run.deaths.append((self.file, lg.line, sanitize(lg.shown, 160)))
        if ("sleep" in text or "wake up" in text) and _SLEEP_RE.search(text):
            self._sleep_mark(text, lg)
        if run.phase != "serving" and (
                _SERVING_RE.search(text)
                or (lg.level == "ERROR" and lg.src.rsplit("/", 1)[-1].startswith(SERVING_SOURCES))):
            run.phase = "serving"
            run.progressed = True
        self._line = lg
        if "method" in text and len(run.methods) < MAX_MARKS:
            m = METHOD_RE.search(text)
            if m:
                run.methods.append((self.file, lg.line, m.group("func")))
        if not run.mm_profile and any(t in text for t in MM_PROFILE_TRIGGERS) and MM_PROFILE_RE.search(text):
            run.mm_profile = True

    def _frames(self, lg: Logical) -> tuple[Traceback | None, bool, int, int]:
        """A traceback's header and frames on this line: ``(its process's traceback, header seen,
        frames found, end of the last frame)``."""
        text = lg.text
        key = lg.proc
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
            if self.run.phase != "serving" and m.group("func") in SERVING_LOOPS:
                self.run.phase = "serving"
                self.run.progressed = True
        return tb, header, found, last

    @staticmethod
    def _source_line(tb: Traceback, text: str) -> bool:
        """A line of an open traceback that is no frame: the source line under the last frame (its
        call names the next step) or more code. True when it is code, with nothing more to read."""
        if tb.awaiting:
            tb.awaiting = False
            if not _EXC_RE.match(text):
                call = _CALL_RE.search(text)
                tb.tail = call.group(1) if call else ""
        if _CODE_RE.match(text):
            tb.code.append(text.strip()[:240])
            return True
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
            self._signatures(lg, frames, code, exc_type)
        if (exc_type == "RuntimeError" and frames and frames[-1].func in WARMUP_RAISERS
                and len(self.failures) + self.failures_dropped == kept):
            self._new_failure(lg, 0, signature=WARMUP_CUT, frames=frames, code=code, exc_type=exc_type, is_oom=True)
        if _TIMELINE_RE.search(text):
            self._timeline(text, lg)
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

    def _sleep_mark(self, text: str, lg: Logical) -> None:
        """Follow sleep mode: fallen asleep, the weights alone woken, or woken again."""
        for trigger, rx, state in SLEEP_MARKS:
            if trigger not in text:
                continue
            m = rx.search(text)
            if m is None:
                continue
            tags = m.groupdict().get("tags") or ""
            if state == "awake" and any(t in tags for t in SLEEP_PARTIAL_TAGS) and "kv_cache" not in tags:
                state = "waking"
            self.run.sleep = state
            self.run.sleep_mark = (self.file, lg.line, sanitize(lg.shown, 200))
            return

    def _signatures(self, lg: Logical, frames: list[Frame], code: list[str], exc_type: str | None) -> None:
        """Messages that name their cause on this line, then PyTorch's generic OOM unless one did."""
        text = lg.text
        if not frames and "method" in text:
            m = METHOD_RE.search(text)
            if m:
                frames = [Frame("", m.group("func"))]
        named_oom = False
        for sig, m in _matching(text, frames):
            self._named(lg, sig, m, frames, code, exc_type)
            named_oom = named_oom or sig.oom
        if not named_oom:
            self._gpu_oom(lg, frames, code, exc_type)

    def _named(self, lg: Logical, sig: Signature, m: re.Match[str], frames: list[Frame], code: list[str],
               exc_type: str | None) -> None:
        text = lg.text
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        # A message that quotes PyTorch's error keeps its numbers (the chained error may be cut).
        inline = parse_torch_oom(text) if sig.oom else None
        if inline is not None and inline.requested is None:
            inline = None
        failure = self._new_failure(lg, m.start(), signature=sig, groups=groups, frames=frames, code=code,
                                    exc_type=exc_type, is_oom=sig.oom, oom=inline)
        if failure is not None and any(g not in groups for g in sig.facts):
            self._open = (failure, sig, text, lg, lg.lines[-1] if lg.lines else lg.line, CONTINUE_LINES)
        if inline is not None and inline.total is not None:
            self.put("gpu_mem_total_bytes", inline.total)
        for group, fact in sig.facts.items():
            if group in groups:
                self.put(fact, groups[group].replace(",", ""))
        self._message_facts(sig.id, groups)

    def _message_facts(self, sid: str, groups: dict[str, str]) -> None:
        """Facts some messages carry in a unit or spelling of their own."""
        if sid == "free-memory-at-startup" and "total" in groups:
            self.put("gpu_mem_total_bytes", round(float(groups["total"]) * (1 << 30)))
            dev = groups.get("dev", "")
            if dev.startswith(("xpu", "cuda")):
                self.put("error_platform", "xpu" if dev.startswith("xpu") else "cuda")
        if sid == "sleep-cumem-oom":
            self.put("error_platform", "rocm" if groups.get("plat", "").upper() == "HIP" else "cuda")
        if sid == "swap-space-warning":
            self.put("host_mem_total_bytes", round(float(groups.get("ram", "0")) * (1 << 30)) or None)

    def _gpu_oom(self, lg: Logical, frames: list[Frame], code: list[str], exc_type: str | None) -> None:
        """PyTorch's (or NCCL's) generic GPU out-of-memory error."""
        text = lg.text
        m = OOM_RE.search(text) or _NCCL_OOM_RE.search(text)
        if not m:
            return
        oom = parse_torch_oom(text)
        failure = self._new_failure(lg, m.start(), oom=oom, is_oom=True, frames=frames, code=code, exc_type=exc_type)
        if failure is not None and (oom is None or oom.requested is None):
            self._open = (failure, None, text, lg, lg.lines[-1] if lg.lines else lg.line, 1)
        if oom is not None:
            if oom.platform:
                self.put("error_platform", oom.platform)
            if oom.total is not None:
                self.put("gpu_mem_total_bytes", oom.total)
        plat = m.groupdict().get("plat") or m.groupdict().get("plat2")
        if plat in ("CUDA", "HIP", "XPU"):
            self.put("error_platform", {"CUDA": "cuda", "HIP": "rocm", "XPU": "xpu"}[plat])

    def _continue(self, lg: Logical) -> bool:
        """Complete the message left open from the lines that follow it: PyTorch's OOM broken after
        its first sentence ("Tried to allocate …" on the next line), or a message whose numbers a
        report put on indented lines of their own. Returns True when the line was only that."""
        assert self._open is not None
        failure, sig, text, first, last, left = self._open
        self._open = None
        if failure.file != self.file or not 0 < lg.line - last <= 2 or lg.proc != failure.proc:
            return False
        if sig is None:
            if not _TRIED_RE.match(lg.text):
                return False
            more = parse_torch_oom("out of memory. " + lg.text.strip())
            if more is None:
                return False
            if failure.oom is None:
                failure.oom = more
            else:
                for name, value in more.__dict__.items():
                    if getattr(failure.oom, name) in (None, []):
                        setattr(failure.oom, name, value)
            if failure.oom.total is not None:
                self._line, current = first, lg
                self.put("gpu_mem_total_bytes", failure.oom.total)
                self._line = current
            return True
        joined = f"{text} {lg.text.strip()}"
        m = sig.pattern.search(joined)
        added = {k: v for k, v in (m.groupdict() if m else {}).items() if v is not None and k not in failure.groups}
        if added:
            failure.groups.update(added)
            self._line = first  # the facts come from the message, which starts there
            for group, fact in sig.facts.items():
                if group in added:
                    self.put(fact, added[group].replace(",", ""))
            self._line = lg
        if left > 1 and any(g not in failure.groups for g in sig.facts):
            self._open = (failure, sig, joined, first, lg.line, left - 1)
        return False

    def _timeline(self, text: str, lg: Logical) -> None:
        if _RUN_START_RE.search(text):
            run = self.run
            if run.progressed or any(f.run == run.index for f in self.failures[-50:]):
                self.runs.append(Run(len(self.runs), lg.line))
            return
        for trigger, rx, phase in TIMELINE:
            if trigger in text and (rx is None or rx.search(text)):
                run = self.run
                bar = PROGRESS_RE.search(text)
                if bar and int(bar.group("done")) < int(bar.group("total")) and len(run.bars) < MAX_MARKS:
                    run.bars.append((self.file, lg.line, phase, sanitize(lg.shown, 160)))
                if trigger == "blocks:" and len(run.blocks) < MAX_MARKS:
                    blocks = GPU_BLOCKS_RE.search(text)
                    if blocks and int(blocks.group("n")) > 0:
                        run.blocks.append((self.file, lg.line, int(blocks.group("n")), sanitize(lg.shown)))
                if phase == "sampler_warmup" and self.facts.get("engine") is not None \
                        and self.facts["engine"].value == "v0":
                    phase = "serving"
                # Start-up only moves forward; ranks and Ray replay lines out of order.
                if _PHASE_ORDER.index(phase) > _PHASE_ORDER.index(run.phase) if run.phase else True:
                    run.phase = phase
                if phase == run.phase:
                    run.mark = (self.file, lg.line, sanitize(lg.shown))
                run.progressed = True
                return

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
