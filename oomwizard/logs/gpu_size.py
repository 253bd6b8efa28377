"""The GPU's memory as a log states it outside any error: ``nvidia-smi``'s table, or prose.

A report says "on a single A100 80GB", "8x H100" or "4090 24GB"; ``nvidia-smi`` prints the exact
total (``0MiB / 81559MiB``). That size is kept as ``gpu_mem_stated_bytes`` with its line, for the
numbers rules when an out-of-memory message gives no total of its own: it never replaces what
PyTorch's message says (``gpu_mem_total_bytes``, ``oom_total_bytes``). A name without a size takes
the nominal size of ``numbers.yaml``'s ``gpu_sizes``; a name whose size varies gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..text.units import GIB, MIB
from .signatures import GPU_SIZES

__all__ = ["TRIGGERS", "stated_size"]

_SMI_MEMORY_RE = re.compile(r"\|\s*(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB\s*\|")
"""``nvidia-smi``'s memory column: ``|   1024MiB / 81559MiB |``."""


def _name_re() -> re.Pattern[str]:
    names = sorted(GPU_SIZES, key=len, reverse=True)
    alts = []
    for n in names:
        words = r"\s*".join(re.escape(w) for w in n.split())
        if n.upper().startswith("RTX "):
            # The RTX card's number alone counts only with its size next to it (below).
            words = rf"(?:(?:GeForce\s*)?RTX\s*)?{re.escape(n.split()[-1])}"
        alts.append(words)
    return re.compile(
        r"(?<![\w.-])(?:(?P<count>\d{1,2})\s*[x×]\s*)?(?:NVIDIA\s+|Tesla\s+|AMD\s+(?:Instinct\s+)?)?"
        rf"(?P<name>{'|'.join(alts)})(?![\w.])"
        r"(?:[\s-]*(?:SXM\d?|PCIe|NVL)?[\s-]*\(?\s*(?P<size>\d{2,3})\s*(?:GB|GiB|G)\b)?",
        re.I,
    )


_NAME_RE = _name_re()
TRIGGERS: tuple[str, ...] = ("MiB /", "GB", "RTX", *sorted({n.split()[-1] for n in GPU_SIZES
                                                           if not n.upper().startswith("RTX ")}))
"""Substrings a line must hold for :func:`stated_size` to look at it. An RTX card's number alone
is no trigger: every big log holds 4090s and 3090s (ports, ids, token counts), and searching for
them would decode the lines around each; its size (``GB``) or ``RTX`` is one."""


def _nominal(name: str) -> int | None:
    key = re.sub(r"\s+", " ", name.strip()).upper()
    for n, gib in GPU_SIZES.items():
        if n.upper() == key or (n.upper().startswith("RTX ") and key.endswith(n.split()[-1].upper())):
            return gib
    return None


def stated_size(text: str, put: Callable[[str, Any], None]) -> None:
    """``gpu_mem_stated_bytes`` from ``nvidia-smi``'s memory column, else a GPU named with or
    without its size."""
    m = _SMI_MEMORY_RE.search(text)
    if m and int(m.group("total")) > 0:
        put("gpu_mem_stated_bytes", int(m.group("total")) * MIB)
        return
    for m in _NAME_RE.finditer(text):
        name, size = m.group("name"), m.group("size")
        bare_rtx = name.strip().isdigit()
        if size is not None and 8 <= int(size) <= 512:
            put("gpu_mem_stated_bytes", int(size) * GIB)
            return
        if bare_rtx:
            continue
        gib = _nominal(name)
        if gib is not None:
            put("gpu_mem_stated_bytes", gib * GIB)
            return
