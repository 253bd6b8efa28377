"""Where the knowledge base lives, in a module light enough to import before the first frame."""

from __future__ import annotations

import os
from pathlib import Path


def default_root() -> Path:
    """Where the knowledge base lives: ``$OOMWIZARD_KB``, the wheel's copy, or the source tree."""
    env = os.environ.get("OOMWIZARD_KB")
    return Path(env) if env else own_root()


def own_root() -> Path:
    """The program's own knowledge base (the wheel's copy or the source tree), whatever
    ``$OOMWIZARD_KB`` says."""
    pkg = Path(__file__).resolve().parent.parent
    bundled = pkg / "_kb"
    return bundled if (bundled / "decision_trees").is_dir() else pkg.parent
