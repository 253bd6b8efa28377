"""Remarks detection makes about the machine, in both languages, kept in the JSON report.

A note is plain data (``{"code", "level", "en", "zh"}``) so a saved report replays with the same
words on another machine, in either language, without the code that wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..i18n import both, ui
from ..text.units import GIB, MIB

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
        out.append(note("nvml_unavailable", ui("facts.machine.nvml_unavailable", "en", reason=nv.get("reason")),
                        ui("facts.machine.nvml_unavailable", "zh", reason=nv.get("reason_zh") or nv.get("reason")), "problem"))
    for g in data["gpus"]:
        if g.get("error"):
            out.append(note("gpu_error", ui("facts.machine.gpu_error", "en", index=g["index"], error=g["error"]),
                            ui("facts.machine.gpu_error", "zh", index=g["index"], error=g.get("error_zh") or g["error"]),
                            "problem"))
    in_container = bool(((data.get("host") or {}).get("container") or {}).get("in_container"))
    for g in data["gpus"]:
        out.extend(_gpu_memory_notes(g, in_container))
    if in_container and nv.get("available"):
        out.append(
            note(
                "container_processes",
                *both("facts.machine.container_processes"),
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
    if used is not None and used - listed > 512 * MIB:
        hidden = (used - listed) / GIB
        if in_container:
            out.append(
                note(
                    "hidden_processes",
                    *both("facts.machine.hidden_processes", index=g['index'], hidden=hidden),
                    "warning",
                )
            )
        else:
            out.append(
                note(
                    "unlisted_memory",
                    *both("facts.machine.unlisted_memory", index=g['index'], hidden=hidden),
                    "warning",
                )
            )
    for p in procs:
        if (p.get("owner") or {}).get("leftover") and p.get("used_bytes"):
            out.append(
                note(
                    "leftover_holds_memory",
                    *both("facts.machine.leftover_holds_memory", index=g['index'], pid=p['pid'], name=p.get('name'),
                          role=p['owner']['role'], value=p['used_bytes'] / GIB),
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
                *both("facts.machine.several_servers", len=len(servers), pid=servers[0]['pid']),
                "warning",
            )
        )
    for s in servers:
        if s.get("env_error"):
            out.append(
                note(
                    "server_env_unreadable",
                    ui("facts.machine.server_env_unreadable", "en", pid=s["pid"], env_error=s["env_error"]),
                    ui("facts.machine.server_env_unreadable", "zh", pid=s["pid"],
                       env_error=s.get("env_error_zh") or s["env_error"]),
                    "warning",
                )
            )
    return out


def _package_notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """Interpreters that failed, no vLLM anywhere, packages installed more than once."""
    out: list[dict[str, str]] = []
    for i in data["interpreters"]:
        if i.get("error"):
            out.append(note("interpreter_failed", *both("facts.machine.interpreter_failed", path=i['path'], error=i['error']), "problem"))
    pk = data["packages"]
    if not (pk.get("versions") or {}).get("vllm"):
        out.append(
            note(
                "no_vllm",
                *both("facts.machine.no_vllm"),
                "warning",
            )
        )
    for key, also in (pk.get("shadowed") or {}).items():
        out.append(
            note(
                "shadowed_package",
                *both("facts.machine.shadowed_package", key=key, get=pk['versions'].get(key), join=', '.join(also)),
                "warning",
            )
        )
    return out
