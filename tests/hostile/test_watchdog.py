"""The last resort after a signal: the tty modes saved at start come back, and the screen modes end.

The frontends normally restore the terminal through their toolkit; the watchdog does it when the
toolkit cannot finish. Checked on a real pseudo-terminal: raw mode set after the watchdog saved
the modes is undone, and the sequences that leave the alternate screen, show the cursor and stop
mouse reporting reach the terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import termios
import tty

from oomwizard.signals import SignalExit, Watchdog, exit_code


def test_restore_puts_back_the_saved_modes_and_writes_the_reset_sequences() -> None:
    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        dog = Watchdog(slave)
        tty.setraw(slave)
        assert termios.tcgetattr(slave) != before
        dog.restore()
        assert termios.tcgetattr(slave) == before
        written = os.read(master, 4096).decode()
        for seq in ("\x1b[?1049l", "\x1b[?25h", "\x1b[?1000l", "\x1b[?1006l"):
            assert seq in written
    finally:
        os.close(master)
        os.close(slave)


def test_an_armed_watchdog_ends_a_process_that_does_not_end_with_the_signal_code() -> None:
    code = (
        "import time\n"
        "from oomwizard.signals import Watchdog\n"
        "Watchdog().arm(143, grace=0.2)\n"
        "time.sleep(120)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == 143


def test_exit_codes_are_128_plus_the_signal() -> None:
    assert exit_code(signal.SIGTERM) == 143
    assert exit_code(signal.SIGHUP) == 129
    assert exit_code(signal.SIGINT) == 130
    assert SignalExit(signal.SIGQUIT).code == 131
