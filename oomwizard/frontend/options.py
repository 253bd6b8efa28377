"""The options of an interactive session, shared by both frontends and the launcher.

``--log``, ``--demo``, ``--machine`` and ``--set`` mean the same in the full-screen interface and
in plain mode because both read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

    def effective_logs(self) -> list[str]:
        return [str(DEMO_LOG)] if self.demo and not self.logs else list(self.logs)

    def effective_machine(self) -> str | None:
        if self.machine:
            return self.machine
        return str(DEMO_MACHINE) if self.demo else None
