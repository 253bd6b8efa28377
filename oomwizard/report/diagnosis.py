"""A diagnosis as text or Markdown: the best match, why, the lines behind it, the key numbers.

Everything that comes from a log goes through :func:`~oomwizard.text.safe_text.printable` (no
escape sequence reaches the terminal) and :func:`~oomwizard.text.redact.redact_text` (no token
reaches the screen or a saved report).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..facts.catalog import CATALOG
from ..facts.model import Fact
from ..i18n import Text, msg
from ..logs.model import Diagnosis, Match
from ..text.cells import cell_len, fill, ljust
from ..text.redact import redact_text
from ..text.safe_text import printable
from ..text.units import human_bytes

UI = {
    "title": msg("report.diagnosis.title"),
    "best": msg("report.diagnosis.best"),
    "score": msg("report.diagnosis.score"),
    "why": msg("report.diagnosis.why"),
    "evidence": msg("report.diagnosis.evidence"),
    "others": msg("report.diagnosis.others"),
    "facts": msg("report.diagnosis.facts"),
    "oom": msg("report.diagnosis.oom"),
    "inputs": msg("report.diagnosis.inputs"),
    "warnings": msg("report.diagnosis.warnings"),
    "nothing": msg("report.diagnosis.nothing"),
    "weak": msg("report.diagnosis.weak"),
    "line": msg("report.diagnosis.line"),
    "oom_line": msg("report.diagnosis.oom_line"),
    "pools": msg("report.diagnosis.pools"),
}

# Facts worth showing, in this order (others stay in the JSON).
KEY_FACTS = (
    "vllm_version", "engine", "model_runner", "model", "model_arch", "quantization", "dtype",
    "tp", "pp", "dp", "max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens",
    "enforce_eager", "kv_cache_dtype", "cudagraph_mode", "speculative_method", "lora_enabled",
    "expandable_segments", "alloc_conf", "gpu_name", "gpu_mem_total_bytes", "error_platform",
    "failure_phase", "failed_rank",
    "weights_gib", "kv_cache_gib", "kv_cache_tokens", "max_concurrency", "kv_needed_gib",
    "estimated_max_model_len", "cudagraph_estimate_gib", "cudagraph_actual_gib", "activation_peak_gib",
    "non_torch_gib", "startup_free_gib", "startup_total_gib", "requested_gib", "suggested_kv_cache_bytes",
    "sampler_dummy_requests", "workspace_required_mb", "workspace_current_mb", "sleep_mode", "sleep_freed_gib",
    "sleep_in_use_gib", "serve_command",
)


NARROW_VALUES = 32
"""Fewer cells than this left for the facts' values puts each value under its name."""


def safe(text: str) -> str:
    return redact_text(printable(str(text)))


@lru_cache(maxsize=1)
def _titles() -> dict[str, Text]:
    """Scenario titles from the knowledge base; from scenarios.yaml alone when the rest is broken
    (a diagnosis is worth showing even when a leaf file does not load: ``lint`` names the file)."""
    from ..kb.loader import get_kb
    from ..kb.titles import scenario_titles
    from ..kb.yamlsrc import KBError

    try:
        return {sid: sc.title for sid, sc in get_kb().scenarios.items()}
    except (KBError, OSError):
        return {sid: title for sid, (title, _) in scenario_titles().items()}


def scenario_title(sid: str, lang: str) -> str:
    t = _titles().get(sid)
    return t(lang) if t else sid



def fact_value(f: Fact) -> str:
    spec = CATALOG.get(f.name)
    v = f.value
    if spec is not None and spec.type == "bytes" and isinstance(v, (int, float)):
        return human_bytes(v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        text = f"{v:.4f}".rstrip("0").rstrip(".")
    elif isinstance(v, int):
        text = f"{v:,}" if abs(v) >= 10000 else str(v)
    else:
        text = str(v)
    unit = spec.unit if spec is not None and spec.type != "bytes" else ""
    if unit and unit != "B":
        text += "x" if unit == "x" else f" {unit}"
    return safe(text)


def _fact_title(name: str, lang: str) -> str:
    spec = CATALOG.get(name)
    return spec.title(lang) if spec else name


def _oom_summary(m: dict[str, Any], lang: str) -> str:
    def b(key: str) -> str:
        v = m.get(key)
        return human_bytes(v) if isinstance(v, (int, float)) else "?"

    pools = ""
    if isinstance(m.get("private_pools"), (int, float)) and m["private_pools"]:
        pools = UI["pools"](lang).format(n=b("private_pools"))
    return UI["oom_line"](lang).format(
        requested=b("requested"), gpu=m.get("gpu_index", "?"), total=b("total"), free=b("free"),
        proc=b("this_process"), others=b("other_processes"), alloc=b("allocated"), pools=pools,
        unalloc=b("reserved_unallocated"),
    )


def _primary_oom(diag: Diagnosis) -> dict[str, Any] | None:
    f = diag.facts.get("oom_requested_bytes") or diag.facts.get("oom_total_bytes")
    if f is None:
        return diag.oom_messages[0] if diag.oom_messages else None
    for m in diag.oom_messages:
        if m.get("line") == f.line and m.get("file") == f.file:
            return m
    return diag.oom_messages[0] if diag.oom_messages else None


def _where(file: str, line: int) -> str:
    return f"{safe(file)}:{line}"


# --- text -------------------------------------------------------------------------------------


def _fill(text: str, indent: str, hang: str, width: int) -> str:
    return fill(text, width, indent, hang)


def diagnosis_text(diag: Diagnosis, lang: str = "en", width: int = 88) -> str:
    """The diagnosis for a terminal or a pipe; prose wraps at ``width``, log quotes with a hanging indent."""
    out: list[str] = [UI["title"](lang), "=" * cell_len(UI["title"](lang))]
    best = diag.best
    if best is None:
        out.append(_fill(UI["nothing"](lang), "", "", width))
    else:
        out.append(_fill(f"{UI['best'](lang)}: {scenario_title(best.scenario, lang)}  "
                         f"[{best.scenario}, {UI['score'](lang)} {best.score:.2f}]", "", "  ", width))
        if best.score < 0.5:
            out.append(_fill(UI["weak"](lang), "  ", "  ", width))
        out.extend(_match_text(best, lang, "  ", width))
        others = diag.matches[1:]
        if others:
            out.append("")
            out.append(UI["others"](lang) + ":")
            for m in others[:6]:
                reason = f" - {safe(m.reasons[0](lang))}" if m.reasons else ""
                out.append(_fill(f"{m.score:.2f}  {m.scenario}: {scenario_title(m.scenario, lang)}{reason}",
                                 "  ", "        ", width))
    facts = [diag.facts.get(n) for n in KEY_FACTS]
    shown = [f for f in facts if f is not None]
    if shown:
        out.append("")
        out.append(UI["facts"](lang) + ":")
        col = max(cell_len(_fact_title(f.name, lang)) for f in shown)
        # Two columns while the values keep room for a command line's words (a model's name, a
        # flag) whole; on a narrow terminal each name gets its own line and the value goes under it.
        longest = max(cell_len(word) for f in shown for word in fact_value(f).split() or [""])
        stacked = width - (col + 4) < max(NARROW_VALUES, longest)
        for f in shown:
            where = f"  ({UI['line'](lang)} {f.line})" if f.line else ""
            if stacked:
                out.append(_fill(_fact_title(f.name, lang), "  ", "    ", width))
                out.append(_fill(f"{fact_value(f)}{where}", "    ", "    ", width))
            else:
                out.append(_fill(f"{ljust(_fact_title(f.name, lang), col)}  {fact_value(f)}{where}", "  ", " " * (col + 4), width))
    oom = _primary_oom(diag)
    if oom is not None:
        out.append("")
        out.append(_fill(f"{UI['oom'](lang)} ({_where(str(oom.get('file', '')), int(oom.get('line', 0)))}):",
                         "", "  ", width))
        out.append(_fill(_oom_summary(oom, lang), "  ", "  ", width))
    if diag.warnings:
        out.append("")
        out.append(UI["warnings"](lang) + ":")
        out.extend(_fill(f"- {safe(w(lang))}", "  ", "    ", width) for w in diag.warnings)
    return "\n".join(out) + "\n"


def _match_text(m: Match, lang: str, indent: str, width: int) -> list[str]:
    out: list[str] = []
    if m.reasons:
        out.append(f"{indent}{UI['why'](lang)}:")
        out.extend(_fill(f"- {safe(r(lang))}", indent + "  ", indent + "    ", width) for r in m.reasons)
    if m.evidence:
        out.append(f"{indent}{UI['evidence'](lang)}:")
        for e in m.evidence:
            out.append(_fill(f"{_where(e.file, e.line)}  {safe(e.text)}", indent + "  ", indent + "      ", width))
    return out


# --- Markdown ---------------------------------------------------------------------------------


def _code(text: str) -> str:
    """Inline code that survives backticks and pipes in log text."""
    t = safe(text).replace("|", "\\|")
    if "`" not in t:
        return f"`{t}`"
    return f"`` {t} ``"


def _md_text(text: str) -> str:
    t = safe(text)
    for ch in "\\`*_[]<>|#":
        t = t.replace(ch, "\\" + ch)
    return t


def diagnosis_markdown(diag: Diagnosis, lang: str = "en") -> str:
    out: list[str] = [f"## {UI['title'](lang)}", ""]
    best = diag.best
    if best is None:
        out.append(UI["nothing"](lang))
    else:
        out.append(f"**{UI['best'](lang)}: {_md_text(scenario_title(best.scenario, lang))}** "
                   f"(`{best.scenario}`, {UI['score'](lang)} {best.score:.2f})")
        if best.score < 0.5:
            out += ["", f"_{UI['weak'](lang)}_"]
        if best.reasons:
            out += ["", f"### {UI['why'](lang)}", ""]
            out.extend(f"- {_md_text(r(lang))}" for r in best.reasons)
        if best.evidence:
            out += ["", f"### {UI['evidence'](lang)}", ""]
            out.extend(f"- {_code(_where(e.file, e.line))} {_code(e.text)}" for e in best.evidence)
        if diag.matches[1:]:
            out += ["", f"### {UI['others'](lang)}", ""]
            for m in diag.matches[1:7]:
                reason = f" — {_md_text(m.reasons[0](lang))}" if m.reasons else ""
                out.append(f"- {m.score:.2f} `{m.scenario}` {_md_text(scenario_title(m.scenario, lang))}{reason}")
    facts = [f for f in (diag.facts.get(n) for n in KEY_FACTS) if f is not None]
    if facts:
        out += ["", f"### {UI['facts'](lang)}", "", "| | | |", "|---|---|---|"]
        for f in facts:
            where = f"{UI['line'](lang)} {f.line}" if f.line else ""
            out.append(f"| {_md_text(_fact_title(f.name, lang))} | {_code(fact_value(f))} | {where} |")
    oom = _primary_oom(diag)
    if oom is not None:
        out += ["", f"### {UI['oom'](lang)}", "",
                f"{_code(_where(str(oom.get('file', '')), int(oom.get('line', 0))))}: {_md_text(_oom_summary(oom, lang))}"]
    if diag.warnings:
        out += ["", f"### {UI['warnings'](lang)}", ""]
        out.extend(f"- {_md_text(w(lang))}" for w in diag.warnings)
    return "\n".join(out) + "\n"
