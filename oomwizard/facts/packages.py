"""Package versions of the Python environments on this machine, read without importing anything.

vLLM often lives in another venv than oomwizard, so the versions that matter are those of the
interpreter that *runs vLLM*. We read them for this interpreter in-process and for any other one
from its files (:mod:`.envfiles`). Only the interpreter the operator names with ``--python`` (and
:mod:`.trust` accepts) is ever started: once, with ``-I -S`` on :mod:`.metadata_probe` (no
``.pth`` hooks, no package imports, a timeout). Every failure is reported in words.
"""

from __future__ import annotations

import contextlib
import json
import os
import pkgutil
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import Text, msg
from . import metadata_probe

# Report key -> distribution names, preferred first (both spellings seen in the wild).
PACKAGES: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm",),
    "torch": ("torch",),
    "triton": ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu"),
    "flashinfer": ("flashinfer-python", "flashinfer"),
    "deep_gemm": ("deep-gemm",),
    "transformers": ("transformers",),
    "nccl": ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"),
    "xformers": ("xformers",),
    "flash_attn": ("flash-attn",),
    "ray": ("ray",),
    "nvidia_ml_py": ("nvidia-ml-py",),
    "pynvml": ("pynvml",),
}
PROBE_TIMEOUT_S = 10.0
_PY_NAME_RE = re.compile(r"^(python|pypy)[0-9.]*[a-z]?$")


def wanted_names() -> list[str]:
    return [d for names in PACKAGES.values() for d in names]


@dataclass
class Interpreter:
    """One Python environment we looked at, why, and what it holds."""

    path: str
    roles: list[str] = field(default_factory=list)
    """Why it matters: ``runs vLLM (process 4242)``, ``--python``, ``vllm on PATH``, ``runs oomwizard``."""
    data: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "roles": list(self.roles)}
        if self.error:
            out["error"] = self.error
        if self.data is not None:
            out.update(summarize(self.data))
        return out


def summarize(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's output reduced to what the report keeps: one version per report key."""
    found: Mapping[str, Any] = raw.get("packages") or {}
    versions: dict[str, str | None] = {}
    dists: dict[str, str] = {}
    shadowed: dict[str, list[str]] = {}
    for key, names in PACKAGES.items():
        versions[key] = None
        for name in names:
            hit = found.get(metadata_probe.normalize(name))
            if hit:
                versions[key] = hit.get("version")
                dists[key] = name
                also = [f"{a.get('version')} in {a.get('location')}" for a in hit.get("also") or []]
                if also:
                    shadowed[key] = also
                break
    torch_hit = found.get("torch") or {}
    build = raw.get("torch_build") or {}
    hits = {k: found.get(metadata_probe.normalize(dists[k])) or {} for k in dists}
    out: dict[str, Any] = {
        "read": raw.get("read"),
        "python_version": raw.get("python_version"),
        "venv": raw.get("venv"),
        "versions": versions,
        "distributions": dists,
        "locations": {k: h.get("location") for k, h in hits.items()},
        "files": {k: h["file"] for k, h in hits.items() if h.get("file")},
        "torch_cuda": build.get("cuda"),
        "torch_hip": build.get("hip"),
    }
    if raw.get("python_version_source"):
        out["python_version_source"] = raw["python_version_source"]
    if torch_hit and build.get("file"):
        out["torch_version_file"] = build["file"]
    if shadowed:
        out["shadowed"] = shadowed
    return out


# --- this interpreter ---------------------------------------------------------------------------


def probe_current(paths: Sequence[str] | None = None) -> dict[str, Any]:
    """This interpreter's packages, from the live ``sys.path`` (the current directory left out)."""
    cwd = os.getcwd()
    use = [p for p in (sys.path if paths is None else paths) if p and os.path.abspath(p) != cwd]
    return {**metadata_probe.probe(use, wanted_names()), "read": "this interpreter"}


# --- another interpreter ------------------------------------------------------------------------


def _probe_source() -> str:
    data = pkgutil.get_data(__package__ or "oomwizard.facts", "metadata_probe.py")
    if data is None:  # pragma: no cover - only when the package files are unreadable
        raise OSError("metadata_probe.py not found in the package")
    return data.decode("utf-8")


def start_probe(python: str, extra_paths: Sequence[str] = ()) -> subprocess.Popen[str] | str:
    """Start the probe in ``python``; a string is the reason it could not start (or was not:
    :mod:`.trust` is asked again here, right before the start, whoever the caller is)."""
    if os.path.lexists(python):
        from .trust import unsafe_reason  # trust imports this module

        problem = unsafe_reason(python)
        if problem:
            return f"not started: {problem.en}"
    request = json.dumps({"wanted": wanted_names(), "extra_paths": list(extra_paths)})
    try:
        return subprocess.Popen(
            [python, "-I", "-S", "-c", _probe_source(), request],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_probe_env(),
            start_new_session=True,  # so a timeout can stop everything it started
        )
    except FileNotFoundError:
        return f"{python} does not exist"
    except PermissionError:
        return f"{python} is not executable by this user"
    except OSError as e:
        return f"{python} could not be started: {e.strerror or e}"


def _probe_env() -> dict[str, str]:
    """A small environment: the probe needs none of ours, and PYTHON* would be ignored anyway."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")
    return {k: v for k, v in os.environ.items() if k in keep}


def finish_probe(proc: subprocess.Popen[str] | str, python: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[dict[str, Any] | None, str | None]:
    """Collect a started probe: ``(data, None)`` or ``(None, reason)``."""
    if isinstance(proc, str):
        return None, proc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return None, f"{python} did not answer within {timeout:g} s"
    except BaseException:  # Ctrl+C or SIGTERM while waiting: the probe, in its own session, goes too
        _stop(proc)
        raise
    if proc.returncode != 0:
        last = next((ln for ln in reversed(err.strip().splitlines()) if ln.strip()), "")
        if "-I" in last or "Unknown option" in last or "SyntaxError" in err:
            return None, f"{python} is too old to read (needs Python 3.8 or newer): {last.strip()[:200]}"
        return None, f"{python} exited with status {proc.returncode}: {last.strip()[:200] or 'no message'}"
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, f"{python} printed something unexpected instead of the package list"
    if not isinstance(data, dict):
        return None, f"{python} printed something unexpected instead of the package list"
    data["read"] = "ran"
    return data, None


def _stop(proc: subprocess.Popen[str]) -> None:
    """Kill the probe and whatever it started (its own session), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=2)


def probe_other(python: str, extra_paths: Sequence[str] = (), timeout: float = PROBE_TIMEOUT_S) -> tuple[dict[str, Any] | None, str | None]:
    return finish_probe(start_probe(python, extra_paths), python, timeout)


# --- finding interpreters -----------------------------------------------------------------------


def read_shebang(script: str | Path) -> str | None:
    """The interpreter a script starts with (pip's ``/bin/sh`` trampoline for long paths too)."""
    head = metadata_probe.read_head(str(script), 1024)  # a regular file only: a FIFO would hang us
    if head is None or not head.startswith("#!"):
        return None
    lines = head.splitlines()
    first = lines[0][2:].strip()
    if not first:
        return None
    parts = first.split()
    prog = parts[0]
    if os.path.basename(prog) == "env":
        args = [a for a in parts[1:] if not a.startswith("-")]
        if not args:
            return None
        return shutil.which(args[0]) or args[0]
    if os.path.basename(prog) == "sh" and len(lines) > 1:
        # pip writes: #!/bin/sh  /  '''exec' "/very/long/path/python" "$0" "$@"
        m = re.search(r"exec'?\s+\"?([^\"\s]+)\"?", lines[1])
        if m:
            return m.group(1)
    return prog


def interpreter_for(path: str) -> tuple[str | None, Text | None]:
    """Accept what an operator types for ``--python``: an interpreter, a venv folder or a script
    (else why not, in both languages)."""
    p = Path(path).expanduser()
    if p.is_dir():
        for name in ("bin/python", "bin/python3", "Scripts/python.exe"):
            if (p / name).exists():
                return str(p / name), None
        return None, msg("facts.packages.no_bin_python").format(path=path)
    if not p.exists():
        return None, msg("facts.packages.missing").format(path=path)
    if not _PY_NAME_RE.match(p.name):
        target = read_shebang(p)
        if target:
            return target, None
    return str(p), None


def vllm_on_path(path_env: str | None) -> tuple[str, str] | None:
    """``(script, interpreter)`` for the ``vllm`` command this shell would run, if any."""
    script = shutil.which("vllm", path=path_env)
    if not script:
        return None
    interp = read_shebang(script)
    return (script, interp) if interp else None


def same_env(a: str, b: str) -> bool:
    """Two interpreter paths that share one environment (same file, or same venv folder)."""
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    va, vb = metadata_probe.venv_root(a), metadata_probe.venv_root(b)
    if va or vb:
        return bool(va and vb and os.path.realpath(va) == os.path.realpath(vb))
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def choose(interpreters: Sequence[Interpreter]) -> Interpreter | None:
    """The environment whose versions become facts: the first (by priority) that has vLLM,
    else the first that answered at all. ``interpreters`` is already in priority order."""
    answered = [i for i in interpreters if i.data is not None]
    for i in answered:
        if summarize(i.data or {})["versions"].get("vllm"):
            return i
    return answered[0] if answered else None
