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
from ..i18n import Text, TextError, msg
from ..text.units import MIB, TIB
from .machine import KIND, MachineReport

LIMIT = 16 * MIB
"""A saved report is a few KiB; 16 MiB leaves room for a machine with hundreds of processes."""
MAX_BYTES = 16 * TIB
"""No GPU slice or host reports 16 TiB; a bigger number is a typo or an edit."""


class ReportError(TextError, ValueError):
    """The saved report cannot be used; the message (in both languages) names the file and, when
    known, the field."""


REPORT_WHAT = msg("facts.saved.what_report")
REPORT_NOUN = msg("facts.saved.noun_report")


def read_report_file(path: str, limit: int = LIMIT, what: Text = REPORT_WHAT, noun: Text = REPORT_NOUN,
                     error: type[TextError] | None = None) -> Any:
    """The JSON of ``path``, read only when it is a regular file of at most ``limit`` bytes;
    ``what`` names it in the messages and ``error`` is the exception they are raised as."""
    fail = error or ReportError

    def cannot(reason: Text | str) -> TextError:
        return fail(msg("facts.saved.cannot_read").format(what=what, path=path, reason=reason))

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise cannot(e.strerror or str(e)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise cannot(msg("facts.saved.is_folder") if stat.S_ISDIR(st.st_mode) else msg("facts.saved.not_regular"))
        if st.st_size > limit:
            raise cannot(msg("facts.saved.too_big").format(size=st.st_size / MIB, limit=limit // MIB, noun=noun))
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as e:
        raise cannot(e.strerror or str(e)) from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise cannot(msg("facts.saved.grew").format(limit=limit // MIB))
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise cannot(msg("facts.saved.not_utf8").format(byte=e.start)) from None
    except RecursionError:
        raise cannot(msg("facts.saved.too_deep")) from None
    except ValueError as e:
        raise cannot(msg("facts.saved.bad_json").format(error=e)) from None


# --- checking the parts that become facts --------------------------------------------------------


_KINDS = {dict: "object", list: "list", str: "string", bool: "bool", type(None): "null"}


def kind(v: Any) -> Text:
    """What ``v`` is, in words ("object", "list", or the name of its type)."""
    name = _KINDS.get(type(v))
    return msg(f"facts.saved.a.{name}") if name else Text.same(type(v).__name__)


def expected(where: str, what: str, v: Any) -> Text:
    """"WHERE: expected WHAT, found KIND"; ``what`` names a noun of the catalogue (``facts.saved.a.…``)."""
    return msg("facts.saved.expected").format(where=where, what=msg(f"facts.saved.a.{what}"), found=kind(v))


def _want(v: Any, types: tuple[type, ...], where: str, what: str, null: bool = True) -> bool:
    """True when ``v`` is present; raise when it has the wrong type."""
    if v is None and null:
        return False
    if (isinstance(v, bool) and bool not in types) or not isinstance(v, types):
        raise ReportError(expected(where, what, v))
    return True


def _size(m: Mapping[str, Any], key: str, where: str) -> int | None:
    v = m.get(key)
    if not _want(v, (int,), f"{where}.{key}", "size") or not isinstance(v, int):
        return None
    if v < 0:
        raise ReportError(msg("facts.saved.negative").format(where=f"{where}.{key}", value=v))
    if v > MAX_BYTES:
        raise ReportError(msg("facts.saved.too_large").format(where=f"{where}.{key}", value=v))
    return v


def _memory(m: Any, where: str) -> None:
    if not _want(m, (dict,), where, "object"):
        return
    sizes = {k: _size(m, k, where) for k in ("total", "reserved", "used", "free")}
    total = sizes["total"]
    for k in ("used", "free", "reserved"):
        size = sizes[k]
        if total is not None and size is not None and size > total:
            raise ReportError(msg("facts.saved.over_total").format(where=f"{where}.{k}", size=size, total=total))


def _gpu(g: Any, where: str) -> None:
    _want(g, (dict,), where, "object", null=False)
    _want(g.get("index"), (int,), f"{where}.index", "int")
    for k in ("name", "cc", "arch", "uuid"):
        _want(g.get(k), (str,), f"{where}.{k}", "string")
    _memory(g.get("memory"), f"{where}.memory")
    if _want(g.get("processes"), (list,), f"{where}.processes", "list"):
        for j, p in enumerate(g["processes"]):
            _want(p, (dict,), f"{where}.processes[{j}]", "object", null=False)
            _want(p.get("pid"), (int,), f"{where}.processes[{j}].pid", "pid")
            _size(p, "used_bytes", f"{where}.processes[{j}]")
    mig = g.get("mig")
    if _want(mig, (dict,), f"{where}.mig", "object") and _want(mig.get("devices"), (list,), f"{where}.mig.devices", "list"):
        for j, d in enumerate(mig["devices"]):
            _want(d, (dict,), f"{where}.mig.devices[{j}]", "object", null=False)
            _memory(d.get("memory"), f"{where}.mig.devices[{j}].memory")


def _server(s: Any, where: str) -> None:
    _want(s, (dict,), where, "object", null=False)
    _want(s.get("pid"), (int,), f"{where}.pid", "pid", null=False)
    _want(s.get("command"), (str,), f"{where}.command", "string")
    _want(s.get("env"), (dict,), f"{where}.env", "object")
    if _want(s.get("settings"), (dict,), f"{where}.settings", "object"):
        gmu = s["settings"].get("gpu_memory_utilization")
        if _want(gmu, (int, float), f"{where}.settings.gpu_memory_utilization", "number") and not 0 < gmu <= 1:
            raise ReportError(msg("facts.saved.not_a_fraction").format(where=f"{where}.settings.gpu_memory_utilization", value=gmu))


def validate(data: Any) -> None:
    """Raise :class:`ReportError` naming the first field whose type or range is impossible."""
    if not isinstance(data, dict):
        raise ReportError(msg("facts.saved.not_an_object").format(found=kind(data)))
    for key, types, what in (
        ("nvml", (dict,), "object"),
        ("gpus", (list,), "list"),
        ("topology", (list,), "list"),
        ("visible", (dict,), "object"),
        ("packages", (dict,), "object"),
        ("interpreters", (list,), "list"),
        ("env", (dict,), "object"),
        ("processes", (dict,), "object"),
        ("host", (dict,), "object"),
        ("notes", (list,), "list"),
    ):
        _want(data.get(key), types, key, what)
    for i, g in enumerate(data.get("gpus") or []):
        _gpu(g, f"gpus[{i}]")
    pk = data.get("packages") or {}
    if _want(pk.get("versions"), (dict,), "packages.versions", "object"):
        for k, v in pk["versions"].items():
            _want(v, (str,), f"packages.versions.{k}", "version")
    procs = data.get("processes") or {}
    for key in ("servers", "leftovers"):
        _want(procs.get(key), (list,), f"processes.{key}", "list")
    for i, s in enumerate(procs.get("servers") or []):
        _server(s, f"processes.servers[{i}]")
    host = data.get("host") or {}
    for k in ("mem_total", "mem_available", "swap_total", "cgroup_mem_limit", "cgroup_mem_usage", "shm_total"):
        _size(host, k, "host")
    for k, v in (data.get("env") or {}).items():
        _want(v, (str,), f"env.{k}", "string", null=False)


def load_report(path: str) -> MachineReport:
    """A saved report, checked, as the report it was: facts rebuilt by the same pure code."""
    data = read_report_file(path)
    found = kind_of(data)
    if found is not None and found[0] != KIND:
        raise ReportError(msg("facts.saved.other_command").format(path=path, command=found[0]))
    try:
        validate(data)
    except ReportError as e:
        raise ReportError(msg("facts.saved.in_file").format(path=path, error=e.text)) from None
    return MachineReport.from_json(data)
