"""The onboarding material: glossary, timeline, browse entries, tour and guides.

A new operator learns from these without a failure to check them against, so a wrong flag or a link
to nothing misleads without anyone noticing. Checked: every term in both languages; every leaf, term
and step a reference names exists; every flag and ``VLLM_*`` variable exists in some release; every
scenario has a step of the timeline (so it appears in browse and on the timeline); the timeline's
steps are the failure phases the log diagnosis names; the tour has five to eight steps; links in the
guides resolve.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..i18n import LANGS
from ..kb.releases import ENV_RE, FLAG_RE, NEVER_EXISTED, PREFIX_ONLY_FLAGS, load_releases
from ..onboard.data import Onboarding, Term, load_onboarding
from ..versions import VersionError, VersionSpec
from .articles import LINK_RE
from .context import LintContext

GLOSSARY = "content/glossary/terms.yaml"
TIMELINE = "content/memory/timeline.yaml"
BROWSE = "content/browse/scenarios.yaml"
TOUR = "content/tour/steps.yaml"
TOUR_STEPS = (5, 8)
MIN_TERMS = 25
TERM_SCHEME = "term:"
"""Guides link a glossary entry as ``[text](term:<id>)``; the site and the TUI resolve it."""


def _flag_problem(flag: str) -> str | None:
    releases = load_releases()
    if flag in PREFIX_ONLY_FLAGS or any(r.has_flag(flag) for r in releases):
        return None
    return f"flag {flag} exists in no vLLM release of oomwizard/data/vllm_releases.json"


def _env_problem(name: str) -> str | None:
    if name in NEVER_EXISTED:
        return f"{name}: {NEVER_EXISTED[name]}"
    if name.startswith("VLLM_") and not any(r.has_env(name) for r in load_releases()):
        return f"variable {name} exists in no vLLM release of oomwizard/data/vllm_releases.json"
    return None


def check_onboarding(ctx: LintContext) -> None:
    if not any((ctx.base / f).exists() for f in (GLOSSARY, TIMELINE, BROWSE, TOUR)):
        return  # a knowledge base without onboarding material (a test fixture); the real one has it
    ob = load_onboarding(ctx.base)
    ctx.problems.extend(ob.problems)
    if len(ob.terms) < MIN_TERMS:
        ctx.error(GLOSSARY, 1, f"the glossary has {len(ob.terms)} terms; at least {MIN_TERMS} are expected")
    for t in ob.terms.values():
        _check_term(ctx, ob, t)
    _check_timeline(ctx, ob)
    _check_browse(ctx, ob)
    if ob.tour and not TOUR_STEPS[0] <= len(ob.tour) <= TOUR_STEPS[1]:
        ctx.error(TOUR, 1, f"the tour has {len(ob.tour)} steps; it should have {TOUR_STEPS[0]} to {TOUR_STEPS[1]}")
    for ts in ob.tour:
        for tid in ts.terms:
            if tid not in ob.terms:
                ctx.error(TOUR, ts.line, f"tour step {ts.id}: term {tid!r} is not in the glossary")
    _check_guides(ctx, ob)


def _check_term(ctx: LintContext, ob: Onboarding, t: Term) -> None:
    """Its flags and variables exist in some release, the leaves and terms it names exist."""
    for flag in t.flags:
        if (p := _flag_problem(flag)) is not None:
            ctx.error(GLOSSARY, ctx.line_in(GLOSSARY, t.line, "flags", flag) if t.line else None, f"term {t.id}: {p}")
    for name in t.env:
        if (p := _env_problem(name)) is not None:
            ctx.error(GLOSSARY, ctx.line_in(GLOSSARY, t.line, "env", name), f"term {t.id}: {p}")
    for lang in LANGS:
        problems = [_env_problem(n) for n in ENV_RE.findall(t.definition(lang))]
        problems += [_flag_problem(f) for f in FLAG_RE.findall(t.definition(lang))]
        for p in problems:
            if p is not None:
                ctx.error(f"content/glossary/{lang}.yaml", t.lang_lines.get(lang), f"term {t.id}: {p}")
    for leaf in t.leaves:
        if leaf not in ctx.kb.leaves:
            ctx.error(GLOSSARY, t.line, f"term {t.id}: leaf {leaf!r} does not exist")
    for other in t.related:
        if other not in ob.terms:
            ctx.error(GLOSSARY, t.line, f"term {t.id}: related term {other!r} is not in the glossary")
    if not t.leaves:
        ctx.warn(GLOSSARY, t.line, f"term {t.id}: names no leaf that uses it")


def _check_timeline(ctx: LintContext, ob: Onboarding) -> None:
    """The timeline's steps are exactly the failure phases the diagnosis names."""
    from ..logs.rank import PHASE_NAMES

    for step in ob.steps.values():
        if step.id not in PHASE_NAMES:
            ctx.error(TIMELINE, step.line, f"step {step.id!r} is not a failure phase of the diagnosis ({', '.join(PHASE_NAMES)})")
        for tid in step.terms:
            if tid not in ob.terms:
                ctx.error(TIMELINE, step.line, f"step {step.id}: term {tid!r} is not in the glossary")
    for phase in PHASE_NAMES:
        if ob.steps and phase not in ob.steps:
            ctx.error(TIMELINE, 1, f"the diagnosis names phase {phase!r}, which the timeline lacks")


def _check_browse(ctx: LintContext, ob: Onboarding) -> None:
    """One browse entry per scenario, each on a step of the timeline, its messages' flags real."""
    for sid in ctx.kb.scenarios:
        if sid not in ob.scenarios:
            ctx.error(BROWSE, 1, f"scenario {sid!r} has no entry: it would be missing from browse and the timeline")
    for info in ob.scenarios.values():
        if info.id not in ctx.kb.scenarios:
            ctx.error(BROWSE, info.line, f"{info.id!r} is not a scenario of decision_trees/scenarios.yaml")
        if info.step not in ob.steps:
            ctx.error(BROWSE, info.line, f"scenario {info.id}: step {info.step!r} is not a step of {TIMELINE}")
        if not info.messages:
            ctx.warn(BROWSE, info.line, f"scenario {info.id}: lists no message an operator would read")
        for m in info.messages:
            try:
                VersionSpec.parse(m.versions)
            except VersionError as e:
                ctx.error(BROWSE, m.line, f"scenario {info.id}: {e}")
            for flag in FLAG_RE.findall(m.text):
                if (p := _flag_problem(flag)) is not None:
                    ctx.error(BROWSE, m.line, f"scenario {info.id}: {p}")


def _check_guides(ctx: LintContext, ob: Onboarding) -> None:
    """Every guide in both languages; outside code blocks, its links resolve and its flags exist."""
    for gid in sorted({g for g, _ in ob.guides}):
        for lang in LANGS:
            if (gid, lang) not in ob.guides:
                ctx.error(f"content/{lang}/guides/{gid}.md", None, f"guide {gid!r} has no {lang} version")
    for (gid, lang), text in sorted(ob.guides.items()):
        file = f"content/{lang}/guides/{gid}.md"
        folder = ctx.base / "content" / lang / "guides"
        in_code = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith(("```", "~~~")):
                in_code = not in_code
            if not in_code:
                _check_guide_line(ctx, ob, file, folder, n, line)


def _check_guide_line(ctx: LintContext, ob: Onboarding, file: str, folder: Path, n: int, line: str) -> None:
    for target in LINK_RE.findall(line):
        if target.startswith(TERM_SCHEME):
            if target[len(TERM_SCHEME):] not in ob.terms:
                ctx.error(file, n, f"link to term {target[len(TERM_SCHEME):]!r}, which is not in the glossary")
        elif not re.match(r"^[a-z][a-z0-9+.-]*:|^#", target):
            path = target.split("#", 1)[0]
            if path and not (folder / path).resolve().exists():
                ctx.error(file, n, f"link to {target!r}, which does not exist")
    problems = [_env_problem(name) for name in ENV_RE.findall(line)] + [_flag_problem(f) for f in FLAG_RE.findall(line)]
    for p in problems:
        if p is not None:
            ctx.error(file, n, p)
