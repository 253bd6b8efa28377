"""``oomwizard verify`` as text: each checklist item with its verdict and the line that decided it."""

from __future__ import annotations

from ..i18n import ui
from ..text import cells
from ..text.safe_text import printable
from ..verify import FAIL, MANUAL, PASS, UNKNOWN, UNPROVEN, Verification

MARKS = {PASS: "[x]", FAIL: "[!]", UNPROVEN: "[?]", UNKNOWN: "[?]", MANUAL: "[ ]"}


def verification_text(v: Verification, lang: str = "en", width: int = 88) -> str:
    def fill(text: str, indent: str = "", hang: str = "    ") -> str:
        return cells.fill(text, width, indent, hang)

    out = [fill(f"== {ui('verify.title', lang)}: {v.leaf.title(lang)} ==  [{v.leaf.id}]"), ""]
    if v.ready_at is not None:
        out.append(ui("verify.ready", lang, where=f"{printable(v.ready_at.file)}:{v.ready_at.line}"))
    else:
        out.append(fill(ui("verify.not_ready", lang)))
    out.append("")
    for r in v.results:
        out.append(fill(f"{MARKS[r.status]} {r.check.text(lang)}"))
        note = ui(f"verify.{r.status}", lang)
        if r.reason:
            note += f" — {r.reason_text(lang)}"
        out.append(fill(note, "    ", "      "))
        if r.hit is not None:
            # The deciding log line, as grep would show it, wrapped with a hanging indent.
            out.append(fill(f"{printable(r.hit.file)}:{r.hit.line}: {r.hit.text}", "    ", "      "))
    out.append("")
    key = "failed" if v.failed else "proven" if v.proven else "unproven"
    out.append(fill(ui(f"verify.summary_{key}", lang), hang=""))
    return "\n".join(out) + "\n"
