"""From a raw log line to the message vLLM wrote, and who wrote it.

Real logs reach us wrapped several times over: a container runtime's timestamp and stream, a JSON
envelope, journald's host and unit, CI timestamps, colour codes (raw, as ``^[[`` caret text, or
half stripped to ``[0;36m``), Markdown quoting from an issue, then vLLM's own process prefix
(``(VllmWorker rank=2 pid=123)``, Ray's ``(RayWorkerWrapper pid=…, ip=…)``, ``[rank0]:``) and
logger prefix (``INFO 05-16 11:10:22 [core.py:1161]``). :func:`clean` peels them off in that
order and says whether the line *started* with something recognisable: a line that did not is a
candidate continuation of a line the terminal wrapped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import safejson

# --- escape sequences --------------------------------------------------------------------------
_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # OSC; without its end only ESC goes, not the line
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\x1b"  # a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI (U+009B)
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"  # 8-bit OSC, DCS, SOS, PM, APC
    r"|(?:\^\[|ESC|#033)\[[0-9;?]*[A-Za-z]"  # caret form ^[[0;36m, ESC[36m spelled out, syslog's #033[36m
    r"|\[\d{1,3}(?:;\d{1,3})*m(?=[\s(\[A-Za-z0-9^]|$)"  # half stripped: [0;36m, [0m, [1m
    r"|_bk;t=\d+\x07?"  # Buildkite's hidden timestamps
)
# C0, DEL, C1 (which some terminals obey in UTF-8) and the invisible format characters: bidi
# overrides and isolates that make text read differently from what it is, zero-width ones.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_PROGRESS_RE = re.compile(r"\d+%\s*(?:\||Completed)|\d+/\d+\s*\[\d")

# --- outer wrappers (runtime, collectors, CI, Markdown) -----------------------------------------
_TS = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_OUTER = [
    # CRI (containerd, CRI-O: `kubectl logs` on the node): TIMESTAMP STREAM P|F MESSAGE
    ("cri", re.compile(rf"^{_TS}\s+(?:stdout|stderr)\s+(?P<tag>[FP])\s?")),
    # GKE / Cloud Logging exports: INFO 2025-11-19T20:16:36.096674521Z [resource.labels…: vllm]
    ("cloud", re.compile(rf"^(?:[A-Z]+\s+)?{_TS}\s+(?:\[[^\]]*\]\s*)+")),
    # Buildkite and other CI: [2025-03-10T15:07:20Z]
    ("ci", re.compile(rf"^\[{_TS}\]\s?")),
    # docker logs --timestamps, plain ISO timestamps, Python logging's asctime
    ("ts", re.compile(rf"^{_TS}\s+(?:\|\s+)?")),
    # journald / syslog: Jan 01 00:00:00 host unit[123]:
    ("journal", re.compile(r"^[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d \S+ [\w.@/:-]+(?:\[\d+\])?: ?")),
    # kubectl logs --prefix: [pod/name/container]
    ("kubectl", re.compile(r"^\[pod/[^\]\s]+\]\s?")),
    # docker compose: vllm-1  | message
    ("compose", re.compile(r"^[\w.-]{1,64}\s+\| ")),
    # a table-ish paste with a leading pipe (Buildkite's web log)
    ("pipe", re.compile(r"^\s*\|\s{1,3}(?=\S)")),
]
# Which outer wrappers can start with a given first character.
_BY_FIRST = {
    "digit": ("cri", "ts", "cloud"),
    "upper": ("cloud", "journal"),
    "[": ("ci", "kubectl"),
}
_QUOTE_RE = re.compile(r"^\s{0,3}(?:>\s?)+")
_FENCE_RE = re.compile(r"^\s{0,3}(?:```|~~~)")
_JSON_FIELD_RE = re.compile(r'"(?:log|message|msg|MESSAGE|textPayload)"\s*:\s*"((?:[^"\\]|\\.)*)"')

# --- vLLM's own prefixes --------------------------------------------------------------------------
# (VllmWorker rank=2 pid=123), (EngineCore_DP0 pid=…), (RayWorkerWrapper pid=…, ip=…),
# (pid=5439, ip=10.0.0.1), (MapWorker(MapBatches(vLLMEngineStageUDF)) pid=41459, ip=…)
_PROC_RE = re.compile(
    r"^\((?P<name>[A-Za-z_][\w.\-]*(?:\((?:[^()]|\([^()]*\))*\))?)?"
    r"\s*(?:rank=(?P<rank>\d+)\s+)?pid=(?P<pid>\d+)(?:,\s*ip=[^)\s]+)?\)\s?"
)
# Ray's own daemons print without a pid: (raylet), (raylet, ip=10.0.0.2), (autoscaler +1m20s)
# (``print_worker_logs`` in ray/_private/worker.py).
_RAY_DAEMON_RE = re.compile(r"^\((?P<name>raylet|autoscaler)(?: \+[\dhms]+)?(?:,\s*ip=[^)\s]+)?\)\s?")
_RANK_RE = re.compile(r"^\[rank(?P<rank>\d+)\]:\s?")
_LEVEL_RE = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)"
    r"(?:\s+\d\d[-/]\d\d\s+\d\d:\d\d:\d\d(?:[.,]\d+)?)?"
    r"(?:\s+\[?(?P<src>[\w./\\-]+\.py):\d+\])?(?::?\s+|$)"
)
_GLOG_RE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w./\\-]+:\d+\]\s?")
_REPEATED_RE = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")
"""Ray's log deduplication: the line stands for several processes' copies, printed once at the end
of its window (so often after what happened next)."""
ELIDED_RE = re.compile(
    r"^\s*(?:#\s*)?(?:\.{3,}|…+|\[\s*(?:\.{3}|…)[^\]]{0,60}\]|\(\s*(?:\.{3}|…)[^)]{0,60}\)"
    r"|<\s*/?\s*(?:snip|snipped|cut|truncated)\s*>|\(\s*(?:truncated|snip|snipped|cut|omitted)[^)]{0,40}\)"
    r"|-{2,}\s*(?:cut|snip|snipped|truncated)[\w ]{0,30}-{2,}|\.{3}\s*(?:snip|cut)\s*\.{3})\s*$",
    re.I,
)
"""A line an operator put in where they left lines out: the traceback around it is one."""
_TP_RE = re.compile(r"(?:^|_)TP(?P<tp>\d+)")

# Lines that begin something new even without a prefix: they are never a wrapped continuation.
_FRESH_RE = re.compile(
    r"^(?:Traceback \(most|File \"|During handling of|The above exception|"
    r"[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b|"
    r"(?:INFO|DEBUG|WARNING|ERROR|CRITICAL)\b|\[rank\d|\s{2,}|\^+\s*$|~*\^+|"
    r"Loading |Capturing |Killed\b|terminate called\b|\$ |\+ |#|Process |Collecting |</?(?:details|summary|pre|code|br|p|div)\b|"
    r"[A-Z][\w ./()-]{0,40}:\s|[A-Z_][A-Z0-9_]*=\S|[\w.-]+==\d)"
)


@dataclass
class Clean:
    """One physical line after peeling."""

    text: str
    """The message, without wrappers and prefixes (may still hold indentation)."""
    shown: str
    """The line as it is worth showing: wrappers and colours gone, vLLM's prefixes kept."""
    proc: str = ""
    """Who wrote it: the process prefix (``VllmWorker rank=2 pid=123``), or ``""``."""
    rank: int | None = None
    fresh: bool = False
    """The line starts something (a prefix, a timestamp, a traceback line)."""
    partial: bool = False
    """The runtime split this line and the next one continues it (CRI ``P``)."""
    level: str = ""
    src: str = ""
    """The logger's source file, e.g. ``gpu_model_runner.py``."""
    boundary: bool = False
    """A Markdown fence: a message cannot continue across it."""
    repeated: bool = False
    """Ray's ``[repeated Nx across cluster]`` summary of other processes' copies of this line."""


_ANSI_HINT_RE = re.compile(r"[\x1b\x90-\x9f]|\^\[|ESC\[|#033\[|_bk;t=|\[[\d;]{0,12}m")


def strip_ansi(text: str) -> str:
    if _ANSI_HINT_RE.search(text):
        return _ANSI_RE.sub("", text)
    return text


def _last_progress_segment(text: str) -> str:
    """tqdm rewrites its line with ``\\r``; keep the last state and any segment that is not a bar."""
    parts = [p for p in text.split("\r") if p.strip()]
    if not parts:
        return ""
    keep = [p for p in parts[:-1] if not _PROGRESS_RE.search(p)]
    keep.append(parts[-1])
    return " ".join(keep) if len(keep) > 1 else keep[0]


def _unjson(text: str) -> str | None:
    """The message of a JSON-lines log record (docker json-file, fluent-bit, journald -o json)."""
    try:
        obj = safejson.loads(text)
    except ValueError:
        m = _JSON_FIELD_RE.search(text)
        if not m:
            return None
        try:
            return str(json.loads('"' + m.group(1) + '"'))
        except ValueError:
            return m.group(1)
    if not isinstance(obj, dict):
        return None
    for key in ("log", "message", "msg", "MESSAGE", "textPayload"):
        value = obj.get(key)
        if isinstance(value, str):
            return value
    payload = obj.get("jsonPayload")
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return str(payload["message"])
    return None


_JSON_KEYS = ('"log"', '"message"', '"msg"', '"MESSAGE"', '"textPayload"')


def _normalise(text: str) -> str:
    """Carriage returns (a progress bar's redraws: the last one counts), ANSI and control characters."""
    if "^M" in text:
        text = text.replace("^M", "\r")
    if "\r" in text:
        text = _last_progress_segment(text)
    text = strip_ansi(text)
    if not text.isprintable():
        text = _CONTROL_RE.sub("", text)
    return text


def _json_record(text: str) -> list[str] | None:
    """The message lines of a JSON log record (each unwrapped in turn), or None if it is none."""
    stripped = text.lstrip()
    if not stripped.startswith("{") or not any(k in text for k in _JSON_KEYS):
        return None
    inner = _unjson(stripped)
    if inner is None:
        return None
    inner = strip_ansi(inner.rstrip("\n"))
    out: list[str] = []
    for ln in inner.split("\n"):
        sub, _, _ = unwrap(ln)
        out.extend(sub)
    return out or [""]


def _peel(text: str) -> tuple[str, bool, bool] | None:
    """One wrapper off the front: ``(rest, wrapper recognised, CRI partial)``; None when none is."""
    first = text[:1]
    names = _BY_FIRST.get("digit" if first.isdigit() else "upper" if first.isupper() else first, ())
    for name, rx in _OUTER:
        if name not in names:
            continue
        m = rx.match(text)
        if m:
            return text[m.end():], True, name == "cri" and m.group("tag") == "P"
    if text[:1] in (">", " ") and _QUOTE_RE.match(text) and ">" in text[:6]:
        return _QUOTE_RE.sub("", text, count=1), False, False
    if "|" in text[:70]:
        for name, rx in _OUTER:
            if name in ("compose", "pipe"):
                m = rx.match(text)
                if m:
                    return text[m.end():], True, False
    return None


def unwrap(text: str) -> tuple[list[str], bool, bool]:
    """Peel runtime/collector/CI/Markdown wrappers. Returns the message lines (a JSON record can
    hold several), whether a wrapper was recognised, and whether the line is a partial one."""
    text = _normalise(text)
    record = _json_record(text)
    if record is not None:
        return record, True, False
    wrapped = False
    partial = False
    for _ in range(4):
        peeled = _peel(text)
        if peeled is None:
            break
        text, was_wrapper, was_partial = peeled
        wrapped = wrapped or was_wrapper
        partial = partial or was_partial
    return [text], wrapped, partial


def rank_of(proc_name: str, rank: str | None) -> int | None:
    """``rank=2`` as printed, or the tensor-parallel index of ``Worker_PP1_TP3``."""
    if rank is not None:
        return int(rank)
    m = _TP_RE.search(proc_name)
    return int(m.group("tp")) if m else None


def clean_message(text: str, wrapped: bool = False, partial: bool = False) -> Clean:
    """Strip vLLM's process, rank and logger prefixes from an unwrapped line."""
    shown = text
    proc = ""
    rank: int | None = None
    fresh = wrapped
    level = ""
    src = ""
    body = text
    for _ in range(4):
        if body.startswith("("):
            m = _PROC_RE.match(body)
            if m:
                name = m.group("name") or ""
                proc = f"{name} pid={m.group('pid')}".strip()
                r = rank_of(name, m.group("rank"))
                if r is not None:
                    rank = r
                body = body[m.end():]
                fresh = True
                continue
            m = _RAY_DAEMON_RE.match(body)
            if m:
                proc = proc or m.group("name")
                body = body[m.end():]
                fresh = True
                continue
        if body.startswith("[rank"):
            m = _RANK_RE.match(body)
            if m:
                rank = int(m.group("rank"))
                proc = proc or f"rank{rank}"
                body = body[m.end():]
                fresh = True
                continue
        break
    if body[:1] in "DIWEC":
        m = _LEVEL_RE.match(body)
        if m:
            level = m.group("level")
            src = m.group("src") or ""
            body = body[m.end():]
            fresh = True
        elif body[:1] in "IWEF":
            m = _GLOG_RE.match(body)
            if m:
                body = body[m.end():]
                fresh = True
    repeated = False
    if body.endswith("cluster]"):
        cut = _REPEATED_RE.sub("", body)
        repeated, body = cut != body, cut
    if not fresh and body and (_FRESH_RE.match(body) or ELIDED_RE.match(body)):
        fresh = True
    return Clean(body, shown, proc, rank, fresh, partial, level, src, repeated=repeated)


def clean(text: str) -> list[Clean]:
    """Everything from a raw physical line to messages (usually one)."""
    if _FENCE_RE.match(text):
        return [Clean("", "", fresh=True, boundary=True)]
    lines, wrapped, partial = unwrap(text)
    return [clean_message(ln, wrapped, partial) for ln in lines]
