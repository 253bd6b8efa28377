"""The string catalogues: both languages alike, every key used, every key used known, no Chinese in code.

``content/<lang>/strings.yaml`` holds the program's own words, one flat ``area.name`` key each.
Checked here, each problem at its file and line:

- a key one language has and the other lacks;
- ``{placeholders}`` that differ between the languages (``str.format`` would fail, or drop a value);
- a key the code never names (a literal equal to the key, or an f-string prefix such as
  ``ui(f"cost.{cost}", lang)`` that covers it);
- a key the code names in ``ui(…)``/``msg(…)`` that the catalogue lacks;
- a compiled ``oomwizard/data/strings/<lang>.json`` that differs from its catalogue;
- Chinese text written inline in a ``.py`` file instead of in the catalogue.
"""

from __future__ import annotations

import ast
import json
import re
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..i18n import LANGS
from ..kb.yamlsrc import LDict, Problem, load_yaml
from .context import LintContext

PACKAGE = Path(__file__).resolve().parent.parent
KEY_RE = re.compile(r"^[a-z0-9_]+(?:[.-][a-z0-9_]+)*$")
LOOKUPS = frozenset({"ui", "msg", "t", "ot", "said"})
"""Functions whose first argument is a catalogue key (``onboard.texts.t`` is imported as ``ot``;
``advice.numbers.said`` formats one for both languages)."""
EMBEDDED_RE = re.compile(r"@(?:en|zh):([a-z0-9_.-]+)@")
"""A key inside a template (``kit/install_sh.py``: ``"@en:KEY@" "@zh:KEY@"``)."""
CJK_RE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

INLINE_CJK_ALLOWED: dict[str, str] = {
    # Chinese that is not a string shown to anyone: it matches or describes Chinese content.
    "lint/internal.py": "patterns that find internal references in Chinese articles",
    "lint/leaves.py": "a docstring example of a Chinese line break",
    "lint/articles.py": "a pattern over Chinese article text",
    "text/cells.py": "a docstring example of double-width cells",
    "tui/cjk.py": "characters that test how the terminal draws double-width cells",
    "plain_prompts.py": "the Chinese answers a yes/no prompt accepts",
    "i18n.py": "the catalogue loader",
}
"""``oomwizard/`` paths (a folder ends in ``/``) where Chinese may be written in code, and why."""


@dataclass(frozen=True)
class Entry:
    text: str
    line: int


def read_catalogue(path: Path, display: str = "", problems: list[Problem] | None = None) -> dict[str, Entry]:
    """The catalogue at ``path`` with the line of each key; shape problems go to ``problems``."""
    found: list[Problem] = [] if problems is None else problems
    display = display or path.name
    data = load_yaml(path, display, found)
    if data is None:
        return {}
    if not isinstance(data, LDict):
        found.append(Problem(display, 1, "a string catalogue is one mapping of keys to strings"))
        return {}
    out: dict[str, Entry] = {}
    for key, value in data.items():
        line = data.line_of(key)
        if not isinstance(key, str) or not KEY_RE.match(key):
            found.append(Problem(display, line, f"key {key!r} is not lower-case words joined by '.' or '-'"))
        elif not isinstance(value, str):
            found.append(Problem(display, line, f"{key}: the value must be a string"))
        else:
            out[key] = Entry(value, line)
    return out


def compiled_text(strings: dict[str, str]) -> str:
    """The compiled catalogue as ``scripts/gen_strings.py`` writes it."""
    return json.dumps(dict(sorted(strings.items())), ensure_ascii=False, indent=0) + "\n"


def placeholders(text: str) -> set[str] | None:
    """The ``{field}`` names of a format string (``None`` when it is not one)."""
    try:
        return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return None


@dataclass
class CodeUse:
    literals: set[str]
    prefixes: list[tuple[str, str, int]]
    lookups: list[tuple[str, str, int]]
    cjk: list[tuple[str, int]]


def _prefix(node: ast.expr) -> str | None:
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
        return str(node.left.value)
    return None


def scan_code(package: Path = PACKAGE) -> CodeUse:
    """Every string literal, key lookup and inline Chinese string of the package's modules."""
    use = CodeUse(set(), [], [], [])
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        display = f"{package.name}/{rel}"
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        lines = source.splitlines()
        allowed = any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in INLINE_CJK_ALLOWED)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                use.literals.add(node.value)
                for m in EMBEDDED_RE.finditer(node.value):
                    use.lookups.append((m.group(1), display, node.lineno))
                if not allowed and CJK_RE.search(node.value) and _written(lines, node):
                    use.cjk.append((display, node.lineno))
            elif isinstance(node, ast.Call) and node.args and _callee(node.func) in LOOKUPS:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and KEY_RE.match(first.value):
                    use.lookups.append((first.value, display, node.lineno))
                elif (prefix := _prefix(first)) is not None:
                    use.prefixes.append((prefix, display, node.lineno))
    return use


def _written(lines: list[str], node: ast.expr) -> bool:
    """Whether the literal's Chinese is written out in the source (``"\\u4e00"`` escapes a range, it says nothing)."""
    end = node.end_lineno or node.lineno
    return bool(CJK_RE.search("\n".join(lines[node.lineno - 1:end])))


def _callee(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def catalogue_problems(content: Path, package: Path = PACKAGE, shown: str = "content") -> list[Problem]:
    """Every problem of the catalogues under ``content`` and of their use in ``package``."""
    problems: list[Problem] = []
    files = {lang: f"{shown}/{lang}/strings.yaml" for lang in LANGS}
    cats = {lang: read_catalogue(content / lang / "strings.yaml", files[lang], problems) for lang in LANGS}
    en, zh = cats["en"], cats["zh"]
    for a, b in (("en", "zh"), ("zh", "en")):
        for key, entry in cats[a].items():
            if key not in cats[b]:
                problems.append(Problem(files[a], entry.line, f"{key}: missing in {files[b]}"))
    for key in en.keys() & zh.keys():
        pe, pz = placeholders(en[key].text), placeholders(zh[key].text)
        if pe is None or pz is None:
            bad = "en" if pe is None else "zh"
            problems.append(Problem(files[bad], cats[bad][key].line, f"{key}: unbalanced braces (write {{{{ for a brace)"))
        elif pe != pz:
            problems.append(Problem(files["zh"], zh[key].line,
                                    f"{key}: placeholders differ: en {sorted(pe)}, zh {sorted(pz)}"))
    for lang, cat in cats.items():
        problems += _compiled_problems(package, lang, cat, files[lang])
    use = scan_code(package)
    problems += _use_problems(use, en, files["en"])
    for display, line in use.cjk:
        problems.append(Problem(display, line, "Chinese text in code: give it a key in content/{en,zh}/strings.yaml"))
    return problems


def _compiled_problems(package: Path, lang: str, cat: dict[str, Entry], shown: str) -> Iterator[Problem]:
    compiled = package / "data" / "strings" / f"{lang}.json"
    want = compiled_text({k: e.text for k, e in cat.items()})
    try:
        have = compiled.read_text(encoding="utf-8")
    except OSError:
        have = ""
    if have != want:
        yield Problem(shown, 1, f"oomwizard/data/strings/{lang}.json differs from this catalogue: "
                                "run python scripts/gen_strings.py")


def _use_problems(use: CodeUse, en: dict[str, Entry], shown: str) -> Iterator[Problem]:
    for key, display, line in use.lookups:
        if key not in en:
            yield Problem(display, line, f"{key!r} is not in {shown}")
    for prefix, display, line in use.prefixes:
        if prefix and not any(k.startswith(prefix) for k in en):
            yield Problem(display, line, f"no key of {shown} starts with {prefix!r}")
    prefixes = tuple(p for p, _, _ in use.prefixes if p)
    looked_up = {key for key, _, _ in use.lookups}
    for key, entry in en.items():
        if key not in use.literals and key not in looked_up and not key.startswith(prefixes):
            yield Problem(shown, entry.line, f"{key}: no code uses this string")


def check_strings(ctx: LintContext) -> None:
    content = ctx.base / "content"
    if (content / "en" / "strings.yaml").is_file():
        ctx.problems.extend(catalogue_problems(content))
        ctx.problems.extend(fact_title_problems(content / "en" / "strings.yaml", "content/en/strings.yaml"))


def fact_title_problems(path: Path, shown: str, names: Iterable[str] | None = None) -> list[Problem]:
    """A fact's label is the key ``fact.<name>``: every fact needs one, and a ``fact.`` key names a fact."""
    from ..facts.catalog import CATALOG

    facts = set(CATALOG if names is None else names)
    cat = read_catalogue(path, shown)
    keys = {k.removeprefix("fact."): e for k, e in cat.items() if k.startswith("fact.")}
    out = [Problem(shown, 1, f"fact {name!r} has no label: add fact.{name}") for name in sorted(facts - keys.keys())]
    out += [Problem(shown, keys[name].line, f"fact.{name}: no such fact in oomwizard/facts/catalog.py")
            for name in sorted(keys.keys() - facts)]
    return out
