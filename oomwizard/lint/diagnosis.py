"""Lint of the diagnosis rules in ``decision_trees/diagnosis/``.

The loader already rejects what cannot work (unknown phases, facts, flags, conditions and tiers,
bad regexes, examples that do not match their own pattern). This adds what needs the whole
knowledge base or the whole diagnosis: every scenario a rule names exists, and each example, read
as a log on its own, comes out with its rule's scenario first: a rule another rule outranks on
its own example does nothing. Examples are diagnosed with the rules being linted (in a child
process when those are not the program's own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .context import LintContext

_CHILD = (
    "import json, sys\n"
    "from oomwizard.logs.diagnose import diagnose_text\n"
    "out = []\n"
    "for text in json.load(sys.stdin):\n"
    "    d = diagnose_text(text, 'example')\n"
    "    out.append([[m.scenario, m.score] for m in d.matches])\n"
    "json.dump(out, sys.stdout)\n"
)


def _diagnose(texts: list[str], base: Path) -> list[list[tuple[str, float]]]:
    """The ranked (scenario, score) pairs of each text, diagnosed with the rules under ``base``."""
    from ..logs.rules import rules_dir

    if rules_dir(base).resolve() == rules_dir().resolve():
        from ..logs.diagnose import diagnose_text

        return [[(m.scenario, m.score) for m in diagnose_text(t, "example").matches] for t in texts]
    env = dict(os.environ, OOMWIZARD_KB=str(base))
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(texts), capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return [[(s, float(v)) for s, v in ms] for ms in json.loads(proc.stdout)]


def check_diagnosis_rules(ctx: LintContext) -> None:
    from ..logs.rules import load_rules, rules_dir

    if not rules_dir(ctx.base).is_dir():
        return  # a knowledge base without diagnosis rules of its own: the program's are used
    found: list = []
    rules = load_rules(ctx.base, found)
    ctx.problems.extend(found)
    if any(p.severity == "error" for p in found):
        return  # the program would refuse these rules; diagnosing with part of them says nothing
    scenarios = set(ctx.kb.scenarios)
    named = [(s.id, s.scenario) for s in (*rules.messages, *rules.inferred.values())]
    named += [(m.id, m.scenario) for m in rules.mechanisms]
    named += [(rid, scenario) for rid, scenario, _line in rules.refinements.scenarios]
    for rid, scenario in named:
        if scenario not in scenarios:
            file, line = rules.sources.get(rid, ("decision_trees/diagnosis/messages.yaml", None))
            ctx.error(file, line, f"rule {rid}: unknown scenario {scenario!r} (not in decision_trees/scenarios.yaml)")
    framed = {s.id for s in rules.messages if s.frames is not None}
    examples = [ex for ex in rules.examples if not (ex.rule in framed and 'File "' not in ex.text)]
    # A message that counts only under its frames is checked by its multi-line examples alone.
    for ex, matches in zip(examples, _diagnose([ex.text for ex in examples], ctx.base), strict=True):
        top = matches[0] if matches else None
        own = next((score for scenario, score in matches if scenario == ex.scenario), None)
        if own is None:
            ctx.error(ex.file, ex.line, f"rule {ex.rule}: its example is not diagnosed as {ex.scenario}"
                      + (f" (got {top[0]})" if top else " (nothing found)"))
        elif top is not None and own < top[1]:
            ctx.error(ex.file, ex.line, f"rule {ex.rule}: on its example {top[0]} ({top[1]}) outranks "
                      f"{ex.scenario} ({own})")
