"""Facts from a machine report's data, and nothing else: the same code for a live ``detect`` and a save.

:class:`.machine.MachineReport` derives its facts here both when detection has just run and when a
saved report is replayed (``--machine``), so a report read on a laptop yields exactly the facts it
yielded on the GPU box. A part of a hand-edited report too malformed to read is named, not fatal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from .catalog import FactValueError, coerce
from .env import AllocDecision, decide_alloc_conf
from .gpu import link_summary
from .model import Fact, FactSet


def platform_of(data: Mapping[str, Any]) -> str | None:
    pk = data.get("packages") or {}
    torch_v = str((pk.get("versions") or {}).get("torch") or "")
    if pk.get("torch_hip"):
        return "rocm"
    if "+xpu" in torch_v:
        return "xpu"
    if pk.get("torch_cuda"):
        return "cuda"
    if (data.get("nvml") or {}).get("available") and data.get("gpus"):
        return "cuda"
    if torch_v.endswith("+cpu"):
        return "cpu"
    return None


def allocator_for(data: Mapping[str, Any], env: Mapping[str, str]) -> AllocDecision:
    """How torch reads its allocator settings from ``env``, for the torch, platform and vLLM of the report."""
    versions = (data.get("packages") or {}).get("versions") or {}
    return decide_alloc_conf(env, versions.get("torch"), platform_of(data) or "cuda", versions.get("vllm"))


def _add(out: list[Fact], name: str, value: Any, source: str, kind: str = "machine") -> None:
    if value is None:
        return
    with contextlib.suppress(FactValueError):
        out.append(Fact(name, coerce(name, value), source, kind=kind))


def _selected_gpus(data: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The GPUs (or MIG slices) vLLM would use, as records with ``memory``, and how we know."""
    gpus = [g for g in data.get("gpus") or [] if not g.get("error")]
    vis = data.get("visible")
    if not vis:
        return gpus, "all GPUs"
    by_index = {g["index"]: g for g in gpus}
    if vis.get("mig"):
        migs = []
        wanted = {str(m).lower() for m in vis["mig"]}
        for g in gpus:
            for m in (g.get("mig") or {}).get("devices") or []:
                if str(m.get("uuid", "")).lower() in wanted:
                    migs.append({**g, "memory": m.get("memory"), "mig_uuid": m.get("uuid")})
        return migs, f"MIG slices named by CUDA_VISIBLE_DEVICES={vis.get('value')} in {vis.get('source')}"
    sel = [by_index[i] for i in vis.get("indices") or [] if i in by_index]
    how = "CUDA_VISIBLE_DEVICES unset" if vis.get("value") is None else f"CUDA_VISIBLE_DEVICES={vis.get('value')}"
    return sel, f"{how} in {vis.get('source')}"


def _gpu_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    nv = data.get("nvml") or {}
    if not nv.get("available"):
        return
    _add(out, "driver_version", nv.get("driver_version"), "NVML (nvidia-ml-py): driver")
    _add(out, "cuda_driver_version", nv.get("cuda_driver_version"), "NVML (nvidia-ml-py): CUDA version of the driver")
    sel, how = _selected_gpus(data)
    vis = data.get("visible") or {}
    if not sel:
        if vis.get("value") is not None:
            _add(out, "gpu_count", 0, f"NVML and {how}: no GPU left for vLLM")
        return
    ids = ", ".join(str(g["index"]) for g in sel)
    _add(out, "gpu_count", len(sel), f"NVML: {'GPUs' if len(sel) > 1 else 'GPU'} {ids} ({how})")
    names = list(dict.fromkeys(str(g["name"]) for g in sel if g.get("name")))
    if names:
        _add(out, "gpu_name", " + ".join(names), f"nvidia-ml-py: GPU {sel[0]['index']}" if len(names) == 1 else f"nvidia-ml-py: GPUs {ids}")
    first = sel[0]
    if first.get("cc"):
        src = f"nvidia-ml-py: GPU {first['index']} compute capability"
        _add(out, "gpu_cc", first["cc"], src)
        _add(out, "gpu_sm", first.get("sm"), src)
        _add(out, "gpu_arch", first.get("arch"), src)
    mems: list[tuple[dict[str, Any], dict[str, Any]]] = [(g, g["memory"]) for g in sel if g.get("memory")]
    if mems:
        g_tot, m_tot = min(mems, key=lambda x: x[1]["total"])
        g_free, m_free = min(mems, key=lambda x: x[1]["free"])
        ver = "v2" if all(m.get("version") == "v2" for _, m in mems) else "v1"
        label = "MIG slice of GPU" if "mig_uuid" in g_tot else "GPU"
        _add(out, "gpu_mem_total_bytes", m_tot["total"], f"nvidia-ml-py: {label} {g_tot['index']} memory ({ver}{', smallest' if len(mems) > 1 else ''})")
        _add(out, "gpu_mem_free_bytes", m_free["free"], f"nvidia-ml-py: {label} {g_free['index']} memory ({ver}{', least free' if len(mems) > 1 else ''})")
        others = []
        for g, m in mems:
            server_held = sum(p.get("used_bytes") or 0 for p in g.get("processes") or [] if "server" in (p.get("owner") or {}))
            others.append((g, max(0, m["used"] - server_held), server_held))
        g_o, used_o, held = max(others, key=lambda x: x[1])
        src = f"nvidia-ml-py: GPU {g_o['index']} memory used ({ver}"
        src += ", includes the driver's reservation" if ver == "v1" else ""
        src += ", not counting the running vLLM server" if held else ""
        _add(out, "gpu_mem_used_by_others_bytes", used_o, src + ")")
        _add(out, "gpu_mixed_sizes", len({m["total"] for _, m in mems}) > 1, f"nvidia-ml-py: memory of GPUs {ids}")
    link = link_summary(data.get("topology") or [], [g["index"] for g in sel])
    if "mig_uuid" in first:
        link = "single" if len(sel) == 1 else None
    _add(out, "gpu_link", link, "NVML topology (NVLink P2P status, PCIe common ancestor)")
    migs: list[dict[str, Any]] = [g["mig"] for g in sel if g.get("mig") is not None]
    if migs:
        _add(out, "mig_enabled", any(m.get("enabled") for m in migs), f"nvidia-ml-py: MIG mode of GPUs {ids}")


def _package_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    pk = data.get("packages") or {}
    python = pk.get("python")
    if not python:
        return
    versions = pk.get("versions") or {}
    src = f"pip metadata in {python}"
    files = pk.get("files") or {}
    for fact, key in (
        ("vllm_version", "vllm"),
        ("torch_version", "torch"),
        ("triton_version", "triton"),
        ("flashinfer_version", "flashinfer"),
        ("deep_gemm_version", "deep_gemm"),
        ("transformers_version", "transformers"),
        ("nccl_version", "nccl"),
    ):
        dist = (pk.get("distributions") or {}).get(key, key)
        _add(out, fact, versions.get(key), f"{files[key]} (environment of {python})" if files.get(key) else f"{src} ({dist})")
    tv_file = pk.get("torch_version_file")
    _add(out, "torch_cuda", pk.get("torch_cuda"), f"{tv_file} (environment of {python})" if tv_file else f"torch/version.py of {python}")
    _add(out, "python_version", pk.get("python_version"), pk.get("python_version_source") or f"{python} itself")
    platform = platform_of(data)
    if platform:
        basis = "torch build" if pk.get("torch_cuda") or pk.get("torch_hip") or versions.get("torch") else "NVML"
        _add(out, "platform", platform, f"{basis} ({python})" if basis != "NVML" else "NVML found NVIDIA GPUs")


def _host_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    host = data.get("host") or {}
    ctr = host.get("container") or {}
    if ctr:
        ev = "; ".join(ctr.get("evidence") or []) or "no container markers"
        _add(out, "in_container", bool(ctr.get("in_container")), f"host: {ev}")
    total, limit = host.get("mem_total"), host.get("cgroup_mem_limit")
    if total:
        if limit and limit < total:
            _add(out, "host_mem_total_bytes", limit, "cgroup memory limit (below the host's MemTotal)")
        else:
            _add(out, "host_mem_total_bytes", total, "/proc/meminfo MemTotal")
    avail = host.get("mem_available")
    if avail:
        usage = host.get("cgroup_mem_usage")
        if limit and usage is not None and limit - usage < avail:
            _add(out, "host_mem_available_bytes", max(0, limit - usage), "cgroup memory limit minus usage")
        else:
            _add(out, "host_mem_available_bytes", avail, "/proc/meminfo MemAvailable")


def _env_facts(env: Mapping[str, str], data: Mapping[str, Any], where: str, kind: str, out: list[Fact]) -> None:
    """Allocator and ``VLLM_USE_*`` facts from one environment (this shell's or a server's)."""
    decision = allocator_for(data, env)
    tv = ((data.get("packages") or {}).get("versions") or {}).get("torch")
    torch_src = f"torch {tv}" if tv else "torch version unknown"
    if decision.var and decision.certain:
        src = f"{where} {decision.var} (what {torch_src} uses)"
        _add(out, "alloc_conf", decision.value, src, kind)
        _add(out, "alloc_conf_var", decision.var, src, kind)
        _add(out, "expandable_segments", decision.expandable_segments, src, kind)
        _add(out, "max_split_size_mb", decision.fields.get("max_split_size_mb") if isinstance(decision.fields.get("max_split_size_mb"), int) else None, src, kind)
        if decision.reset_after_load:
            _add(out, "alloc_reset_after_load", ",".join(decision.reset_after_load), src, kind)
    elif decision.var is None:
        why = f"{where}: no allocator variable set (torch default)"
        if decision.shadowed_by_blank:
            why = f"{where}: an empty allocator variable hides {decision.shadowed_by_blank} (what {torch_src} uses)"
            _add(out, "alloc_conf_shadowed", decision.shadowed_by_blank, why, kind)
        _add(out, "expandable_segments", False, why, kind)
    for fact, var in (("env_vllm_use_v1", "VLLM_USE_V1"), ("env_vllm_use_v2_model_runner", "VLLM_USE_V2_MODEL_RUNNER"), ("env_vllm_use_deep_gemm", "VLLM_USE_DEEP_GEMM")):
        if var in env:
            _add(out, fact, env[var], f"{where} {var}", kind)


def _server_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    servers = (data.get("processes") or {}).get("servers") or []
    if not servers:
        return
    s = servers[0]
    src = f"process {s['pid']} command line"
    _add(out, "serve_command", s.get("command"), src, "process")
    from_config = set(s.get("settings_from_config") or ())
    cfg_path = (s.get("config_file") or {}).get("path")
    for name, value in (s.get("settings") or {}).items():
        where = f"process {s['pid']} --config {cfg_path}" if name in from_config else src
        _add(out, name, value, where, "process")
    if s.get("env") is not None:
        _env_facts(s["env"], data, f"process {s['pid']} environment:", "process", out)


def _leftover_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    """vLLM workers that outlived their server keep their GPU memory: a classic cause of a restart OOM."""
    procs = data.get("processes")
    if not isinstance(procs, Mapping) or "leftovers" not in procs:
        return
    left = procs.get("leftovers") or []
    pids = ", ".join(str(lo["pid"]) for lo in left[:8])
    _add(out, "vllm_leftover_processes", len(left), f"/proc: vLLM processes without a running server{' (' + pids + ')' if pids else ''}")
    if (data.get("nvml") or {}).get("available"):
        held = sum(p.get("used_bytes") or 0 for g in data.get("gpus") or [] for p in g.get("processes") or [] if (p.get("owner") or {}).get("leftover"))
        _add(out, "vllm_leftover_gpu_bytes", held, "nvidia-ml-py: GPU memory of those processes")


def _shell_env_facts(data: Mapping[str, Any], out: list[Fact]) -> None:
    servers = (data.get("processes") or {}).get("servers") or []
    if not (servers and servers[0].get("env") is not None):
        # A running server's own environment is what its torch uses; this shell's would only
        # mix in settings the server never saw.
        _env_facts(data.get("env") or {}, data, "env", "machine", out)


_PARTS = (("gpus", _gpu_facts), ("packages", _package_facts), ("host", _host_facts), ("env", _shell_env_facts), ("processes", _server_facts), ("leftovers", _leftover_facts))


def derive(data: Mapping[str, Any]) -> tuple[FactSet, list[str]]:
    """Facts from the report, and the parts of it too malformed to read (a hand-edited file)."""
    out: list[Fact] = []
    broken: list[str] = []
    for name, part in _PARTS:
        try:
            part(data, out)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            broken.append(name)
    return FactSet.of(out), broken


def facts_from_data(data: Mapping[str, Any]) -> FactSet:
    """Every fact the report supports. Pure: the same data always gives the same facts."""
    return derive(data)[0]
