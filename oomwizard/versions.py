"""Version numbers and version ranges as vLLM and PyTorch print them.

Advice is keyed on *release lines* (which flags and env vars exist), so matching compares
only the release part: ``0.11.1rc1``, ``0.11.1.dev42+g1234.cu128`` and ``0.11.1.post1`` all
match ``>=0.11.1``. A nightly build normally carries the flags of the release it precedes,
and the renderer says so when it assumed that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_VERSION_RE = re.compile(
    r"""^\s*v?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>a|b|rc|alpha|beta|c)[-_.]?(?P<pre_n>\d*))?
    (?:[-_.]?(?P<post>post)[-_.]?(?P<post_n>\d*))?
    (?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d*))?
    (?:\+(?P<local>[A-Za-z0-9.]+))?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)


class VersionError(ValueError):
    """A string that is not a version or not a version range."""


@total_ordering
@dataclass(frozen=True)
class Version:
    """A parsed version. Equality and order use the release tuple only (see module doc)."""

    release: tuple[int, int, int]
    text: str
    prerelease: bool = False
    local: str | None = None

    @classmethod
    def parse(cls, text: str | Version) -> Version:
        if isinstance(text, Version):
            return text
        m = _VERSION_RE.match(str(text))
        if not m:
            raise VersionError(f"not a version: {text!r}")
        parts = [int(p) for p in m.group("release").split(".")]
        while len(parts) < 3:
            parts.append(0)
        release = (parts[0], parts[1], parts[2])
        pre = bool(m.group("pre") or m.group("dev"))
        return cls(release, str(text).strip(), pre, m.group("local"))

    @classmethod
    def try_parse(cls, text: object) -> Version | None:
        try:
            return cls.parse(str(text))
        except VersionError:
            return None

    @property
    def base(self) -> str:
        """The release as ``X.Y.Z``."""
        return ".".join(str(p) for p in self.release)

    @property
    def minor(self) -> str:
        return f"{self.release[0]}.{self.release[1]}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Version):
            return self.release == other.release
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.release)

    def __lt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.release < other.release

    def __str__(self) -> str:
        return self.text


_CLAUSE_RE = re.compile(r"^\s*(>=|<=|==|!=|>|<|~=)?\s*([0-9][0-9A-Za-z.+*-]*)\s*$")


@dataclass(frozen=True)
class Clause:
    op: str
    version: Version
    wildcard: bool = False

    def matches(self, v: Version) -> bool:
        if self.wildcard:
            n = len(self.version.text.rstrip(".*").split("."))
            same = v.release[:n] == self.version.release[:n]
            return same if self.op == "==" else not same
        r, c = v.release, self.version.release
        return {
            ">=": r >= c,
            "<=": r <= c,
            ">": r > c,
            "<": r < c,
            "==": r == c,
            "!=": r != c,
        }[self.op]

    def __str__(self) -> str:
        return f"{self.op}{self.version.text}"


@dataclass(frozen=True)
class VersionSpec:
    """A comma-separated range such as ``>=0.8,<0.11``; ``*`` or an empty string is everything."""

    clauses: tuple[Clause, ...]
    text: str

    @classmethod
    def parse(cls, text: str | VersionSpec | None) -> VersionSpec:
        if isinstance(text, VersionSpec):
            return text
        raw = (text or "").strip()
        if raw in ("", "*", "any"):
            return cls((), "*")
        clauses: list[Clause] = []
        for part in raw.split(","):
            m = _CLAUSE_RE.match(part)
            if not m:
                raise VersionError(f"not a version range: {raw!r} (bad part {part.strip()!r})")
            op, ver = m.group(1) or "==", m.group(2)
            wildcard = ver.endswith(".*")
            if wildcard and op not in ("==", "!="):
                raise VersionError(f"wildcard only with == or != in {raw!r}")
            if op == "~=":
                v = Version.parse(ver)
                clauses.append(Clause(">=", v))
                # PEP 440: ~=1.2 means <2.0, ~=0.11.1 means <0.12.0 (the last given part is released).
                parts = len(re.match(r"\d+(?:\.\d+)*", ver).group(0).split("."))  # type: ignore[union-attr]
                if parts < 2:
                    raise VersionError(f"~= needs at least two version parts in {raw!r}")
                upper = (v.release[0] + 1, 0, 0) if parts == 2 else (v.release[0], v.release[1] + 1, 0)
                clauses.append(Clause("<", Version(upper, ".".join(map(str, upper)))))
                continue
            clauses.append(Clause(op, Version.parse(ver[:-2] if wildcard else ver), wildcard))
        return cls(tuple(clauses), raw)

    def contains(self, version: str | Version) -> bool:
        v = Version.parse(version)
        return all(c.matches(v) for c in self.clauses)

    __contains__ = contains

    @property
    def is_any(self) -> bool:
        return not self.clauses

    def __str__(self) -> str:
        return self.text


def spec_contains(spec: str, version: str | Version) -> bool:
    return VersionSpec.parse(spec).contains(version)
