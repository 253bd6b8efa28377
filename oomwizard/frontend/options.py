"""The options of an interactive session, shared by both frontends and the launcher.

``--log``, ``--demo``, ``--machine`` and ``--set`` mean the same in the full-screen interface and
in plain mode because both read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..facts.model import FactSet

DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
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
    """A JSON support bundle to open instead of logs and a machine (see :mod:`oomwizard.bundle.replay`)."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Answers to fill in before the first question (a replayed or resumed walk), by question id."""
    order: list[str] = field(default_factory=list)
    resume: bool = False
    """``--resume``: continue the last unfinished walk (see :mod:`oomwizard.bundle.resume`)."""
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
