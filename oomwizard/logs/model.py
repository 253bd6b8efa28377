"""What reading logs produces: ranked scenario matches with their evidence, and facts."""

from __future__ import annotations

import ntpath
import posixpath
from dataclasses import dataclass, field
from typing import Any

from ..facts.model import FactSet
from ..i18n import Text


def where(file: str, line: int) -> str:
    """A log line as an operator cites it: ``vllm.log:214`` (the file's own name, not its path)."""
    name = ntpath.basename(posixpath.basename(file)) or file
    return f"{name}:{line}"


@dataclass(frozen=True)
class Evidence:
    """A line of the original input (1-based line number in that file) that supports a match."""

    file: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass
class Match:
    scenario: str
    score: float
    """0..1; matches are sorted by it, best first."""
    evidence: list[Evidence] = field(default_factory=list)
    reasons: list[Text] = field(default_factory=list)
    """Why this scenario was chosen, in words the operator can check."""

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "score": round(self.score, 3),
            "evidence": [e.to_json() for e in self.evidence],
            "reasons": [r.as_dict() for r in self.reasons],
        }


@dataclass
class Diagnosis:
    matches: list[Match]
    facts: FactSet
    inputs: list[str] = field(default_factory=list)
    warnings: list[Text] = field(default_factory=list)
    """Things the operator should know about the input itself (binary data skipped, truncated …),
    in every language; JSON carries the English."""
    oom_messages: list[dict[str, Any]] = field(default_factory=list)
    """Every PyTorch OOM message of the input, broken down (``file``, ``line``, ``rank``, sizes in
    bytes); the ``oom_*`` facts carry the one behind the best match."""
    missing: list[Text] = field(default_factory=list)
    """Lines the input lacks that would settle the diagnosis (the exception of a cut traceback)."""

    @property
    def best(self) -> Match | None:
        return self.matches[0] if self.matches else None

    def to_json(self) -> dict[str, Any]:
        return {
            "matches": [m.to_json() for m in self.matches],
            "facts": self.facts.to_json(),
            "inputs": list(self.inputs),
            "warnings": [w.en for w in self.warnings],
            "oom_messages": [dict(m) for m in self.oom_messages],
            "confidence": self.matches[0].score if self.matches else 0.0,
            "missing": [m.en for m in self.missing],
        }
