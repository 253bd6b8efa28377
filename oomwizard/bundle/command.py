"""``oomwizard report`` and ``diagnose --replay``: the bundle written, and read back.

The CLI keeps only the parser lines; the work is here. ``report`` takes the walk ``diagnose``
takes (every suggestion accepted, unknowns answered "don't know"), so the bundle says what the
non-interactive diagnosis says; the frontends write their own walk with :func:`write_bundle`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..exitcodes import Exit
from ..i18n import detect_lang, msg, said, ui
from .build import BundleInput, noninteractive, read_logs
from .output import _err, bundle_text, format_for, write_file

NO_REDACT_WARNING = msg("bundle.command.no_redact_warning")
def cmd_report(args: argparse.Namespace) -> int:
    from .. import cli_shared as shared
    from ..facts.model import FactSet
    from ..logs.diagnose import InputError

    lang = detect_lang(args.lang)
    kb = shared.load_kb()
    overrides = shared.overrides(args.overrides)
    machine: dict[str, Any] | None = None
    source = "none"
    diag = kept = None
    if args.log:
        try:
            diag, kept = read_logs(args.log)
        except InputError as e:
            _err(said(e, lang))
            return Exit.INPUT
    if args.machine:
        from ..facts.saved import ReportError, load_report

        try:
            report = load_report(args.machine)
        except ReportError as e:
            _err(said(e, lang))
            return Exit.INPUT
        source = "file"
    else:
        shared.check_python(args)
        from ..facts.machine import detect_machine

        report = detect_machine(python=args.python)
        source = "detected"
    machine = report.data
    facts = FactSet()
    facts.update(report.facts)
    if diag is not None:
        facts.update(diag.facts)
    facts.update(overrides)
    done = noninteractive(kb, facts, diag, overrides, lang)
    b = BundleInput(kb, lang, diag, kept, machine, source, facts, overrides, done=done)
    fmt = format_for(args.output, args.format)
    if args.no_redact:
        _err(NO_REDACT_WARNING(lang))
    text = bundle_text(b, fmt, not args.no_redact)
    if args.output:
        try:
            shown = write_file(args.output, text)
        except OSError as e:
            _err(ui("bundle.command.cannot_write", lang, path=args.output, error=e.strerror or e))
            return Exit.OUTPUT
        _err(msg("bundle.command.written")(lang).format(path=shown))
    else:
        sys.stdout.write(text)
    if diag is not None:
        for w in diag.warnings:
            _err(w(lang))
    return Exit.OK


def load_replay(path: str, kb: Any, lang: str = "en") -> Any:
    """The replayed bundle, or exit 4 with the reason (in ``lang``)."""
    from .replay import BundleError, replay

    try:
        return replay(path, kb)
    except BundleError as e:
        _err(said(e, lang))
        raise SystemExit(Exit.INPUT) from None


def diagnose_replay(args: argparse.Namespace) -> int:
    """``diagnose --replay BUNDLE``: the diagnosis and fix recomputed from the bundle alone."""
    from .. import cli_shared as shared
    from ..report.diagnosis import diagnosis_markdown, diagnosis_text
    from ..report.leaf import leaf_json, leaf_markdown, leaf_text

    lang = detect_lang(args.lang)
    kb = shared.load_kb()
    rp = load_replay(args.replay, kb, lang)
    for w in rp.warnings:
        _err(w(lang))
    facts = rp.facts()
    overrides = rp.overrides
    overrides.update(shared.overrides(args.overrides))
    facts.update(shared.overrides(args.overrides))
    diag = rp.diagnosis
    done = noninteractive(kb, facts, diag, overrides, lang)
    if args.format == "json":
        out: dict[str, Any] = diag.to_json() if diag is not None else {"matches": [], "inputs": [], "warnings": []}
        out["facts"] = facts.to_json()
        out["leaf"] = leaf_json(done.leaf, done.facts, done.path) if done else None
        out["replayed_from"] = args.replay
        shared.print_json(out, "diagnose")
    else:
        if diag is not None:
            md = args.format == "markdown"
            sys.stdout.write(diagnosis_markdown(diag, lang) if md else diagnosis_text(diag, lang, shared.text_width()))
        if done is not None:
            sys.stdout.write("\n" + (leaf_markdown(done.leaf, done.facts, done.path, lang) if args.format == "markdown"
                                     else leaf_text(done.leaf, done.facts, done.path, lang, width=shared.text_width())))
    return Exit.OK if diag is not None and diag.matches else Exit.NO_MATCH
