"""Running vLLM servers, read from /proc: their command line as engine arguments, their environment,
their interpreter, and the worker processes they started.

The command line of a running server is the best evidence of how vLLM was started: fixes rewrite
*that* command. Workers (EngineCore, TP workers, forked API servers) are grouped under their server;
vLLM processes left without a server (they keep their GPU memory after a crash) are reported apart.
The /proc root is a parameter so tests can build a fake one.

It is a little over 400 lines: besides /proc it maps a server's parsed arguments
(:mod:`.vllm_args` reads them) to the settings the wizard uses (``engine_settings``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..text.redact import REDACTED, SECRET_FLAGS, redact_argv, redact_text, secret_env_name, secret_value_spans
from .env import collect_env
from .metadata_probe import read_head
from .packages import read_shebang
from .vllm_args import SHORT_FLAGS, SWITCHES, as_bool, canonical_key, human_int, parse_argv, sub_config

__all__ = ["SHORT_FLAGS", "SWITCHES", "canonical_key", "engine_settings", "human_int", "parse_engine_args"]

SERVER_MODULES = {
    "vllm.entrypoints.openai.api_server": "python -m vllm.entrypoints.openai.api_server",
    "vllm.entrypoints.api_server": "python -m vllm.entrypoints.api_server",
    "vllm.entrypoints.cli.main": "python -m vllm.entrypoints.cli.main",
}
_PY_RE = re.compile(r"^(python|pypy)[0-9.]*[a-z]?$")
CONFIG_LIMIT = 1024**2


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


def read_environ(proc_root: Path, pid: int) -> tuple[dict[str, str] | None, str | None]:
    """The whole environment of a process, or the reason it cannot be read."""
    try:
        raw = _read_bytes(proc_root / str(pid) / "environ")
    except PermissionError:
        return None, "not readable: the process belongs to another user (run oomwizard as that user or as root)"
    except FileNotFoundError:
        return None, "the process has exited"
    except OSError as e:
        return None, f"not readable: {e.strerror or e}"
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


# --- engine arguments ----------------------------------------------------------------------------


def parse_engine_args(tokens: Sequence[str], version: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """Command-line tokens after ``serve`` -> ``({option: value}, positionals)``, as ``version``'s
    parser reads them (:mod:`.vllm_args`: every spelling, ``-O`` per release)."""
    parsed = parse_argv(tokens, version)
    return parsed.args, parsed.positionals


_COUNTS = (("tp", "tensor_parallel_size"), ("pp", "pipeline_parallel_size"), ("dp", "data_parallel_size"),
           ("max_loras", "max_loras"), ("max_lora_rank", "max_lora_rank"))
_POSITIVE = ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "kv_cache_memory_bytes")
"""Sizes where ``-1`` or ``0`` means "let vLLM decide": left out."""
_STRINGS = ("kv_cache_dtype", "quantization", "dtype", "limit_mm_per_prompt", "kv_transfer_config")
_SWITCH_FACTS = (
    ("enforce_eager", "enforce_eager", "no_enforce_eager"),
    ("ep", "enable_expert_parallel", "disable_expert_parallel"),
    ("lora_enabled", "enable_lora", "no_enable_lora"),
    ("prefix_caching", "enable_prefix_caching", "disable_prefix_caching"),
    ("chunked_prefill", "enable_chunked_prefill", "disable_chunked_prefill"),
    ("custom_all_reduce_disabled", "disable_custom_all_reduce", "enable_custom_all_reduce"),
    ("sleep_mode", "enable_sleep_mode", "no_enable_sleep_mode"),
)
"""``(fact, on, off)``: a switch and its opposite; the opposite wins when both are given."""


def _numbers(args: Mapping[str, Any], s: dict[str, Any]) -> None:
    for fact, key in _COUNTS:
        v = human_int(args.get(key))
        if v is not None:
            s[fact] = v
    for fact in _POSITIVE:
        v = human_int(args.get(fact))
        if v is not None and v > 0:
            s[fact] = v
    gmu = args.get("gpu_memory_utilization", args.get("device_memory_utilization"))
    for fact, raw in (("gpu_memory_utilization", gmu), ("cpu_offload_gb", args.get("cpu_offload_gb")),
                      ("swap_space_gb", args.get("swap_space"))):
        try:
            if raw is not None and not isinstance(raw, bool):
                s[fact] = float(raw)
        except ValueError:
            pass


def _switch(args: Mapping[str, Any], on: str, off: str) -> bool | None:
    val = as_bool(args[on]) if on in args else None
    off_val = as_bool(args.get(off))
    if off_val is not None:
        val = not off_val
    if as_bool(args.get("no_" + on)):
        val = False
    return val


def _speculative(args: Mapping[str, Any], s: dict[str, Any]) -> None:
    spec = sub_config(args, "speculative_config")
    if spec:
        method = spec.get("method") or ("ngram" if spec.get("model") == "[ngram]" else None)
        s["speculative_method"] = str(method or "unspecified")
        n = human_int(spec.get("num_speculative_tokens"))
    elif isinstance(args.get("speculative_model"), str):
        s["speculative_method"] = "ngram" if args["speculative_model"] == "[ngram]" else "draft_model"
        n = human_int(args.get("num_speculative_tokens"))
    else:
        return
    if n is not None:
        s["num_speculative_tokens"] = n


def engine_settings(args: Mapping[str, Any], positionals: Sequence[str], entrypoint: str) -> dict[str, Any]:
    """The arguments that matter for memory, typed, keyed by fact name (unset ones left out)."""
    s: dict[str, Any] = {}
    model = args.get("model") if isinstance(args.get("model"), str) else None
    if entrypoint.endswith("serve") and positionals:
        model = positionals[0]
    if model:
        s["model"] = model
    _numbers(args, s)
    s.update({fact: args[fact] for fact in _STRINGS if isinstance(args.get(fact), str)})
    for fact, on, off in _SWITCH_FACTS:
        val = _switch(args, on, off)
        if val is not None:
            s[fact] = val
    _speculative(args, s)
    comp = sub_config(args, "compilation_config")
    if comp.get("cudagraph_mode"):
        s["cudagraph_mode"] = str(comp["cudagraph_mode"])
    return s


def read_config_file(path: str, proc_root: Path, pid: int) -> tuple[dict[str, Any] | None, str | None]:
    """``--config FILE`` (YAML of engine arguments), resolved against the process's directory."""
    p = Path(path)
    full = p if p.is_absolute() else proc_root / str(pid) / "cwd" / p
    # The file is another user's choice: a FIFO, a device or a huge file must not stall detection.
    try:
        st = full.stat()
    except OSError as e:
        return None, f"cannot read {path}: {e.strerror or e}"
    if not stat.S_ISREG(st.st_mode):
        return None, f"{path} is not a regular file"
    if st.st_size > CONFIG_LIMIT:
        return None, f"{path} is larger than {CONFIG_LIMIT // 1024**2} MiB"
    text = read_head(str(full), CONFIG_LIMIT)
    if text is None:
        return None, f"cannot read {path}"
    import yaml

    try:
        # Aliases can multiply a small file into billions of values once it is walked.
        if any(isinstance(ev, yaml.AliasEvent) for ev in yaml.parse(text, Loader=yaml.SafeLoader)):
            return None, f"{path} uses YAML aliases (*name); engine arguments do not need them, so it was not read"
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        return None, f"{path} is not valid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    if not isinstance(data, dict):
        return None, f"{path} does not hold a mapping of engine arguments"
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = canonical_key("--" + str(k))
        if "--" + key.replace("_", "-") in SECRET_FLAGS or secret_env_name(key):
            out[key] = REDACTED
            continue
        value = json.dumps(v) if isinstance(v, (dict, list)) else (v if isinstance(v, bool) else str(v))
        out[key] = redact_text(value) if isinstance(value, str) else value
    return out, None


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
        rec["config_file"] = {"path": config_path, "error": err, "args": cfg}
        if cfg:
            args = {**cfg, **args}
    rec["args"] = args
    rec["positionals"] = positionals
    rec["settings"] = engine_settings(args, positionals, how)
    rec["settings_from_config"] = sorted(k for k in rec["settings"] if k not in cli_settings)
    rec["env"] = collect_env(env) if env is not None else None
    rec["env_error"] = env_error
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
