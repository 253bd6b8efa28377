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

import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..facts.catalog import CATALOG, FactValueError, coerce
from ..facts.model import Fact
from ..text.redact import redact_text
from ..text.safe_text import printable
from . import facts as fact_rules
from .lines import Logical
from .model import where
from .scan import Anchor, Scanner, literal
from .signatures import (
    BLOCK_SIZE,
    FRAME_RE,
    GPU_BLOCKS_RE,
    KV_BLOCKS_SHORT,
    METHOD_RE,
    MM_PROFILE_RE,
    MM_PROFILE_TRIGGERS,
    NEAR_LINES,
    OOM_RE,
    OOM_TRIGGERS,
    PROGRESS_RE,
    REQUEST_LAYER_DEATH,
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
from .torch_oom import TorchOom, parse_torch_oom

MAX_FAILURES = 2000
MAX_FRAMES = 400
MAX_PROCS = 512
MAX_MARKS = 256
"""Worker methods and unfinished progress bars kept per start of the engine."""
MAX_HISTORY = 64
"""Values kept per fact, to find the one in force when the diagnosed error happened."""
EVIDENCE_WIDTH = 400

_EXC_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w]*\.)*(?P<type>[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure))"
    r"(?:\((?P<inner>\w+)\))?(?::\s*(?P<msg>.*))?$"
)
_RUN_START = ("vLLM API server version", "LLM engine (", "LLM engine with config")
_RUN_START_RE = re.compile(r"vLLM API server version|Initializing an?\s*(?:V[01]\s*)?LLM engine (?:\(|with config)")
_CODE_RE = re.compile(r"^\s{3,}\S|^\s*[~^]+\s*$")
_CALL_RE = re.compile(r"(?:^|[\s=(.])([A-Za-z_]\w*)\s*\(")
_TRIED_RE = re.compile(r"^\s*Tried\s*to\s*allocate\s*\d")
CONTINUE_LINES = 3
"""Logical lines after a message whose numbers are missing that may still hold them (a report
retyped over indented lines, which the wrap joiner leaves apart)."""

def _alternation(words: set[str] | tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(words, key=len, reverse=True)))


_SIG_TRIGGERS = {t for s in SIGNATURES for t in s.triggers} | set(OOM_TRIGGERS) | {"Cuda failure"}
_SIG_TRIGGER_RE = _alternation(_SIG_TRIGGERS)
# Timeline lines that mark serving repeat on every request: they are only looked at while the
# engine has not reached serving yet (see ``feed``).
_SERVING_TRIGGERS = {t for t, _, phase in TIMELINE if phase == "serving"}
_TIMELINE_RE = _alternation({t for t, _, _ in TIMELINE} - _SERVING_TRIGGERS | set(_RUN_START))
_SERVING_RE = _alternation(_SERVING_TRIGGERS)
_FACT_TRIGGER_RE = _alternation(set(fact_rules.TRIGGERS))
_DEATH_RE = _alternation(REQUEST_LAYER_DEATH)
_SLEEP_RE = _alternation(tuple(t for t, _, _ in SLEEP_MARKS))
_TRACEBACK_TRIGGERS = {"Traceback", '", line ', "above exception", "Error", "Exception"}
# Starts of lines vLLM prints very long (a terminal wraps them over many lines).
_LONG_LINES = {"LLM engine (", "non-default args", "Namespace("}


def _words() -> tuple[set[str], set[str]]:
    """Every trigger the collector reacts to, and the serving marks among them."""
    words = (_SIG_TRIGGERS | ({t for t, _, _ in TIMELINE} - _SERVING_TRIGGERS) | set(fact_rules.TRIGGERS)
             | set(_RUN_START) | _TRACEBACK_TRIGGERS | set(MM_PROFILE_TRIGGERS))
    return words, set(_SERVING_TRIGGERS)


def trigger_words() -> list[str]:
    """Every string a log is searched for (to compare the reader with ``grep -F -f``)."""
    words, marks = _words()
    return sorted(words | marks)


@functools.lru_cache(maxsize=8)
def _scanner(extra: tuple[bytes, ...], engine: str) -> Scanner:
    words, marks = _words()
    anchors = [Anchor(literal(w), 1536, 32 << 10 if w in _LONG_LINES else 2048) for w in sorted(words)]
    anchors += [Anchor(p, 1536, 2048) for p in extra]
    return Scanner(anchors, [Anchor(literal(w), 512, 512) for w in sorted(marks)], engine or None)


def scanner(extra: tuple[bytes, ...] = ()) -> Scanner:
    """What a big log is searched for: every trigger the collector reacts to (the lines around a
    hit are read, enough for a wrapped message and a traceback's source lines), and ``extra``
    regex patterns (a checklist's). Serving marks repeat on every request: only the first one
    after each hit is read."""
    return _scanner(extra, os.environ.get("OOMWIZARD_SCANNER", ""))


_PHASE_ORDER = ["load_weights", "profile_run", "kv_cache_alloc", "graph_capture", "sampler_warmup", "serving"]
_NCCL_OOM_RE = re.compile(r"Cuda failure\s*\d*\s*'out of memory'")


@dataclass(frozen=True)
class Frame:
    path: str
    func: str


@dataclass
class Traceback:
    frames: list[Frame] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    closed: bool = False
    chained: bool = False
    """A chain marker followed the exception: the next traceback of this process continues it."""
    tail: str = ""
    """The function the last frame's source line calls. A paste cut right after that line still
    names the next step (``engine_core.run_busy_loop()``) although its frame never came."""
    awaiting: bool = False
    """The last line read was a frame: the next one of this process is its source line (loggers
    strip its indentation, so it is known by its place, not its shape)."""
    file: str = ""
    line: int = 0
    """Where it starts: its header, or its first frame when the input starts inside it."""
    run: int = 0

    def phase_frames(self) -> list[Frame]:
        """The frames, and the call of the last source line, for telling the phase."""
        return [*self.frames, Frame("", self.tail)] if self.tail else list(self.frames)


@dataclass
class Failure:
    """An error the log reports: a GPU OOM, a message naming its cause, a host-memory kill."""

    file: str
    line: int
    text: str
    """The evidence line as shown to the operator (sanitised)."""
    proc: str
    rank: int | None
    run: int
    signature: Signature | None = None
    groups: dict[str, str] = field(default_factory=dict)
    oom: TorchOom | None = None
    is_oom: bool = False
    frames: list[Frame] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    timeline: str | None = None
    """How far start-up had got when the error was printed."""
    exc_type: str | None = None
    hints: set[str] = field(default_factory=set)
    """Frame flags the rest of the log implies (``mm_encoder`` while a multimodal profiling pass runs)."""
    near_methods: list[str] = field(default_factory=list)
    """Worker methods other processes named close by, nearest first (set by ``Collector.finish``)."""
    after: tuple[str, str] | None = None
    """``(phase, bar text)`` of a progress bar flushed right after the error, stopped before its end."""
    next_frames: list[Frame] = field(default_factory=list)
    """Frames of the traceback the same process printed right after the message (a logger that
    writes the error first and its traceback below it)."""
    reported: str = ""
    """The request layer's report of the engine's death printed right after the error (it only
    waits on an engine that serves)."""
    sleep_state: str | None = None
    """Where vLLM's sleep mode stood when the error was printed: ``asleep`` (after a sleep line),
    ``waking`` (only the weights woken), ``awake`` (woken again), None (no sleep line before it)."""
    sleep_mark: tuple[str, int, str] | None = None
    """``(file, line, text)`` of the sleep or wake line that set ``sleep_state``."""
    cut: bool = False
    """A traceback whose exception never came: the input stops inside it (a paste cut short)."""
    ended: bool = False
    """No error at all: the input stops during start-up, after this line (the last mark read)."""


@dataclass
class Run:
    """One start of the engine (a log can hold several: restarts, crash loops)."""

    index: int
    line: int
    phase: str | None = None
    progressed: bool = False
    mm_profile: bool = False
    """The profiling pass of this start runs on multimodal inputs."""
    methods: list[tuple[str, int, str]] = field(default_factory=list)
    """``(file, line, method)`` for every "while processing method …" line."""
    bars: list[tuple[str, int, str, str]] = field(default_factory=list)
    """``(file, line, phase, text)`` for progress bars stopped before their end."""
    tracebacks: list[tuple[str, int, str, Traceback]] = field(default_factory=list)
    """``(file, line, process, traceback)`` for every traceback header."""
    deaths: list[tuple[str, int, str]] = field(default_factory=list)
    """``(file, line, text)`` for the request layer's reports of the engine's death."""
    blocks: list[tuple[str, int, int, str]] = field(default_factory=list)
    """``(file, line, GPU blocks, text)`` for V0's block count lines."""
    sleep: str | None = None
    """Sleep mode's state after the last sleep or wake line of this start (see ``Failure``)."""
    sleep_mark: tuple[str, int, str] | None = None
    mark: tuple[str, int, str] | None = None
    """``(file, line, text)`` of the last start-up line that kept or moved ``phase``."""


def sanitize(text: str, width: int = EVIDENCE_WIDTH) -> str:
    out = redact_text(printable(text)).replace("\n", " ").strip()
    return out if len(out) <= width else out[: width - 1] + "…"


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
        if _DEATH_RE.search(text) and len(self.run.deaths) < MAX_MARKS:
            self.run.deaths.append((self.file, lg.line, sanitize(lg.shown, 160)))
        if ("sleep" in text or "wake up" in text) and _SLEEP_RE.search(text):
            self._sleep_mark(text, lg)
        if self.run.phase != "serving" and (
                _SERVING_RE.search(text)
                or (lg.level == "ERROR" and lg.src.rsplit("/", 1)[-1].startswith(SERVING_SOURCES))):
            self.run.phase = "serving"
            self.run.progressed = True
        self._line = lg
        if "method" in text and len(self.run.methods) < MAX_MARKS:
            m = METHOD_RE.search(text)
            if m:
                self.run.methods.append((self.file, lg.line, m.group("func")))
        if not self.run.mm_profile and any(t in text for t in MM_PROFILE_TRIGGERS) and MM_PROFILE_RE.search(text):
            self.run.mm_profile = True
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
        if 'File "' in text:
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
        if (header or found) and not _SIG_TRIGGER_RE.search(text, last):
            return
        if "above exception" in text:
            if tb is not None and tb.closed:
                tb.chained = True
            return
        in_tb = tb is not None and not tb.closed and bool(tb.frames)
        if in_tb and not found and tb.awaiting:  # type: ignore[union-attr]
            tb.awaiting = False  # type: ignore[union-attr]
            if not _EXC_RE.match(text):
                call = _CALL_RE.search(text)
                tb.tail = call.group(1) if call else ""  # type: ignore[union-attr]
        if in_tb and not found and _CODE_RE.match(text):
            tb.code.append(text.strip()[:240])  # type: ignore[union-attr]
            return
        exc = _EXC_RE.match(text) or (_EXC_RE.match(text[last:].lstrip(" ^~")) if found else None)
        frames: list[Frame] = []
        code: list[str] = []
        exc_type = None
        if (exc or found) and in_tb:
            frames, code = list(tb.frames), list(tb.code)  # type: ignore[union-attr]
            tb.closed = True  # type: ignore[union-attr]
        if exc:
            exc_type = exc.group("inner") or exc.group("type")
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
        text = lg.text
        if not frames and "method" in text:
            m = METHOD_RE.search(text)
            if m:
                frames = [Frame("", m.group("func"))]
        named_oom = False
        for sig in SIGNATURES:
            for t in sig.triggers:
                if t in text:
                    break
            else:
                continue
            m = sig.pattern.search(text)
            if not m:
                continue
            if sig.frames is not None and not any(sig.frames.search(fr.path) or sig.frames.search(fr.func)
                                                  for fr in frames):
                continue
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
            named_oom = named_oom or sig.oom
            for group, fact in sig.facts.items():
                if group in groups:
                    self.put(fact, groups[group].replace(",", ""))
            if sig.id == "free-memory-at-startup" and "total" in groups:
                self.put("gpu_mem_total_bytes", round(float(groups["total"]) * (1 << 30)))
                dev = groups.get("dev", "")
                if dev.startswith(("xpu", "cuda")):
                    self.put("error_platform", "xpu" if dev.startswith("xpu") else "cuda")
            if sig.id == "sleep-cumem-oom":
                self.put("error_platform", "rocm" if groups.get("plat", "").upper() == "HIP" else "cuda")
            if sig.id == "swap-space-warning":
                self.put("host_mem_total_bytes", round(float(groups.get("ram", "0")) * (1 << 30)) or None)
        m = OOM_RE.search(text) or _NCCL_OOM_RE.search(text)
        if not m or named_oom:
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
        self._short_blocks()
        self._cut_tracebacks()
        self._link()
        self._ended()
        self.derive()

    def _value_at(self, name: str, file: str, line: int) -> Any:
        """The value a fact had at ``file:line`` (the last one read before, else the first after)."""
        hist = self.history.get(name)
        if not hist or file not in self.files:
            return None
        at = (self.files.index(file), line)
        started = [h for h in hist if h[0] <= at]
        return (started[-1][3] if started[-1][2] <= at else started[-1][1]).value if started else hist[0][1].value

    def _short_blocks(self) -> None:
        """V0 raises when max_model_len needs more tokens than its GPU blocks hold; the block count
        it printed just before tells, even when the paste stops ahead of the error."""
        private_size = self.private.get("_block_size")
        for run in self.runs:
            for file, line, blocks, text in run.blocks:
                mml = self._value_at("max_model_len", file, line)
                size = int(private_size[0]) if private_size else BLOCK_SIZE
                if not isinstance(mml, int) or blocks * size >= mml or len(self.failures) >= MAX_FAILURES:
                    continue
                groups = {"tokens": f"{blocks * size:,}", "blocks": str(blocks), "block_size": str(size),
                          "mml": f"{mml:,}"}
                self.failures.append(Failure(file=file, line=line, text=text, proc="", rank=None, run=run.index,
                                             signature=KV_BLOCKS_SHORT, groups=groups, timeline="kv_cache_alloc"))
                if "kv_cache_tokens" not in self.facts:
                    self.put_at("kv_cache_tokens", blocks * size, file, line, text)

    def _cut_tracebacks(self) -> None:
        """A traceback whose exception line never came (the input stops inside it, or starts in its
        middle and stops before its end) still names the phase its frames were running. For a
        start of the engine with no failure of its own, the last such traceback is kept as a
        failure marked ``cut``: evidence, not a verdict."""
        open_tbs = sorted((tb for tb in self.tracebacks.values() if not tb.closed and tb.frames),
                          key=lambda tb: (self.files.index(tb.file) if tb.file in self.files else -1, tb.line))
        for tb in reversed(open_tbs):
            if any(f.run == tb.run for f in self.failures) or len(self.failures) >= MAX_FAILURES:
                continue
            frames = tb.phase_frames()
            proc = next((k for k, v in self.tracebacks.items() if v is tb), "")
            self.failures.append(Failure(
                file=tb.file, line=tb.line, text=sanitize(f"Traceback (most recent call last): … {frames[-1].func}"),
                proc=proc, rank=None, run=tb.run, frames=frames, code=list(tb.code),
                timeline=self.runs[tb.run].phase if tb.run < len(self.runs) else None, cut=True))

    def _ended(self) -> None:
        """A log with no error and no traceback at all that stops during start-up (the operator
        came because it died): the last start-up line read is kept as a failure marked ``ended``.
        A start that reached serving, or any traceback (another failure), says nothing."""
        run = self.runs[-1]
        if self.failures or run.tracebacks or run.mark is None or run.phase in (None, "serving"):
            return
        file, line, text = run.mark
        self.failures.append(Failure(file=file, line=line, text=text, proc="", rank=None, run=run.index,
                                     timeline=run.phase, ended=True))

    def _link(self) -> None:
        """For errors that carry no frames of their own: the worker methods named close by, a
        progress bar flushed right after them (the stage it counts was running when they died) and
        the request layer reporting the engine's death right after them (it was serving)."""
        for f in self.failures:
            run = self.runs[f.run]
            near = sorted((abs(line - f.line), method) for file, line, method in run.methods
                          if file == f.file and abs(line - f.line) <= NEAR_LINES)
            f.near_methods = list(dict.fromkeys(m for _, m in near))
            f.after = next(((phase, text) for file, line, phase, text in run.bars
                            if file == f.file and 0 < line - f.line <= NEAR_LINES), None)
            if not f.frames:
                f.next_frames = next((tb.phase_frames() for file, line, proc, tb in run.tracebacks
                                      if file == f.file and proc == f.proc and 0 < line - f.line <= NEAR_LINES), [])
            f.reported = next((text for file, line, text in run.deaths
                               if file == f.file and 0 < line - f.line <= NEAR_LINES), "")

    def settle(self, file: str, line: int) -> bool:
        """Make every fact the value in force at ``file:line`` (the error being diagnosed): the last
        one read at or before it, else the first one after. A setting named again later (a restart,
        or the fix described after the crash) must not rewrite what was true when it failed.
        Returns whether anything changed."""
        if file not in self.files:
            return False
        at = (self.files.index(file), line)
        changed = False
        for name, hist in self.history.items():
            started = [h for h in hist if h[0] <= at]
            if started:
                _, first_fact, last, last_fact = started[-1]
                chosen = last_fact if last <= at else first_fact
            else:
                chosen = hist[0][1]
            current = self.facts.get(name)
            if current is None or current.value != chosen.value:
                self.facts[name] = chosen
                changed = True
        return changed

    def derive(self) -> None:
        """Facts that need the whole log: the command line, GPU count, the model's family."""
        for name in self._derived:
            self.facts.pop(name, None)
        before = set(self.facts)
        literal = self.private.get("_serve_command_literal")
        from_args = self.private.get("_serve_command_from_args")
        ns = self.private.get("_namespace")
        chosen = literal or from_args
        if chosen is None and ns is not None:
            from .args import serve_command

            version = self.facts.get("vllm_version")
            cmd = serve_command(ns[0], namespace=True, version=str(version.value) if version else None)
            if cmd:
                chosen = (cmd, ns[1], ns[2], ns[3])
        if chosen is not None:
            self.put_at("serve_command", chosen[0], chosen[1], chosen[2], chosen[3])
        if self.gpu_indices:
            gpu = self.facts.get("gpu_name")
            if gpu is not None:
                self.put_at("gpu_count", len(self.gpu_indices), gpu.file or self.file, gpu.line or 0,
                            gpu.detail or "")
        model = self.facts.get("model")
        arch = self.facts.get("model_arch")
        derived = fact_rules.derive_model_facts(model.value if model else None, arch.value if arch else None)
        src = arch or model
        if src is not None:
            for name, value in derived.items():
                if name not in self.facts:
                    self.put_at(name, value, src.file or self.file, src.line or 0, src.detail or "")
        self._derived = set(self.facts) - before
