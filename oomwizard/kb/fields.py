"""Typed readers for the fields of one YAML file, each problem kept with its file and line.

Every part of the knowledge base (scenarios, questions, leaves, the onboarding material) reads its
mappings, texts in both languages, conditions and version ranges the same way, so a problem reads
the same wherever it is and loading goes on after it: one ``oomwizard lint`` run shows them all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..expr import Condition, ExprError
from ..i18n import LANGS, Text
from ..versions import VersionError, VersionSpec
from .yamlsrc import LDict, LList, Problem

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class FieldReader:
    """Collects problems for one file and offers typed field readers."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = problems

    def err(self, line: int | None, msg: str) -> None:
        self.problems.append(Problem(self.file, line, msg))

    def mapping(self, value: Any, line: int, what: str) -> LDict | None:
        if not isinstance(value, LDict):
            self.err(line, f"{what} must be a mapping")
            return None
        return value

    def keys(self, d: LDict, allowed: set[str], required: set[str], what: str) -> None:
        for k in d:
            if k not in allowed:
                self.err(d.line_of(k), f"{what}: unknown field {k!r} (allowed: {', '.join(sorted(allowed))})")
        for k in sorted(required - set(d)):
            self.err(d.line, f"{what}: missing field {k!r}")

    def text(self, d: LDict, key: str, what: str, required: bool = True, clean: Callable[[str], str] = str.strip) -> Text | None:
        """``{en: …, zh: …}`` under ``key``; ``clean`` tidies each language's text (default: strip)."""
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            return None
        v = d[key]
        line = d.line_of(key)
        return self.text_value(v, line, f"{what}.{key}", clean)

    def text_value(self, v: Any, line: int, what: str, clean: Callable[[str], str] = str.strip) -> Text | None:
        if not isinstance(v, LDict):
            self.err(line, f"{what} must have an 'en' and a 'zh' text")
            return None
        for k in v:
            if k not in LANGS:
                self.err(v.line_of(k), f"{what}: unknown language {k!r}")
        values = {}
        for lang in LANGS:
            s = v.get(lang)
            if not isinstance(s, str) or not s.strip():
                self.err(v.line_of(lang) if lang in v else v.line, f"{what}: missing {lang!r} translation")
                s = ""
            values[lang] = clean(s)
        return Text(values["en"], values["zh"])

    def string(self, d: LDict, key: str, what: str, required: bool = True) -> str | None:
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            return None
        v = d[key]
        if not isinstance(v, str) or not v.strip():
            self.err(d.line_of(key), f"{what}.{key} must be a non-empty string")
            return None
        return v.strip()

    def enum(self, d: LDict, key: str, allowed: tuple[str, ...], what: str) -> str:
        v = self.string(d, key, what)
        if v is not None and v not in allowed:
            self.err(d.line_of(key), f"{what}.{key}: {v!r} is not one of {', '.join(allowed)}")
        return v or allowed[-1]

    def condition(self, source: Any, line: int, what: str) -> Condition | None:
        if not isinstance(source, str):
            self.err(line, f"{what}: condition must be a string")
            return None
        try:
            return Condition.parse(source)
        except ExprError as e:
            self.err(line, f"{what}: bad condition {source!r}: {e} (column {e.column})")
            return None

    def versions(self, source: Any, line: int, what: str) -> VersionSpec:
        try:
            return VersionSpec.parse(str(source) if source is not None else "*")
        except VersionError as e:
            self.err(line, f"{what}: {e}")
            return VersionSpec.parse("*")

    def strings(self, d: LDict, key: str, what: str) -> tuple[str, ...]:
        """A list of non-empty strings under ``key`` (stripped); each other item is a problem."""
        out = []
        lst = self.lst(d, key, what)
        for i, v in enumerate(lst):
            if not isinstance(v, str) or not v.strip():
                self.err(lst.line_of(i), f"{what}.{key}[{i}] must be a non-empty string")
                continue
            out.append(v.strip())
        return tuple(out)

    def lst(self, d: LDict, key: str, what: str, required: bool = False) -> LList:
        if key not in d:
            if required:
                self.err(d.line, f"{what}: missing field {key!r}")
            empty = LList()
            empty.line = d.line
            empty.item_lines = []
            return empty
        v = d[key]
        if not isinstance(v, LList):
            self.err(d.line_of(key), f"{what}.{key} must be a list")
            empty = LList()
            empty.line = d.line_of(key)
            empty.item_lines = []
            return empty
        return v
