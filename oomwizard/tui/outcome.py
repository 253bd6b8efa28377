"""What the wizard leaves behind once the terminal is restored: the exit code and the fix.

:func:`~.app.run_tui` prints the fix on the screen stack (even under the facts screen or a
dialog), then its commands and checklist, so they stay in the scrollback after the wizard is gone;
a check of the next start's log made in the wizard is printed after them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from ..exitcodes import Exit
from ..i18n import ui

if TYPE_CHECKING:
    from ..engine import Done
    from ..verify import Verification


@dataclass
class Outcome:
    """What :func:`run_tui` does after the screen is restored."""

    code: int = Exit.OK
    done: Done | None = None
    saved: list[str] = field(default_factory=list)
    verification: Verification | None = None
    """The last check of the next start's log against ``done``'s checklist, if one was made."""
    signum: int | None = None
    """The signal that ended the wizard (SIGTERM, SIGHUP, …), if one did."""
    kb_problems: list[str] | None = None
    """Set when the knowledge base failed to load: what ``oomwizard lint`` would report first."""


def _width() -> int:
    return max(60, min(100, shutil.get_terminal_size((88, 24)).columns - 1))


def print_outcome(outcome: Outcome, lang: str, out: TextIO, err: TextIO, width: int | None = None) -> None:
    """After the screen is restored: the fix (if the wizard ended on one) into the scrollback."""
    from ..report.leaf import leaf_text
    from ..report.runthis import run_this_text
    from ..report.verification import verification_text
    from ..text.output import safe_stream

    out, err = safe_stream(out), safe_stream(err)
    if outcome.done is not None:
        done = outcome.done
        out.write("\n" + leaf_text(done.leaf, done.facts, done.path, lang, width=width or _width()))
        if outcome.verification is not None:
            out.write("\n" + verification_text(outcome.verification, lang, width=width or _width()))
        closing = run_this_text(done.leaf, done.facts, lang, width=width or _width())
        if closing:  # last, so the scrollback ends with what to run and how to check it
            out.write("\n" + closing)
    for path in outcome.saved:
        print(ui("tui.save.done", lang, path=path), file=err)
    out.flush()

