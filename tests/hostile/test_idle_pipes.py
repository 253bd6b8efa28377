"""A pipe whose writer stops without closing it ends the read, and the diagnosis uses what came.

``ssh host cat vllm.log | oomwizard diagnose -`` over a connection that hangs, or a ``kubectl
logs`` that stalls, would otherwise block for ever. The writer here sends the demo log and keeps
its end open; the reader is given a short idle time so the case runs quickly. ``--follow`` waits
on purpose: its input is opened without an idle bound.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oomwizard.logs.diagnose import diagnose_sources
from oomwizard.logs.inputs import IdleStream, WriterStopped, open_inputs

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "oomwizard" / "demo" / "vllm-serve.log").read_bytes()
IDLE = 0.2


def _stalled_fifo(tmp_path: Path, data: bytes) -> tuple[Path, int]:
    fifo = tmp_path / "stalled"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never closes
    os.write(writer, data)
    return fifo, writer


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_a_named_pipe_whose_writer_stalls_is_diagnosed_from_what_came(tmp_path: Path, gzipped: bool) -> None:
    import gzip

    fifo, writer = _stalled_fifo(tmp_path, gzip.compress(DEMO) if gzipped else DEMO)
    try:
        diag = diagnose_sources(open_inputs([str(fifo)], idle=IDLE))
    finally:
        os.close(writer)
    assert diag.matches and diag.matches[0].scenario == "sampler-warmup"
    (note,) = [w.en for w in diag.warnings if "did not close" in w.en]
    assert note.startswith(f"{fifo}: reading stopped after {len(DEMO)} bytes")


def test_a_shell_pipe_whose_writer_stalls_is_diagnosed_from_what_came() -> None:
    r, w = os.pipe()  # what `<(…)` hands over: /dev/fd/N, an anonymous pipe
    try:
        os.write(w, DEMO)  # less than a pipe holds, so the write does not block
        diag = diagnose_sources(open_inputs([f"/dev/fd/{r}"], idle=IDLE))
    finally:
        os.close(w)
        os.close(r)
    assert diag.matches and diag.matches[0].scenario == "sampler-warmup"
    assert any("the writer did not close the pipe" in x.en for x in diag.warnings)


def test_a_pipe_that_never_sends_a_byte_ends_with_nothing_read() -> None:
    r, w = os.pipe()
    try:
        diag = diagnose_sources(open_inputs([f"/dev/fd/{r}"], idle=IDLE))
    finally:
        os.close(w)
        os.close(r)
    assert not diag.matches
    assert any("reading stopped after 0 bytes" in x.en and "did not close" in x.en for x in diag.warnings)


def test_what_came_before_the_stall_is_returned_and_the_next_read_says_why() -> None:
    r, w = os.pipe()
    try:
        os.write(w, b"one\ntwo\n")
        stream = IdleStream(r, IDLE, owned=False)
        assert stream.read(1 << 20) == b"one\ntwo\n"
        with pytest.raises(WriterStopped, match="did not close the pipe"):
            stream.read(10)
        with pytest.raises(WriterStopped):
            stream.readinto(bytearray(10))
    finally:
        os.close(w)
        os.close(r)


def test_a_writer_that_closes_ends_the_read_normally() -> None:
    r, w = os.pipe()
    os.write(w, b"x\n")
    os.close(w)
    stream = IdleStream(r, IDLE)
    buf = bytearray(16)
    assert stream.readinto(buf) == 2 and stream.readinto(buf) == 0
    stream.close()


def test_follow_opens_its_input_without_an_idle_bound(tmp_path: Path) -> None:
    fifo, writer = _stalled_fifo(tmp_path, DEMO)
    try:
        (source,) = open_inputs([str(fifo)], idle=None)
        stream = source.opener()
        assert not isinstance(stream, IdleStream)
        stream.close()
    finally:
        os.close(writer)
