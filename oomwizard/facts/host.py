"""The host around the GPUs: RAM (and a container's memory limit), /dev/shm, CPUs, container or not.

Host RAM matters for loading weights, CPU offload and swap space, and a container limit is often
far below what ``free`` shows. Inside a container NVML lists only this container's processes, so
knowing we are in one changes how "memory used by others" must be read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_UNLIMITED = 1 << 60  # cgroup v1 writes a huge number for "no limit"
_CGROUP_MARKERS = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("containerd", "containerd"), ("lxc", "lxc"))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def meminfo(proc_root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    text = _read(proc_root / "meminfo") or ""
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return out


def cgroup_memory(sys_root: Path) -> dict[str, int | None]:
    """The memory limit and usage of this cgroup (v2, else v1); None where there is no limit."""
    base = sys_root / "sys" / "fs" / "cgroup"
    for limit_f, usage_f in (("memory.max", "memory.current"), ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        raw = _read(base / limit_f)
        if raw is None:
            continue
        raw = raw.strip()
        limit = None if raw == "max" or not raw.isdigit() or int(raw) >= _UNLIMITED else int(raw)
        usage_raw = (_read(base / usage_f) or "").strip()
        return {"limit": limit, "usage": int(usage_raw) if usage_raw.isdigit() else None}
    return {"limit": None, "usage": None}


def container(proc_root: Path, sys_root: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    evidence: list[str] = []
    runtime = None
    if (sys_root / ".dockerenv").exists():
        evidence.append("/.dockerenv exists")
        runtime = "docker"
    if (sys_root / "run" / ".containerenv").exists():
        evidence.append("/run/.containerenv exists")
        runtime = runtime or "podman"
    if environ.get("KUBERNETES_SERVICE_HOST"):
        evidence.append("KUBERNETES_SERVICE_HOST is set")
        runtime = "kubernetes"
    if environ.get("container"):
        evidence.append(f"container={environ['container']}")
        runtime = runtime or environ["container"]
    cgroup = _read(proc_root / "1" / "cgroup") or ""
    for marker, name in _CGROUP_MARKERS:
        if marker in cgroup:
            evidence.append(f"/proc/1/cgroup mentions {marker}")
            runtime = runtime or name
            break
    return {"in_container": bool(evidence), "runtime": runtime, "evidence": evidence}


def os_name(sys_root: Path) -> str | None:
    for line in (_read(sys_root / "etc" / "os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def read_host(proc_root: str | Path = "/proc", sys_root: str | Path = "/", environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    proc, root = Path(proc_root), Path(sys_root)
    env = os.environ if environ is None else environ
    mem = meminfo(proc)
    cg = cgroup_memory(root)
    shm = None
    try:
        st = os.statvfs(root / "dev" / "shm")
        shm = st.f_blocks * st.f_frsize
    except OSError:
        pass
    try:
        cpus_usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus_usable = None
    try:
        kernel = os.uname().release
    except AttributeError:  # pragma: no cover - not on Linux
        kernel = None
    return {
        "mem_total": mem.get("MemTotal"),
        "mem_available": mem.get("MemAvailable"),
        "swap_total": mem.get("SwapTotal"),
        "cgroup_mem_limit": cg["limit"],
        "cgroup_mem_usage": cg["usage"],
        "shm_total": shm,
        "cpus": os.cpu_count(),
        "cpus_usable": cpus_usable,
        "kernel": kernel,
        "os": os_name(root),
        "container": container(proc, root, env),
    }
