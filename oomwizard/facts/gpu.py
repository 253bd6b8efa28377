"""GPUs through NVML (``nvidia-ml-py``, imported as ``pynvml``): what is there, what is free, who holds it.

A field a GPU does not support is skipped, one that fails is recorded with its reason
(:mod:`.nvml` words the failures), and a lost GPU stops only its own reading. The NVML module is a
parameter so tests can hand in a fake one that answers like the real H200 in
``tests/fixtures/machine/``. Which of these GPUs vLLM uses is :mod:`.visible`'s business.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..i18n import LANGS, both, ui
from ..text.redact import redact_argv
from .nvml import (
    GpuLost,
    MemoryInfo,
    Nvml,
    as_int,
    as_int_pair,
    as_text,
    device_error,
    err_code,
    err_str,
    import_nvml,
    init_failure,
    is_mismatch,
    nvml_code,
)

PCIE_LEVELS = {0: "BOARD", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
_NVLINK_P2P_INDEX = 2  # NVML_P2P_CAPS_INDEX_NVLINK
_NVML_LOCK = threading.Lock()
"""NVML init/shutdown are process-global; one detection at a time talks to it."""


def arch_for_cc(major: int, minor: int) -> tuple[str, str]:
    """Compute capability -> (architecture name as in the catalog, ``sm_XY``)."""
    sm = f"sm_{major}{minor}"
    if major == 7:
        return ("turing" if minor >= 5 else "volta"), sm
    if major == 8:
        return ("ada" if minor == 9 else "ampere"), sm
    if major == 9:
        return "hopper", sm
    if major == 10:
        return "blackwell_sm100", sm
    if major == 11:
        return "blackwell_sm110", sm
    if major == 12:
        return "blackwell_sm120", sm
    return "other", sm


class _Reader:
    """One NVML session: per-field calls that skip what is not supported and record what failed."""

    def __init__(self, nv: Nvml, proc_root: Path) -> None:
        self.nv = nv
        self.proc_root = proc_root
        self.not_supported = nvml_code(nv, "NOT_SUPPORTED")
        self.lost = nvml_code(nv, "GPU_IS_LOST")

    def call(self, errors: dict[str, str], field: str, fn_name: str, *args: object) -> object:
        """``fn_name`` of the module if it has it; None when it is missing or not supported here."""
        fn = getattr(self.nv, fn_name, None)
        if fn is None:
            return None
        try:
            return fn(*args)
        except Exception as e:
            if is_mismatch(self.nv, e):
                errors[field] = "not available in this driver's NVML"
                return None
            code = err_code(e)
            if code == self.not_supported:
                return None
            if code == self.lost:
                raise GpuLost() from e
            errors[field] = err_str(e)
            return None

    def memory(self, errors: dict[str, str], handle: object) -> dict[str, Any] | None:
        """v2 memory info (driver reservation apart from ``used``), else v1 with a note."""
        version = getattr(self.nv, "nvmlMemory_v2", None)
        if version is not None:
            scratch: dict[str, str] = {}
            m = self.call(scratch, "memory", "nvmlDeviceGetMemoryInfo", handle, version)
            if isinstance(m, MemoryInfo) and m.total:
                return {
                    "total": int(m.total),
                    "reserved": int(getattr(m, "reserved", 0)),
                    "used": int(m.used),
                    "free": int(m.free),
                    "version": "v2",
                }
        m = self.call(errors, "memory", "nvmlDeviceGetMemoryInfo", handle)
        if not isinstance(m, MemoryInfo):
            return None
        return {"total": int(m.total), "reserved": None, "used": int(m.used), "free": int(m.free), "version": "v1"}

    def processes(self, errors: dict[str, str], handle: object) -> list[dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for kind, base in (("compute", "nvmlDeviceGetComputeRunningProcesses"), ("graphics", "nvmlDeviceGetGraphicsRunningProcesses")):
            items = None
            for name in (base, base + "_v2"):
                fn = getattr(self.nv, name, None)
                if fn is None:
                    continue
                try:
                    items = fn(handle)
                    break
                except Exception as e:
                    if is_mismatch(self.nv, e) or err_code(e) == nvml_code(self.nv, "FUNCTION_NOT_FOUND"):
                        continue
                    if err_code(e) == self.lost:
                        raise GpuLost() from e
                    if err_code(e) != self.not_supported:
                        errors[f"{kind}_processes"] = err_str(e)
                    break
            for p in items or []:
                pid = int(getattr(p, "pid", 0))
                if pid in out:
                    continue
                used = getattr(p, "usedGpuMemory", None)
                if used is not None and (used < 0 or used >= 2**63):
                    used = None  # NVML_VALUE_NOT_AVAILABLE
                out[pid] = {"pid": pid, "used_bytes": None if used is None else int(used), "type": kind}
        for p in out.values():
            p.update(self.describe_pid(p["pid"]))
        return sorted(out.values(), key=lambda p: -(p["used_bytes"] or 0))

    def describe_pid(self, pid: int) -> dict[str, Any]:
        """Name and command line from /proc; NVML's name when /proc does not show the process."""
        base = self.proc_root / str(pid)
        try:
            comm: str | None = (base / "comm").read_text(errors="replace").strip()
        except OSError:
            comm = None
        if comm is not None:
            try:
                words = [a for a in (base / "cmdline").read_bytes().decode("utf-8", "replace").split("\0") if a]
            except OSError:
                words = []
            # vLLM retitles its workers (VLLM::EngineCore); nvidia-smi shows that title, so do we
            title = words[0] if words and words[0].startswith(("VLLM::", "ray::")) else comm
            return {"name": title, "cmdline": " ".join(redact_argv(words))[:500], "visible": True}
        name: str | None = None
        fn = getattr(self.nv, "nvmlSystemGetProcessName", None)
        if fn is not None:
            try:
                name = as_text(fn(pid)) or None
            except Exception:  # noqa: BLE001 - NVML bindings raise NVMLError, ctypes and OS errors; the name is optional
                name = None
        return {"name": name, "cmdline": None, "visible": False}

    def nvlinks(self, handle: object) -> int | None:
        """Active NVLinks of one GPU; None when the GPU has none (NotSupported on link 0)."""
        fn = getattr(self.nv, "nvmlDeviceGetNvLinkState", None)
        if fn is None:
            return None
        active = 0
        limit = int(getattr(self.nv, "NVML_NVLINK_MAX_LINKS", 18))
        for link in range(limit):
            try:
                state = fn(handle, link)
            except Exception:  # noqa: BLE001 - NVML bindings raise NVMLError, ctypes and OS errors; no NVLink is an answer
                if link == 0:
                    return None
                break
            if state:
                active += 1
        return active

    def mig_devices(self, errors: dict[str, str], handle: object) -> list[dict[str, Any]]:
        count = as_int(self.call(errors, "mig_devices", "nvmlDeviceGetMaxMigDeviceCount", handle)) or 0
        out = []
        for i in range(count):
            scratch: dict[str, str] = {}
            mh = self.call(scratch, "mig", "nvmlDeviceGetMigDeviceHandleByIndex", handle, i)
            if mh is None:
                continue
            uuid = as_text(self.call(scratch, "uuid", "nvmlDeviceGetUUID", mh))
            mem = self.call(scratch, "memory", "nvmlDeviceGetMemoryInfo", mh)
            out.append(
                {
                    "index": i,
                    "uuid": uuid,
                    "memory": None if not isinstance(mem, MemoryInfo) else {"total": int(mem.total), "used": int(mem.used), "free": int(mem.free), "version": "v1"},
                }
            )
        return out

    def device(self, index: int) -> tuple[dict[str, Any], object | None]:
        errors: dict[str, str] = {}
        g: dict[str, Any] = {"index": index}
        try:
            handle = self.nv.nvmlDeviceGetHandleByIndex(index)
        except Exception as e:  # noqa: BLE001 - NVML bindings raise NVMLError, ctypes and OS errors; reported per GPU
            g["error"], g["error_zh"] = device_error(self.nv, e)
            return g, None
        try:
            g["name"] = as_text(self.call(errors, "name", "nvmlDeviceGetName", handle))
            g["uuid"] = as_text(self.call(errors, "uuid", "nvmlDeviceGetUUID", handle))
            pci = self.call(errors, "pci", "nvmlDeviceGetPciInfo", handle)
            g["pci_bus_id"] = as_text(getattr(pci, "busId", None)) if pci is not None else None
            cc = as_int_pair(self.call(errors, "cc", "nvmlDeviceGetCudaComputeCapability", handle))
            if cc:
                major, minor = cc
                arch, sm = arch_for_cc(major, minor)
                g.update({"cc": f"{major}.{minor}", "sm": sm, "arch": arch})
            g["memory"] = self.memory(errors, handle)
            mig = as_int_pair(self.call(errors, "mig", "nvmlDeviceGetMigMode", handle))
            g["mig"] = {"enabled": bool(mig[0]), "pending": bool(mig[1]), "devices": []} if mig else None
            if g["mig"] and g["mig"]["enabled"]:
                g["mig"]["devices"] = self.mig_devices(errors, handle)
            mode = self.call(errors, "compute_mode", "nvmlDeviceGetComputeMode", handle)
            code = as_int(mode)
            g["compute_mode"] = COMPUTE_MODES.get(code, str(mode)) if code is not None else (None if mode is None else str(mode))
            g["processes"] = self.processes(errors, handle)
            g["nvlinks_active"] = self.nvlinks(handle)
        except GpuLost:
            g["error"], g["error_zh"] = both("facts.gpu.device_lost")
            return g, None
        if errors:
            g["errors"] = errors
        return g, handle


def _topology(reader: _Reader, handles: dict[int, object], gpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    nv = reader.nv
    links = {g["index"]: g.get("nvlinks_active") for g in gpus}
    idx = sorted(handles)
    pairs = []
    for n, a in enumerate(idx):
        for b in idx[n + 1 :]:
            scratch: dict[str, str] = {}
            level = reader.call(scratch, "topology", "nvmlDeviceGetTopologyCommonAncestor", handles[a], handles[b])
            status = reader.call(
                scratch, "p2p", "nvmlDeviceGetP2PStatus", handles[a], handles[b], int(getattr(nv, "NVML_P2P_CAPS_INDEX_NVLINK", _NVLINK_P2P_INDEX))
            )
            pcie = PCIE_LEVELS.get(level) if isinstance(level, int) else None
            nvlink = None if status is None else status == int(getattr(nv, "NVML_P2P_STATUS_OK", 0))
            if nvlink is None and links.get(a) is None and links.get(b) is None:
                nvlink = False  # neither GPU has any NVLink
            if nvlink:
                counts = [c for c in (links.get(a), links.get(b)) if c]
                label = f"NV{min(counts)}" if counts else "NVLink"
            else:
                label = pcie or "unknown"
            pairs.append({"a": a, "b": b, "link": label, "nvlink": nvlink, "pcie": pcie})
    return pairs


def link_summary(pairs: Sequence[dict[str, Any]], indices: Sequence[int]) -> str | None:
    """``single``, ``nvlink`` (every pair), ``pcie`` (some pair without NVLink) or None (unknown)."""
    if len(indices) <= 1:
        return "single"
    wanted = set(indices)
    sel = [p for p in pairs if p["a"] in wanted and p["b"] in wanted]
    if len(sel) < len(wanted) * (len(wanted) - 1) // 2:
        return None
    if all(p["nvlink"] for p in sel):
        return "nvlink"
    if any(p["nvlink"] is False for p in sel):
        return "pcie"
    return None


def read_nvml(nvml: Nvml | None = None, proc_root: str | Path = "/proc") -> dict[str, Any]:
    """Everything NVML says, as JSON-able data: ``{"nvml": {...}, "gpus": [...], "topology": [...]}``."""
    started = time.perf_counter()
    nv, failure = (nvml, None) if nvml is not None else import_nvml()
    if nv is None:
        return _unavailable(failure or {"code": "no_pynvml", "en": ui("facts.gpu.nvml_unavailable", "en"), "zh": ui("facts.gpu.nvml_unavailable", "zh")})
    with _NVML_LOCK:
        try:
            nv.nvmlInit()
        except Exception as e:  # noqa: BLE001 - NVML bindings raise NVMLError, ctypes and OS errors; reported, not raised
            return _unavailable(init_failure(nv, e))
        try:
            return _read_all(nv, Path(proc_root), started)
        finally:
            with contextlib.suppress(Exception):
                nv.nvmlShutdown()


def _unavailable(failure: dict[str, str]) -> dict[str, Any]:
    return {
        "nvml": {"available": False, "reason": failure["en"], "reason_zh": failure["zh"], "code": failure["code"]},
        "gpus": [],
        "topology": [],
    }


def _read_all(nv: Nvml, proc_root: Path, started: float) -> dict[str, Any]:
    reader = _Reader(nv, proc_root)
    info: dict[str, Any] = {"available": True, "reason": None}
    sys_errors: dict[str, str] = {}
    info["driver_version"] = as_text(reader.call(sys_errors, "driver", "nvmlSystemGetDriverVersion"))
    cuda = reader.call(sys_errors, "cuda", "nvmlSystemGetCudaDriverVersion")
    info["cuda_driver_version"] = f"{cuda // 1000}.{cuda % 1000 // 10}" if isinstance(cuda, int) and cuda > 0 else None
    info["library_version"] = as_text(reader.call(sys_errors, "nvml", "nvmlSystemGetNVMLVersion"))
    try:
        count = int(nv.nvmlDeviceGetCount())
    except Exception as e:  # noqa: BLE001 - NVML bindings raise NVMLError, ctypes and OS errors; reported, not raised
        failure = init_failure(nv, e)
        out = _unavailable({**failure, **{lang: ui("facts.gpu.count_failed", lang, reason=failure[lang]) for lang in LANGS}})
        out["nvml"].update({k: v for k, v in info.items() if k not in ("available", "reason")})
        return out
    gpus: list[dict[str, Any]] = []
    handles: dict[int, object] = {}
    for i in range(count):
        g, h = reader.device(i)
        gpus.append(g)
        if h is not None:
            handles[i] = h
    versions = {(g.get("memory") or {}).get("version") for g in gpus if g.get("memory")}
    info["memory_info"] = "v2" if versions == {"v2"} else ("v1" if versions else None)
    if sys_errors:
        info["errors"] = sys_errors
    topology = _topology(reader, handles, gpus) if len(handles) > 1 else []
    info["elapsed_s"] = round(time.perf_counter() - started, 4)
    return {"nvml": info, "gpus": gpus, "topology": topology}


def default_proc_root() -> str:
    """``/proc``, or ``OOMWIZARD_PROC_ROOT`` so a whole ``oomwizard detect`` can run on a fake one."""
    return os.environ.get("OOMWIZARD_PROC_ROOT", "/proc")
