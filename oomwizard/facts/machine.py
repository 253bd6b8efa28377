"""The whole machine report (``oomwizard detect``): gather, then derive facts from the data alone.

Detection writes plain JSON-able data; :func:`.derive.facts_from_data` turns that data into facts
and nothing else, and :func:`.notes.machine_notes` the remarks shown with it. ``MachineReport.from_json`` runs the same function on a saved report, so a machine
replayed on a laptop (``--machine``) yields exactly the facts it yielded on the GPU box.

Detection is thread-safe (the TUI runs it in a worker): it keeps no module state, and NVML is
serialised by a lock in :mod:`.gpu`. Other interpreters' packages are read from their files
(:mod:`.envfiles`); only the one named with ``--python`` is started, in a subprocess started
first so its start-up overlaps the NVML and /proc reads.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..envelope import envelope
from ..i18n import both
from .derive import allocator_for, derive, facts_from_data
from .env import collect_env
from .envfiles import read_env
from .gpu import default_proc_root, read_nvml
from .host import read_host
from .kv_connector import unguarded
from .model import FactSet
from .notes import machine_notes, note
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
from .visible import map_visible

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
                    *both("facts.machine.report_malformed", join=', '.join(broken)),
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
    data["allocator"] = allocator_for(data, data["env"]).to_json()
    for s in procs["servers"]:
        if s.get("env") is not None:
            s["allocator"] = allocator_for(data, s["env"]).to_json()
    notes.extend(machine_notes(data))
    notes.extend(_kv_connector_notes(data))
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
            out.append(Interpreter(python, ["--python"], error=err.en if err else None))
            notes.append(note("python_missing", *both("facts.machine.python_missing", err=err), "problem"))
        elif problem:
            out.append(Interpreter(path, ["--python"], error=f"not started: {problem.en}"))
            notes.append(note("python_refused", *both("facts.machine.python_refused", problem=problem), "problem"))
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


def _kv_connector_notes(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """A running server with a KV connector whose expandable segments vLLM's own check cannot see."""
    out = []
    for s in data["processes"]["servers"]:
        if s.get("env") is not None:
            kv = unguarded(s.get("settings") or {}, s["env"], allocator_for(data, s["env"]).expandable_segments)
            if kv is not None:
                out.append(kv)
    return out
