"""The hostile-input corpus (``corpus.py``) through the real command line: for every case, no
traceback, no hang, the documented exit code, no planted secret and no raw control character in
what it printed or wrote, and no planted program started.

Every input of the corpus runs here; an input that the full corpus gives to several commands goes
through one of them (they take turns), so the suite stays in minutes on a small machine;
``benchmarks/hostile_cases.py`` runs every input through every command and prints the totals.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus

pytestmark = pytest.mark.slow
_SCRIPT = Path(sys.executable).parent / "oomwizard"
TOOL = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "oomwizard"]
"""The installed command, as an operator runs it."""
GROUPS = ("content", "special", "bombs", "machine", "escapes", "secrets", "exec", "kb", "signals", "more")


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[corpus.Case]]:
    yield corpus.build(tmp_path_factory.mktemp("corpus"))


ROTATED = ("content", "machine", "kb", "bombs")
"""Groups that give each input to several commands; every other case runs as it is."""


def _sample(cases: list[corpus.Case]) -> list[corpus.Case]:
    """One command per input, taking turns: ``content/rand_1k/diagnose``, ``content/rand_1m/json``, …"""
    by_input: dict[str, list[corpus.Case]] = {}
    for c in cases:
        by_input.setdefault(c.id.rsplit("/", 1)[0] if c.group in ROTATED else c.id, []).append(c)
    return [group[i % len(group)] for i, group in enumerate(by_input.values())]


def _report(results: list[corpus.Result]) -> str:
    return "\n".join(
        f"{r.case.id}: rc={r.rc} expected {sorted(r.case.expect)} traceback={r.traceback} hang={r.hang} "
        f"leaks={r.leaked} raw={r.raw} executed={r.executed}\n  {r.stderr.strip()[-400:]}" for r in results if not r.ok)


@pytest.mark.parametrize("group", GROUPS)
def test_every_input_of_the_group_is_handled(cases: list[corpus.Case], group: str) -> None:
    mine = _sample([c for c in cases if c.group == group])
    assert mine
    alone = [c for c in mine if c.setup or c.signal_when_ready or c.slow]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda c: corpus.run(c, TOOL), [c for c in mine if c not in alone]))
    results += [corpus.run(c, TOOL) for c in alone]
    assert all(r.ok for r in results), _report(results)


def test_the_runner_sees_what_it_counts(tmp_path: Path) -> None:
    """A traceback, a secret, a raw escape, a started program and a wrong code are each caught."""
    from plant import SECRETS

    marker = tmp_path / "ran"
    secret = next(iter(SECRETS.values()))
    script = (f"python3 -c 'raise SystemExit(\"x\")' 2>/dev/null; echo 'Traceback (most recent call last)' >&2; "
              f"echo {secret}; printf '\\033]0;t\\007'; touch {marker}; exit 3")
    r = corpus.run(corpus.Case("self-check", "self", shell=script, marker=marker), TOOL)
    assert r.traceback and r.leaked and r.raw and r.executed and r.wrong_code and not r.ok
    hung = corpus.run(corpus.Case("self-hang", "self", shell="sleep 30", timeout=0.5), TOOL)
    assert hung.hang and not hung.ok
