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


def assert_ranks_first(d: Diagnosis, scenario: str, min_score: float) -> None:
    """``scenario`` is the best match, with at least ``min_score``."""
    assert d.best is not None, "nothing found"
    assert d.best.scenario == scenario, [(m.scenario, m.score) for m in d.matches[:3]]
    assert d.best.score >= min_score


def assert_facts(d: Diagnosis, expected: dict[str, Any]) -> None:
    """Each fact read as expected (floats to 1e-6; versions compared as written)."""
    import pytest

    for fact, want in expected.items():
        got = value(d, fact)
        if isinstance(want, float):
            assert got == pytest.approx(want, abs=1e-6), (fact, got)
        else:
            assert (str(got) if fact == "vllm_version" else got) == want, (fact, got)
