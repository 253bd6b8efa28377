"""What every lint check shares: the loaded base, the problem list, and the raw YAML for exact lines.

The in-memory model keeps one line per object (a question, a fix, a variant). To point at the exact
flag or source that is wrong, checks look the object up again in the file's raw YAML, which
remembers the line of every key and list item.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kb.model import KnowledgeBase
from ..kb.yamlsrc import LDict, LList, Problem, load_yaml


@dataclass
class LintContext:
    kb: KnowledgeBase
    base: Path
    problems: list[Problem]
    _raw: dict[str, Any] = field(default_factory=dict)

    def error(self, file: str, line: int | None, message: str) -> None:
        self.problems.append(Problem(file, line, message, "error"))

    def warn(self, file: str, line: int | None, message: str) -> None:
        self.problems.append(Problem(file, line, message, "warning"))

    def report(self, severity: str, file: str, line: int | None, message: str) -> None:
        self.problems.append(Problem(file, line, message, severity))

    def raw(self, file: str) -> Any:
        """The file's YAML with line numbers (parsed once; its syntax errors are the loader's to report)."""
        if file not in self._raw:
            self._raw[file] = load_yaml(self.base / file, file, []) if file else None
        return self._raw[file]

    def mapping_at(self, file: str, line: int, key: str | None = None) -> LDict | None:
        """The outermost mapping of ``file`` that starts on ``line`` (and has ``key``, if given)."""
        for d in walk_mappings(self.raw(file)):
            if d.line == line and (key is None or key in d):
                return d
        return None

    def line_in(self, file: str, line: int, key: str, item: str | int | None = None) -> int:
        """Line of ``key`` (or of ``item`` inside its value) in the mapping starting at ``line``."""
        d = self.mapping_at(file, line, key)
        if d is None:
            return line
        value = d[key]
        if isinstance(item, str) and isinstance(value, LDict) and item in value:
            return value.line_of(item)
        if isinstance(item, int) and isinstance(value, LList):
            return value.line_of(item)
        if isinstance(item, str) and isinstance(value, LList) and item in value:
            return value.line_of(value.index(item))
        return d.line_of(key)


def walk_mappings(node: Any, seen: set[int] | None = None) -> Iterator[LDict]:
    """Every mapping in a parsed YAML document, outer ones first, each once.

    A YAML alias shares a value; visiting a shared value again would make aliases of aliases
    ("billion laughs") take for ever.
    """
    seen = set() if seen is None else seen
    if not isinstance(node, (LDict, LList)) or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, LDict):
        yield node
    for v in node.values() if isinstance(node, LDict) else node:
        yield from walk_mappings(v, seen)
