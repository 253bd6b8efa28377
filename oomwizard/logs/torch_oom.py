"""PyTorch's out-of-memory message, broken down into numbers.

The message (``c10/cuda/CUDACachingAllocator.cpp``) changed over the releases, and each field is
read on its own so a reordered, shortened or wrapped message still yields what it has:

* ``CUDA out of memory. Tried to allocate 1.74 GiB. GPU 1 has a total capacity of 23.57 GiB of
  which 605.88 MiB is free. Process 133288 has 22.97 GiB memory in use. Of the allocated memory
  20.21 GiB is allocated by PyTorch, with 128.00 MiB allocated in private pools (e.g., CUDA
  Graphs), and 185.98 MiB is reserved by PyTorch but unallocated. …``
* ``… Including non-PyTorch memory, this process has 139.51 GiB memory in use. …`` (the wording
  when the process is visible by its own pid)
* ``CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB
  already allocated; 3.44 MiB free; 14.84 GiB reserved in total by PyTorch)`` (torch < 2.0, and
  Intel's XPU allocator)
* ``HIP out of memory`` (ROCm) and ``XPU out of memory`` (Intel) keep the CUDA layout.
* ``Tried to allocate 23.04 GiB (GPU 0; 23.52 GiB total; 0 bytes free)``: the old form shortened
  when retyped into a report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

# No word boundary after the unit: a message word-wrapped at a space and joined back loses that
# space ("63.98 GiBof which"); the longer units come first so that "GiB" is never read as "B".
_SIZE = r"(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB|KB|MB|GB|TB|B)"
_UNITS = {
    "bytes": 1,
    "b": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    # PyTorch's old messages and XPU say GB but mean GiB.
    "kb": 1 << 10,
    "mb": 1 << 20,
    "gb": 1 << 30,
    "tb": 1 << 40,
}
PLATFORMS = {"CUDA": "cuda", "HIP": "rocm", "XPU": "xpu"}

_PLATFORM_RE = re.compile(r"\b(CUDA|HIP|XPU|NPU|MPS)\s*out\s*of\s*memory")
_REQUESTED_RE = re.compile(r"Tried\s*to\s*allocate\s*" + _SIZE)
_REJECTED_RE = re.compile(r"Requested\s*size:\s*" + _SIZE)
_CAPACITY_RE = re.compile(
    r"GPU\s*(\d+)\s*has\s*a\s*total\s*capac(?:i)?ty\s*of\s*" + _SIZE + r"(?:\s*of\s*which\s*" + _SIZE + r"\s*is\s*free)?"
)
_THIS_PROCESS_RE = re.compile(r"this\s*process\s*has\s*" + _SIZE + r"\s*memory\s*in\s*use")
_PROCESS_RE = re.compile(r"Process\s*(\d+)\s*has\s*" + _SIZE + r"\s*memory\s*in\s*use")
_ALLOCATED_RE = re.compile(_SIZE + r"\s*is\s*allocated\s*by\s*PyTorch")
_PRIVATE_RE = re.compile(r"with\s*" + _SIZE + r"\s*allocated\s*in\s*private\s*pools")
_UNALLOCATED_RE = re.compile(_SIZE + r"\s*is\s*reserved\s*by\s*PyTorch\s*but\s*unallocated")
_ALLOWED_RE = re.compile(_SIZE + r"\s*allowed;")
_HINT_RE = re.compile(r"try\s*setting\s*(PYTORCH_\w*ALLOC_CONF)\s*=\s*expandable_segments")
# Old form: (GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 3.44 MiB free; …)
_OLD_RE = re.compile(r"\((?:GPU|XPU|NPU)\s*(\d+);\s*" + _SIZE + r"\s*total(?:\s*capacity)?\s*[;)]")
_OLD_ALLOCATED_RE = re.compile(_SIZE + r"\s*already\s*allocated")
_OLD_FREE_RE = re.compile(r";\s*" + _SIZE + r"\s*free")
_OLD_RESERVED_RE = re.compile(_SIZE + r"\s*reserved\s*in\s*total\s*by\s*PyTorch")


def size_bytes(number: str, unit: str) -> int:
    """``("1.74", "GiB")`` -> bytes (binary units, as PyTorch prints them)."""
    return round(float(number) * _UNITS[unit.lower()])


@dataclass
class TorchOom:
    """The numbers of one PyTorch OOM message; fields it did not state are None."""

    platform: str | None = None
    """``cuda``, ``rocm`` or ``xpu`` (from CUDA/HIP/XPU in the wording); None for others."""
    requested: int | None = None
    gpu_index: int | None = None
    total: int | None = None
    free: int | None = None
    this_process: int | None = None
    other_processes: int | None = None
    processes: list[tuple[int, int]] = field(default_factory=list)
    """``(pid, bytes)`` for every ``Process N has X memory in use``."""
    allocated: int | None = None
    reserved_unallocated: int | None = None
    private_pools: int | None = None
    allowed: int | None = None
    hint_var: str | None = None
    """The variable PyTorch's hint names (it tells the torch release family, not the setting)."""

    FACTS: ClassVar[dict[str, str]] = {
        "requested": "oom_requested_bytes",
        "gpu_index": "oom_gpu_index",
        "total": "oom_total_bytes",
        "free": "oom_free_bytes",
        "this_process": "oom_process_bytes",
        "other_processes": "oom_other_processes_bytes",
        "allocated": "oom_allocated_bytes",
        "reserved_unallocated": "oom_reserved_unallocated_bytes",
        "private_pools": "oom_private_pools_bytes",
    }

    def facts(self) -> dict[str, int | bool]:
        """Catalog fact name -> value for the fields that are known."""
        out: dict[str, int | bool] = {}
        for attr, name in self.FACTS.items():
            value = getattr(self, attr)
            if value is not None:
                out[name] = value
        if self.reserved_unallocated is not None and self.requested is not None:
            out["oom_fragmented"] = self.fragmented
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in self.__dict__.items() if v not in (None, [])}
        if self.processes:
            out["processes"] = [list(p) for p in self.processes]
        return out

    @property
    def fragmented(self) -> bool:
        """Reserved-but-unallocated memory would have covered the request: the memory was there,
        but in pieces the allocator could not use (and the driver had too little free for a new
        segment; where it had plenty, see :attr:`free_covers`)."""
        from .signatures import FRAGMENTATION_MIN

        r, q = self.reserved_unallocated, self.requested
        return r is not None and q is not None and r >= FRAGMENTATION_MIN and r >= q and not self.free_covers

    @property
    def free_covers(self) -> bool:
        """The driver still had far more free than the request (twice it, and 1 GiB more) and no
        per-process cap applied: PyTorch asks the driver for a new segment before it reports out of
        memory, so capacity was not what failed; a pluggable allocator (vLLM's sleep-mode cumem
        allocator) or a limit outside PyTorch was."""
        f, q = self.free, self.requested
        return f is not None and q is not None and self.allowed is None and f >= 2 * q and f - q >= 1 << 30


def _size(m: re.Match[str] | None, group: int = 1) -> int | None:
    if m is None or m.group(group) is None:
        return None
    return size_bytes(m.group(group), m.group(group + 1))


def parse_torch_oom(text: str) -> TorchOom | None:
    """The numbers in a PyTorch OOM message, or None when ``text`` holds none."""
    plat = _PLATFORM_RE.search(text)
    requested = _REQUESTED_RE.search(text) or _REJECTED_RE.search(text)
    if plat is None and requested is None:
        return None
    oom = TorchOom()
    if plat:
        oom.platform = PLATFORMS.get(plat.group(1))
    oom.requested = _size(requested)
    cap = _CAPACITY_RE.search(text)
    if cap:
        oom.gpu_index = int(cap.group(1))
        oom.total = size_bytes(cap.group(2), cap.group(3))
        oom.free = _size(cap, 4)
    else:
        old = _OLD_RE.search(text)
        if old:
            oom.gpu_index = int(old.group(1))
            oom.total = size_bytes(old.group(2), old.group(3))
            oom.allocated = _size(_OLD_ALLOCATED_RE.search(text))
            oom.free = _size(_OLD_FREE_RE.search(text))
            reserved = _size(_OLD_RESERVED_RE.search(text))
            if reserved is not None and oom.allocated is not None:
                oom.reserved_unallocated = max(0, reserved - oom.allocated)
    oom.processes = [(int(m.group(1)), size_bytes(m.group(2), m.group(3))) for m in _PROCESS_RE.finditer(text)]
    this = _size(_THIS_PROCESS_RE.search(text))
    if this is not None:
        oom.this_process = this
        oom.other_processes = sum(b for _, b in oom.processes)
    if oom.allocated is None:
        oom.allocated = _size(_ALLOCATED_RE.search(text))
    if this is None and oom.processes:
        # In a container the process shows under a pid of the host's namespace, so torch cannot
        # tell it is itself. Its use holds at least what PyTorch allocated: the smallest user that
        # large is this process (another process of the same size is then the one beside it);
        # with no allocation figure, the largest user.
        own = [p for p in oom.processes if oom.allocated is not None and p[1] >= oom.allocated]
        mine = min(own, key=lambda p: p[1]) if own else max(oom.processes, key=lambda p: p[1])
        oom.this_process = mine[1]
        oom.other_processes = sum(b for _, b in oom.processes) - mine[1]
    oom.private_pools = _size(_PRIVATE_RE.search(text))
    if oom.reserved_unallocated is None:
        oom.reserved_unallocated = _size(_UNALLOCATED_RE.search(text))
    oom.allowed = _size(_ALLOWED_RE.search(text))
    hint = _HINT_RE.search(text)
    oom.hint_var = hint.group(1) if hint else None
    return oom
