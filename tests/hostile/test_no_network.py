"""No network at run time: every command gives the same output with sockets blocked.

Each command runs twice in a fresh interpreter, once as it is and once with every way of opening
a network connection replaced by one that fails (``socket.socket``, ``create_connection``,
``getaddrinfo``); where the machine allows it, also in a network namespace with no interface
(``unshare -n``). The outputs must be identical and no attempt may be made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"

from netblock import BLOCK as _BLOCK  # noqa: E402

COMMANDS = [
    ["diagnose", str(DEMO_LOG), "--format", "json"],
    ["diagnose", str(DEMO_LOG), "--machine", str(DEMO_MACHINE)],
    ["detect", "--format", "json"],
    ["show", "sampler-warmup", "--format", "markdown"],
    ["verify", "sampler-warmup", str(DEMO_LOG), "--format", "json"],
    ["scenarios"],
    ["lint"],
    ["export", "--format", "json"],
]


def _run(args: list[str], blocked: bool, netns: bool = False) -> subprocess.CompletedProcess[str]:
    code = (_BLOCK if blocked else "") + "import sys; from oomwizard.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, *args]
    if netns:
        cmd = ["unshare", "-n", *cmd]
    env = {**os.environ, "OOMWIZARD_PROC_ROOT": str(ROOT / "tests" / "no-such-proc")}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def _same(a: str, b: str) -> bool:
    """Equal but for what changes from one run to the next: a report's time stamp and timings, and
    the host's free and used memory (the facts that carry them say where they came from all the same)."""
    import json

    try:
        da, db = json.loads(a), json.loads(b)
    except ValueError:
        return a == b
    if not isinstance(da, dict) or not isinstance(db, dict):
        return da == db
    for d in (da, db):
        d.pop("detected_at", None)
        d.pop("timings_ms", None)
        for key in ("host", "facts"):
            part = d.get(key)
            if isinstance(part, dict):
                for name in [k for k in part if any(w in k for w in ("available", "free", "usage"))]:
                    part.pop(name)
    return da == db


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_command_is_the_same_with_sockets_blocked(args: list[str]) -> None:
    free, blocked = _run(args, False), _run(args, True)
    assert "NETWORK ATTEMPT" not in blocked.stderr
    assert blocked.returncode == free.returncode, blocked.stderr
    assert _same(blocked.stdout, free.stdout)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")
def test_diagnose_in_a_namespace_without_network() -> None:
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this machine does not allow a new network namespace")
    args = ["diagnose", str(DEMO_LOG), "--format", "json"]
    free, isolated = _run(args, False), _run(args, False, netns=True)
    assert isolated.returncode == free.returncode, isolated.stderr
    assert isolated.stdout == free.stdout


def test_the_block_catches_an_attempt() -> None:
    """The check above can fail: a program that does connect is caught."""
    code = _BLOCK + "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9))\nexcept OSError:\n    pass\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "NETWORK ATTEMPT" in r.stderr
