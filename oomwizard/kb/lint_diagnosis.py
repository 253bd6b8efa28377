"""Lint of the diagnosis rules in ``decision_trees/diagnosis/``.

The loader already rejects what cannot work (unknown phases, facts, flags and tiers, bad regexes,
examples that do not match their own pattern). This adds what needs the whole knowledge base or
the whole diagnosis: every scenario a rule names exists, ids are unique across files, and each
example, read as a log on its own, comes out with its rule's scenario first: a rule another rule
outranks on its own example does nothing.
"""

from __future__ import annotations

from .lint_context import LintContext


def check_diagnosis_rules(ctx: LintContext) -> None:
    from ..logs.diagnose import diagnose_text
    from ..logs.rules import load_rules

    rules = load_rules(ctx.base, ctx.problems)
    scenarios = set(ctx.kb.scenarios)
    for sig in (*rules.messages, *rules.inferred.values()):
        file, line = rules.sources.get(sig.id, ("decision_trees/diagnosis/messages.yaml", None))
        if sig.scenario not in scenarios:
            ctx.error(file, line, f"rule {sig.id}: unknown scenario {sig.scenario!r} (not in decision_trees/scenarios.yaml)")
    by_id = {s.id: s for s in rules.messages}
    for ex in rules.examples:
        sig = by_id.get(ex.rule)
        if sig is None:
            continue
        if sig.frames is not None and 'File "' not in ex.text:
            continue  # the message counts only under its frames; a one-line example cannot show them
        d = diagnose_text(ex.text, "example")
        first = d.matches[0] if d.matches else None
        top = first.score if first else 0.0
        own = next((m for m in d.matches if m.scenario == sig.scenario), None)
        if own is None:
            ctx.error(ex.file, ex.line, f"rule {ex.rule}: its example is not diagnosed as {sig.scenario}"
                      + (f" (got {first.scenario})" if first else " (nothing found)"))
        elif own.score < top:
            ctx.error(ex.file, ex.line, f"rule {ex.rule}: on its example {first.scenario} ({top}) outranks "
                      f"{sig.scenario} ({own.score})")
