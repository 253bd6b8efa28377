"""Articles: one per leaf and per question in each language, and the two languages in step.

An operator reading Chinese must get the same technical content as one reading English: the same
sections, the same commands character for character, the same links and the same flag and variable
names. Translations drift when one side is edited alone, so those are compared mechanically; links
between articles must resolve, since the exported site and the TUI follow them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import LANGS
from ..kb.model import Article
from ..kb.releases import ENV_RE, FLAG_RE, NEVER_EXISTED, load_releases
from .commands import serve_flags
from .context import LintContext
from .leaves import is_prose

SINGULAR = {"leaves": "leaf", "questions": "question"}
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_HEADING_RE = re.compile(r"^##[ \t]+\S")
_URL_RE = re.compile(r"https?://[^\s<>()\[\]`\"'，。；：、）（]+")
_NAME_RE = re.compile(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![A-Za-z0-9_])")
LINK_RE = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_INLINE_CODE_RE = re.compile(r"`[^`]*`")


@dataclass
class Scan:
    """What parity compares, each with the line it first appears on (1-based, front matter included)."""

    headings: list[int] = field(default_factory=list)
    code: list[tuple[int, str]] = field(default_factory=list)
    urls: dict[str, int] = field(default_factory=dict)
    names: dict[str, int] = field(default_factory=dict)
    links: list[tuple[int, str]] = field(default_factory=list)
    title_line: int = 1


def scan(text: str) -> Scan:
    out = Scan()
    fence: str | None = None
    block: list[str] = []
    block_line = 0
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE_RE.match(line)
        if fence is None and m:
            fence, block, block_line = m.group(1), [m.group(2).strip()], n
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                out.code.append((block_line, "\n".join(block)))
                fence = None
            else:
                block.append(line)
        elif _HEADING_RE.match(line):
            out.headings.append(n)
        elif out.title_line == 1 and line.startswith(("title:", "# ")):
            out.title_line = n
        if fence is None and not m:
            for target in LINK_RE.findall(_INLINE_CODE_RE.sub("", line)):
                out.links.append((n, target))
        for url in _URL_RE.findall(line):
            out.urls.setdefault(url.rstrip(".,;:!?"), n)
        for name in FLAG_RE.findall(line) + _NAME_RE.findall(line):
            out.names.setdefault(name, n)
    if fence is not None:
        out.code.append((block_line, "\n".join(block)))
    return out


def check_articles(ctx: LintContext) -> None:
    kb = ctx.kb
    nodes: dict[str, Mapping[str, Any]] = {"leaves": kb.leaves, "questions": kb.questions}
    for kind, items in nodes.items():
        for node_id, node in items.items():
            for lang in LANGS:
                if (kind, node_id, lang) not in kb.articles:
                    ctx.error(node.file, node.line, f"{SINGULAR[kind]} {node_id}: no article content/{lang}/{kind}/{node_id}.md")
    scans: dict[tuple[str, str, str], Scan] = {}
    for key, art in sorted(kb.articles.items()):
        kind, node_id, _ = key
        unloadable = kind == "leaves" and (ctx.base / "decision_trees" / "leaves" / f"{node_id}.yaml").exists()
        if node_id not in nodes[kind] and not unloadable:
            ctx.error(art.file, 1, f"orphan article: there is no {SINGULAR[kind]} {node_id!r} in decision_trees/")
        text = _read(ctx.base / art.file)
        scans[key] = scan(text)
        _check_links(ctx, art, scans[key])
        if art.lang == "en":
            _check_code(ctx, art, scans[key])
    for (kind, node_id, lang), art in sorted(kb.articles.items()):
        if lang != "en":
            continue
        for other in LANGS[1:]:
            twin = kb.articles.get((kind, node_id, other))
            if twin is not None:
                _check_parity(ctx, art, scans[(kind, node_id, "en")], twin, scans[(kind, node_id, other)])


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""  # the loader reports unreadable files


def _check_parity(ctx: LintContext, en: Article, a: Scan, zh: Article, b: Scan) -> None:
    if len(a.headings) != len(b.headings):
        line = b.headings[min(len(a.headings), len(b.headings))] if len(b.headings) > len(a.headings) else (b.headings[-1] if b.headings else 1)
        ctx.error(zh.file, line, f"{len(b.headings)} '##' headings, but {en.file} has {len(a.headings)}")
    for i in range(max(len(a.code), len(b.code))):
        if i >= len(b.code):
            ctx.error(en.file, a.code[i][0], f"code block {i + 1} is missing from {zh.file}")
        elif i >= len(a.code):
            ctx.error(zh.file, b.code[i][0], f"code block {i + 1} is not in {en.file}")
        elif a.code[i][1] != b.code[i][1]:
            ctx.error(zh.file, b.code[i][0], f"code block {i + 1} differs from the one in {en.file}:{a.code[i][0]}; code must be identical")
    for what, mine, theirs in (("URL", a.urls, b.urls), ("name", a.names, b.names)):
        for item, line in mine.items():
            if item not in theirs:
                ctx.error(en.file, line, f"{what} {item} is not in {zh.file}")
        for item, line in theirs.items():
            if item not in mine:
                ctx.error(zh.file, line, f"{what} {item} is not in {en.file}")
    if en.title and en.title == zh.title and is_prose(en.title):
        ctx.warn(zh.file, b.title_line, f"title is the English one, untranslated: {en.title!r}")


def _check_links(ctx: LintContext, art: Article, s: Scan) -> None:
    folder = (ctx.base / art.file).parent
    content = (ctx.base / "content").resolve()
    for line, target in s.links:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        resolved = (folder / path).resolve()
        inside = content in resolved.parents
        if not inside or not resolved.is_file() or resolved.suffix != ".md":
            ctx.error(art.file, line, f"link {target!r} does not lead to an article (write ../leaves/<id>.md or ../questions/<id>.md)")


def _check_code(ctx: LintContext, art: Article, s: Scan) -> None:
    """Commands in articles are not tied to versions, but they must exist in some release."""
    releases = load_releases()
    for line, block in s.code:
        for n, text in _commands(block.splitlines()[1:], line + 1):
            for flag, _ in serve_flags(text):
                name = flag.partition(".")[0] if flag.startswith("--") else flag
                if flag.startswith("--") and "_" in name:
                    ctx.warn(art.file, n, f"{flag}: write the dashed form {name.replace('_', '-')}")
                elif not any(r.has_flag(name) for r in releases):
                    ctx.warn(art.file, n, f"{flag} is a flag of no vLLM release 0.6.6-0.33.0")
            for env in ENV_RE.findall(text):
                if env in NEVER_EXISTED:
                    ctx.error(art.file, n, f"{env}: {NEVER_EXISTED[env]}")
                elif not any(r.has_env(env) for r in releases):
                    ctx.warn(art.file, n, f"{env} is read by no vLLM release 0.6.6-0.33.0")


def _commands(lines: list[str], first: int) -> list[tuple[int, str]]:
    """Lines of a code block with ``\\`` continuations joined, each with the line it starts on."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, text in enumerate(lines, first):
        pending = (pending[0], pending[1] + " " + text.strip()) if pending is not None else (n, text)
        if pending[1].rstrip().endswith("\\"):
            pending = (pending[0], pending[1].rstrip()[:-1])
            continue
        out.append(pending)
        pending = None
    if pending is not None:
        out.append(pending)
    return out
