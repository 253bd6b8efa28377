"""``oomwizard verify`` as text: each checklist item with its verdict and the line that decided it."""

from __future__ import annotations

import textwrap

from ..i18n import ui
from ..verify import FAIL, MANUAL, PASS, UNKNOWN, UNPROVEN, Verification

MARKS = {PASS: "[x]", FAIL: "[!]", UNPROVEN: "[?]", UNKNOWN: "[?]", MANUAL: "[ ]"}


def verification_text(v: Verification, lang: str = "en", width: int = 88) -> str:
    out = [f"== {ui('verify.title', lang)}: {v.leaf.title(lang)} ==  [{v.leaf.id}]", ""]
    if v.ready_at is not None:
        out.append(ui("verify.ready", lang, where=f"{v.ready_at.file}:{v.ready_at.line}"))
    else:
        out.append(ui("verify.not_ready", lang))
    out.append("")
    for r in v.results:
        head = f"{MARKS[r.status]} {r.check.text(lang)}"
        out.append(textwrap.fill(head, width=width, subsequent_indent="    ", break_long_words=False))
        note = ui(f"verify.{r.status}", lang)
        if r.detail:
            note += f" — {r.detail}"
        out.append(f"    {note}")
        if r.hit is not None:
            out.append(f"    {r.hit.file}:{r.hit.line}: {r.hit.text}")
    out.append("")
    if v.failed:
        out.append(ui("verify.summary_failed", lang))
    elif v.proven:
        out.append(ui("verify.summary_proven", lang))
    else:
        out.append(ui("verify.summary_unproven", lang))
    return "\n".join(out) + "\n"
