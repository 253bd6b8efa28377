"""Properties of the log reader, for any input: searching gives the lines reading everything gives.

Whatever the text, its line endings, its blocks and its engine, the lines the searching reader
yields are lines of the input with their true numbers and text, and every line holding a trigger
is among them.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from logkit import LOGS

from oomwizard.logs.collect import _words, scanner, trigger_words
from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.logs.reader import GAP, ReadStats, Source, read_lines

WORDS = trigger_words()
TRIGGERS, MARKS = (sorted(x) for x in _words())
FILLER = ["INFO 06-02 08:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s",
          '(APIServer pid=1) INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK', "", "   ",
          "x" * 300, "\x1b[36mcoloured\x1b[0m", "ünïcödé 显存", "\t\tindented"]

line_text = st.one_of(
    st.sampled_from(FILLER),
    st.builds(lambda a, w, b: f"{a}{w}{b}", st.sampled_from(FILLER), st.sampled_from(WORDS), st.sampled_from(FILLER)),
    st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=80),
)


def _source(data: bytes, packed: bool = False) -> Source:
    import io

    raw = gzip.compress(data) if packed else data
    return Source("t", lambda: io.BytesIO(raw), len(raw), gzip=packed)


def _lines(data: bytes, **kw: object) -> list[tuple[int, str]]:
    return [x for x in read_lines(_source(data, bool(kw.pop("packed", False))), ReadStats("t"), scanner(), **kw)
            if x != GAP]  # type: ignore[arg-type]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line_text, min_size=0, max_size=400), st.sampled_from(["\n", "\r\n"]),
       st.integers(min_value=64, max_value=4096), st.booleans(), st.booleans())
def test_searched_lines_are_true_lines_and_every_trigger_line_is_read(
        lines: list[str], eol: str, block: int, packed: bool, last_newline: bool) -> None:
    data = eol.join(lines).encode() + (eol.encode() if last_newline and lines else b"")
    whole = dict(_lines(data, all_lines_limit=1 << 40, packed=packed))
    searched = _lines(data, all_lines_limit=0, block_size=block, packed=packed)
    numbers = [n for n, _ in searched]
    assert numbers == sorted(set(numbers))  # in order, each line once
    for n, text in searched:
        assert whole[n] == text
    raw = data.split(b"\n")
    read = dict(searched)
    first_mark = True
    for i, line in enumerate(raw, 1):
        if i not in whole:
            continue
        if any(w.encode() in line for w in TRIGGERS):
            assert i in read, (i, line)
        elif any(m.encode() in line for m in MARKS) and first_mark:
            # serving marks repeat on every request: each is searched up to its first hit after a
            # block start or another hit, so the first one in the log is always read
            assert i in read, (i, line)
        if any(m.encode() in line for m in MARKS):
            first_mark = False


@pytest.mark.parametrize("engine", ["hyperscan", "re2", "re"])
def test_every_engine_finds_the_same_hits(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip(engine)
    text = "\n".join(f"{FILLER[i % 2]} {w} tail" for i, w in enumerate(WORDS)).encode() + b"\n"
    monkeypatch.setenv("OOMWIZARD_SCANNER", "re")
    expected = _lines(text, all_lines_limit=0, block_size=512)
    monkeypatch.setenv("OOMWIZARD_SCANNER", engine)
    assert scanner().name == engine
    assert _lines(text, all_lines_limit=0, block_size=512) == expected
    assert len(expected) == len(WORDS)


def test_a_truncated_gzip_keeps_what_it_held(tmp_path: Path) -> None:
    """A log gzipped and cut short (a copy interrupted, a rotation mid-write): everything before
    the cut is read, the failure near its end included, and a warning says where it stopped."""
    data = (LOGS / "runtime_oom_0110_tp2.log").read_bytes()
    filler = b"(APIServer pid=1) INFO 06-02 08:00:00 [loggers.py:123] Engine 000: Avg prompt throughput\n" * 40000
    body = filler + data + filler[: len(filler) // 50]
    packed = gzip.compress(body)
    p = tmp_path / "cut.log.gz"
    p.write_bytes(packed[: int(len(packed) * 0.99)])
    d = diagnose_paths([str(p)])
    assert d.matches and d.matches[0].scenario == "runtime-oom"
    assert d.matches[0].evidence[0].line == filler.count(b"\n") + 46
    assert any("reading stopped" in w.en for w in d.warnings)
    with pytest.raises((EOFError, zlib.error)):
        gzip.decompress(p.read_bytes())  # what the standard library gives for the same file
