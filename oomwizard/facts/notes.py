"""Remarks detection makes about the machine, in both languages, kept in the JSON report.

A note is plain data (``{"code", "level", "en", "zh"}``) so a saved report replays with the same
words on another machine, in either language, without the code that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..text.units import GIB

LEVELS = ("info", "warning", "problem")


def note(code: str, en: str, zh: str, level: str = "info") -> dict[str, str]:
    """``level``: ``info`` (context), ``warning`` (likely matters for an OOM), ``problem`` (detection failed)."""
    if level not in LEVELS:
        raise ValueError(f"unknown note level {level!r}")
    return {"code": code, "level": level, "en": en, "zh": zh}


def note_text(n: Mapping[str, Any], lang: str) -> str:
    return str(n.get("zh" if lang == "zh" else "en") or n.get("en") or "")


def machine_notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """The remarks on a fresh report: what detection could not read, and what holds GPU memory."""
    out: list[dict[str, str]] = []
    nv = data["nvml"]
    if not nv.get("available"):
        out.append(note("nvml_unavailable", f"No GPU information: {nv.get('reason')}", f"无法读取 GPU 信息：{nv.get('reason_zh') or nv.get('reason')}", "problem"))
    for g in data["gpus"]:
        if g.get("error"):
            out.append(note("gpu_error", f"GPU {g['index']}: {g['error']}", f"GPU {g['index']}：{g['error']}", "problem"))
    in_container = bool(((data.get("host") or {}).get("container") or {}).get("in_container"))
    for g in data["gpus"]:
        out.extend(_gpu_memory_notes(g, in_container))
    if in_container and nv.get("available"):
        out.append(
            note(
                "container_processes",
                "Running in a container: the GPU process list shows only this container's processes",
                "运行在容器中：GPU 进程列表只显示本容器内的进程",
            )
        )
    out.extend(_server_notes(data))
    out.extend(_package_notes(data))
    return out


def _gpu_memory_notes(g: Mapping[str, Any], in_container: bool) -> list[dict[str, str]]:
    """Memory on one GPU that no listed process accounts for, and vLLM leftovers that hold some."""
    out: list[dict[str, str]] = []
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
    return out


def _server_notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """Several servers (facts come from the first), and servers whose environment was unreadable."""
    out: list[dict[str, str]] = []
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
        if s.get("env_error"):
            out.append(
                note(
                    "server_env_unreadable",
                    f"Environment of vLLM process {s['pid']}: {s['env_error']}",
                    f"vLLM 进程 {s['pid']} 的环境变量：{s['env_error']}（请以该用户或 root 运行 oomwizard）",
                    "warning",
                )
            )
    return out


def _package_notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """Interpreters that failed, no vLLM anywhere, packages installed more than once."""
    out: list[dict[str, str]] = []
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
