"""Byte units and how sizes are written, once.

vLLM prints sizes in GiB (binary, two decimals: ``Model loading took 14.99 GiB``) and PyTorch's
OOM message in GiB and MiB; writing ours the same way lets an operator compare them by eye.
"""

from __future__ import annotations

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
TIB = 1 << 40


def gib(n: float | None, digits: int = 2, *, unit: bool = True) -> str:
    """``14.99 GiB`` (``?`` when unknown); ``unit=False`` gives the number alone."""
    if n is None:
        return "?"
    text = f"{n / GIB:.{digits}f}"
    return f"{text} GiB" if unit else text


def mib(n: float | None, digits: int = 0, *, unit: bool = True, grouped: bool = False) -> str:
    """``512 MiB`` (``?`` when unknown); ``grouped`` writes thousands with commas (``12,288 MiB``),
    as a progress line does; ``unit=False`` gives the number alone."""
    if n is None:
        return "?"
    text = f"{n / MIB:,.{digits}f}" if grouped else f"{n / MIB:.{digits}f}"
    return f"{text} MiB" if unit else text


def human_bytes(n: float) -> str:
    """The largest unit that keeps the number at least 1: ``1.50 GiB``, ``12.00 MiB``, ``900 B``."""
    n = float(n)
    for size, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if abs(n) >= size:
            return f"{n / size:.2f} {name}"
    return f"{int(n)} B"
