"""Scenario titles and summaries alone, read without loading the rest of the knowledge base.

The diagnosis screen lists scenarios by title as soon as the log is read; loading and checking the
whole knowledge base takes longer than reading the demo's log, so the screen would otherwise wait
on it. Nothing is checked here: anything unexpected gives an empty answer, the screen falls back
to the full knowledge base, and the full load reports what is wrong.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..i18n import Text
from .root import default_root


@lru_cache(maxsize=2)
def scenario_titles(root: str | None = None) -> dict[str, tuple[Text, Text]]:
    """``{scenario id: (title, summary)}``; empty if the file is not as expected."""
    from .compiled import load_source

    path = (default_root() if root is None else Path(root)) / "decision_trees" / "scenarios.yaml"
    data = load_source(path, "decision_trees/scenarios.yaml", [])  # its problems are the full load's to report
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    out: dict[str, tuple[Text, Text]] = {}
    for sid, sd in (scenarios.items() if isinstance(scenarios, dict) else ()):
        title = sd.get("title") if isinstance(sd, dict) else None
        summary = sd.get("summary") if isinstance(sd, dict) else None
        if not (isinstance(title, dict) and isinstance(summary, dict)):
            return {}  # not as expected: the full load explains it
        out[str(sid)] = (Text(str(title.get("en", sid)), str(title.get("zh", title.get("en", sid)))),
                         Text(str(summary.get("en", "")), str(summary.get("zh", summary.get("en", "")))))
    return out
