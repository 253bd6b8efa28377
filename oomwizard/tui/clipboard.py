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
from typing import Any

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


class ClipboardSending:
    """Methods of :class:`~.app.WizardApp` that send text to the clipboard (Textual's OSC 52, or
    the wrapped sequences and the tmux buffer that Textual cannot send)."""

    # provided by the app
    environ: Mapping[str, str]
    clipboard_runner: Callable[[str], bool]
    copy_to_clipboard: Any
    from_thread: Any
    run_worker: Any
    _clipboard: str
    _driver: Any

    def copy_text(self, text: str, on_tmux: Callable[[bool], None] | None = None) -> str:
        """Send ``text`` to the terminal's clipboard; returns how (``terminal``, ``tmux``, ``screen``).

        Under tmux the text also goes into tmux's paste buffer, in a worker (it runs ``tmux``);
        ``on_tmux`` hears whether that worked.
        """
        how = plan(text, self.environ)
        if how.via == "terminal":
            self.copy_to_clipboard(text)  # Textual's own OSC 52
        else:
            self._passthrough(text, how.sequences)
        if how.via == "tmux":
            runner = self.clipboard_runner

            def load() -> None:
                ok = bool(runner(text))
                if on_tmux is not None:
                    self.from_thread(on_tmux, ok)

            self.run_worker(load, thread=True, group="tmux-buffer", exit_on_error=False)
        return how.via

    def _passthrough(self, text: str, sequences: tuple[str, ...]) -> None:
        """OSC 52 wrapped for tmux or screen, which Textual cannot send: the one place that writes
        to Textual's driver and sets what ``App.clipboard`` returns, as ``copy_to_clipboard`` does."""
        self._clipboard = text
        driver = self._driver
        if driver is not None:
            for seq in sequences:
                driver.write(seq)
            driver.flush()
