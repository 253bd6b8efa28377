"""The whole machine report (``oomwizard detect``): gather, then derive facts from the data alone.

Detection writes plain JSON-able data; :func:`facts_from_data` turns that data into facts and
nothing else. ``MachineReport.from_json`` runs the same function on a saved report, so a machine
replayed on a laptop (``--machine``) yields exactly the facts it yielded on the GPU box.

Detection is thread-safe (the TUI runs it in a worker): it keeps no module state, and NVML is
serialised by a lock in :mod:`.gpu`. Other interpreters' packages are read from their files
(:mod:`.envfiles`); only the one named with ``--python`` is started, in a subprocess started
first so its start-up overlaps the NVML and /proc reads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..envelope import envelope
from ..text.units import GIB
from .catalog import FactValueError, coerce
from .env import collect_env, decide_alloc_conf
from .envfiles import read_env
from .gpu import default_proc_root, link_summary, map_visible, read_nvml
from .host import read_host
from .kv_connector import unguarded
from .model import Fact, FactSet
from .notes import note
from .packages import (
    PROBE_TIMEOUT_S,
    Interpreter,
    choose,
    finish_probe,
    interpreter_for,
    probe_current,
    same_env,
    start_probe,
    summarize,
    vllm_on_path,
    wanted_names,
)
from .processes import find_servers
from .trust import unsafe_reason

KIND = "detect"
"""The envelope kind of a machine report (``oomwizard/detect/v1``); older saves carry ``schema: 1``."""


@dataclass
class MachineReport:
    data: dict[str, Any]
    """The JSON report (no ``facts`` key: facts are always derived from it)."""
    facts: FactSet
    """Facts derived from ``data``: kind ``machine``; a running server's facts kind ``process``."""

    def to_json(self) -> dict[str, Any]:
        """The report as ``detect --format json`` prints and ``--machine`` reads it back."""
        out = dict(self.data)
        out["facts"] = self.facts.to_json()
        return envelope(KIND, out)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MachineReport:
        """Replay a saved report: the facts are rebuilt from the data by the same pure code."""
        if not isinstance(data, Mapping):
            raise ValueError("not a saved `oomwizard detect --format json` report")
        clean = {k: v for k, v in data.items() if k not in ("facts", "schema", "tool")}
        facts, broken = derive(clean)
        if broken:
            clean["notes"] = [
                *(n for n in clean.get("notes") or [] if isinstance(n, dict)),
                note(
                    "report_malformed",
                    f"Parts of this saved report could not be read and were ignored: {', '.join(broken)}",
                    f"此保存的报告中有部分无法读取，已忽略：{', '.join(broken)}",
                    "problem",
                ),
            ]
        return cls(clean, facts)


# --- detection -----------------------------------------------------------------------------------


def detect_machine(
    python: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    proc_root: str | Path | None = None,
    sys_root: str | Path = "/",
    nvml: Any = None,
    probe_timeout: float = PROBE_TIMEOUT_S,
) -> MachineReport:
    """Read this machine. ``python`` is the interpreter that runs vLLM when it is not this one.
    The keyword arguments exist for tests (a fake /proc, a fake NVML, a given environment)."""
    t0 = time.perf_counter()
    env = dict(os.environ if environ is None else environ)
    proc = Path(proc_root or default_proc_root())
    timings: dict[str, float] = {}
    notes: list[dict[str, str]] = []

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = round((now - since) * 1000, 2)
        return now

    t = time.perf_counter()
    procs = find_servers(proc, env.get("PATH"))
    t = lap("processes", t)

    interps, extra = _candidates(python, procs["servers"], env, notes)
    # Only the interpreter the operator named is ever started; the others are read from files.
    started = {
        i.path: start_probe(i.path, extra[i.path][0])
        for i in interps
        if i.error is None and "--python" in i.roles and not same_env(i.path, sys.executable)
    }
    t = lap("interpreters_started", t)

    nv = read_nvml(nvml, proc)
    t = lap("nvml", t)
    host = read_host(proc, sys_root, env)
    t = lap("host", t)

    for i in interps:
        if i.error is None and same_env(i.path, sys.executable):
            i.data = probe_current()
        elif i.error is None and i.path not in started:
            paths, home = extra[i.path]
            i.data, i.error = read_env(i.path, wanted_names(), paths, home)
    t = lap("packages_here", t)
    for i in interps:
        if i.path in started:
            i.data, i.error = finish_probe(started[i.path], i.path, probe_timeout)
    lap("packages_other", t)

    chosen = choose(interps)
    data: dict[str, Any] = {
        "detected_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "nvml": nv["nvml"],
        "gpus": nv["gpus"],
        "topology": nv["topology"],
        "visible": None,
        "packages": _packages_section(chosen, interps),
        "interpreters": [i.to_json() for i in interps],
        "env": collect_env(env),
        "allocator": None,
        "processes": procs,
        "host": host,
        "notes": notes,
    }
    if nv["nvml"].get("available"):
        data["visible"] = _visible(nv["gpus"], procs["servers"], env)
    _attribute_gpu_processes(data)
    data["allocator"] = _allocator(data, data["env"]).to_json()
    for s in procs["servers"]:
        if s.get("env") is not None:
            s["allocator"] = _allocator(data, s["env"]).to_json()
    notes.extend(_notes(data))
    timings["total"] = round((time.perf_counter() - t0) * 1000, 2)
    data["timings_ms"] = timings
    return MachineReport(data, facts_from_data(data))


def _candidates(
    python: str | None, servers: list[dict[str, Any]], env: Mapping[str, str], notes: list[dict[str, str]]
) -> tuple[list[Interpreter], dict[str, tuple[tuple[str, ...], str | None]]]:
    """Interpreters worth reading, most relevant first: ``--python``, running servers', the
    ``vllm`` command on PATH, then this one. ``extra`` maps each to its PYTHONPATH entries and the
    home folder of its user (for the user site-packages)."""
    out: list[Interpreter] = []
    extra: dict[str, tuple[tuple[str, ...], str | None]] = {}

    def add(path: str, role: str, extra_paths: Iterable[str] = (), home: str | None = None) -> None:
        for i in out:
            if i.error is None and same_env(i.path, path):
                i.roles.append(role)
                return
        out.append(Interpreter(path, [role]))
        extra[path] = (tuple(p for p in extra_paths if p), home)

    if python:
        path, err = interpreter_for(python)
        problem = unsafe_reason(path) if path and not err else None
        if err or path is None:
            out.append(Interpreter(python, ["--python"], error=err))
            notes.append(note("python_missing", f"--python: {err}", f"--python：{err}", "problem"))
        elif problem:
            out.append(Interpreter(path, ["--python"], error=f"not started: {problem}"))
            notes.append(note("python_refused", f"--python: not started: {problem}", f"--python：未启动：{problem}", "problem"))
        else:
            add(path, "--python", (env.get("PYTHONPATH") or "").split(os.pathsep))
    for s in servers:
        ip = (s.get("interpreter") or {}).get("path")
        if ip:
            senv = s.get("env") or {}
            add(ip, f"runs vLLM (process {s['pid']})", (senv.get("PYTHONPATH") or "").split(os.pathsep), senv.get("HOME"))
    found = vllm_on_path(env.get("PATH"))
    if found:
        add(found[1], f"runs `vllm` on PATH ({found[0]})", (env.get("PYTHONPATH") or "").split(os.pathsep), env.get("HOME"))
    add(sys.executable, "runs oomwizard")
    return out, extra


def _packages_section(chosen: Interpreter | None, interps: list[Interpreter]) -> dict[str, Any]:
    if chosen is None or chosen.data is None:
        errors = "; ".join(f"{i.path}: {i.error}" for i in interps if i.error)
        return {"python": None, "roles": [], "versions": {}, "error": errors or "no interpreter answered"}
    out: dict[str, Any] = {"python": chosen.path, "roles": list(chosen.roles)}
    out.update(summarize(chosen.data))
    return out


def _visible(gpus: list[dict[str, Any]], servers: list[dict[str, Any]], env: Mapping[str, str]) -> dict[str, Any]:
    server = servers[0] if servers else None
    if server is not None and server.get("env") is not None:
        senv = server["env"]
        return map_visible(senv.get("CUDA_VISIBLE_DEVICES"), gpus, senv.get("CUDA_DEVICE_ORDER"), f"process {server['pid']} environment")
    return map_visible(env.get("CUDA_VISIBLE_DEVICES"), gpus, env.get("CUDA_DEVICE_ORDER"), "this shell's environment")


def _attribute_gpu_processes(data: dict[str, Any]) -> None:
    """Mark which GPU memory holders belong to a running server or are vLLM leftovers."""
    owner: dict[int, dict[str, Any]] = {}
    for s in data["processes"]["servers"]:
        owner[s["pid"]] = {"server": s["pid"], "role": "server"}
        for c in s.get("children", []):
            owner[c["pid"]] = {"server": s["pid"], "role": c["role"]}
    for lo in data["processes"]["leftovers"]:
        owner[lo["pid"]] = {"leftover": True, "role": lo["role"]}
    for g in data["gpus"]:
        for p in g.get("processes") or []:
            if p["pid"] in owner:
                p["owner"] = owner[p["pid"]]


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


def _allocator(data: Mapping[str, Any], env: Mapping[str, str]) -> Any:
    versions = (data.get("packages") or {}).get("versions") or {}
    return decide_alloc_conf(env, versions.get("torch"), platform_of(data) or "cuda", versions.get("vllm"))


def _notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    nv = data["nvml"]
    if not nv.get("available"):
        out.append(note("nvml_unavailable", f"No GPU information: {nv.get('reason')}", f"无法读取 GPU 信息：{nv.get('reason_zh') or nv.get('reason')}", "problem"))
    for g in data["gpus"]:
        if g.get("error"):
            out.append(note("gpu_error", f"GPU {g['index']}: {g['error']}", f"GPU {g['index']}：{g['error']}", "problem"))
    in_container = bool(((data.get("host") or {}).get("container") or {}).get("in_container"))
    for g in data["gpus"]:
        mem = g.get("memory") or {}
        procs = g.get("processes") or []
        listed = sum(p.get("used_bytes") or 0 for p in procs)
        used = mem.get("used") if mem.get("version") == "v2" else None
        if used is not None and used - listed > 512 * 1024**2:
            hidden = (used - listed) / GIB
            if in_container:
                out.append(
                    note(
                        "hidden_processes",
                        f"GPU {g['index']}: {hidden:.1f} GiB is in use by processes NVML does not list here; inside a container only this container's processes are visible, so another container (or the host) holds it",
                        f"GPU {g['index']}：有 {hidden:.1f} GiB 被 NVML 在此处未列出的进程占用；容器内只能看到本容器的进程，因此是其他容器（或宿主机）占用",
                        "warning",
                    )
                )
            else:
                out.append(
                    note(
                        "unlisted_memory",
                        f"GPU {g['index']}: {hidden:.1f} GiB is in use but not by any process NVML lists (another PID namespace, or memory not yet released)",
                        f"GPU {g['index']}：有 {hidden:.1f} GiB 已被占用，但不属于 NVML 列出的任何进程（其他 PID 命名空间，或尚未释放的显存）",
                        "warning",
                    )
                )
        for p in procs:
            if (p.get("owner") or {}).get("leftover") and p.get("used_bytes"):
                out.append(
                    note(
                        "leftover_holds_memory",
                        f"GPU {g['index']}: process {p['pid']} ({p.get('name')}, a vLLM {p['owner']['role']} without a server) still holds {p['used_bytes'] / GIB:.1f} GiB; stop it before restarting vLLM",
                        f"GPU {g['index']}：进程 {p['pid']}（{p.get('name')}，没有对应服务的 vLLM {p['owner']['role']}）仍占用 {p['used_bytes'] / GIB:.1f} GiB；重启 vLLM 前请先结束它",
                        "warning",
                    )
                )
    if in_container and nv.get("available"):
        out.append(
            note(
                "container_processes",
                "Running in a container: the GPU process list shows only this container's processes",
                "运行在容器中：GPU 进程列表只显示本容器内的进程",
            )
        )
    servers = data["processes"]["servers"]
    if len(servers) > 1:
        out.append(
            note(
                "several_servers",
                f"{len(servers)} vLLM servers are running; facts come from the first (process {servers[0]['pid']})",
                f"有 {len(servers)} 个 vLLM 服务在运行；事实取自第一个（进程 {servers[0]['pid']}）",
                "warning",
            )
        )
    for s in servers:
        if s.get("env") is not None:
            kv = unguarded(s.get("settings") or {}, s["env"], _allocator(data, s["env"]).expandable_segments)
            if kv is not None:
                out.append(kv)
        if s.get("env_error"):
            out.append(
                note(
                    "server_env_unreadable",
                    f"Environment of vLLM process {s['pid']}: {s['env_error']}",
                    f"vLLM 进程 {s['pid']} 的环境变量：{s['env_error']}（请以该用户或 root 运行 oomwizard）",
                    "warning",
                )
            )
    for i in data["interpreters"]:
        if i.get("error"):
            out.append(note("interpreter_failed", f"Python {i['path']}: {i['error']}", f"Python {i['path']}：{i['error']}", "problem"))
    pk = data["packages"]
    if not (pk.get("versions") or {}).get("vllm"):
        out.append(
            note(
                "no_vllm",
                "vLLM was not found in any Python environment looked at; point to the one that runs vLLM with --python /path/to/venv/bin/python",
                "在检查过的 Python 环境中都没有找到 vLLM；请用 --python /path/to/venv/bin/python 指定运行 vLLM 的环境",
                "warning",
            )
        )
    for key, also in (pk.get("shadowed") or {}).items():
        out.append(
            note(
                "shadowed_package",
                f"{key} is installed more than once; {pk['versions'].get(key)} is the one imported, also present: {', '.join(also)}",
                f"{key} 安装了多份；实际导入的是 {pk['versions'].get(key)}，另外还有：{', '.join(also)}",
                "warning",
            )
        )
    return out


# --- facts from data (pure) ----------------------------------------------------------------------


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
    decision = _allocator(data, env)
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
