"""Reading a saved machine report (``--machine FILE``) without trusting it.

The file may come from anywhere: a device or FIFO must not hang the reader, a huge file must not
fill memory, and a hand-edited value must not turn into a fix. A negative GPU size once made the
sampler fix *raise* ``--gpu-memory-utilization``. So the file is read only when it is a regular
file of bounded size, and the parts that become facts are checked for type and range. The error
names the field at fault.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from typing import Any

from ..envelope import kind_of
from ..text.units import MIB, TIB, mib
from .machine import KIND, MachineReport

LIMIT = 16 * MIB
"""A saved report is a few KiB; 16 MiB leaves room for a machine with hundreds of processes."""
MAX_BYTES = 16 * TIB
"""No GPU slice or host reports 16 TiB; a bigger number is a typo or an edit."""


class ReportError(ValueError):
    """The saved report cannot be used; the message names the file and, when known, the field."""


def read_report_file(path: str, limit: int = LIMIT, what: str = "machine description", noun: str = "report",
                     error: type[ValueError] | None = None) -> Any:
    """The JSON of ``path``, read only when it is a regular file of at most ``limit`` bytes;
    ``what`` names it in the messages and ``error`` is the exception they are raised as."""
    fail = error or ReportError
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise fail(f"cannot read {what} {path}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
            raise fail(f"cannot read {what} {path}: it is {kind}")
        if st.st_size > limit:
            raise fail(f"cannot read {what} {path}: it is {mib(st.st_size)}, more than the {limit // MIB} MiB a saved {noun} can be")
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as e:
        raise fail(f"cannot read {what} {path}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise fail(f"cannot read {what} {path}: it grew past {limit // MIB} MiB while being read")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise fail(f"cannot read {what} {path}: not UTF-8 text (byte {e.start})") from None
    except RecursionError:
        raise fail(f"cannot read {what} {path}: its JSON nests too deeply") from None
    except ValueError as e:
        raise fail(f"cannot read {what} {path}: not valid JSON: {e}") from None


# --- checking the parts that become facts --------------------------------------------------------


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(type(v), type(v).__name__)


def _want(v: Any, types: tuple[type, ...], where: str, what: str, null: bool = True) -> bool:
    """True when ``v`` is present; raise when it has the wrong type."""
    if v is None and null:
        return False
    if (isinstance(v, bool) and bool not in types) or not isinstance(v, types):
        raise ReportError(f"{where}: expected {what}, found {_kind(v)}")
    return True


def _size(m: Mapping[str, Any], key: str, where: str) -> int | None:
    v = m.get(key)
    if not _want(v, (int,), f"{where}.{key}", "a size in bytes") or not isinstance(v, int):
        return None
    if v < 0:
        raise ReportError(f"{where}.{key}: {v} is negative; it must be a size in bytes")
    if v > MAX_BYTES:
        raise ReportError(f"{where}.{key}: {v} bytes is more than 16 TiB; not a real size")
    return v


def _memory(m: Any, where: str) -> None:
    if not _want(m, (dict,), where, "an object"):
        return
    sizes = {k: _size(m, k, where) for k in ("total", "reserved", "used", "free")}
    total = sizes["total"]
    for k in ("used", "free", "reserved"):
        size = sizes[k]
        if total is not None and size is not None and size > total:
            raise ReportError(f"{where}.{k}: {size} is more than the total ({total})")


def _gpu(g: Any, where: str) -> None:
    _want(g, (dict,), where, "an object", null=False)
    _want(g.get("index"), (int,), f"{where}.index", "a whole number")
    for k in ("name", "cc", "arch", "uuid"):
        _want(g.get(k), (str,), f"{where}.{k}", "a string")
    _memory(g.get("memory"), f"{where}.memory")
    if _want(g.get("processes"), (list,), f"{where}.processes", "a list"):
        for j, p in enumerate(g["processes"]):
            _want(p, (dict,), f"{where}.processes[{j}]", "an object", null=False)
            _want(p.get("pid"), (int,), f"{where}.processes[{j}].pid", "a process id")
            _size(p, "used_bytes", f"{where}.processes[{j}]")
    mig = g.get("mig")
    if _want(mig, (dict,), f"{where}.mig", "an object") and _want(mig.get("devices"), (list,), f"{where}.mig.devices", "a list"):
        for j, d in enumerate(mig["devices"]):
            _want(d, (dict,), f"{where}.mig.devices[{j}]", "an object", null=False)
            _memory(d.get("memory"), f"{where}.mig.devices[{j}].memory")


def _server(s: Any, where: str) -> None:
    _want(s, (dict,), where, "an object", null=False)
    _want(s.get("pid"), (int,), f"{where}.pid", "a process id", null=False)
    _want(s.get("command"), (str,), f"{where}.command", "a string")
    _want(s.get("env"), (dict,), f"{where}.env", "an object")
    if _want(s.get("settings"), (dict,), f"{where}.settings", "an object"):
        gmu = s["settings"].get("gpu_memory_utilization")
        if _want(gmu, (int, float), f"{where}.settings.gpu_memory_utilization", "a number") and not 0 < gmu <= 1:
            raise ReportError(f"{where}.settings.gpu_memory_utilization: {gmu} is not between 0 and 1")


def validate(data: Any) -> None:
    """Raise :class:`ReportError` naming the first field whose type or range is impossible."""
    if not isinstance(data, dict):
        raise ReportError(f"expected a saved `oomwizard detect --format json` report (an object), found {_kind(data)}")
    for key, types, what in (
        ("nvml", (dict,), "an object"),
        ("gpus", (list,), "a list"),
        ("topology", (list,), "a list"),
        ("visible", (dict,), "an object"),
        ("packages", (dict,), "an object"),
        ("interpreters", (list,), "a list"),
        ("env", (dict,), "an object"),
        ("processes", (dict,), "an object"),
        ("host", (dict,), "an object"),
        ("notes", (list,), "a list"),
    ):
        _want(data.get(key), types, key, what)
    for i, g in enumerate(data.get("gpus") or []):
        _gpu(g, f"gpus[{i}]")
    pk = data.get("packages") or {}
    if _want(pk.get("versions"), (dict,), "packages.versions", "an object"):
        for k, v in pk["versions"].items():
            _want(v, (str,), f"packages.versions.{k}", "a version string")
    procs = data.get("processes") or {}
    for key in ("servers", "leftovers"):
        _want(procs.get(key), (list,), f"processes.{key}", "a list")
    for i, s in enumerate(procs.get("servers") or []):
        _server(s, f"processes.servers[{i}]")
    host = data.get("host") or {}
    for k in ("mem_total", "mem_available", "swap_total", "cgroup_mem_limit", "cgroup_mem_usage", "shm_total"):
        _size(host, k, "host")
    for k, v in (data.get("env") or {}).items():
        _want(v, (str,), f"env.{k}", "a string", null=False)


def load_report(path: str) -> MachineReport:
    """A saved report, checked, as the report it was: facts rebuilt by the same pure code."""
    data = read_report_file(path)
    found = kind_of(data)
    if found is not None and found[0] != KIND:
        raise ReportError(
            f"machine description {path}: this is the output of `oomwizard {found[0]}`, "
            f"not a saved `oomwizard detect --format json` report"
        )
    try:
        validate(data)
    except ReportError as e:
        raise ReportError(f"machine description {path}: {e}") from None
    return MachineReport.from_json(data)
