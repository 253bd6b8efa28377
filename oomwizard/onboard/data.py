"""The onboarding material as data: glossary, start-up timeline, per-scenario messages, tour.

It lives under ``content/`` next to the articles (``glossary/``, ``memory/``, ``browse/``,
``tour/``, ``<lang>/guides/``) so translators and reviewers edit YAML and Markdown, not code. Loading
never raises on a broken file: problems are collected with file and line, for ``oomwizard lint``;
the screens and the site show what did load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..i18n import LANGS, Text
from ..kb.fields import FieldReader
from ..kb.root import default_root
from ..kb.yamlsrc import LDict, LList, Problem, load_yaml
from ..text.cells import JOINED_SCRIPT

MESSAGE_KINDS = ("error", "log", "torch")
_FOLD_RE = re.compile(f"(?<=[{JOINED_SCRIPT}]) (?=[{JOINED_SCRIPT}])|(?<=[\u3000-\u303f\uff00-\uffef]) ")


def unfold(text: str) -> str:
    """One line of text: YAML folds a wrapped line into a space, which Chinese does not put between characters."""
    return _FOLD_RE.sub("", " ".join(text.split()))


@dataclass(frozen=True)
class Term:
    id: str
    name: Text
    definition: Text
    match: dict[str, tuple[str, ...]]
    """Per language: the spellings that mean this term in running text (the name included)."""
    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    log: tuple[str, ...] = ()
    leaves: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    source: str = ""
    line: int = 0
    lang_lines: dict[str, int] = field(default_factory=dict)
    """Line of the term's entry in ``content/glossary/<lang>.yaml``."""


@dataclass(frozen=True)
class Step:
    id: str
    title: Text
    text: Text
    log: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    lane: str = "gpu"
    line: int = 0


@dataclass(frozen=True)
class Message:
    kind: str
    text: str
    versions: str
    file: str
    line: int = 0


@dataclass(frozen=True)
class ScenarioInfo:
    id: str
    step: str
    messages: tuple[Message, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class TourStep:
    id: str
    title: Text
    body: Text
    verify: Text | None = None
    terms: tuple[str, ...] = ()
    line: int = 0


@dataclass
class Onboarding:
    terms: dict[str, Term] = field(default_factory=dict)
    steps: dict[str, Step] = field(default_factory=dict)
    scenarios: dict[str, ScenarioInfo] = field(default_factory=dict)
    tour: list[TourStep] = field(default_factory=list)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """A word an operator may type (``hopper``) and the names the knowledge base uses for it."""
    guides: dict[tuple[str, str], str] = field(default_factory=dict)
    """Markdown of ``content/<lang>/guides/<id>.md``, keyed by (id, lang)."""
    problems: list[Problem] = field(default_factory=list)

    def position(self, step_id: str) -> str:
        """``6/7``: where a GPU step sits on the start-up timeline; empty for a step beside it (host RAM)."""
        gpu = [s.id for s in self.steps.values() if s.lane == "gpu"]
        return f"{gpu.index(step_id) + 1}/{len(gpu)}" if step_id in gpu else ""

    def terms_in(self, text: str, lang: str) -> list[Term]:
        """The glossary terms ``text`` mentions, in the order they first appear."""
        found: list[tuple[int, str]] = []
        for term in self.terms.values():
            pos = _first_mention(text, term.match.get(lang, ()) + term.match.get("en", ()))
            if pos is not None:
                found.append((pos, term.id))
        return [self.terms[tid] for _, tid in sorted(found)]


def _first_mention(text: str, spellings: tuple[str, ...]) -> int | None:
    best = None
    for s in spellings:
        if not s:
            continue
        # Short upper-case abbreviations (TP, DP, V1) only count as whole words, in their own case.
        if (len(s) <= 3 and s.isupper()) or re.fullmatch(r"V\d", s):
            m = re.search(rf"(?<![A-Za-z0-9_]){re.escape(s)}(?![A-Za-z0-9_])", text)
        else:
            m = re.search(re.escape(s), text, re.I)
        if m and (best is None or m.start() < best):
            best = m.start()
    return best


class _Reader:
    """Opens the onboarding files; the fields of each are read by the knowledge base's own
    :class:`~oomwizard.kb.fields.FieldReader`, so a problem reads the same in both."""

    def __init__(self, base: Path, problems: list[Problem]) -> None:
        self.base = base
        self.problems = problems

    def load(self, rel: str) -> LDict | None:
        path = self.base / rel
        if not path.exists():
            self.problems.append(Problem(rel, None, "missing"))
            return None
        data = load_yaml(path, rel, self.problems)
        if data is not None and not isinstance(data, LDict):
            self.problems.append(Problem(rel, 1, "must be a mapping"))
            return None
        return data

    def fields(self, file: str) -> FieldReader:
        return FieldReader(file, self.problems)

    def section(self, file: str, key: str, kind: type[LDict] | type[LList]) -> tuple[FieldReader, LDict | None, Any]:
        """The file's reader, its data, and its top-level ``key`` when that is a ``kind`` (else None, noted)."""
        f = self.fields(file)
        data = self.load(file)
        found = data.get(key) if data else None
        if not isinstance(found, kind):
            if data is not None:
                f.err(data.line, f"needs a {key!r} {'list' if kind is LList else 'mapping'}")
            return f, data, None
        return f, data, found

    def entries(self, file: str, key: str, kind: str) -> tuple[FieldReader, LDict | None, list[tuple[str, LDict, int]]]:
        """``(id, mapping, line)`` for each entry of the file's ``key`` mapping; other entries are problems."""
        f, data, top = self.section(file, key, LDict)
        out: list[tuple[str, LDict, int]] = []
        for eid, d in (top or LDict()).items():
            if isinstance(d, LDict):
                out.append((eid, d, top.line_of(eid)))
            else:
                f.err(top.line_of(eid), f"{kind} {eid}: must be a mapping")
        return f, data, out


def _text(f: FieldReader, d: LDict, key: str, what: str, required: bool = True) -> Text | None:
    """A text in both languages, one line each (YAML's folded line breaks undone for Chinese)."""
    return f.text(d, key, what, required, clean=unfold)


def _glossary(r: _Reader, ob: Onboarding) -> None:
    meta_file = "content/glossary/terms.yaml"
    f, _, terms = r.entries(meta_file, "terms", "term")
    langs: dict[str, LDict] = {}
    for lang in LANGS:
        d = r.load(f"content/glossary/{lang}.yaml")
        langs[lang] = d if d is not None else LDict()
    for tid, d, line in terms:
        f.keys(d, {"flags", "env", "log", "leaves", "related", "source"}, set(), f"term {tid}")
        names: dict[str, str] = {}
        defs: dict[str, str] = {}
        match: dict[str, tuple[str, ...]] = {}
        lines: dict[str, int] = {}
        for lang in LANGS:
            names[lang], defs[lang], match[lang], lines[lang] = _term_entry(r, langs[lang], lang, tid, f"{meta_file}:{line}")
        what = f"term {tid}"
        ob.terms[tid] = Term(
            tid, Text(names["en"], names["zh"]), Text(defs["en"], defs["zh"]), match,
            f.strings(d, "flags", what), f.strings(d, "env", what), f.strings(d, "log", what),
            f.strings(d, "leaves", what), f.strings(d, "related", what), str(d.get("source", "")),
            d.line, lines,
        )
    known = {tid for tid, _, _ in terms}
    for lang in LANGS:
        for tid in langs[lang]:
            if tid not in known:
                r.fields(f"content/glossary/{lang}.yaml").err(langs[lang].line_of(tid), f"term {tid!r} is not in {meta_file}")


def _term_entry(r: _Reader, entries: LDict, lang: str, tid: str, defined_at: str) -> tuple[str, str, tuple[str, ...], int]:
    """One language's name, definition, spellings and line of a term (``content/glossary/<lang>.yaml``)."""
    lfile = f"content/glossary/{lang}.yaml"
    f = r.fields(lfile)
    ld = entries.get(tid)
    if not isinstance(ld, LDict):
        f.err(entries.line or 1, f"term {tid!r} has no {lang} entry (defined at {defined_at})")
        ld = LDict()
    f.keys(ld, {"name", "match", "definition"}, set(), f"term {tid}")
    found: dict[str, str] = {}
    for key in ("name", "definition"):
        v = ld.get(key)
        if not isinstance(v, str) or not v.strip():
            if ld:
                f.err(ld.line_of(key) if key in ld else ld.line, f"term {tid}: missing {key!r}")
            v = ""
        found[key] = unfold(v)
    spell = f.strings(ld, "match", f"term {tid}")
    name = found["name"]
    return name, found["definition"], ((name, *spell) if name else spell), ld.line


def _timeline(r: _Reader, ob: Onboarding) -> None:
    f, _, steps = r.entries("content/memory/timeline.yaml", "steps", "step")
    for sid, d, line in steps:
        what = f"step {sid}"
        f.keys(d, {"title", "text", "log", "terms", "lane"}, set(), what)
        ob.steps[sid] = Step(
            sid, _text(f, d, "title", what) or Text("", ""), _text(f, d, "text", what) or Text("", ""),
            f.strings(d, "log", what), f.strings(d, "terms", what), str(d.get("lane", "gpu")), line,
        )


def _browse(r: _Reader, ob: Onboarding) -> None:
    file = "content/browse/scenarios.yaml"
    f, data, entries = r.entries(file, "scenarios", "scenario")
    for sid, d, line in entries:
        msgs = []
        raw = d.get("messages", LList())
        for i, m in enumerate(raw if isinstance(raw, LList) else []):
            mline = raw.line_of(i)
            if not isinstance(m, LDict) or not isinstance(m.get("text"), str):
                f.err(mline, f"scenario {sid}: messages[{i}] needs a 'text'")
                continue
            kind = str(m.get("kind", ""))
            if kind not in MESSAGE_KINDS:
                f.err(m.line_of("kind"), f"scenario {sid}: message kind {kind!r} is not one of {', '.join(MESSAGE_KINDS)}")
            msgs.append(Message(kind, m["text"], str(m.get("versions", "*")), str(m.get("file", "")), mline))
        step = d.get("step")
        if not isinstance(step, str):
            f.err(d.line, f"scenario {sid}: needs a 'step' (a step id of content/memory/timeline.yaml)")
            step = ""
        ob.scenarios[sid] = ScenarioInfo(sid, step, tuple(msgs), d.line_of("step") if "step" in d else line)
    aliases = data.get("aliases") if data else None
    if isinstance(aliases, LDict):
        for word in aliases:
            ob.aliases[word.lower()] = f.strings(aliases, word, "aliases")


def _tour(r: _Reader, ob: Onboarding) -> None:
    f, _, steps = r.section("content/tour/steps.yaml", "steps", LList)
    for i, d in enumerate(steps or []):
        if not isinstance(d, LDict) or not isinstance(d.get("id"), str):
            f.err(steps.line_of(i), f"steps[{i}] needs an 'id'")
            continue
        what = f"tour step {d['id']}"
        ob.tour.append(TourStep(
            d["id"], _text(f, d, "title", what) or Text("", ""), _text(f, d, "body", what) or Text("", ""),
            _text(f, d, "verify", what, required=False), f.strings(d, "terms", what),
            steps.line_of(i),
        ))


def _guides(base: Path, ob: Onboarding) -> None:
    for lang in LANGS:
        for md in sorted((base / "content" / lang / "guides").glob("*.md")):
            ob.guides[(md.stem, lang)] = md.read_text(encoding="utf-8")


def load_onboarding(root: Path | str | None = None) -> Onboarding:
    base = Path(root) if root is not None else default_root()
    ob = Onboarding()
    r = _Reader(base, ob.problems)
    _glossary(r, ob)
    _timeline(r, ob)
    _browse(r, ob)
    _tour(r, ob)
    _guides(base, ob)
    return ob


@lru_cache(maxsize=4)
def _cached(root: str) -> Onboarding:
    return load_onboarding(root)


def get_onboarding(root: Path | str | None = None) -> Onboarding:
    """Loaded once per process; its ``problems`` are for lint, the rest is what did load."""
    return _cached(str(Path(root) if root is not None else default_root()))


def fill_placeholders(text: str, value: str = "1") -> str:
    """A message format as a concrete line (``%d``, ``%.2f``, ``{name}`` replaced), for pasting."""
    out = re.sub(r"\{[^{}]*\}", value, text)
    return re.sub(r"%[-+ 0#]*\d*(?:\.\d+)?[dsfx]", value, out)
