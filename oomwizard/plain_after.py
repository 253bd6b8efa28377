"""Plain mode after the fix is printed: check the next start's log now, write a support bundle.

Both are offered with No as the default, as the full-screen wizard offers them; the fix is on the
screen already, so leaving either in any way (No, an empty path, Ctrl+C, end of input) ends the
wizard normally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .frontend.inputs import check_log_path
from .report.verification import verification_text
from .text.output import one_line

if TYPE_CHECKING:
    from .engine import Done
    from .kb.model import Leaf
    from .plain import PlainWizard


def offer_report(w: PlainWizard, done: Done) -> None:
    """Write the support bundle of this walk into the current folder, if the operator wants one."""
    from .bundle.build import BundleInput
    from .bundle.frontend import folder_for, machine_source, write_walk_bundle

    try:
        if not w.prompts.confirm(w.t("tui.plain.report_offer")):
            return
    except (KeyboardInterrupt, EOFError):
        print(file=w.out, flush=True)
        return
    m = w.machine
    state = BundleInput(
        w.kb, w.lang, diagnosis=w.diagnosis, machine=m.data if m is not None else None,
        machine_source=machine_source(bool(w.opts.replay), m), facts=w.session.facts.copy(),
        overrides=w.opts.overrides.copy(), answers=dict(w.session.answers), order=list(w.session.order), done=done,
        replayed_from=getattr(w.opts, "replay", None), log_paths=w.opts.effective_logs())
    try:
        paths = write_walk_bundle(state, folder_for([]))
    except Exception as e:  # noqa: BLE001 - the fix is on the screen already; say why and end normally
        print(f"oomwizard: {w.t('tui.report.failed', error=f'{type(e).__name__}: {e}')}", file=w.err)
        return
    print(w.t("tui.report.done", paths=", ".join(paths)), file=w.err, flush=True)

def offer_verify(w: PlainWizard, leaf: Leaf) -> None:
    """Check the next start's log now, if the operator wants to (and the checklist can be checked).

    The fix is on the screen already: leaving here in any way (No, an empty path, Ctrl+C, end of
    input) ends the wizard normally.
    """
    from .frontend.verdicts import check_path
    from .logs.diagnose import InputError

    if not any(c.auto for c in leaf.checks):
        return

    def valid(text: str) -> bool | str:
        if not text.strip():
            return True
        problem = check_log_path(text, w.lang)[1]
        return problem if problem is not None else True

    try:
        if not w.prompts.confirm(w.t("tui.plain.verify_offer")):
            return
        raw = w.prompts.path(w.t("tui.plain.verify_path"), valid).strip()
    except (KeyboardInterrupt, EOFError):
        print(file=w.out, flush=True)
        return
    path = check_log_path(raw, w.lang)[0] if raw else None
    if path is None:
        return
    print(w.t("tui.verify.running", what=one_line(path)), file=w.err, flush=True)
    try:
        checked = check_path(leaf, path, w.lang)
    except InputError as e:
        print(f"oomwizard: {one_line(str(e))}", file=w.err)
        return
    for warning in checked.warnings:
        print(f"oomwizard: {warning}", file=w.err)
    w.out.write("\n" + verification_text(checked.verification, w.lang, width=w.text_width))
    w.out.flush()
