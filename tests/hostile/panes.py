"""A program run in a tmux pane of a private tmux server, and the pane's terminal state read back.

The pane runs a small shell script: it saves ``stty -g``, runs the program in the foreground
(so it owns the terminal as it would for an operator), writes its exit code, saves ``stty -g``
again and waits. tmux's pane flags say what the program left behind: the alternate screen, the
cursor's visibility, mouse reporting. Waiting is always for a state, with a deadline only so that a
hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 30.0

needs_tmux = shutil.which("tmux") is None
SHELL = "bash" if shutil.which("bash") else "sh"
"""bash goes on after a program that handled Ctrl+C and exited normally; some shells exit too."""


class Pane:
    def __init__(self, folder: Path, args: list[str], *, env: dict[str, str] | None = None,
                 stdin: Path | None = None, stdout: Path | None = None) -> None:
        """``stdin``/``stdout``: a file piped into the program (``cat FILE |``) or its output sent to."""
        self.folder = folder
        self.socket = str(folder / "tmux.sock")
        program = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "oomwizard", *args])
        if stdin is not None:
            program = f"cat {shlex.quote(str(stdin))} | {program}"
        if stdout is not None:
            program = f"{program} > {shlex.quote(str(stdout))}"
        script = folder / "run.sh"
        script.write_text(
            f"cd {shlex.quote(str(ROOT))}\n"
            f"stty -g > {shlex.quote(str(folder / 'stty.before'))}\n"
            f"{program}\n"
            f"echo $? > {shlex.quote(str(folder / 'rc.tmp'))}\n"
            f"stty -g > {shlex.quote(str(folder / 'stty.after'))}\n"
            f"mv {shlex.quote(str(folder / 'rc.tmp'))} {shlex.quote(str(folder / 'rc'))}\n"
            "trap '' INT QUIT\n"  # keys sent after the program ended must not close the pane
            "exec sleep 600\n"
        )
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "TEXTUAL"))}
        full_env.update({"TERM": "xterm-256color", "LANG": "C.UTF-8", "OOMWIZARD_TRACEBACK": "1"})
        full_env.update(env or {})
        self.tmux("-f", "/dev/null", "new-session", "-d", "-x", "110", "-y", "36", "-s", "w", f"{SHELL} {script}",
                  env=full_env)

    def tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, env=env,
                              timeout=DEADLINE)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=DEADLINE)

    # --- reading the pane ------------------------------------------------------------------------

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "w")

    def flags(self) -> str:
        """``alternate-screen cursor-visible mouse-reporting``, e.g. ``0 1 0`` for a clean terminal."""
        return self.tmux("display", "-p", "-t", "w", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}").strip()

    def program_pid(self) -> int | None:
        """The Python process the pane's shell runs (its child), once it exists."""
        shell = int(self.tmux("display", "-p", "-t", "w", "#{pane_pid}").strip())
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, ...
            if int(fields[1]) == shell and "python" in stat.split("(", 1)[1].split(")", 1)[0].lower():
                return int(entry.name)
        return None

    def wait_for(self, what: str, ready: Callable[[], bool]) -> None:
        end = time.monotonic() + DEADLINE
        while not ready():
            if time.monotonic() > end:
                raise AssertionError(f"gave up waiting for {what}; the pane shows:\n{self.screen()}")
            time.sleep(0.1)

    def exit_code(self) -> int:
        rc = self.folder / "rc"
        self.wait_for("the program to end", rc.exists)
        return int(rc.read_text().strip())

    def stty_restored(self) -> bool:
        return (self.folder / "stty.before").read_text() == (self.folder / "stty.after").read_text()
