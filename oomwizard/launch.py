"""Starting an interactive session: gather the inputs, pick the frontend.

The frontends share this so that ``--log``, ``--demo``, ``--machine`` and ``--set`` mean the same
in the full-screen interface and in plain mode. Machine detection is *not* run here: the TUI runs
it in a worker so its first screen never waits, plain mode runs it before the first question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .facts.model import FactSet

DEMO_DIR = Path(__file__).resolve().parent / "demo"
DEMO_LOG = DEMO_DIR / "vllm-serve.log"
DEMO_MACHINE = DEMO_DIR / "machine.json"


@dataclass
class LaunchOptions:
    logs: list[str] = field(default_factory=list)
    demo: bool = False
    lang: str = "en"
    inline: bool = False
    plain: bool = False
    machine: str | None = None
    """A saved ``detect --format json`` report to use instead of detecting this machine."""
    python: str | None = None
    overrides: FactSet = field(default_factory=FactSet)
    follow: bool = False
    """Keep reading the (one) log as it grows and diagnose when the engine dies."""
    replay: str | None = None
    """A JSON support bundle to open instead of logs and a machine (see :mod:`.bundle.replay`)."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Answers to fill in before the first question (a replayed or resumed walk), by question id."""
    order: list[str] = field(default_factory=list)
    resume: bool = False
    """``--resume``: continue the last unfinished walk (see :mod:`.bundle.resume`)."""
    resume_screen: str | None = None
    """The screen a resumed walk was on: ``diagnosis``, ``question`` or ``leaf``."""
    scenario: str | None = None
    """The scenario a resumed walk had chosen on the diagnosis screen."""
    keep_state: bool = False
    """Save the walk as it goes so it can be resumed (the command line turns this on)."""

    def effective_logs(self) -> list[str]:
        return [str(DEMO_LOG)] if self.demo and not self.logs else list(self.logs)

    def effective_machine(self) -> str | None:
        if self.machine:
            return self.machine
        return str(DEMO_MACHINE) if self.demo else None


def launch(opts: LaunchOptions) -> int:
    sources = None
    if opts.resume:
        import sys

        from .bundle.resume import resume_options

        for note in resume_options(opts)[1]:
            print(f"oomwizard: {note}", file=sys.stderr)
    if opts.replay:
        from .bundle.frontend import replay_sources

        sources = replay_sources(opts)
        if isinstance(sources, int):
            return sources
    if "-" in opts.logs:
        # The wizard reads keys from the terminal; a log read from it too would never end.
        import sys

        from .exitcodes import Exit
        from .logs.inputs import InputError, check_stdin

        try:
            check_stdin(wizard=True)
        except InputError as e:
            print(f"oomwizard: {e}", file=sys.stderr)
            return Exit.INPUT
    if opts.plain:
        from .plain import run_plain

        return run_plain(opts, sources=sources)
    from .tui.app import run_tui

    return run_tui(opts, sources=sources)
