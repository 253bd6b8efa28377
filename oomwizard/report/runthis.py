""""Run this": the one fix to try first and how to check it, for the top of a screen and the end of a print.

An operator at 80x24 over SSH sees the first screen and, after quitting, the last lines of the
scrollback. Both must hold a command they can paste and the way to check it worked, not the
explanation around them. The fix is the first of :func:`~oomwizard.report.leaf.render_fixes`
that applies and has commands; what to paste comes from
:func:`~oomwizard.advice.commands.paste_text`, the same text the copy key gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..advice.commands import RenderedFix, paste_text
from ..engine import Step
from ..facts.model import FactSet
from ..i18n import ui
from ..kb.model import Leaf
from ..text.cells import fill
from .leaf import leaf_text, render_fixes


@dataclass(frozen=True)
class RunThis:
    number: int
    """The fix's number, as the leaf, ``.sh`` and ``diagnose`` number it."""
    fix: RenderedFix
    commands: str
    verify: str | None
    """``oomwizard verify LEAF NEW.LOG`` when the checklist has automatic checks."""


def verify_command(leaf: Leaf) -> str | None:
    return f"oomwizard verify {leaf.id} NEW.LOG" if any(c.auto for c in leaf.checks) else None


def run_this(leaf: Leaf, facts: FactSet | None, lang: str = "en") -> RunThis | None:
    """The first fix that applies and has something to paste, or None."""
    for i, rf in enumerate(render_fixes(leaf, facts, lang), 1):
        text = paste_text(rf, lang)
        if text.strip():
            return RunThis(i, rf, text, verify_command(leaf))
    return None


def run_this_heading(top: RunThis, lang: str) -> str:
    return ui("runthis.heading", lang, n=top.number, title=top.fix.fix.title(lang),
              cost=ui(f"cost.{top.fix.fix.cost}", lang))


def run_this_text(leaf: Leaf, facts: FactSet | None, lang: str = "en", width: int = 88) -> str:
    """The closing block of the exit print: the commands unprefixed (a triple-click copies one), then verify."""
    top = run_this(leaf, facts, lang)
    if top is None:
        return ""
    # Wrapped by terminal cells (Chinese takes two), the heading with a hanging indent.
    out = [fill(f"== {run_this_heading(top, lang)} ==", width, "", "   "), top.commands, ""]
    after = ui("runthis.verify", lang) if top.verify else ui("runthis.checklist", lang)
    out.append(fill(after, width))
    if top.verify:
        out.append(top.verify)
    return "\n".join(out) + "\n"


def leaf_text_and_run_this(leaf: Leaf, facts: FactSet | None, path: tuple[Step, ...] | None, lang: str,
                           width: int) -> str:
    """The fix as text, then the Run this block last, as the wizard's exit print ends: at the
    bottom of a terminal, what to run and how to check it, not the sources."""
    closing = run_this_text(leaf, facts, lang, width=width)
    return leaf_text(leaf, facts, path, lang, width=width) + ("\n" + closing if closing else "")
