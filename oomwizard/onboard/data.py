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

from ..i18n import LANGS, Text
from ..kb.loader import default_root
from ..kb.yamlsrc import LDict, LList, Problem, load_yaml

MESSAGE_KINDS = ("error", "log", "torch")
_CJK = "\u3400-\u9fff\u3000-\u303f\uff00-\uffef"
_FOLD_RE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])|(?<=[\u3000-\u303f\uff00-\uffef]) ")


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

    def err(self, file: str, line: int | None, msg: str) -> None:
        self.problems.append(Problem(file, line, msg))

    def strs(self, file: str, d: LDict, key: str) -> tuple[str, ...]:
        if key not in d:
            return ()
        v = d[key]
        if not isinstance(v, LList) or not all(isinstance(x, str) and x.strip() for x in v):
            self.err(file, d.line_of(key), f"{key} must be a list of non-empty strings")
            return ()
        return tuple(x.strip() for x in v)

    def text(self, file: str, d: LDict, key: str, what: str, required: bool = True) -> Text | None:
        v = d.get(key)
        if v is None:
            if required:
                self.err(file, d.line, f"{what}: missing {key!r}")
            return None
        if not isinstance(v, LDict):
            self.err(file, d.line_of(key), f"{what}.{key} must have an 'en' and a 'zh' text")
            return None
        vals = {}
        for lang in LANGS:
            s = v.get(lang)
            if not isinstance(s, str) or not s.strip():
                self.err(file, v.line_of(lang), f"{what}.{key}: missing {lang!r} translation")
            vals[lang] = unfold(str(s or ""))
        return Text(vals["en"], vals["zh"])


def _glossary(r: _Reader, ob: Onboarding) -> None:
    meta_file = "content/glossary/terms.yaml"
    meta = r.load(meta_file)
    found = meta.get("terms") if meta else None
    if meta is not None and not isinstance(found, LDict):
        r.err(meta_file, meta.line, "needs a 'terms' mapping")
    top: LDict = found if isinstance(found, LDict) else LDict()
    langs: dict[str, LDict] = {}
    for lang in LANGS:
        d = r.load(f"content/glossary/{lang}.yaml")
        langs[lang] = d if d is not None else LDict()
    for tid, d in top.items():
        if not isinstance(d, LDict):
            r.err(meta_file, top.line_of(tid), f"term {tid}: must be a mapping")
            continue
        for k in d:
            if k not in {"flags", "env", "log", "leaves", "related", "source"}:
                r.err(meta_file, d.line_of(k), f"term {tid}: unknown field {k!r}")
        names: dict[str, str] = {}
        defs: dict[str, str] = {}
        match: dict[str, tuple[str, ...]] = {}
        lines: dict[str, int] = {}
        for lang in LANGS:
            lfile = f"content/glossary/{lang}.yaml"
            ld = langs[lang].get(tid)
            if not isinstance(ld, LDict):
                r.err(lfile, langs[lang].line or 1, f"term {tid!r} has no {lang} entry (defined at {meta_file}:{top.line_of(tid)})")
                ld = LDict()
            lines[lang] = ld.line
            for k in ld:
                if k not in {"name", "match", "definition"}:
                    r.err(lfile, ld.line_of(k), f"term {tid}: unknown field {k!r}")
            for key, into in (("name", names), ("definition", defs)):
                v = ld.get(key)
                if not isinstance(v, str) or not v.strip():
                    if ld:
                        r.err(lfile, ld.line_of(key) if key in ld else ld.line, f"term {tid}: missing {key!r}")
                    v = ""
                into[lang] = unfold(v)
            spell = r.strs(lfile, ld, "match") if "match" in ld else ()
            match[lang] = (names[lang], *spell) if names[lang] else spell
        ob.terms[tid] = Term(
            tid, Text(names["en"], names["zh"]), Text(defs["en"], defs["zh"]), match,
            r.strs(meta_file, d, "flags"), r.strs(meta_file, d, "env"), r.strs(meta_file, d, "log"),
            r.strs(meta_file, d, "leaves"), r.strs(meta_file, d, "related"), str(d.get("source", "")),
            d.line, lines,
        )
    for lang in LANGS:
        for tid in langs[lang]:
            if top is not None and tid not in top:
                r.err(f"content/glossary/{lang}.yaml", langs[lang].line_of(tid),
                      f"term {tid!r} is not in {meta_file}")


def _timeline(r: _Reader, ob: Onboarding) -> None:
    file = "content/memory/timeline.yaml"
    data = r.load(file)
    steps = data.get("steps") if data else None
    if not isinstance(steps, LDict):
        if data is not None:
            r.err(file, data.line, "needs a 'steps' mapping")
        return
    for sid, d in steps.items():
        if not isinstance(d, LDict):
            r.err(file, steps.line_of(sid), f"step {sid}: must be a mapping")
            continue
        for k in d:
            if k not in {"title", "text", "log", "terms", "lane"}:
                r.err(file, d.line_of(k), f"step {sid}: unknown field {k!r}")
        ob.steps[sid] = Step(
            sid, r.text(file, d, "title", f"step {sid}") or Text("", ""), r.text(file, d, "text", f"step {sid}") or Text("", ""),
            r.strs(file, d, "log"), r.strs(file, d, "terms"), str(d.get("lane", "gpu")), steps.line_of(sid),
        )


def _browse(r: _Reader, ob: Onboarding) -> None:
    file = "content/browse/scenarios.yaml"
    data = r.load(file)
    top = data.get("scenarios") if data else None
    if not isinstance(top, LDict):
        if data is not None:
            r.err(file, data.line, "needs a 'scenarios' mapping")
        return
    for sid, d in top.items():
        if not isinstance(d, LDict):
            r.err(file, top.line_of(sid), f"scenario {sid}: must be a mapping")
            continue
        msgs = []
        raw = d.get("messages", LList())
        for i, m in enumerate(raw if isinstance(raw, LList) else []):
            line = raw.line_of(i)
            if not isinstance(m, LDict) or not isinstance(m.get("text"), str):
                r.err(file, line, f"scenario {sid}: messages[{i}] needs a 'text'")
                continue
            kind = str(m.get("kind", ""))
            if kind not in MESSAGE_KINDS:
                r.err(file, m.line_of("kind"), f"scenario {sid}: message kind {kind!r} is not one of {', '.join(MESSAGE_KINDS)}")
            msgs.append(Message(kind, m["text"], str(m.get("versions", "*")), str(m.get("file", "")), line))
        step = d.get("step")
        if not isinstance(step, str):
            r.err(file, d.line, f"scenario {sid}: needs a 'step' (a step id of content/memory/timeline.yaml)")
            step = ""
        ob.scenarios[sid] = ScenarioInfo(sid, step, tuple(msgs), d.line_of("step") if "step" in d else top.line_of(sid))


    aliases = data.get("aliases") if data else None
    if isinstance(aliases, LDict):
        for word in aliases:
            ob.aliases[word.lower()] = r.strs(file, aliases, word)


def _tour(r: _Reader, ob: Onboarding) -> None:
    file = "content/tour/steps.yaml"
    data = r.load(file)
    steps = data.get("steps") if data else None
    if not isinstance(steps, LList):
        if data is not None:
            r.err(file, data.line, "needs a 'steps' list")
        return
    for i, d in enumerate(steps):
        if not isinstance(d, LDict) or not isinstance(d.get("id"), str):
            r.err(file, steps.line_of(i), f"steps[{i}] needs an 'id'")
            continue
        what = f"tour step {d['id']}"
        ob.tour.append(TourStep(
            d["id"], r.text(file, d, "title", what) or Text("", ""), r.text(file, d, "body", what) or Text("", ""),
            r.text(file, d, "verify", what, required=False), r.strs(file, d, "terms") if "terms" in d else (),
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
