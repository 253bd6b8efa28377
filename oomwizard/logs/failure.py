"""What the collector produces and keeps while it reads: frames, tracebacks, failures and the
starts of the engine, each bounded (the limits here), and the sanitised text of evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..text.redact import redact_text
from ..text.safe_text import printable
from .signatures import Signature
from .torch_oom import TorchOom

MAX_FAILURES = 2000
MAX_FRAMES = 400
MAX_PROCS = 512
MAX_MARKS = 256
"""Worker methods and unfinished progress bars kept per start of the engine."""
MAX_HISTORY = 64
"""Values kept per fact, to find the one in force when the diagnosed error happened."""
EVIDENCE_WIDTH = 400


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
    other_frames: list[list[Frame]] = field(default_factory=list)
    """For an error with no frames of its own: the frames of the other processes' tracebacks of the
    same start and file within ``OTHER_PROCESS_LINES`` (the driver or engine core waiting on the
    worker that failed), nearest first."""
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
    began: tuple[str, int, str] | None = None
    """``(file, line, text)`` of the line that began this start (the server's version, the
    engine's configuration), for a log that stops before any step of start-up."""


def sanitize(text: str, width: int = EVIDENCE_WIDTH) -> str:
    out = redact_text(printable(text)).replace("\n", " ").strip()
    return out if len(out) <= width else out[: width - 1] + "…"
