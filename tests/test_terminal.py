"""A log piped into the wizard: the log is read from the pipe and the keys from /dev/tty.

End to end in a tmux pane (a real terminal that the pipe is not), and the pieces on their own:
the spool, ``-`` reading it as ``<stdin>``, and exit 3 only where no terminal exists at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

from panes import Pane, needs_tmux

from oomwizard.frontend.options import DEMO_LOG, DEMO_MACHINE
from oomwizard.logs import inputs
from oomwizard.logs.diagnose import diagnose_sources
from oomwizard.terminal import spool

ROOT = Path(__file__).resolve().parent.parent
tmux = pytest.mark.skipif(needs_tmux, reason="needs tmux")


@pytest.fixture
def pane(tmp_path: Path):
    made: list[Pane] = []

    def make(args: list[str], **kw) -> Pane:
        p = Pane(tmp_path, args, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


@tmux
@pytest.mark.parametrize("plain,follow", [(False, False), (True, False), (False, True)],
                         ids=["tui", "plain", "tui-follow"])
def test_a_piped_log_opens_the_wizard_and_keys_come_from_the_terminal(pane, plain: bool, follow: bool) -> None:
    """``--follow`` reads the pipe itself as it grows (``kubectl logs -f``) instead of a copy."""
    args = ["--machine", str(DEMO_MACHINE), *(["--plain"] if plain else []), *(["--follow"] if follow else [])]
    p = pane(args, stdin=DEMO_LOG)
    # The diagnosis of what came down the pipe, named as stdin, with the line it was found on.
    p.wait_for("the piped log's diagnosis", lambda: "<stdin>:68" in p.screen())
    if plain:
        p.tmux("send-keys", "-t", "w", "C-c")
        assert p.exit_code() == 130
    else:
        p.tmux("send-keys", "-t", "w", "q")  # a key typed on the terminal, not read from the pipe
        assert p.exit_code() == 0
    assert p.stty_restored()
    assert p.flags() == "0 1 0"


@tmux
def test_with_stdout_redirected_the_screen_is_the_terminal_at_its_size(pane, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    p = pane(["--machine", str(DEMO_MACHINE)], stdin=DEMO_LOG, stdout=out)
    p.wait_for("the diagnosis", lambda: "<stdin>:68" in p.screen())
    assert max(len(line) for line in p.screen().splitlines()) > 100  # the pane's 110 columns, not 80
    p.tmux("send-keys", "-t", "w", "q")
    assert p.exit_code() == 0
    assert "\x1b" not in out.read_text(encoding="utf-8")  # no screen drawing landed in the file


def run_setsid(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "TERM"}
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], input=stdin, capture_output=True,
                          cwd=ROOT, env=env, start_new_session=True, timeout=60)


def test_without_any_terminal_a_piped_log_still_exits_3() -> None:
    done = run_setsid(stdin=DEMO_LOG.read_bytes())
    assert done.returncode == 3
    assert b"no interactive terminal" in done.stderr and done.stdout == b""


@tmux
def test_a_missing_log_exits_4_with_a_terminal(pane, tmp_path: Path) -> None:
    p = pane(["--log", str(tmp_path / "missing.log")])
    assert p.exit_code() == 4
    assert "missing.log: No such file or directory" in p.tmux("capture-pane", "-p", "-J", "-t", "w")


def test_the_spool_reads_again_as_stdin(tmp_path: Path) -> None:
    r, w = os.pipe()
    data = DEMO_LOG.read_bytes()
    pid = os.fork()
    if pid == 0:  # a writer that outlives nothing: the whole log, then EOF
        os.close(r)
        os.write(w, data)
        os._exit(0)
    os.close(w)
    path, cut = spool(r, limit=10**9)
    os.close(r)
    os.waitpid(pid, 0)
    assert not cut and Path(path).read_bytes() == data
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    inputs.use_piped_stdin(lambda: open(path, "rb"), len(data))  # noqa: SIM115 - the reader closes it
    try:
        for _ in range(2):  # the wizard may read it more than once
            diag = diagnose_sources(inputs.open_inputs(["-"], wizard=True))
            assert diag.best is not None and diag.best.scenario == "sampler-warmup"
            assert diag.best.evidence[0].file == "<stdin>"
    finally:
        inputs.use_piped_stdin(None)


def test_the_spool_stops_at_its_limit(tmp_path: Path) -> None:
    r, w = os.pipe()
    os.write(w, b"x" * 5000)
    os.close(w)
    path, cut = spool(r, limit=1000)
    os.close(r)
    assert cut and os.path.getsize(path) == 1000
