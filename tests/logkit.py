"""Shared helpers for tests over the synthetic logs in tests/logs/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.logs.model import Diagnosis
from oomwizard.logs.torch_oom import size_bytes

LOGS = Path(__file__).resolve().parent / "logs"


def b(size: str) -> int:
    """``"1.50 GiB"`` -> bytes, read the way the log reader reads PyTorch's sizes."""
    number, unit = size.split()
    return size_bytes(number, unit)


def diag(name: str) -> Diagnosis:
    return diagnose_paths([str(LOGS / name)])


def value(d: Diagnosis, name: str) -> Any:
    f = d.facts.get(name)
    return None if f is None else f.value
