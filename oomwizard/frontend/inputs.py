"""Where the interactive frontends get their facts: the logs, this machine, a saved machine report.

Shared by the TUI and plain mode, and free of any UI import so plain mode can use it without
loading Textual. The functions that do the work (log diagnosis, NVML detection) live in the core;
:class:`Sources` only bundles them so tests can hand the frontends stand-ins with fixed results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..facts.model import Fact, FactSet
from ..i18n import Text, TextError, msg, ui
from ..text.units import gib
from ..versions import Version

# The welcome screen imports this module before its first frame: what only later screens need
# (the engine, the fact catalog, the output cleaner) is imported where it is used.

if TYPE_CHECKING:
    from ..engine import Ask, Suggestion
    from ..logs.model import Diagnosis
    from ..logs.reader import Progress



class InputProblem(TextError):
    """An input the operator named cannot be used (missing, unreadable, not a log, bad JSON); the
    message in both languages (``str()``: the English)."""


@dataclass
class MachineResult:
    """What detection (or a replayed report) found, reduced to what the frontends show."""

    facts: FactSet
    replayed_from: str | None = None
    notes: list[dict[str, str]] = field(default_factory=list)
    """Detection's remarks (``{"code", "level", "en", "zh"}``), as the machine report keeps them."""
    nvml_reason: Text | None = None
    """Why NVML could not be read, when it could not (no driver, no permission, …)."""
    data: dict[str, Any] | None = None
    """The machine report itself, for a support bundle."""

    @property
    def has_gpu(self) -> bool:
        count = self.facts.value("gpu_count")
        return bool(count) or self.facts.get("gpu_name") is not None

    def remarks(self, lang: str, levels: tuple[str, ...] = ("warning", "problem")) -> list[str]:
        """Detection's warnings and problems in ``lang``, for the facts screen."""
        key = "zh" if lang == "zh" else "en"
        return [str(n.get(key) or n.get("en") or "") for n in self.notes if n.get("level") in levels]


@dataclass
class Sources:
    """The four ways facts reach a frontend; the defaults call the real core modules lazily."""

    diagnose_paths: Callable[[list[str], Progress | None], Diagnosis]
    diagnose_text: Callable[[str, str], Diagnosis]
    detect_machine: Callable[[str | None], MachineResult]
    replay_machine: Callable[[str], MachineResult]
    follow_path: Callable[[str, FollowStatus, Callable[[], bool]], Diagnosis] | None = None
    """Read a log, keep reading it as it grows, diagnose when the engine died (or ``stop()``)."""


FollowStatus = Callable[[str, dict[str, object]], None]


def _diagnose_paths(paths: list[str], progress: Progress | None = None) -> Diagnosis:
    from ..logs.diagnose import InputError, diagnose_sources
    from ..logs.inputs import open_inputs

    try:
        return diagnose_sources(open_inputs(paths, wizard=True), progress=progress)
    except InputError as e:
        raise InputProblem(e.text) from None


def _follow_path(path: str, status: FollowStatus, stop: Callable[[], bool]) -> Diagnosis:
    from ..logs.follow import follow
    from ..logs.inputs import open_inputs
    from ..logs.reader import InputError

    try:
        return follow(open_inputs([path], wizard=True, idle=None)[0], status=status, stop=stop)
    except InputError as e:
        raise InputProblem(e.text) from None


def _diagnose_text(text: str, name: str) -> Diagnosis:
    from ..logs.diagnose import InputError, diagnose_text

    try:
        return diagnose_text(text, name)
    except InputError as e:
        raise InputProblem(e.text) from None


def result_from_report(report: Any, replayed_from: str | None = None) -> MachineResult:
    """A :class:`~oomwizard.facts.machine.MachineReport` as the frontends need it."""
    data = getattr(report, "data", None) or {}
    notes = [n for n in data.get("notes") or [] if isinstance(n, dict)]
    nvml = data.get("nvml") or {}
    reason = None
    if isinstance(nvml, dict) and nvml and not nvml.get("available", True):
        en = str(nvml.get("reason") or "NVML unavailable")
        reason = Text(en, str(nvml.get("reason_zh") or en))
    return MachineResult(report.facts, replayed_from, notes, reason, dict(data) if data else None)


def _detect_machine(python: str | None) -> MachineResult:
    from ..facts.machine import detect_machine

    return result_from_report(detect_machine(python=python))


def _replay_machine(path: str) -> MachineResult:
    from ..facts.saved import ReportError, load_report

    try:
        report = load_report(path)
    except ReportError as e:
        raise InputProblem(e.text) from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputProblem(msg("frontend.inputs.not_a_report").format(path=path, error=e)) from None
    return result_from_report(report, path)


def default_sources() -> Sources:
    return Sources(_diagnose_paths, _diagnose_text, _detect_machine, _replay_machine, _follow_path)


# --- checking a path the operator typed ------------------------------------------------------


def check_log_path(raw: str, lang: str) -> tuple[str | None, str | None]:
    """``(path, None)`` when ``raw`` names a readable file, else ``(None, reason)``."""
    text = raw.strip().strip("\"'")
    if not text:
        return None, ui("tui.path.empty", lang)
    path = Path(text).expanduser()
    if not path.exists():
        return None, ui("tui.path.missing", lang, path=text)
    if path.is_dir():
        return None, ui("tui.path.dir", lang, path=text)
    if not path.is_file():  # a device never ends, a named pipe with no writer never starts
        return None, ui("tui.path.special", lang, path=text)
    try:
        with path.open("rb") as fh:
            fh.read(1)
    except OSError as e:
        return None, ui("tui.path.unreadable", lang, path=text, error=e.strerror or e)
    return str(path), None


# --- showing facts ---------------------------------------------------------------------------


def format_value(name: str, value: Any, lang: str = "en") -> str:
    """A fact's value as a person reads it: sizes in GiB, yes/no, versions as written."""
    from ..facts.catalog import CATALOG

    spec = CATALOG.get(name)
    if isinstance(value, bool):
        return ui("tui.yes", lang) if value else ui("tui.no", lang)
    if spec is not None and spec.type == "bytes" and isinstance(value, (int, float)):
        return gib(value, 1)
    if isinstance(value, Version):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    unit = spec.unit if spec is not None else ""
    if isinstance(value, (int, float)):
        if isinstance(value, int) and unit in ("", "B"):
            return str(value)  # a count, a port, a rank: no thousands separator
        number = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        if unit == "x":
            return f"{number}x"  # as vLLM prints a concurrency: "6.24x"
        return f"{number} {unit}" if unit and unit != "B" else number
    return str(value)


def colon(lang: str) -> str:
    """A label's colon: full width in Chinese, ``": "`` otherwise."""
    return ui("label.colon", lang)


def fact_title(name: str, lang: str) -> str:
    from ..facts.catalog import CATALOG

    spec = CATALOG.get(name)
    return spec.title(lang) if spec is not None else name


def machine_summary(result: MachineResult, lang: str) -> str:
    """One line about the GPUs and the software, e.g. ``2 x NVIDIA H200 (140.4 GiB) · vLLM 0.11.0``."""
    f = result.facts
    parts: list[str] = []
    if result.has_gpu:
        count = f.value("gpu_count") or 1
        name = f.value("gpu_name") or "GPU"
        gpu = f"{count} x {name}"
        total = f.value("gpu_mem_total_bytes")
        if total:
            gpu += f" ({format_value('gpu_mem_total_bytes', total)})"
        parts.append(gpu)
    elif result.nvml_reason is not None:
        parts.append(result.nvml_reason(lang))
    else:
        parts.append(ui("tui.machine.no_gpu", lang))
    for name, label in (("vllm_version", "vLLM"), ("torch_version", "torch"), ("driver_version", "driver")):
        v = f.value(name)
        if v is not None:
            parts.append(f"{label} {v}")
    if result.replayed_from:
        parts.append(ui("tui.machine.replayed", lang, file=Path(result.replayed_from).name))
    return " · ".join(parts)


def fact_where(fact: Fact) -> str:
    """Where a fact was read, as short as it stays clear: ``vllm-serve.log:9`` for a log line."""
    if fact.kind == "log" and fact.file and fact.line:
        return f"{Path(fact.file).name or fact.file}:{fact.line}"
    return fact.source


def suggestion_source(sug: Suggestion, ask: Ask, lang: str) -> str:
    """Where a suggestion comes from, in words: the facts it rests on, each with its own source."""
    parts = []
    for name in sug.facts:
        fact = ask.facts.get(name)
        if fact is None:
            continue
        if sug.rule is None:
            parts.append(fact_where(fact))
        else:
            parts.append(f"{fact_title(name, lang)} = {format_value(name, fact.value, lang)}, {fact_where(fact)}")

    from ..text.output import clean_text  # here, not at import: the wizard's first frame does not need it

    text = "; ".join(parts) if parts else sug.source
    return " ".join(clean_text(text).split())
