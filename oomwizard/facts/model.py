"""Facts: a value plus where it came from, so every answer the wizard suggests can be traced.

Precedence when two sources know the same fact: what the user answered beats what the log says,
which beats a running vLLM process, which beats what this machine's detection found. The log
wins over the machine because the log describes the run that failed; the machine may be another
one, or the same one after an upgrade.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..versions import Version

# Higher wins.
KIND_RANK: dict[str, int] = {
    "derived": 0,
    "default": 0,
    "machine": 1,
    "process": 2,
    "log": 3,
    "answered": 4,
}


@dataclass(frozen=True)
class Fact:
    name: str
    value: Any
    source: str
    """Human-readable origin: ``NVML``, ``log line 214 (vllm.log)``, ``env PYTORCH_CUDA_ALLOC_CONF``."""
    kind: str = "machine"
    """One of :data:`KIND_RANK`; decides precedence."""
    detail: str | None = None
    """Supporting text, e.g. the log line the value was read from (already sanitised)."""
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": json_value(self.value), "source": self.source, "kind": self.kind}
        if self.detail:
            out["detail"] = self.detail
        if self.file is not None:
            out["file"] = self.file
        if self.line is not None:
            out["line"] = self.line
        return out

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any], kind: str | None = None) -> Fact:
        return cls(
            name=name,
            value=data.get("value"),
            source=str(data.get("source", "")),
            kind=kind or str(data.get("kind", "machine")),
            detail=data.get("detail"),
            file=data.get("file"),
            line=data.get("line"),
        )


def json_value(value: Any) -> Any:
    if isinstance(value, Version):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


@dataclass
class FactSet:
    """Facts by name, keeping the best-ranked source for each; the others stay visible as alternatives."""

    _facts: dict[str, Fact] = field(default_factory=dict)
    _shadowed: dict[str, list[Fact]] = field(default_factory=dict)

    @classmethod
    def of(cls, facts: Iterable[Fact]) -> FactSet:
        fs = cls()
        for f in facts:
            fs.add(f)
        return fs

    def add(self, fact: Fact) -> None:
        if fact.value is None:
            return
        current = self._facts.get(fact.name)
        if current is None or KIND_RANK.get(fact.kind, 0) >= KIND_RANK.get(current.kind, 0):
            if current is not None and current != fact:
                self._shadowed.setdefault(fact.name, []).append(current)
            self._facts[fact.name] = fact
        else:
            self._shadowed.setdefault(fact.name, []).append(fact)

    def update(self, facts: Iterable[Fact]) -> None:
        for f in facts:
            self.add(f)

    def remove(self, name: str) -> None:
        self._facts.pop(name, None)

    def get(self, name: str) -> Fact | None:
        return self._facts.get(name)

    def value(self, name: str, default: Any = None) -> Any:
        f = self._facts.get(name)
        return default if f is None else f.value

    def alternatives(self, name: str) -> list[Fact]:
        """Other sources' values for ``name`` that lost on precedence (shown when they disagree)."""
        return list(self._shadowed.get(name, []))

    def copy(self) -> FactSet:
        return FactSet(dict(self._facts), {k: list(v) for k, v in self._shadowed.items()})

    def with_fact(self, fact: Fact) -> FactSet:
        fs = self.copy()
        fs.add(fact)
        return fs

    def __contains__(self, name: object) -> bool:
        return name in self._facts

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._facts.values())

    def __len__(self) -> int:
        return len(self._facts)

    def names(self) -> list[str]:
        return list(self._facts)

    def to_json(self) -> dict[str, Any]:
        return {name: f.to_json() for name, f in sorted(self._facts.items())}

    def relabel(self, kind: str) -> FactSet:
        return FactSet.of(replace(f, kind=kind) for f in self._facts.values())
