"""A few document blocks drawn as GitHub Markdown or as a standalone HTML page.

The bundle's Markdown and HTML come from the same blocks, so both hold the same text. Every
string is escaped for where it goes: table cells and prose escape Markdown's specials and HTML's
``<>&``; code blocks get a fence longer than any run of backticks inside them, so a log line
cannot close the fence early; HTML escapes everything, with nothing raw from the inputs.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~!])")


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str
    strong: bool = False


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Code:
    text: str
    lang: str = "text"


@dataclass
class Items:
    items: list[str]
    checkbox: bool = False


@dataclass
class Details:
    summary: str
    blocks: list[Block] = field(default_factory=list)


Block = Heading | Para | Table | Code | Items | Details


def md_escape(text: str) -> str:
    """Prose for GitHub Markdown: specials backslashed, HTML's ``<>&`` as entities, one line."""
    t = " ".join(str(text).split())
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", t)


def fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        out.extend(_md(b))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _md(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * b.level + " " + md_escape(b.text)]
    if isinstance(b, Para):
        t = md_escape(b.text)
        return [f"**{t}**" if b.strong and t else t]
    if isinstance(b, Table):
        lines = ["| " + " | ".join(md_escape(h) or " " for h in b.header) + " |",
                 "|" + "---|" * len(b.header)]
        lines += ["| " + " | ".join(md_escape(c) or " " for c in row) + " |" for row in b.rows]
        return lines
    if isinstance(b, Code):
        text = b.text.rstrip("\n")
        fence = fence_for(text)
        return [fence + b.lang, text, fence]
    if isinstance(b, Items):
        mark = "- [ ] " if b.checkbox else "- "
        return [mark + md_escape(i) for i in b.items]
    out = ["<details>", f"<summary>{html.escape(' '.join(b.summary.split()))}</summary>", ""]
    for inner in b.blocks:
        out.extend(_md(inner))
        out.append("")
    out.append("</details>")
    return out


CSS = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
    "pre{background:#f5f5f5;padding:.6rem;overflow-x:auto;white-space:pre-wrap}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}"
    "summary{cursor:pointer;font-weight:600}"
)


def to_html(title: str, blocks: list[Block], lang: str = "en") -> str:
    body = "\n".join(_html(b) for b in blocks)
    return (f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _html(b: Block) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{_e(b.text)}</h{b.level}>"
    if isinstance(b, Para):
        return f"<p><strong>{_e(b.text)}</strong></p>" if b.strong else f"<p>{_e(b.text)}</p>"
    if isinstance(b, Table):
        head = "".join(f"<th>{_e(h)}</th>" for h in b.header)
        rows = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in b.rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    if isinstance(b, Code):
        return f"<pre><code>{_e(b.text.rstrip())}</code></pre>"
    if isinstance(b, Items):
        box = '<input type="checkbox" disabled> ' if b.checkbox else ""
        return "<ul>" + "".join(f"<li>{box}{_e(i)}</li>" for i in b.items) + "</ul>"
    inner = "\n".join(_html(x) for x in b.blocks)
    return f"<details><summary>{_e(b.summary)}</summary>\n{inner}\n</details>"
