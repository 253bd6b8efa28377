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
from ..i18n import Text
from ..text.safe_text import printable
from ..text.units import gib

L: dict[str, Text] = {
    "title": Text("Machine", "本机"),
    "detected": Text("detected {at} in {s:.2f} s", "检测于 {at}，耗时 {s:.2f} 秒"),
    "gpus": Text("GPUs", "GPU"),
    "no_gpu": Text("no GPU information", "无 GPU 信息"),
    "driver": Text("driver {d}, CUDA {c}, NVML {n}", "驱动 {d}，CUDA {c}，NVML {n}"),
    "mem": Text(
        "{total} total, {used} used, {free} free", "总计 {total}，已用 {used}，空闲 {free}"
    ),
    "reserved": Text(", {r} reserved by the driver", "，驱动保留 {r}"),
    "v1": Text(" (v1 numbers: 'used' includes the driver's reservation)", "（v1 数据：'已用' 包含驱动保留部分）"),
    "mig": Text("MIG enabled: {n} slice(s)", "MIG 已启用：{n} 个实例"),
    "procs_none": Text("no process holds memory", "没有进程占用显存"),
    "proc": Text("process {pid} {name}: {mem}", "进程 {pid} {name}：{mem}"),
    "proc_hidden": Text("(not visible from here)", "（此处不可见）"),
    "owner_server": Text("vLLM server {pid}, {role}", "vLLM 服务 {pid}，{role}"),
    "owner_leftover": Text("vLLM {role} without a server", "无服务的 vLLM {role}"),
    "visible": Text("vLLM would use: {ids} ({how})", "vLLM 将使用：{ids}（{how}）"),
    "visible_none": Text("none", "无"),
    "cvd_unset": Text("CUDA_VISIBLE_DEVICES unset", "未设置 CUDA_VISIBLE_DEVICES"),
    "links": Text("links", "互联"),
    "python": Text("Python environments", "Python 环境"),
    "chosen": Text("versions used for the diagnosis", "诊断所用版本"),
    "not_installed": Text("not installed", "未安装"),
    "allocator": Text("PyTorch allocator (this shell's environment)", "PyTorch 显存分配器（当前 shell 的环境变量）"),
    "alloc_none": Text("no allocator variable set: torch defaults (expandable_segments off)", "未设置分配器变量：torch 默认值（expandable_segments 关闭）"),
    "alloc_uses": Text("torch uses {var}={value}", "torch 使用 {var}={value}"),
    "alloc_unsure": Text("unsure which variable torch uses (torch version unknown)", "无法确定 torch 使用哪个变量（torch 版本未知）"),
    "servers": Text("Running vLLM servers", "运行中的 vLLM 服务"),
    "no_servers": Text("none found", "未发现"),
    "server": Text("process {pid} ({how})", "进程 {pid}（{how}）"),
    "interp": Text("interpreter", "解释器"),
    "env_unreadable": Text("environment", "环境变量"),
    "children": Text("children", "子进程"),
    "leftovers": Text("vLLM processes without a server", "没有对应服务的 vLLM 进程"),
    "host": Text("Host", "主机"),
    "ram": Text("RAM {total} total, {avail} available", "内存总计 {total}，可用 {avail}"),
    "cgroup": Text("container memory limit {limit}", "容器内存上限 {limit}"),
    "shm": Text("/dev/shm {shm}", "/dev/shm {shm}"),
    "container": Text("container: {what}", "容器：{what}"),
    "yes": Text("yes", "是"),
    "no": Text("no", "否"),
    "env": Text("Environment", "环境变量"),
    "notes": Text("Notes", "提示"),
    "facts": Text("Facts for the diagnosis", "用于诊断的事实"),
    "unknown": Text("unknown", "未知"),
    "unreadable": Text("(this part of the saved report could not be read)", "（保存的报告中这一部分无法读取）"),
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
        return [f"  {g['index']}  {printable(str(g['error']))}"]
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


_ROLES_ZH = (
    (re.compile(r"^runs oomwizard$"), "运行 oomwizard"),
    (re.compile(r"^runs vLLM \(process (\d+)\)$"), r"运行 vLLM（进程 \1）"),
    (re.compile(r"^runs `vllm` on PATH \((.*)\)$"), r"PATH 上的 `vllm` 所用（\1）"),
)


def _role(role: str, lang: str) -> str:
    """Roles are stored in English (the JSON is for machines); shown in the reader's language."""
    if lang == "zh":
        for pat, repl in _ROLES_ZH:
            if pat.match(role):
                return pat.sub(repl, role)
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
            out.append(f"    {_t('env_unreadable', lang)}: {s['env_error']}")
        if (s.get("config_file") or {}).get("error"):
            out.append(f"    --config: {s['config_file']['error']}")
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
