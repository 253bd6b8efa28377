"""Plain mode's welcome menu, facts review and save, as the full-screen wizard offers them.

The same actions in the same order (the demo first when there is no GPU and no log), the same
checks (:func:`check_log_path`, :meth:`Session.override` with the catalog's types) and the same
file (:func:`render.save.save_leaf`), so the two frontends cannot drift apart; only the drawing
differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine import Done
from .facts.catalog import CATALOG, FactValueError
from .facts.model import json_value
from .frontend.inputs import InputProblem, check_log_path, fact_title, format_value
from .frontend.options import DEMO_LOG, DEMO_MACHINE
from .report.save import default_filename, save_leaf
from .text.cells import cell_len, ljust
from .text.output import one_line

if TYPE_CHECKING:
    from .plain import PlainWizard

ACTIONS = ("open_log", "paste", "detect", "questions", "demo")
"""The welcome screen's actions, in its order (tui/screens/welcome.py)."""


def welcome(w: PlainWizard) -> None:
    """No log given: offer what the welcome screen offers, until a log is read or questions start."""
    demo_ok = DEMO_LOG.exists() and DEMO_MACHINE.exists()
    no_gpu = w.machine is None or not w.machine.has_gpu
    order = ("demo", *[a for a in ACTIONS if a != "demo"]) if no_gpu and demo_ok else ACTIONS
    if not demo_ok:
        order = tuple(a for a in order if a != "demo")
    while True:
        choices = [(f"{w.t(f'tui.welcome.{a}')} — {w.t(f'tui.welcome.{a}_hint')}", a) for a in order]
        lead = w.t("tui.welcome.lead") + ("\n" + w.t("tui.welcome.no_gpu") if order[0] == "demo" else "")
        action = w.prompts.select(lead, choices, order[0], "")
        if action == "questions":
            return
        if action == "detect":
            review_facts(w)
            continue
        if action == "demo":
            w.opts.demo, w.opts.logs, w.opts.machine = True, [], None
            w.load_machine()
            if w.read_and_show(w.opts.effective_logs()):
                return
            continue
        if action == "open_log" and _open_log(w):
            return
        if action == "paste" and _paste(w):
            return


def _open_log(w: PlainWizard) -> bool:
    def valid(text: str) -> bool | str:
        if not text.strip():
            return True
        problem = check_log_path(text, w.lang)[1]
        return problem if problem is not None else True

    raw = w.prompts.path(w.t("plain.open_path"), valid).strip()
    path = check_log_path(raw, w.lang)[0] if raw else None
    return path is not None and w.read_and_show([path])


def _paste(w: PlainWizard) -> bool:
    text = w.prompts.lines(w.t("plain.paste_help"))
    if not text.strip():
        w.prompts.say(w.t("tui.paste.empty"))
        return False
    try:
        diag = w.sources.diagnose_text(text, "pasted")
    except InputProblem as e:
        w.prompts.say(f"oomwizard: {one_line(e.text(w.lang))}")
        return False
    w.show_diagnosis(diag)
    return True


def facts_table(w: PlainWizard) -> list[str]:
    """Every known fact: its name, value and where it came from, wrapped to the width (never cut)."""
    facts = sorted(w.session.facts, key=lambda f: list(CATALOG).index(f.name) if f.name in CATALOG else 999)
    if not facts:
        return [w.t("tui.facts.none")]
    col = min(28, max(cell_len(f.name) for f in facts))
    lines: list[str] = []
    for f in facts:
        value = one_line(format_value(f.name, f.value, w.lang))
        source = one_line(f.source)
        others = [a for a in w.session.facts.alternatives(f.name) if json_value(a.value) != json_value(f.value)]
        if others:
            alt = ", ".join(f"{one_line(format_value(a.name, a.value, w.lang))} ({one_line(a.source)})" for a in others[:2])
            source += "  " + w.t("tui.facts.other", others=alt)
        lines.append(f"{ljust(f.name, col)}  {value}  — {fact_title(f.name, w.lang)}; {source}")
    return lines


def review_facts(w: PlainWizard) -> None:
    """Show the facts; change any by name (the value checked by its type) until Enter on nothing."""
    while True:
        w.prompts.say(f"\n-- {w.t('tui.facts.title')} --")
        hang = " " * (min(28, max((cell_len(f.name) for f in w.session.facts), default=0)) + 2)
        for line in facts_table(w):
            w.prompts.say(line, "  ", "  " + hang)
        name = _ask_name(w)
        if name is None:
            return
        spec = CATALOG[name]
        fact = w.session.facts.get(name)
        label = w.t("tui.facts.edit", title=spec.title(w.lang), name=name,
                    type=spec.type + (f": {', '.join(spec.values)}" if spec.values else ""))

        def valid(text: str, name: str = name) -> bool | str:
            try:
                from .facts.catalog import coerce

                coerce(name, text.strip())
            except FactValueError as e:
                return one_line(str(e))
            return True

        current = "" if fact is None else one_line(str(json_value(fact.value)))
        raw = w.prompts.text(label, current, "", valid).strip()
        try:
            new = w.session.override(name, raw)
            w.user_facts.add(new)
        except FactValueError as e:  # the prompt checked it; a stand-in prompt may not have
            w.prompts.say(one_line(str(e)))
            continue
        w.prompts.say(w.t("tui.facts.set", name=name, value=one_line(format_value(name, new.value, w.lang))))


def _ask_name(w: PlainWizard) -> str | None:
    def valid(text: str) -> bool | str:
        raw = text.strip()
        if not raw or _complete(raw) is not None:
            return True
        return w.t("tui.facts.unknown_name", name=one_line(raw))

    raw = w.prompts.text(w.t("plain.facts_prompt"), "", "", valid).strip()
    return _complete(raw) if raw else None


def _complete(raw: str) -> str | None:
    """A fact name, or the one name it is the start of (as the TUI's completion offers)."""
    if raw in CATALOG:
        return raw
    starts = [n for n in CATALOG if n.startswith(raw)]
    return starts[0] if len(starts) == 1 else None


def offer_save(w: PlainWizard, done: Done) -> None:
    """After the fix: save it (default no) to the file the TUI's ``s`` writes; ask before replacing."""
    if not w.prompts.confirm(w.t("plain.save_offer")):
        return
    raw = w.prompts.path(w.t("plain.save_path"), lambda text: True, default_filename(done)).strip()
    if not raw:
        return
    overwrite = False
    while True:
        try:
            path = save_leaf(raw, done, w.kb, w.lang, overwrite)
        except FileExistsError:
            if not w.prompts.confirm(w.t("plain.save_replace", path=raw)):
                return
            overwrite = True
            continue
        except OSError as e:
            w.prompts.say(w.t("tui.save.failed", path=raw, error=e.strerror or e))
            return
        w.prompts.say(w.t("tui.save.done", path=str(path)))
        return
