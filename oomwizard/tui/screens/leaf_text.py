"""The leaf screen's prose: the summary above the fixes and the Details tab.

Pure functions of the wizard's language and the leaf, kept apart from the screen's widgets,
workers and actions so each can be read (and tested) on its own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.content import Content

from ...frontend.inputs import colon
from ...text.output import clean_text

if TYPE_CHECKING:
    from ...engine import Done
    from ...kb.model import Leaf
    from ..view import Wizard

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'“])|(?<=[\u3002\uff01\uff1f])")


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of ``text`` (English or Chinese), or ``text`` if it is one sentence."""
    head = _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()
    if len(head) > limit:
        cut = head[:limit].rsplit(" ", 1)[0]
        return cut + "…"
    return head


def leaf_summary(w: Wizard, leaf: Leaf) -> Content:
    """Title, conclusion and the root cause's first sentence; the whole root cause is under Details."""
    status = w.t(leaf.root_cause_status)
    cause = leaf.root_cause(w.lang)
    first = first_sentence(cause)
    parts: list[str | tuple[str, str]] = [
        (leaf.title(w.lang), "bold underline"),
        "\n\n",
        (f"{w.t('conclusion')}{colon(w.lang)}", "bold"),
        leaf.conclusion(w.lang),
        "\n\n",
        (f"{w.t('root_cause')} ({status}){colon(w.lang)}", "bold"),
        first,
    ]
    if first != cause:
        parts.append((f"{'' if first.endswith('…') else ' …'} ({w.t('tui.leaf.more')})", "dim italic"))
    return Content.assemble(*parts)


def leaf_details(w: Wizard, done: Done) -> Content:
    """Everything behind the summary: the whole root cause, environment, evidence, caveats,
    sources and the path the walk took."""
    lang = w.lang
    leaf = done.leaf
    parts: list[str | tuple[str, str]] = [
        (f"{w.t('root_cause')} ({w.t(leaf.root_cause_status)})\n", "bold"),
        leaf.root_cause(lang),
        "\n\n",
        (f"{w.t('environment')}\n", "bold"),
        leaf.environment(lang),
        "\n\n",
        (f"{w.t('evidence')}{colon(lang)}", "bold"),
        w.t(f"evidence.{leaf.evidence}"),
        f"   [{leaf.id}]",
    ]
    if leaf.versions.text not in ("", "*"):
        parts.append(f"   vLLM {leaf.versions.text}")
    if leaf.caveats:
        parts += ["\n\n", (f"{w.t('caveats')}\n", "bold")]
        parts += [f"  • {c(lang)}\n" for c in leaf.caveats]
    if leaf.sources:
        parts += ["\n", (f"{w.t('sources')}\n", "bold")]
        for s in leaf.sources:
            parts.append(f"  {s.url}")
            if s.title:
                parts.append((f"  {s.title}", "dim"))
            parts.append("\n")
    if done.path:
        parts += ["\n", (f"{w.t('path')}\n", "bold")]
        for step in done.path:
            parts += [
                f"  {step.question}{colon(lang)}",
                (clean_text(step.label), "bold"),
                (f"  [{clean_text(step.said_how(lang))}]\n", "dim"),  # a file name, a fact value
            ]
    return Content.assemble(*parts)
