"""``verify`` says what the reader noticed about its input: a log cut short, empty or binary is
the reason a check stays unproven, and the operator sees it on stderr in every format."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "oomwizard" / "demo" / "vllm-serve.log").read_bytes()


def _verify(path: Path, fmt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "oomwizard", "verify", "sampler-warmup", str(path), "--format", fmt],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize(("name", "data", "said"), [
    ("cut.gz", gzip.compress(DEMO, mtime=0)[: len(gzip.compress(DEMO, mtime=0)) // 2], "reading stopped after"),
    ("empty.log", b"", "is empty"),
    ("random.bin", bytes(range(256)) * 64, "looks like a binary file"),
], ids=["cut.gz", "empty.log", "random.bin"])
def test_verify_reports_what_the_reader_noticed(tmp_path: Path, fmt: str, name: str, data: bytes, said: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    done = _verify(path, fmt)
    assert done.returncode in (8, 9), done.stderr
    assert said in done.stderr
    assert "no out-of-memory error" not in done.stderr  # no failure in a new log is no warning


def test_a_clean_read_gives_no_warning(tmp_path: Path) -> None:
    done = _verify(ROOT / "oomwizard" / "demo" / "vllm-serve.log", "text")
    assert done.returncode == 8
    assert done.stderr == ""
