"""``oomwizard diagnose``: read logs, say which scenario it is, and what the log tells.

Public interface, used by the CLI and the interactive frontends::

    diagnose_paths(["vllm.log", "worker.log.1.gz", "-"]) -> Diagnosis
    diagnose_text(pasted_text) -> Diagnosis
    InputError   # an input could not be read at all

Several inputs are read in the order given, as one story (rotated files, the API server's and
the workers' logs). Facts from later lines win over earlier ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..facts.model import Fact, FactSet
from ..i18n import Text, msg
from .collect import Collector, Failure, scanner
from .inputs import open_inputs
from .lines import Joiner, Logical
from .model import Diagnosis, where
from .rank import ended_reason, frame_flags, rank
from .reader import (
    ALL_LINES_LIMIT,
    GAP,
    MAX_LINE,
    InputError,
    Progress,
    ReadStats,
    Source,
    read_lines,
    text_source,
)
from .signatures import CONFIDENT

__all__ = ["InputError", "collect", "conclude", "diagnose_paths", "diagnose_sources", "diagnose_text"]

BINARY_SHARE = 0.05
"""Share of control bytes above which an input is called binary (text has none, random data 11%)."""
MAX_OOM_MESSAGES = 32
_V1_PATH_RE = re.compile(r"vllm[/\\]v1[/\\]")
_V1_RUNNER_RE = re.compile(r"v1[/\\]worker[/\\]gpu_model_runner\.py$")

LineHook = Callable[[str, Logical], None]
"""Called with the input's name and every logical line the collector reads."""


def diagnose_paths(paths: Iterable[str], *, all_lines_limit: int = ALL_LINES_LIMIT,
                   progress: Progress | None = None) -> Diagnosis:
    """Diagnose log files (``-`` is stdin; gzip is recognised by its magic bytes).

    ``all_lines_limit`` is the size up to which an input is read line by line rather than
    searched (see ``reader``); tests lower it to check that both ways give the same diagnosis.
    """
    sources = open_inputs(paths)  # every input is checked (devices, pipes) before any is read
    return diagnose_sources(sources, all_lines_limit=all_lines_limit, progress=progress)


def diagnose_text(text: str, name: str = "pasted") -> Diagnosis:
    """Diagnose text pasted into the interface."""
    return diagnose_sources([text_source(text, name)])


def diagnose_sources(sources: list[Source], *, all_lines_limit: int = ALL_LINES_LIMIT,
                     progress: Progress | None = None) -> Diagnosis:
    col, warnings = collect(sources, all_lines_limit=all_lines_limit, progress=progress)
    return conclude(col, [s.name for s in sources], warnings)


def collect(sources: list[Source], *, all_lines_limit: int = ALL_LINES_LIMIT, progress: Progress | None = None,
            extra: tuple[bytes, ...] = (), on_line: LineHook | None = None) -> tuple[Collector, list[Text]]:
    """Read every input once into a collector. ``extra`` regex patterns are searched for as well
    and ``on_line`` sees every logical line read (a checklist matched in the same pass)."""
    col = Collector()
    warnings: list[Text] = []
    scan = scanner(extra)
    for src in sources:
        stats = ReadStats(src.name)
        col.file = src.name
        col.files.append(src.name)
        joiner = Joiner()
        for item in read_lines(src, stats, scan, all_lines_limit=all_lines_limit, progress=progress):
            if item is GAP or item == GAP:
                for lg in joiner.flush():
                    _feed(col, lg, on_line)
                continue
            n, text = item
            for lg in joiner.feed(n, text):
                _feed(col, lg, on_line)
        for lg in joiner.flush():
            _feed(col, lg, on_line)
        if stats.damaged:
            col.unfinished.add(src.name)
        warnings.extend(_input_warnings(stats))
    return col, warnings


def _feed(col: Collector, lg: Logical, on_line: LineHook | None) -> None:
    col.feed(lg)
    if on_line is not None:
        on_line(col.file, lg)


def conclude(col: Collector, inputs: list[str], warnings: list[Text]) -> Diagnosis:
    """The diagnosis of everything the collector read."""
    col.finish()
    ranked = rank(col)
    if ranked.primary is not None and col.settle(ranked.primary.file, ranked.primary.line):
        col.derive()
        ranked = rank(col)
    facts = FactSet.of(col.facts.values())
    _failure_facts(facts, col, ranked.primary, ranked.phase, ranked.first_rank)
    best = ranked.matches[0] if ranked.matches else None
    if best is not None and best.score >= CONFIDENT:
        p = ranked.primary
        ev = next((e for e in best.evidence if p is not None and e.line == p.line and e.file == p.file), None)
        ev = ev or (best.evidence[-1] if best.evidence else None)
        facts.add(Fact("diagnosis", best.scenario, _src(ev.file, ev.line) if ev else "log", kind="log",
                       detail=ev.text if ev else None, file=ev.file if ev else None, line=ev.line if ev else None))
    elif best is not None and ranked.primary is not None:
        # Below confidence the wizard asks; its first question may still follow the ranking where
        # the failure's phase alone would suggest another answer (decision_trees/tree.yaml).
        p = ranked.primary
        facts.add(Fact("leading_scenario", best.scenario, _src(p.file, p.line), kind="log", detail=p.text,
                       file=p.file, line=p.line))
    if col.failures_dropped:
        warnings.append(msg("logs.warn.dropped").format(kept=len(col.failures)))
    if not ranked.matches:
        warnings.append(msg("logs.warn.nothing_found").format(inputs=", ".join(inputs)))
    missing: list[Text] = []
    if ranked.primary is not None and ranked.primary.cut:
        p = ranked.primary
        key = "logs.missing.cut_frames" if p.frames else "logs.missing.cut_header"
        missing.append(msg(key).format(where=where(p.file, p.line)))
        warnings.extend(missing)
    ended = ranked.primary
    if ended is not None and ended.ended:
        missing.append(msg("logs.missing.ended").format(where=where(ended.file, ended.line),
                                                          reason=ended_reason(ended.timeline)))
        warnings.append(missing[-1])
    diag = Diagnosis(ranked.matches, facts, list(inputs), warnings, missing=missing)
    diag.oom_messages = _oom_messages(col.failures)
    return diag


def _src(file: str, line: int) -> str:
    return where(file, line)


def _input_warnings(stats: ReadStats) -> list[Text]:
    out: list[Text] = []
    name = stats.name
    if stats.bytes_read == 0 and not stats.damaged:
        out.append(msg("logs.warn.empty").format(name=name))
    if stats.bytes_read and stats.binary_bytes > BINARY_SHARE * stats.bytes_read:
        out.append(msg("logs.warn.binary").format(name=name))
    if stats.damaged:
        out.append(msg("logs.warn.damaged").format(name=name, bytes=stats.bytes_read, why=stats.damaged))
    if stats.long_lines:
        out.append(msg("logs.warn.long_lines").format(name=name, n=stats.long_lines, kib=MAX_LINE // 1024))
    return out


def _failure_facts(facts: FactSet, col: Collector, primary: Failure | None, phase: str | None,
                   first_rank: int | None) -> None:
    """Facts about the failure itself: its phase, the first rank, the OOM numbers, the runner."""
    if primary is None:
        return

    def add(name: str, value: object, f: Failure) -> None:
        if value is not None:
            facts.add(Fact(name, value, _src(f.file, f.line), kind="log", detail=f.text, file=f.file, line=f.line))

    add("failure_phase", phase, primary)
    if first_rank is not None:
        first = min((f for f in col.failures if f.run == primary.run and f.rank is not None), key=lambda f: f.line)
        add("failed_rank", first_rank, first)
    oom_source = primary if primary.oom is not None else next(
        (f for f in col.failures if f.run == primary.run and f.oom is not None and f.oom.requested is not None), None
    ) or next((f for f in col.failures if f.oom is not None), None)
    if oom_source is not None and oom_source.oom is not None:
        for name, value in oom_source.oom.facts().items():
            add(name, value, oom_source)
    frames = [fr for f in col.failures if f.run == primary.run for fr in f.frames]
    flags = frame_flags(frames, [])
    if "mrv2" in flags and "model_runner" not in facts:
        add("model_runner", "v2", primary)
    elif "model_runner" not in facts and any(_V1_RUNNER_RE.search(fr.path) for fr in frames):
        add("model_runner", "v1", primary)
    if "deep_gemm" in flags and "use_deep_gemm" not in facts:
        add("use_deep_gemm", True, primary)
    if "engine" not in facts and any(_V1_PATH_RE.search(fr.path) for fr in frames):
        add("engine", "v1", primary)


def _oom_messages(failures: list[Failure]) -> list[dict[str, object]]:
    """Every PyTorch OOM message, broken down (the facts carry the primary one)."""
    out: list[dict[str, object]] = []
    for f in failures:
        if f.oom is None:
            continue
        entry: dict[str, object] = {"file": f.file, "line": f.line}
        if f.rank is not None:
            entry["rank"] = f.rank
        if f.proc:
            entry["process"] = f.proc
        entry.update(f.oom.to_json())
        out.append(entry)
        if len(out) >= MAX_OOM_MESSAGES:
            break
    return out
