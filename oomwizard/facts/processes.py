"""Running vLLM servers, read from /proc: their command line as engine arguments, their environment,
their interpreter, and the worker processes they started.

The command line of a running server is the best evidence of how vLLM was started: fixes rewrite
*that* command. Workers (EngineCore, TP workers, forked API servers) are grouped under their server;
vLLM processes left without a server (they keep their GPU memory after a crash) are reported apart.
The /proc root is a parameter so tests can build a fake one.

What a server's parsed arguments mean as settings, and its ``--config`` file, are read by
:mod:`.engine_settings`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..i18n import Text, msg
from ..text.redact import redact_argv, secret_value_spans
from .engine_settings import engine_settings, parse_engine_args, read_config_file
from .env import collect_env
from .packages import read_shebang
from .vllm_args import SHORT_FLAGS, SWITCHES, canonical_key, human_int

__all__ = ["SHORT_FLAGS", "SWITCHES", "canonical_key", "engine_settings", "human_int", "parse_engine_args"]

SERVER_MODULES = {
    "vllm.entrypoints.openai.api_server": "python -m vllm.entrypoints.openai.api_server",
    "vllm.entrypoints.api_server": "python -m vllm.entrypoints.api_server",
    "vllm.entrypoints.cli.main": "python -m vllm.entrypoints.cli.main",
}
_PY_RE = re.compile(r"^(python|pypy)[0-9.]*[a-z]?$")


def is_python(arg0: str) -> bool:
    return bool(_PY_RE.match(os.path.basename(arg0)))


# --- reading /proc -------------------------------------------------------------------------------


@dataclass
class Proc:
    pid: int
    argv: list[str]


def _read_bytes(path: Path) -> bytes:
    """One place that touches /proc files, so tests can make it fail like a foreign process does."""
    return path.read_bytes()


def list_processes(proc_root: Path) -> list[Proc]:
    out: list[Proc] = []
    try:
        names = os.listdir(proc_root)
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            raw = _read_bytes(proc_root / name / "cmdline")
        except OSError:
            continue
        argv = [a for a in raw.decode("utf-8", "replace").split("\0")]
        while argv and argv[-1] == "":
            argv.pop()
        if argv:
            out.append(Proc(int(name), argv))
    return sorted(out, key=lambda p: p.pid)


def read_ppid(proc_root: Path, pid: int) -> int | None:
    try:
        stat = _read_bytes(proc_root / str(pid) / "stat").decode("utf-8", "replace")
    except OSError:
        return None
    # "pid (comm) state ppid ..." and comm may itself hold spaces and parentheses.
    rest = stat.rsplit(")", 1)[-1].split()
    try:
        return int(rest[1])
    except (IndexError, ValueError):
        return None


def read_environ(proc_root: Path, pid: int) -> tuple[dict[str, str] | None, Text | None]:
    """The whole environment of a process, or the reason it cannot be read."""
    try:
        raw = _read_bytes(proc_root / str(pid) / "environ")
    except PermissionError:
        return None, msg("facts.process.env_other_user")
    except FileNotFoundError:
        return None, msg("facts.process.exited")
    except OSError as e:
        return None, msg("facts.process.env_unreadable").format(why=e.strerror or e)
    env: dict[str, str] = {}
    for item in raw.decode("utf-8", "replace").split("\0"):
        k, eq, v = item.partition("=")
        if eq and k:
            env[k] = v
    return env, None


# --- recognising vLLM ----------------------------------------------------------------------------


def server_entrypoint(argv: Sequence[str]) -> tuple[str, int] | None:
    """``(how it was started, index where its own arguments begin)`` for a vLLM API server."""
    if not argv:
        return None
    start = 1 if is_python(argv[0]) else 0
    # python [options] -m vllm.entrypoints... / python [options] .../api_server.py
    if start:
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":
            i += 2 if argv[i] in ("-X", "-W") else 1
        if i + 1 < len(argv) and argv[i] == "-m":
            mod = argv[i + 1]
            if mod == "vllm.entrypoints.cli.main":
                if i + 2 < len(argv) and argv[i + 2] == "serve":
                    return SERVER_MODULES[mod], i + 3
                return None
            if mod in SERVER_MODULES:
                return SERVER_MODULES[mod], i + 2
            return None
        if i < len(argv) and argv[i].replace("\\", "/").endswith("vllm/entrypoints/openai/api_server.py"):
            return "python vllm/entrypoints/openai/api_server.py", i + 1
        start = i
    if start + 1 < len(argv) and os.path.basename(argv[start]) in ("vllm", "vllm.exe") and argv[start + 1] == "serve":
        return "vllm serve", start + 2
    return None


def child_role(argv: Sequence[str], server_argv: Sequence[str] | None = None) -> str:
    """What a process under a server is, from its title (vLLM renames its workers) or command line."""
    title = " ".join(argv)
    if server_argv is not None and list(argv) == list(server_argv):
        return "forked copy of the server"
    if "EngineCore" in title:
        return "engine core"
    if "APIServer" in title:
        return "API server"
    if "Worker" in title or "VllmWorker" in title:
        return "GPU worker"
    if title.startswith("ray::"):
        return "ray worker"
    if "resource_tracker" in title:
        return "multiprocessing helper"
    if "multiprocessing" in title or "spawn_main" in title:
        return "spawned worker"
    return "child process"


def is_vllm_title(argv: Sequence[str]) -> bool:
    """vLLM's own process titles (``VLLM::EngineCore``, ``VLLM::Worker_TP0``) and its ray workers."""
    head = argv[0] if argv else ""
    return head.startswith("VLLM::") or head.startswith("ray::RayWorkerWrapper")


# --- putting a server together -------------------------------------------------------------------


def interpreter_of(argv: Sequence[str], env: Mapping[str, str] | None, proc_root: Path, pid: int) -> tuple[str | None, str]:
    """The Python that runs a server, keeping a venv's own path (``/proc/PID/exe`` would resolve
    the venv's symlink to the base interpreter and miss the venv's packages)."""
    path_env = (env or {}).get("PATH")
    a0 = argv[0]
    if is_python(a0):
        if os.path.isabs(a0):
            return a0, f"process {pid} command line"
        found = shutil.which(a0, path=path_env) if path_env else None
        if found:
            return found, f"process {pid} command line, found on its PATH"
    script = argv[1] if len(argv) > 1 and os.path.basename(argv[1]) == "vllm" else (a0 if os.path.basename(a0) == "vllm" else None)
    if script and not os.path.isabs(script) and path_env:
        script = shutil.which(script, path=path_env)
    if script and os.path.isabs(script):
        interp = read_shebang(script)
        if interp:
            return interp, f"first line of {script}"
    venv = (env or {}).get("VIRTUAL_ENV")
    if venv and os.path.exists(os.path.join(venv, "bin", "python")):
        return os.path.join(venv, "bin", "python"), f"VIRTUAL_ENV of process {pid}"
    try:
        exe = os.readlink(proc_root / str(pid) / "exe")
        return exe, f"/proc/{pid}/exe (the resolved binary; a venv's own packages may be missed)"
    except OSError:
        return None, "unknown"


def display_command(argv: Sequence[str], path_env: str | None) -> str:
    """The command as the operator would type it: ``vllm serve …`` rather than ``/venv/bin/python3 /venv/bin/vllm serve …``."""
    words = list(argv)
    if len(words) > 1 and is_python(words[0]) and os.path.basename(words[1]) == "vllm":
        words = words[1:]
    if words and os.path.basename(words[0]) == "vllm" and os.path.isabs(words[0]):
        on_path = shutil.which("vllm", path=path_env)
        if on_path and os.path.realpath(on_path) == os.path.realpath(words[0]):
            words[0] = "vllm"
    return shlex.join(words)


def find_servers(proc_root: str | Path = "/proc", path_env: str | None = None) -> dict[str, Any]:
    """All vLLM servers with their children, and vLLM processes that have no server any more."""
    root = Path(proc_root)
    procs = list_processes(root)
    servers: list[dict[str, Any]] = []
    candidates = {p.pid: p for p in procs if server_entrypoint(p.argv)}
    titled = {p.pid: p for p in procs if is_vllm_title(p.argv)}
    out: dict[str, Any] = {"servers": servers, "leftovers": [], "scanned": len(procs)}
    if not candidates and not titled:
        return out
    ppid = {p.pid: read_ppid(root, p.pid) for p in procs}

    def ancestors(pid: int) -> list[int]:
        chain, cur, seen = [], ppid.get(pid), set()
        while cur and cur not in seen and cur != 1:
            chain.append(cur)
            seen.add(cur)
            cur = ppid.get(cur)
        return chain

    # A server under another server is a forked copy or an API-server worker of it.
    top = [pid for pid in candidates if not any(a in candidates for a in ancestors(pid))]
    owner: dict[int, int] = {}
    for p in procs:
        for a in ancestors(p.pid):
            if a in top:
                owner[p.pid] = a
                break
    for pid in sorted(top):
        servers.append(_server_record(candidates[pid], root, path_env, [q for q in procs if owner.get(q.pid) == pid]))
    for pid, p in sorted(titled.items()):
        if pid not in owner and pid not in candidates:
            out["leftovers"].append({"pid": pid, "title": _title(p.argv), "role": child_role(p.argv), "ppid": ppid.get(pid)})
    return out


def _server_record(proc: Proc, root: Path, path_env: str | None, children: Sequence[Proc]) -> dict[str, Any]:
    entry = server_entrypoint(proc.argv)
    assert entry is not None
    how, start = entry
    env, env_error = read_environ(root, proc.pid)
    interp, interp_how = interpreter_of(proc.argv, env, root, proc.pid)
    release = _release_for_keys(proc.argv, interp)
    argv = redact_argv(list(proc.argv), release)
    args, positionals = parse_engine_args(argv[start:], release)
    rec: dict[str, Any] = {"pid": proc.pid, "entrypoint": how, "argv": argv}
    rec["command"] = display_command(argv, (env or {}).get("PATH") or path_env)
    cli_settings = engine_settings(args, positionals, how)
    config_path = args.get("config")
    if isinstance(config_path, str):
        cfg, err = read_config_file(config_path, root, proc.pid)
        rec["config_file"] = {"path": config_path, "error": err.en if err else None, "args": cfg}
        if err is not None:
            rec["config_file"]["error_zh"] = err.zh
        if cfg:
            args = {**cfg, **args}
    rec["args"] = args
    rec["positionals"] = positionals
    rec["settings"] = engine_settings(args, positionals, how)
    rec["settings_from_config"] = sorted(k for k in rec["settings"] if k not in cli_settings)
    rec["env"] = collect_env(env) if env is not None else None
    rec["env_error"] = env_error.en if env_error else None
    if env_error is not None:
        rec["env_error_zh"] = env_error.zh
    rec["interpreter"] = {"path": interp, "how": interp_how}
    rec["children"] = [{"pid": c.pid, "role": child_role(c.argv, proc.argv), "title": _title(c.argv)} for c in children]
    return rec


def _release_for_keys(argv: Sequence[str], interp: str | None) -> str | None:
    """The vLLM release of a server whose command line reads differently per release, from its
    environment's files: an ``--api-key`` followed by several words (before 0.10.1 only the first
    is a key and the next is, say, the model) or ``-O`` (:mod:`.vllm_args`)."""
    dash_o = any(a.startswith("-O") for a in argv)
    if not interp or not (dash_o or any(f == "--api-key" and e - s > 1 for s, e, f in secret_value_spans(list(argv)))):
        return None
    from .envfiles import read_env

    data, _ = read_env(interp, ["vllm"])
    found = ((data or {}).get("packages") or {}).get("vllm") or {}
    version = found.get("version")
    return version if isinstance(version, str) else None


def _title(argv: Sequence[str]) -> str:
    return shlex.join(redact_argv(list(argv)))[:200]
