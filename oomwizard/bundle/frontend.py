"""The bundle as the interactive frontends write it: their own walk, beside the saved fix.

Both frontends hand over what they hold (the session's facts and answers, the operator's
overrides, the fix on the screen, the machine report) and get back the paths written: a JSON
bundle that ``--replay`` opens, and the same bundle as Markdown to attach to a ticket. The logs
are read again so the bundle carries the lines its diagnosis is recomputed from.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..logs.model import Diagnosis
from .build import BundleInput, LogLines, read_logs
from .output import bundle_text, write_file


def machine_source(replaying: bool, result: Any) -> str:
    """How the walk's machine report came: ``replayed`` (a bundle), ``file`` (``--machine``),
    ``detected`` (this machine) or ``none``."""
    if result is None:
        return "none"
    return "replayed" if replaying else "file" if result.replayed_from else "detected"


def folder_for(saved: list[str]) -> Path:
    """Beside the last file the operator saved, else the current folder."""
    return Path(saved[-1]).parent if saved else Path.cwd()


def write_walk_bundle(w: BundleInput, folder: Path, now: datetime | None = None) -> list[str]:
    """Write ``oomwizard-report-<id>-<time>.json`` and ``.md`` into ``folder`` from what a
    frontend holds (its logs, ``w.log_paths``, read again); their paths."""
    now = now or datetime.now(timezone.utc)
    diag, kept = w.diagnosis, None
    real = [p for p in w.log_paths if p != "-" and os.path.isfile(p)]
    if real and not w.replayed_from:
        diag, kept = read_logs(real)
    elif w.replayed_from:
        kept = _replayed_lines(w.replayed_from)
    b = dataclasses.replace(w, diagnosis=diag, log=kept or LogLines(), interactive=True)
    ident = w.done.leaf.id if w.done else (diag.best.scenario if diag is not None and diag.best else "walk")
    stem = folder / f"oomwizard-report-{ident}-{now.strftime('%Y%m%d-%H%M%S')}"
    return [write_file(str(stem) + ext, bundle_text(b, fmt, True)) for ext, fmt in ((".json", "json"), (".md", "markdown"))]


def _replayed_lines(path: str) -> LogLines:
    """A replayed bundle's own lines, so a bundle written from a replay replays too."""
    from .replay import load_bundle

    log = load_bundle(path)["log"]
    return LogLines(inputs=log["inputs"], warnings=list(log.get("warnings", [])),
                    warnings_zh=list(log.get("warnings_zh", [])), complete=bool(log.get("complete", True)))


def replay_sources(opts: Any) -> Any:
    """Point ``opts`` at a replayed bundle: its diagnosis as "the log", its machine report as
    "the machine", its overrides and answers filled in. Returns the frontends' sources, or exit 4."""
    import sys

    from ..exitcodes import Exit
    from ..frontend.inputs import InputProblem, MachineResult, Sources, result_from_report
    from ..i18n import msg, said
    from ..kb.loader import get_kb
    from .replay import BundleError, replay

    try:
        rp = replay(opts.replay, get_kb())
    except BundleError as e:
        print(f"oomwizard: {said(e, opts.lang)}", file=sys.stderr)
        return int(Exit.INPUT)
    for w in rp.warnings:
        print(f"oomwizard: {w(opts.lang)}", file=sys.stderr)
    opts.logs = [opts.replay] if rp.diagnosis is not None else []
    opts.machine = opts.replay if rp.machine is not None else None
    opts.demo = opts.follow = False
    opts.overrides.update(rp.overrides)
    if not opts.answers:  # a resumed walk on this bundle keeps its own answers
        opts.answers, opts.order = dict(rp.answers), list(rp.order)

    def diagnosis(paths: list[str], progress: Any = None) -> Diagnosis:
        if rp.diagnosis is None:
            raise InputProblem(msg("bundle.frontend.no_log_lines").format(path=opts.replay))
        return rp.diagnosis

    def text(pasted: str, name: str) -> Diagnosis:
        from ..logs.diagnose import diagnose_text

        return diagnose_text(pasted, name)

    def machine(path: str) -> MachineResult:
        return result_from_report(rp.machine, rp.name)

    def detect(python: str | None) -> MachineResult:
        raise InputProblem(msg("bundle.frontend.no_detection").format(name=rp.name))

    return Sources(diagnosis, text, detect, machine, None)
