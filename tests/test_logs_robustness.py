"""Inputs as they arrive in practice: binary, empty, huge lines, gzip, stdin, CRLF, mixed
encodings, UTF-16, several files, unreadable paths, and a log far bigger than memory should hold."""

from __future__ import annotations

import gzip
import io
import os
import random
import sys
import tracemalloc
from pathlib import Path

import pytest
from logkit import LOGS

from oomwizard.logs.diagnose import InputError, diagnose_paths, diagnose_text

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
OOM_LINE = (
    "(EngineCore_DP0 pid=9) ERROR 10-20 09:07:13 [core.py:710] torch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.00 GiB is free. Including non-PyTorch memory, "
    "this process has 78.18 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 6.50 GiB "
    "is reserved by PyTorch but unallocated."
)


def scenarios(d) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.scenario for m in d.matches]


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no-such\.log"):
        diagnose_paths([str(tmp_path / "no-such.log")])


def test_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="directory"):
        diagnose_paths([str(tmp_path)])


def test_every_input_is_checked_before_reading(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        diagnose_paths([str(LOGS / "free_memory_0102.log"), str(tmp_path / "missing.log")])


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file_is_an_input_error(tmp_path: Path) -> None:
    p = tmp_path / "secret.log"
    p.write_text(OOM_LINE)
    p.chmod(0)
    with pytest.raises(InputError, match=r"secret\.log"):
        diagnose_paths([str(p)])


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    d = diagnose_paths([str(p)])
    assert d.matches == []
    assert any("is empty" in w.en for w in d.warnings)


def test_binary_file_warns_and_reads_its_text(tmp_path: Path) -> None:
    rng = random.Random(3)
    blob = bytes(rng.getrandbits(8) for _ in range(200_000))
    p = tmp_path / "core.bin"
    p.write_bytes(blob + b"\n" + OOM_LINE.encode() + b"\n" + blob)
    d = diagnose_paths([str(p)])
    assert any("binary" in w.en for w in d.warnings)
    assert "fragmentation" in scenarios(d)


def test_pure_binary_gives_no_match_and_no_crash(tmp_path: Path) -> None:
    p = tmp_path / "model.safetensors"
    p.write_bytes(bytes(range(256)) * 4000)
    d = diagnose_paths([str(p)])
    assert d.matches == []
    assert any("binary" in w.en for w in d.warnings)


def test_nul_padding_from_a_crash(tmp_path: Path) -> None:
    text = (LOGS / "free_memory_0102.log").read_bytes()
    p = tmp_path / "truncated.log"
    p.write_bytes(text[:200] + b"\x00" * 4096 + text[200:])
    d = diagnose_paths([str(p)])
    assert scenarios(d)[0] == "insufficient-free-memory-at-startup"


def test_huge_single_line_is_cut_not_loaded(tmp_path: Path) -> None:
    p = tmp_path / "huge.log"
    with open(p, "wb") as fh:
        fh.write(b"INFO progress " + b"=" * (12 << 20) + b"\n")
        fh.write(OOM_LINE.encode() + b"\n")
    d = diagnose_paths([str(p)])
    assert any("cut to their start and end" in w.en for w in d.warnings)
    assert d.facts.value("oom_requested_bytes") == 2 << 30
    assert d.facts.get("oom_requested_bytes").line == 2


def test_gzip_reads_like_the_plain_file() -> None:
    plain = diagnose_paths([str(LOGS / "runtime_oom_0110_tp2.log")])
    packed = diagnose_paths([str(LOGS / "runtime_oom_0110_tp2.log.gz")])
    assert scenarios(packed) == scenarios(plain) == ["runtime-oom"]
    assert packed.facts.get("oom_requested_bytes").line == plain.facts.get("oom_requested_bytes").line


def test_damaged_gzip_warns(tmp_path: Path) -> None:
    data = gzip.compress((LOGS / "runtime_oom_0110_tp2.log").read_bytes() * 50)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(data[: len(data) // 2])
    d = diagnose_paths([str(p)])
    assert any("reading stopped" in w.en for w in d.warnings)


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]

    def isatty(self) -> bool:
        return False


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin((LOGS / "kv_too_small_v1_0102.log").read_bytes()))
    d = diagnose_paths(["-"])
    assert scenarios(d)[0] == "kv-cache-too-small"
    assert d.inputs == ["<stdin>"]
    assert d.facts.get("kv_needed_gib").file == "<stdin>"


def test_gzipped_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(gzip.compress((LOGS / "free_memory_0102.log").read_bytes())))
    assert scenarios(diagnose_paths(["-"]))[0] == "insufficient-free-memory-at-startup"


def test_crlf_leaves_no_carriage_returns() -> None:
    d = diagnose_paths([str(LOGS / "allreduce_ipc_crlf_caret.log")])
    assert scenarios(d)[0] == "custom-allreduce-ipc"
    for f in d.facts:
        assert "\r" not in str(f.value) and "\r" not in (f.detail or "")
    for m in d.matches:
        assert all("\r" not in e.text and "^[[" not in e.text for e in m.evidence)


def test_mixed_encodings() -> None:
    d = diagnose_paths([str(LOGS / "mixed_encoding.log")])
    assert scenarios(d)[0] == "insufficient-free-memory-at-startup"
    lines = (LOGS / "mixed_encoding.log").read_bytes().split(b"\n")
    expected = next(i for i, ln in enumerate(lines, 1) if b"ValueError: Free memory" in ln)
    assert d.facts.get("startup_free_gib").line == expected


def test_utf16_from_powershell(tmp_path: Path) -> None:
    p = tmp_path / "ps.log"
    p.write_bytes((LOGS / "free_memory_0102.log").read_text(encoding="utf-8").encode("utf-16"))
    d = diagnose_paths([str(p)])
    assert scenarios(d)[0] == "insufficient-free-memory-at-startup"
    lines = (LOGS / "free_memory_0102.log").read_text(encoding="utf-8").split("\n")
    assert d.facts.get("startup_free_gib").line == next(i for i, ln in enumerate(lines, 1) if "ValueError: Free" in ln)


def test_several_files_read_as_one_story(tmp_path: Path) -> None:
    lines = (LOGS / "runtime_oom_0110_tp2.log").read_text(encoding="utf-8").splitlines(keepends=True)
    a, b = tmp_path / "vllm.log.1", tmp_path / "vllm.log"
    a.write_text("".join(lines[:10]), encoding="utf-8")
    b.write_text("".join(lines[10:]), encoding="utf-8")
    d = diagnose_paths([str(a), str(b)])
    assert scenarios(d)[0] == "runtime-oom"
    assert d.inputs == [str(a), str(b)]
    assert d.facts.get("vllm_version").file == str(a)
    assert d.facts.get("oom_requested_bytes").file == str(b)
    assert d.facts.get("oom_requested_bytes").line == next(
        i for i, ln in enumerate(lines[10:], 1) if "OutOfMemoryError" in ln)


def test_escape_sequences_never_reach_evidence() -> None:
    text = (
        "\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0m ERROR 10-20 09:07:13 [core.py:1] "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
        "23.57 GiB of which 120.00 MiB is free.\x1b]0;owned\x07 hf_abcdefghijklmnopqrstuvwxyz123456\n"
    )
    d = diagnose_text(text)
    assert d.matches
    blob = repr(d.to_json())
    assert "\\x1b" not in blob and "\\x07" not in blob
    assert "hf_abcdefghijklmnopqrstuvwxyz123456" not in blob


def test_text_api_names_the_input() -> None:
    d = diagnose_text((LOGS / "workspace_locked_moe_gke.log").read_text(encoding="utf-8"), name="pasted")
    assert d.inputs == ["pasted"]
    assert d.matches[0].evidence[0].file == "pasted"


@pytest.mark.timeout(300)
def test_large_log_memory_stays_bounded(tmp_path: Path) -> None:
    """A 48 MiB log is searched, not loaded: the peak of Python allocations (the reader's two
    8 MiB buffers and the newline count's scratch, about 25 MB) is the same as for a 12 MiB log."""
    sys.path.insert(0, str(BENCH))
    try:
        import gen_log
    finally:
        sys.path.remove(str(BENCH))
    peaks = []
    for mib in (12, 48):
        p = tmp_path / f"big{mib}.log"
        gen_log.write(str(p), mib << 20)
        tracemalloc.start()
        try:
            d = diagnose_paths([str(p)])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        peaks.append(peak)
    size = p.stat().st_size
    assert peaks[1] - peaks[0] < 4 << 20, peaks  # 36 MiB more log, (almost) no more memory
    assert peaks[1] < size * 0.6, (peaks, size)
    assert d.matches and d.matches[0].scenario in ("fragmentation", "runtime-oom")
    assert d.facts.value("vllm_version") is not None  # read from the start of the file
    assert d.facts.value("failed_rank") == 1
    line = d.facts.get("oom_requested_bytes").line
    with open(p, "rb") as fh:
        for i, raw in enumerate(fh, 1):
            if i == line:
                assert b"OutOfMemoryError" in raw
                break


def test_named_pipe_is_not_consumed_by_the_check(tmp_path: Path) -> None:
    """``oomwizard diagnose <(zcat vllm.log.gz)`` hands over a pipe: nothing may be read twice."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    data = gzip.compress((LOGS / "kv_too_small_v1_0102.log").read_bytes())

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    t = threading.Thread(target=feed)
    t.start()
    d = diagnose_paths([str(fifo)])
    t.join(5)
    assert scenarios(d)[0] == "kv-cache-too-small"
