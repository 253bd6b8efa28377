"""Articles: ``content/<lang>/{leaves,questions}/<id>.md``, their title, and Chinese line joins.

Front matter is stripped and its ``title:`` kept (else the first ``# `` heading). Lines of a
paragraph are joined where both sides are Chinese, since Markdown would put a space there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..i18n import LANGS
from ..text.cells import JOINED_SCRIPT
from .model import Article
from .yamlsrc import Problem

_FRONT_RE = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_CJK_BREAK_RE = re.compile(f"([{JOINED_SCRIPT}])\n[ \t]*(?=[{JOINED_SCRIPT}])")
_FENCE_RE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)


def join_cjk_lines(markdown: str) -> str:
    """Join a paragraph's lines where both sides are Chinese, outside code blocks.

    Markdown renders a line break inside a paragraph as a space, which is right between English
    words and wrong between Chinese characters; authors wrap long Chinese lines all the same.
    """
    out, pos = [], 0
    for m in _FENCE_RE.finditer(markdown):
        out.append(_CJK_BREAK_RE.sub(r"\1", markdown[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_CJK_BREAK_RE.sub(r"\1", markdown[pos:]))
    return "".join(out)


def _article(path: Path, display: str, kind: str, lang: str, problems: list[Problem]) -> Article | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        problems.append(Problem(display, None, f"cannot read: {e}"))
        return None
    title = ""
    body = text
    m = _FRONT_RE.match(text)
    if m:
        body = text[m.end():]
        for line in m.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "title":
                title = value.strip().strip("\"'")
    if not title:
        h = re.search(r"^#\s+(.+)$", body, re.M)
        title = h.group(1).strip() if h else ""
    if not title:
        problems.append(Problem(display, 1, "article has no title (front matter 'title:' or a '# ' heading)"))
    return Article(kind, path.stem, lang, title, join_cjk_lines(body.strip()) + "\n", display)


def load_articles(base: Path, rel: Callable[[Path], str], problems: list[Problem]) -> dict[tuple[str, str, str], Article]:
    """Every article under ``base/content``, keyed by (kind, id, language)."""
    articles: dict[tuple[str, str, str], Article] = {}
    for lang in LANGS:
        for kind in ("leaves", "questions"):
            for md in sorted((base / "content" / lang / kind).glob("*.md")):
                art = _article(md, rel(md), kind, lang, problems)
                if art:
                    articles[(kind, art.id, lang)] = art
    return articles
