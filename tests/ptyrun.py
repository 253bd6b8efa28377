"""Run oomwizard on a pseudo-terminal of a given size and read back every byte it wrote."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 60.0


def run_pty(args: list[str], *, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None,
            keys: bytes = b"", wait_for: bytes | None = None) -> tuple[int, bytes]:
    """``python -m oomwizard ARGS`` with stdin, stdout and stderr on a new pty; ``keys`` are typed
    ahead in one go once ``wait_for`` shows (the terminal keeps them until the program reads)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    full_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    full_env.update({"LANG": "C.UTF-8", **(env or {})})

    def own_tty() -> None:  # the pty becomes the controlling terminal, as for an operator
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-m", "oomwizard", *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT, env=full_env, preexec_fn=own_tty)
    os.close(slave)
    out = bytearray()
    pending = keys
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the program has closed the terminal
                break
            if not chunk:
                break
            out += chunk
        if pending and (wait_for is None or wait_for in out):
            os.write(master, pending)
            pending = b""
    os.close(master)
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"oomwizard did not end; it wrote:\n{out.decode('utf-8', 'replace')[-3000:]}") from None
    return code, bytes(out)
