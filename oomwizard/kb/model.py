"""The knowledge base in memory: scenarios, the question tree, leaves with their fixes, articles."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..expr import Condition
from ..i18n import Text
from ..versions import VersionSpec

COSTS = ("none", "low", "medium", "high", "upgrade")
"""Cost to throughput, cheapest first; fixes in a leaf must be listed in this order."""
EVIDENCE = ("verified", "code", "documented", "untested")
"""verified: an issue, a PR or our own reading shows it; code: read in the released source
(``file@version`` among the sources); documented: the docs say so; untested: reasoning only."""
ROOT_CAUSE_STATUS = ("confirmed", "probable")
QUESTION_KINDS = ("choice", "version")

PLACEHOLDER_RE = re.compile(r"\{([a-z_][a-z0-9_.]*)\}")


@dataclass(frozen=True)
class Route:
    """Go to ``target`` (a question or leaf id) if ``condition`` holds (or always, when None)."""

    target: str
    condition: Condition | None = None
    line: int = 0


@dataclass(frozen=True)
class Choice:
    id: str
    label: Text
    routes: tuple[Route, ...]
    line: int = 0


@dataclass(frozen=True)
class AutoRule:
    """Suggest ``answer`` when ``condition`` is true; the facts it reads become the stated source."""

    condition: Condition
    answer: str
    line: int = 0


@dataclass(frozen=True)
class Question:
    id: str
    fact: str
    kind: str
    text: Text
    choices: tuple[Choice, ...] = ()
    auto: tuple[AutoRule, ...] = ()
    unknown: str | None = None
    """Choice taken when nothing is known and nobody can be asked (non-interactive)."""
    routes: tuple[Route, ...] = ()
    """For ``version`` questions: where to go once answered (or skipped)."""
    file: str = ""
    line: int = 0

    def choice(self, cid: str) -> Choice | None:
        return next((c for c in self.choices if c.id == cid), None)


@dataclass(frozen=True)
class Variant:
    """How a fix is spelled for the vLLM releases in ``versions``."""

    versions: VersionSpec
    flags: tuple[tuple[str, str | None], ...] = ()
    """Flags to set on the ``vllm serve`` command; value None means a bare switch."""
    remove_flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    unset_env: tuple[str, ...] = ()
    shell: tuple[str, ...] = ()
    """Other commands, run in order before the server is started again."""
    note: Text | None = None
    line: int = 0

    @property
    def changes_server(self) -> bool:
        return bool(self.flags or self.remove_flags or self.env or self.unset_env)


@dataclass(frozen=True)
class Fix:
    id: str
    title: Text
    cost: str
    cost_note: Text
    evidence: str
    variants: tuple[Variant, ...]
    sources: tuple[str, ...] = ()
    why: Text | None = None
    line: int = 0

    def variant_for(self, version: object | None) -> Variant | None:
        if version is None:
            return None
        return next((v for v in self.variants if v.versions.contains(version)), None)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AutoCheck:
    """How to tick a checklist item without a human: a regex over the new log, or a fact predicate."""

    log_present: str | None = None
    log_absent: str | None = None
    fact: Condition | None = None


@dataclass(frozen=True)
class Check:
    text: Text
    auto: AutoCheck | None = None
    line: int = 0


@dataclass(frozen=True)
class Source:
    url: str
    title: str = ""
    line: int = 0


@dataclass(frozen=True)
class Leaf:
    id: str
    scenarios: tuple[str, ...]
    title: Text
    conclusion: Text
    environment: Text
    root_cause: Text
    root_cause_status: str
    evidence: str
    fixes: tuple[Fix, ...]
    checks: tuple[Check, ...]
    caveats: tuple[Text, ...]
    sources: tuple[Source, ...]
    versions: VersionSpec = field(default_factory=lambda: VersionSpec.parse("*"))
    file: str = ""
    line: int = 0


@dataclass(frozen=True)
class Scenario:
    id: str
    title: Text
    summary: Text
    line: int = 0


@dataclass(frozen=True)
class Article:
    """A Markdown article (front matter stripped); ``kind`` is ``leaves`` or ``questions``."""

    kind: str
    id: str
    lang: str
    title: str
    body: str
    file: str


@dataclass
class KnowledgeBase:
    start: str
    scenarios: dict[str, Scenario]
    questions: dict[str, Question]
    leaves: dict[str, Leaf]
    articles: dict[tuple[str, str, str], Article]
    """Keyed by (kind, id, lang)."""
    root: str = ""

    def node(self, node_id: str) -> Question | Leaf | None:
        return self.questions.get(node_id) or self.leaves.get(node_id)

    def article(self, kind: str, node_id: str, lang: str) -> Article | None:
        return self.articles.get((kind, node_id, lang)) or self.articles.get((kind, node_id, "en"))

    def leaves_for_scenario(self, scenario: str) -> list[Leaf]:
        return [leaf for leaf in self.leaves.values() if scenario in leaf.scenarios]

    def resolve(self, ident: str) -> Leaf | None:
        """A leaf by its id, or the main leaf of a scenario id."""
        if ident in self.leaves:
            return self.leaves[ident]
        found = self.leaves_for_scenario(ident)
        if not found:
            return None
        return next((leaf for leaf in found if leaf.id == ident), found[0])
