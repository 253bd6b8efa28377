"""``browse``, ``browse --glossary`` and ``tour`` as plain text: for a pipe, a dumb terminal, ``--plain``."""

from __future__ import annotations

import textwrap

from .browse import Result
from .data import Onboarding, Term
from .texts import t
from .tour import TourPage


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def browse_text(result: Result, ob: Onboarding, lang: str, width: int = 88) -> str:
    out = [t("onboard.count", lang, n=len(result.entries), total=len(ob.scenarios) or len(result.entries))
           + (f" ({t('onboard.by_diagnosis', lang)})" if result.how == "diagnosis" else ""), ""]
    if not result.entries:
        out.append(t("onboard.none", lang))
    for e in result.entries:
        out.append(f"{e.id}  {e.title}")
        out += _wrap(e.summary, width)
        if e.step is not None:
            pos = ob.position(e.step.id)
            out.append(f"  {t('onboard.step', lang)}: {e.step.title(lang)} [{e.step.id}{', ' + pos if pos else ''}]")
        if e.messages:
            out.append(f"  {t('onboard.messages', lang)}:")
            for m in e.messages:
                where = f"vLLM {m.versions}" if m.versions != "*" else ""
                head = f"    [{t('onboard.kind.' + m.kind, lang)}{', ' + where if where else ''}; {m.file}]"
                out.append(head)
                out += _wrap(m.text, width, "      ")
        if e.leaves:
            out.append(f"  {t('onboard.leaves', lang)}: " + ", ".join(leaf.id for leaf in e.leaves))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def term_text(term: Term, lang: str, width: int = 88) -> list[str]:
    out = [f"{term.name(lang)}  [{term.id}]"]
    out += _wrap(term.definition(lang), width)
    for key, items in (("onboard.flags", term.flags), ("onboard.env", term.env), ("onboard.used_by", term.leaves),
                       ("onboard.related", term.related)):
        if items:
            out.append(f"  {t(key, lang)}: " + ", ".join(items))
    if term.log:
        out.append(f"  {t('onboard.log', lang)}:")
        out += [f"    {line}" for line in term.log]
    if term.source:
        out.append(f"  {t('onboard.checked_in', lang)}: {term.source}")
    return out


def glossary_text(ob: Onboarding, lang: str, query: str = "", width: int = 88) -> str:
    q = query.strip().lower()
    out: list[str] = [t("onboard.glossary", lang), ""]
    for term in sorted(ob.terms.values(), key=lambda x: x.name(lang).lower()):
        hay = " ".join([term.id, term.name.en, term.name.zh, term.definition(lang), *term.flags, *term.env]).lower()
        if q and q not in hay:
            continue
        out += [*term_text(term, lang, width), ""]
    return "\n".join(out).rstrip() + "\n"


def tour_text(pages: list[TourPage], ob: Onboarding, lang: str, width: int = 88) -> str:
    out = [t("onboard.tour", lang), ""]
    for n, page in enumerate(pages, 1):
        out.append(f"{t('onboard.tour_step', lang, n=n, total=len(pages))}: {page.title}")
        out += _wrap(page.body, width)
        if page.verify:
            out += _wrap(f"{t('onboard.tour_verify', lang)}: {page.verify}", width)
        names = [ob.terms[i].name(lang) for i in page.terms if i in ob.terms]
        if names:
            out.append(f"  {t('onboard.terms', lang)}: " + ", ".join(names))
        out.append("")
    return "\n".join(out).rstrip() + "\n"

