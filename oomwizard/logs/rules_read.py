"""Typed, located reads of the diagnosis rule files: every problem keeps its file and line.

Shared by the loaders of ``decision_trees/diagnosis/*.yaml`` (:mod:`.rules`, :mod:`.refine_rules`).
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard, cast

from ..facts.catalog import FAILURE_PHASES
from ..i18n import Text
from ..kb.yamlsrc import KBError, LDict, LList, Problem


def phrase(text: str) -> str:
    """A literal phrase as a regex where every space may have been lost or doubled by a wrap."""
    return r"\s*".join(re.escape(w) for w in text.split(" "))


_PHRASE_RE = re.compile(r"\{\{(.+?)\}\}")


def expand(pattern: str, words: dict[str, str] | None = None) -> str:
    """A rule's pattern with each ``{{words}}`` replaced by :func:`phrase`, and each ``{{@name}}``
    by the named words of ``messages.yaml`` (``words:``), which are written once for every rule."""
    def sub(m: re.Match[str]) -> str:
        text = m.group(1)
        if text.startswith("@"):
            if words is None or text[1:] not in words:
                raise KeyError(text[1:])
            return f"(?:{words[text[1:]]})"
        return phrase(text)
    return _PHRASE_RE.sub(sub, pattern)


def spellings(word: str) -> tuple[str, ...]:
    """A lower-case word as reports write it: lower case, Capitalised, Title Case, UPPER CASE."""
    return tuple(dict.fromkeys((word, word[:1].upper() + word[1:], word.title(), word.upper())))


_GROUP_NAME = re.compile(r"\(\?P<(\w+)>")


class LazyPattern:
    """A rule's regex compiled the first time a line is tried against it.

    Compiling every rule costs about a tenth of a second, most of it for messages a given log never
    triggers; the wizard's first diagnosis waits for it. Only the program's own rules, which
    ``oomwizard lint`` compiles in full before they ship, are read this way; a broken one still
    stops the program with its file and line.
    """

    __slots__ = ("_compiled", "_flags", "_where", "pattern")

    def __init__(self, pattern: str, flags: int, where: Problem) -> None:
        self.pattern = pattern
        self._flags = flags
        self._where = where
        self._compiled: re.Pattern[str] | None = None

    def _rx(self) -> re.Pattern[str]:
        if self._compiled is None:
            try:
                self._compiled = re.compile(self.pattern, self._flags)
            except re.error as e:
                w = self._where
                raise KBError([Problem(w.file, w.line, f"{w.message}: bad regex: {e}")]) from None
        return self._compiled

    @property
    def groupindex(self) -> dict[str, int]:
        """The named groups, read from the source without compiling it (for membership tests:
        the numbers count named groups only until the pattern is compiled)."""
        if self._compiled is not None:
            return dict(self._compiled.groupindex)
        return {name: i for i, name in enumerate(dict.fromkeys(_GROUP_NAME.findall(self.pattern)), 1)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rx(), name)


class _Reader:
    """Typed reads of one file's values; every problem is kept with its line."""

    def __init__(self, file: str, problems: list[Problem], lazy: bool = False) -> None:
        self.file = file
        self.problems = problems
        self.lazy = lazy
        """Regexes compiled on first use (:class:`LazyPattern`): for rules already checked by lint."""
        self.words: dict[str, str] = {}
        """Named words a pattern may use as ``{{@name}}`` (``messages.yaml``'s ``words:``)."""
        self.plain: dict[str, tuple[str, ...]] = {}
        """Each named word's plain words, lower case: ``@name`` in ``triggers`` or ``also``."""

    def err(self, line: int | None, msg: str) -> None:
        self.problems.append(Problem(self.file, line, msg))

    def keys(self, d: Any, line: int, allowed: set[str], required: set[str], what: str) -> TypeGuard[LDict]:
        if not isinstance(d, LDict):
            self.err(line, f"{what}: expected a mapping")
            return False
        for k in d:
            if k not in allowed:
                self.err(d.line_of(k), f"{what}: unknown key {k!r}")
        missing = required - set(d)
        for k in sorted(missing):
            self.err(d.line, f"{what}: missing {k!r}")
        return not missing

    def seq(self, d: LDict, key: str, what: str) -> LList:
        v = d.get(key)
        if v is not None and not isinstance(v, LList):
            self.err(d.line_of(key), f"{what}.{key}: expected a list")
            v = None
        if v is None:
            v = LList()
            v.item_lines = []
        return v

    def strings(self, d: LDict, key: str, what: str) -> tuple[str, ...]:
        items = self.seq(d, key, what)
        out = []
        for i, v in enumerate(items):
            if not isinstance(v, str) or not v:
                self.err(items.line_of(i), f"{what}.{key}: expected a non-empty string")
            else:
                out.append(v)
        return tuple(out)

    def word_list(self, d: LDict, key: str, what: str, *, cased: bool) -> tuple[str, ...]:
        """``triggers`` or ``also``, where ``@name`` stands for the plain words of a named word:
        ``cased`` (triggers, searched for as written) spells each the ways a report writes it."""
        out: list[str] = []
        items = self.seq(d, key, what)
        for i, v in enumerate(self.strings(d, key, what)):
            if not v.startswith("@"):
                out.append(v)
                continue
            plain = self.plain.get(v[1:])
            if plain is None:
                self.err(items.line_of(i), f"{what}.{key}: {v!r} is no named word with plain words "
                                           f"(messages.yaml words: {', '.join(self.plain) or 'none'})")
                continue
            out += [c for w in plain for c in (spellings(w) if cased else (w,))]
        return tuple(dict.fromkeys(out))

    def regex(self, value: Any, line: int, what: str, flags: int = 0) -> re.Pattern[str] | None:
        if isinstance(value, LDict):
            if not self.keys(value, line, {"pattern", "ignore_case"}, {"pattern"}, what):
                return None
            flags |= re.I if value.get("ignore_case") is True else 0
            value = value["pattern"]
        if not isinstance(value, str) or not value:
            self.err(line, f"{what}: expected a regex")
            return None
        try:
            value = expand(value, self.words)
        except KeyError as e:
            self.err(line, f"{what}: unknown words {{{{@{e.args[0]}}}}} (messages.yaml words: {', '.join(self.words)})")
            return None
        if self.lazy:
            return cast("re.Pattern[str]", LazyPattern(value, flags, Problem(self.file, line, what)))
        try:
            return re.compile(value, flags)
        except re.error as e:
            self.err(line, f"{what}: bad regex: {e}")
            return None

    def phase(self, value: Any, line: int, what: str) -> str | None:
        if value not in FAILURE_PHASES:
            self.err(line, f"{what}: unknown phase {value!r} (one of {', '.join(FAILURE_PHASES)})")
            return None
        return str(value)

    def text(self, value: Any, line: int, what: str) -> Text | None:
        if not isinstance(value, LDict) or not isinstance(value.get("en"), str) or not isinstance(value.get("zh"), str):
            self.err(line, f"{what}: expected {{en: ..., zh: ...}}")
            return None
        return Text(value["en"], value["zh"])


def _empty() -> LDict:
    d = LDict()
    d.key_lines = {}
    return d


def _score(r: _Reader, tiers: dict[str, float], value: Any, line: int, what: str) -> float | None:
    if isinstance(value, str):
        if value not in tiers:
            r.err(line, f"{what}: unknown score tier {value!r} (one of {', '.join(tiers)})")
            return None
        return tiers[value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    r.err(line, f"{what}: score must be a tier name or a number in (0, 1]")
    return None


def _int(r: _Reader, doc: LDict, key: str) -> int:
    v = doc.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        r.err(doc.line_of(key), f"{key}: expected a positive integer")
        return 0
    return v
