"""Suite-wide: the wizard keeps its walks (for ``--resume``) in a folder of the test run, never in ~."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_state_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    yield
    mp.undo()
