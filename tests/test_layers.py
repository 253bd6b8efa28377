"""The layers in pyproject's import-linter contracts hold, and a wrong-way import breaks them.

The contracts are the architecture: readers (facts, logs, kb) never reach up to advice or
outputs, advice never to outputs, text safety to nothing, the two frontends never to each other.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"}, timeout=300)


def test_the_layer_contracts_hold() -> None:
    r = _lint(REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BROKEN" not in r.stdout and r.stdout.count("KEPT") >= 6


@pytest.mark.parametrize("where,line,contract", [
    ("facts/gpu.py", "from ..report import leaf as _x", "The readers"),
    ("advice/numbers.py", "from ..report import script as _x", "Advice imports no output format"),
    ("text/redact.py", "from .. import i18n as _x", "Text safety"),
    ("logs/lines.py", "import torch as _x", "torch or vLLM"),
    ("plain.py", "from .tui import app as _x", "independent"),
])
def test_an_import_the_wrong_way_breaks_a_contract(tmp_path: Path, where: str, line: str, contract: str) -> None:
    shutil.copytree(REPO / "oomwizard", tmp_path / "oomwizard", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "oomwizard" / where
    target.write_text(target.read_text() + f"\n{line}\n")
    r = _lint(tmp_path)
    assert r.returncode != 0
    broken = [ln for ln in r.stdout.splitlines() if ln.endswith("BROKEN")]
    # the planted import breaks its own contract (and may break one above it: advice imports facts)
    assert any(contract in b for b in broken), r.stdout
