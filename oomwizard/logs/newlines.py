"""Line arithmetic on big buffers: newline counts (vectorised when NumPy is there) and the
windows around scanner hits widened to whole lines and merged."""

from __future__ import annotations

import os
from typing import Any


def _snap(buf: bytes | bytearray, n: int, s: int, e: int, floor: int) -> tuple[int, int]:
    """``[s, e)`` widened to whole lines within ``[floor, n)``."""
    s = max(s, floor)
    if s > 0:
        s = max(buf.rfind(b"\n", 0, s) + 1, floor)
    if e >= n:
        return s, n
    nxt = buf.find(b"\n", e, n)
    return s, n if nxt < 0 else nxt + 1


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


_NUMPY: list[Any] = []
NUMPY_MIN = 1 << 20
"""Ranges at least this long have their newlines counted by NumPy when it imports: a vectorised
compare and count, 5 to 10 times faster than ``bytes.count`` (which does not vectorise), and
counting is the largest cost of searching a big log."""


def count_newlines(buf: bytes | bytearray, start: int, end: int) -> int:
    """Newlines in ``buf[start:end]``."""
    if end - start >= NUMPY_MIN:
        if not _NUMPY:
            # NumPy's BLAS would start a thread per core at import: nothing here needs it.
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ.setdefault(var, "1")
            try:
                import numpy as np_module
            except ImportError:
                np_module = None  # type: ignore[assignment]
            _NUMPY.append(np_module)
        np = _NUMPY[0]
        if np is not None:
            if len(_NUMPY) == 1:
                _NUMPY.append(np.empty(NUMPY_MIN, dtype=bool))  # reused: no block-sized temporaries
            out = _NUMPY[1]
            total = 0
            for a in range(start, end, NUMPY_MIN):
                k = min(NUMPY_MIN, end - a)
                np.equal(np.frombuffer(buf, np.uint8, k, a), 10, out=out[:k])
                total += int(np.count_nonzero(out[:k]))
            return total
    return buf.count(b"\n", start, end)
