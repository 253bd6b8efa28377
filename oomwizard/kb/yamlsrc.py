"""YAML that remembers where every value came from, so errors can name file and line.

Plain PyYAML loses positions and silently keeps the last of two duplicate keys; both would make a
broken tree file hard to fix. Mappings load as :class:`LDict` (with the line of each key) and
sequences as :class:`LList` (with the line of each item).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml
# PyYAML is imported where a file is parsed: the rules the program reads come from their compiled
# copy (:mod:`.compiled`), and importing the parser costs as much as reading them.


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the knowledge base, located as precisely as we can."""

    file: str
    line: int | None
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.message}"


class KBError(Exception):
    """The knowledge base cannot be loaded; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class LDict(dict[str, Any]):
    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LList(list[Any]):
    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


def _convert(node: yaml.Node, file: str, problems: list[Problem], scalars: yaml.SafeLoader,
             seen: dict[int, Any] | None = None) -> Any:
    """Nodes to values; a node reached again through an alias is converted once and shared.

    Without ``seen``, aliases of aliases ("billion laughs") expand to exponentially many values.
    """
    import yaml

    seen = {} if seen is None else seen
    if id(node) in seen:
        return seen[id(node)]
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = LDict()
        out.line = line
        out.key_lines = {}
        seen[id(node)] = out
        for knode, vnode in node.value:
            key = _convert(knode, file, problems, scalars, seen)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                problems.append(Problem(file, knode.start_mark.line + 1, "mapping keys must be plain scalars"))
                continue
            key = str(key) if not isinstance(key, str) else key
            if key in out:
                problems.append(
                    Problem(
                        file,
                        knode.start_mark.line + 1,
                        f"duplicate key {key!r} (first at line {out.key_lines[key]})",
                    )
                )
                continue
            out.key_lines[key] = knode.start_mark.line + 1
            out[key] = _convert(vnode, file, problems, scalars, seen)
        return out
    if isinstance(node, yaml.SequenceNode):
        lst = LList()
        lst.line = line
        lst.item_lines = []
        seen[id(node)] = lst
        for item in node.value:
            lst.item_lines.append(item.start_mark.line + 1)
            lst.append(_convert(item, file, problems, scalars, seen))
        return lst
    # Scalars: let the safe constructor resolve types (int, bool, null ...).
    seen[id(node)] = value = scalars.construct_object(node, deep=True)
    return value


_COMPOSER: Any = None
"""The loader class that composes; None: libyaml's where PyYAML has it (20x faster, same marks)."""


def load_yaml(path: Path, display: str, problems: list[Problem]) -> Any:
    """Parse ``path``; syntax errors and duplicate keys are appended to ``problems``."""
    import yaml

    composer = _COMPOSER or getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.append(Problem(display, None, f"cannot read: {e}"))
        return None
    try:
        node = yaml.compose(text, Loader=composer)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        problems.append(Problem(display, line, f"YAML syntax: {e.problem or e}"))
        return None
    except yaml.YAMLError as e:
        problems.append(Problem(display, None, f"YAML syntax: {e}"))
        return None
    if node is None:
        return None
    try:
        return _convert(node, display, problems, yaml.SafeLoader(""))
    except yaml.MarkedYAMLError as e:  # a tag the safe loader refuses (!!python/object:…)
        mark = e.problem_mark or e.context_mark
        problems.append(Problem(display, mark.line + 1 if mark else None, f"YAML: {e.problem or e}"))
        return None
