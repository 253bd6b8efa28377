"""Putting a fix's commands on the operator's clipboard from inside an SSH session.

The only channel that crosses SSH is the terminal itself: OSC 52 asks the terminal emulator to set
its clipboard. tmux drops a raw OSC 52 from an application unless ``set-clipboard on``, so under
tmux the sequence is wrapped in tmux's DCS passthrough (honoured by tmux < 3.3, or with
``allow-passthrough on``), and the text is also loaded into tmux's own paste buffer, which works
with tmux's defaults (``prefix ]`` pastes it; ``-w`` forwards it to the outer clipboard on tmux 3.2+).
GNU screen gets its own DCS wrapper. No UI imports, so the sequences are easy to test.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

ESC = "\x1b"
ST = ESC + "\\"


def osc52(text: str) -> str:
    """The raw OSC 52 'set clipboard' sequence for ``text`` (BEL-terminated, as most terminals expect)."""
    payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"{ESC}]52;c;{payload}\a"


def tmux_passthrough(sequence: str) -> str:
    """Wrap ``sequence`` so tmux forwards it to the outer terminal (every ESC inside doubled)."""
    return f"{ESC}Ptmux;" + sequence.replace(ESC, ESC + ESC) + ST


def screen_passthrough(sequence: str) -> str:
    return f"{ESC}P" + sequence + ST


@dataclass(frozen=True)
class ClipboardPlan:
    sequences: tuple[str, ...]
    """What to write to the terminal, in order."""
    via: str
    """``terminal``, ``tmux`` or ``screen``: shown to the operator so they know what was tried."""


def plan(text: str, environ: Mapping[str, str]) -> ClipboardPlan:
    seq = osc52(text)
    if environ.get("TMUX"):
        return ClipboardPlan((tmux_passthrough(seq),), "tmux")
    if environ.get("STY") or environ.get("TERM", "").startswith("screen"):
        return ClipboardPlan((screen_passthrough(seq),), "screen")
    return ClipboardPlan((seq,), "terminal")


Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


def load_tmux_buffer(text: str, run: Runner = subprocess.run) -> bool:
    """Put ``text`` in tmux's paste buffer (and, on tmux 3.2+, the outer clipboard); never raises."""
    for argv in (["tmux", "load-buffer", "-w", "-"], ["tmux", "load-buffer", "-"]):
        try:
            done = run(argv, input=text.encode("utf-8"), capture_output=True, timeout=3, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        if done.returncode == 0:
            return True
    return False
