"""``oomwizard detect --format text``: the machine report as an operator reads it over SSH.

Everything comes from ``report.data`` (so a replayed report prints the same), and everything that
came from another process (command lines, titles, names) passes through :func:`printable`: a
process title is untrusted text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..facts.machine import MachineReport
from ..facts.notes import note_text
from ..i18n import Text, msg, ui
from ..text.safe_text import printable
from ..text.units import gib

L: dict[str, Text] = {
    "title": msg("report.machine.title"),
    "detected": msg("report.machine.detected"),
    "gpus": msg("report.machine.gpus"),
    "no_gpu": msg("report.machine.no_gpu"),
    "driver": msg("report.machine.driver"),
    "mem": msg("report.machine.mem"),
    "reserved": msg("report.machine.reserved"),
    "v1": msg("report.machine.v1"),
    "mig": msg("report.machine.mig"),
    "procs_none": msg("report.machine.procs_none"),
    "proc": msg("report.machine.proc"),
    "proc_hidden": msg("report.machine.proc_hidden"),
    "owner_server": msg("report.machine.owner_server"),
    "owner_leftover": msg("report.machine.owner_leftover"),
    "visible": msg("report.machine.visible"),
    "visible_none": msg("report.machine.visible_none"),
    "cvd_unset": msg("report.machine.cvd_unset"),
    "links": msg("report.machine.links"),
    "python": msg("report.machine.python"),
    "chosen": msg("report.machine.chosen"),
    "not_installed": msg("report.machine.not_installed"),
    "allocator": msg("report.machine.allocator"),
    "alloc_none": msg("report.machine.alloc_none"),
    "alloc_uses": msg("report.machine.alloc_uses"),
    "alloc_unsure": msg("report.machine.alloc_unsure"),
    "servers": msg("report.machine.servers"),
    "no_servers": msg("report.machine.no_servers"),
    "server": msg("report.machine.server"),
    "interp": msg("report.machine.interp"),
    "env_unreadable": msg("report.machine.env_unreadable"),
    "children": msg("report.machine.children"),
    "leftovers": msg("report.machine.leftovers"),
    "host": msg("report.machine.host"),
    "ram": msg("report.machine.ram"),
    "cgroup": msg("report.machine.cgroup"),
    "shm": msg("report.machine.shm"),
    "container": msg("report.machine.container"),
    "yes": msg("report.machine.yes"),
    "no": msg("report.machine.no"),
    "env": msg("report.machine.env"),
    "notes": msg("report.machine.notes"),
    "facts": msg("report.machine.facts"),
    "unknown": msg("report.machine.unknown"),
    "unreadable": msg("report.machine.unreadable"),
}


def _t(key: str, lang: str, **kw: Any) -> str:
    s = L[key](lang)
    return s.format(**kw) if kw else s



def _gpu_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    nv = data.get("nvml") or {}
    out = [_t("gpus", lang)]
    if not nv.get("available"):
        reason = nv.get("reason_zh") if lang == "zh" and nv.get("reason_zh") else nv.get("reason")
        out.append(f"  {_t('no_gpu', lang)}: {reason}")
        return out
    unk = _t("unknown", lang)
    out.append("  " + _t("driver", lang, d=nv.get("driver_version") or unk, c=nv.get("cuda_driver_version") or unk, n=nv.get("library_version") or unk))
    for g in data.get("gpus") or []:
        out.extend(_one_gpu(g, lang))
    vis = data.get("visible")
    if vis is not None:
        ids = ", ".join(str(i) for i in vis.get("indices") or []) or _t("visible_none", lang)
        how = _t("cvd_unset", lang) if vis.get("value") is None else f"CUDA_VISIBLE_DEVICES={printable(str(vis['value']))}"
        out.append("  " + _t("visible", lang, ids=ids, how=f"{how}, {vis.get('source')}"))
    pairs = data.get("topology") or []
    if pairs:
        out.append(f"  {_t('links', lang)}: " + ", ".join(f"{p['a']}-{p['b']} {p['link']}" for p in pairs[:28]))
    return out


def _one_gpu(g: Mapping[str, Any], lang: str) -> list[str]:
    """One GPU of the report: name and architecture, memory, MIG slices, its processes."""
    if g.get("error"):
        said = g.get("error_zh") if lang == "zh" else None
        return [f"  {g['index']}  {printable(str(said or g['error']))}"]
    arch = f"{g.get('sm')} ({g.get('arch')}, cc {g.get('cc')})" if g.get("cc") else ""
    out = [f"  {g['index']}  {g.get('name') or '?'}  {arch}  {g.get('pci_bus_id') or ''}".rstrip()]
    mem = g.get("memory")
    if mem:
        line = _t("mem", lang, total=gib(mem["total"]), used=gib(mem["used"]), free=gib(mem["free"]))
        if mem.get("reserved"):
            line += _t("reserved", lang, r=gib(mem["reserved"]))
        if mem.get("version") == "v1":
            line += _t("v1", lang)
        out.append("     " + line)
    mig = g.get("mig") or {}
    if mig.get("enabled"):
        out.append("     " + _t("mig", lang, n=len(mig.get("devices") or [])))
        for m in mig.get("devices") or []:
            mm = m.get("memory") or {}
            out.append(f"       {m.get('uuid')}  {gib(mm.get('total'))}, {gib(mm.get('free'))} free")
    procs = g.get("processes") or []
    if not procs:
        out.append("     " + _t("procs_none", lang))
    out.extend("     " + _process_line(p, lang) for p in procs)
    return out


def _process_line(p: Mapping[str, Any], lang: str) -> str:
    name = printable(str(p.get("name") or "?"))
    if not p.get("visible", True):
        name += " " + _t("proc_hidden", lang)
    line = _t("proc", lang, pid=p["pid"], name=name, mem=gib(p.get("used_bytes")))
    owner = p.get("owner") or {}
    if "server" in owner:
        line += f"  [{_t('owner_server', lang, pid=owner['server'], role=owner.get('role'))}]"
    elif owner.get("leftover"):
        line += f"  [{_t('owner_leftover', lang, role=owner.get('role'))}]"
    return line


def _version_line(section: Mapping[str, Any], lang: str) -> str:
    versions = section.get("versions") or {}
    parts = []
    for key in ("vllm", "torch", "triton", "flashinfer", "deep_gemm", "transformers", "nccl", "xformers", "flash_attn"):
        v = versions.get(key)
        if v is None and key not in ("vllm", "torch"):
            continue
        text = f"{key} {v}" if v else f"{key} ({_t('not_installed', lang)})"
        if key == "torch" and section.get("torch_cuda"):
            text += f" (CUDA {section['torch_cuda']})"
        if key == "torch" and section.get("torch_hip"):
            text += f" (HIP {section['torch_hip']})"
        parts.append(text)
    return ", ".join(parts)


_ROLES = (
    (re.compile(r"^runs oomwizard$"), "report.machine.role.oomwizard"),
    (re.compile(r"^runs vLLM \(process (?P<pid>\d+)\)$"), "report.machine.role.vllm"),
    (re.compile(r"^runs `vllm` on PATH \((?P<path>.*)\)$"), "report.machine.role.vllm_on_path"),
)


def _role(role: str, lang: str) -> str:
    """Roles are stored in English (the JSON is for machines); shown in the reader's language."""
    if lang == "zh":
        for pat, key in _ROLES:
            m = pat.match(role)
            if m:
                return ui(key, lang, **m.groupdict())
    return role


def _python_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    out = [_t("python", lang)]
    chosen = (data.get("packages") or {}).get("python")
    for i in data.get("interpreters") or []:
        mark = "*" if i.get("path") == chosen else " "
        roles = "; ".join(_role(str(r), lang) for r in i.get("roles") or [])
        pv = f"  Python {i['python_version']}" if i.get("python_version") else ""
        out.append(f"  {mark} {printable(str(i.get('path')))}  ({roles}){pv}")
        if i.get("error"):
            out.append(f"      {printable(str(i['error']))}")
        elif i.get("versions") is not None:
            out.append(f"      {_version_line(i, lang)}")
    if chosen:
        out.append(f"    * = {_t('chosen', lang)}")
    return out


def _alloc_lines(alloc: Mapping[str, Any] | None, lang: str, indent: str = "  ") -> list[str]:
    if not alloc:
        return []
    out = []
    if alloc.get("var") is None:
        out.append(indent + _t("alloc_none", lang))
    elif not alloc.get("certain"):
        out.append(indent + _t("alloc_unsure", lang))
    else:
        out.append(indent + _t("alloc_uses", lang, var=alloc["var"], value=printable(str(alloc["value"]))) + f"  [{alloc.get('certainty')}]")
    basis = (alloc.get("basis") or {}).get(lang) or (alloc.get("basis") or {}).get("en")
    if basis:
        out.append(indent + "  " + basis)
    for n in alloc.get("notes") or []:
        out.append(indent + "  ! " + note_text(n, lang))
    return out


def _server_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    procs = data.get("processes") or {}
    out = [_t("servers", lang)]
    servers = procs.get("servers") or []
    if not servers:
        out.append("  " + _t("no_servers", lang))
    for s in servers:
        out.append("  " + _t("server", lang, pid=s["pid"], how=s.get("entrypoint")))
        out.append("    $ " + printable(str(s.get("command"))))
        settings = s.get("settings") or {}
        if settings:
            out.append("    " + ", ".join(f"{k}={printable(str(v))}" for k, v in settings.items()))
        interp = s.get("interpreter") or {}
        out.append(f"    {_t('interp', lang)}: {printable(str(interp.get('path')))} ({interp.get('how')})")
        if s.get("env_error"):
            said = s.get("env_error_zh") if lang == "zh" else None
            out.append(f"    {_t('env_unreadable', lang)}: {said or s['env_error']}")
        cfg = s.get("config_file") or {}
        if cfg.get("error"):
            said = cfg.get("error_zh") if lang == "zh" else None
            out.append(f"    --config: {printable(str(said or cfg['error']))}")
        if s.get("allocator"):
            out.extend(_alloc_lines(s["allocator"], lang, "    "))
        kids = s.get("children") or []
        if kids:
            out.append(f"    {_t('children', lang)}: " + ", ".join(f"{c['pid']} {c['role']}" for c in kids[:16]))
    left = procs.get("leftovers") or []
    if left:
        out.append("  " + _t("leftovers", lang) + ":")
        for lo in left:
            out.append(f"    {lo['pid']}  {printable(str(lo.get('title')))}  ({lo.get('role')})")
    return out


def _host_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    host = data.get("host") or {}
    out = [_t("host", lang)]
    out.append("  " + _t("ram", lang, total=gib(host.get("mem_total")), avail=gib(host.get("mem_available"))))
    if host.get("cgroup_mem_limit"):
        out.append("  " + _t("cgroup", lang, limit=gib(host["cgroup_mem_limit"])))
    if host.get("shm_total"):
        out.append("  " + _t("shm", lang, shm=gib(host["shm_total"])))
    ctr = host.get("container") or {}
    if ctr:
        what = _t("yes", lang) + f" ({ctr.get('runtime')}: {'; '.join(ctr.get('evidence') or [])})" if ctr.get("in_container") else _t("no", lang)
        out.append("  " + _t("container", lang, what=what))
    if host.get("os") or host.get("kernel"):
        out.append(f"  {host.get('os') or ''} {host.get('kernel') or ''}".rstrip())
    return out


def _guarded(section: Callable[[], list[str]], lang: str) -> list[str]:
    """A hand-edited saved report may break one section; the others still print."""
    try:
        return section()
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return ["  " + _t("unreadable", lang)]


def _env_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    env = data.get("env") or {}
    if not env:
        return []
    return ["", _t("env", lang), *(f"  {k}={printable(str(v))}" for k, v in env.items())]


def _note_lines(data: Mapping[str, Any], lang: str) -> list[str]:
    notes = [n for n in data.get("notes") or [] if isinstance(n, Mapping)]
    if not notes:
        return []
    marks = {"problem": "x", "warning": "!", "info": "-"}
    return ["", _t("notes", lang), *(f"  {marks.get(n.get('level', 'info'), '-')} {printable(note_text(n, lang))}" for n in notes)]


def machine_text(report: MachineReport, lang: str = "en") -> str:
    data = report.data
    lines = [_t("title", lang)]
    if data.get("detected_at"):
        total = (data.get("timings_ms") or {}).get("total")
        lines[0] += "  (" + _t("detected", lang, at=printable(str(data["detected_at"])), s=(total or 0) / 1000) + ")"
    lines.append("")
    lines += _guarded(lambda: _gpu_lines(data, lang), lang)
    lines.append("")
    lines += _guarded(lambda: _python_lines(data, lang), lang)
    lines.append("")
    lines.append(_t("allocator", lang))
    lines += _guarded(lambda: _alloc_lines(data.get("allocator"), lang), lang)
    lines.append("")
    lines += _guarded(lambda: _server_lines(data, lang), lang)
    lines.append("")
    lines += _guarded(lambda: _host_lines(data, lang), lang)
    lines += _guarded(lambda: _env_lines(data, lang), lang)
    lines += _guarded(lambda: _note_lines(data, lang), lang)
    lines.append("")
    lines.append(_t("facts", lang))
    width = max((len(f.name) for f in report.facts), default=0)
    for f in sorted(report.facts, key=lambda f: f.name):
        lines.append(f"  {f.name:<{width}}  {printable(str(f.value))}  ({printable(f.source)})")
    return "\n".join(lines) + "\n"
