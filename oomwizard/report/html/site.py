"""A static HTML copy of the knowledge base that works from ``file://`` on a machine with no network.

Everything is escaped: Markdown is rendered by markdown-it-py with raw HTML off, every other string
goes through :func:`html.escape`. Links between pages are relative, the one stylesheet sits at the
root, and no page needs JavaScript. Pages mirror ``content/``: ``<lang>/leaves/<id>.html`` and
``<lang>/questions/<id>.html``, so links written in the articles (``../leaves/<id>.md``) only change
their extension.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ... import __version__
from ...i18n import ui
from ...kb.coderef import parse_code_ref
from ...kb.model import KnowledgeBase, Leaf, Question, Route
from ...onboard.data import get_onboarding
from ...onboard.texts import t as ot
from ...text.cells import JOINED_SCRIPT
from ...text.safe_text import printable
from ..export import LANG_NAMES, describe, incoming, label, node_kind, node_title
from ..leaf import render_fixes
from .onboard import nav_pages, terms_box, write_onboarding

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
_RELATIVE_MD = re.compile(r"^(?![a-z][a-z0-9+.-]*:|/|#)([^#?]*)\.md(#.*)?$", re.I)
HTML_LANG = {"en": "en", "zh": "zh-CN"}


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _relink(tokens: list[Token]) -> None:
    """Article links to other articles (``../leaves/x.md``) point at the exported pages instead."""
    for tok in tokens:
        if tok.children:
            _relink(tok.children)
        if tok.type == "link_open":
            href = str(tok.attrs.get("href", ""))
            m = _RELATIVE_MD.match(href)
            if m:
                tok.attrs["href"] = f"{m.group(1)}.html{m.group(2) or ''}"


_CJK_END = re.compile(f"[{JOINED_SCRIPT}]$")
_CJK_START = re.compile(f"^[{JOINED_SCRIPT}]")


def _join_cjk_lines(tokens: list[Token]) -> None:
    """A line break inside Chinese text is no word break: drop it rather than show a space."""
    for tok in tokens:
        kids = tok.children or []
        for i in range(1, len(kids) - 1):
            before, brk, after = kids[i - 1], kids[i], kids[i + 1]
            if brk.type == "softbreak" and _CJK_END.search(before.content) and _CJK_START.match(after.content):
                brk.type, brk.content = "text", ""


def markdown_html(text: str) -> str:
    tokens = _MD.parse(text)
    _relink(tokens)
    _join_cjk_lines(tokens)
    html: str = _MD.renderer.render(tokens, _MD.options, {})
    return html


def inline_html(text: str) -> str:
    """One line of knowledge-base text (backticks become code); raw HTML stays escaped."""
    html: str = _MD.renderInline(text)
    return html


def badge(text: str, cls: str = "") -> str:
    return f'<span class="badge {esc(cls)}">{esc(text)}</span>'


class Site:
    """Writes the pages of one export; ``langs`` decides whether pages get a language switch."""

    def __init__(self, kb: KnowledgeBase, out: Path, langs: tuple[str, ...]) -> None:
        self.kb = kb
        self.out = out
        self.langs = langs
        self.refs = incoming(kb)
        self.count = 0
        self.onboard_nav = nav_pages(get_onboarding(kb.root or None))

    # --- frame -------------------------------------------------------------------------------

    def page(self, lang: str, path: str, title: str, body: str, scripts: tuple[str, ...] = ("onboard.js",)) -> None:
        """Write ``<lang>/<path>``; ``path`` is relative to the language folder; ``scripts`` sit at the root."""
        depth = path.count("/") + 1
        up = "../" * depth
        nav = [
            f'<a href="{up}{lang}/index.html">{esc(label("index", lang))}</a>',
        ]
        if self.kb.start:
            nav.append(f'<a href="{up}{lang}/{node_kind(self.kb, self.kb.start)}/{esc(self.kb.start)}.html">{esc(label("start", lang))}</a>')
        nav += [f'<a href="{up}{lang}/{page}">{esc(ot(key, lang))}</a>' for page, key in self.onboard_nav]
        switch = [
            f'<a href="{up}{other}/{esc(path)}" hreflang="{HTML_LANG[other]}">{esc(LANG_NAMES[other](other))}</a>'
            for other in self.langs
            if other != lang
        ]
        if switch:
            nav.append(f'<span class="lang">{esc(label("language", lang))}: {" · ".join(switch)}</span>')
        self.write(
            self.out / lang / path,
            _frame(HTML_LANG[lang], title, f"{up}style.css", " ".join(nav), body, label("generated", lang).format(version=__version__),
                   scripts=tuple(up + x for x in scripts), copy=(ot("onboard.copy", lang), ot("onboard.copied", lang))),
        )

    def write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(printable(text), encoding="utf-8")  # no raw escape, even from the knowledge base
        self.count += 1

    def link(self, node_id: str, lang: str, from_lang_root: bool = False) -> str:
        prefix = "" if from_lang_root else "../"
        return f'<a href="{prefix}{node_kind(self.kb, node_id)}/{esc(node_id)}.html">{esc(node_title(self.kb, node_id, lang))}</a>'

    # --- pages -------------------------------------------------------------------------------

    def root_index(self) -> None:
        items = "".join(
            f'<li><a href="{lang}/index.html" hreflang="{HTML_LANG[lang]}">{esc(LANG_NAMES[lang](lang))}</a> — {esc(label("kb", lang))}</li>'
            for lang in self.langs
        )
        title = label("kb", self.langs[0])
        self.write(
            self.out / "index.html",
            _frame(HTML_LANG[self.langs[0]], title, "style.css", "", f"<h1>{esc(title)}</h1><ul>{items}</ul>", label("generated", self.langs[0]).format(version=__version__)),
        )

    def index(self, lang: str) -> None:
        kb = self.kb
        parts = [f"<h1>{esc(label('kb', lang))}</h1>"]
        if kb.start:
            parts.append(f"<p><strong>{esc(label('start', lang))}:</strong> {self.link(kb.start, lang, True)}</p>")
        parts.append(f"<h2>{esc(label('scenarios', lang))}</h2><ul>")
        for s in kb.scenarios.values():
            head = self.link(s.id, lang, True) if s.id in kb.leaves else f"<strong>{esc(s.title(lang))}</strong>"
            others = [leaf.id for leaf in kb.leaves_for_scenario(s.id) if leaf.id != s.id]
            also = (f" <span class='muted'>({esc(label('also', lang))}: " + ", ".join(self.link(i, lang, True) for i in others) + ")</span>") if others else ""
            parts.append(f'<li id="{esc(s.id)}"><code>{esc(s.id)}</code> {head}<br><span class="muted">{inline_html(s.summary(lang))}</span>{also}</li>')
        parts.append("</ul>")
        parts.append(f"<h2>{esc(label('questions', lang))}</h2><ul>")
        parts += [f"<li>{self.link(q.id, lang, True)} <code>{esc(q.id)}</code></li>" for q in kb.questions.values()]
        parts.append(f"</ul><h2>{esc(label('leaves', lang))}</h2><ul>")
        parts += [f"<li>{self.link(leaf.id, lang, True)} {badge(ui('evidence.' + leaf.evidence, lang), leaf.evidence)}</li>" for leaf in kb.leaves.values()]
        parts.append("</ul>")
        self.page(lang, "index.html", label("kb", lang), "".join(parts))

    def terms(self, text: str, lang: str) -> str:
        """Links to the glossary entries of the terms a page's text uses."""
        return terms_box(get_onboarding(self.kb.root or None).terms_in(text, lang), lang, "../")

    def reached_from(self, node_id: str, lang: str) -> str:
        refs = self.refs.get(node_id, [])
        if not refs:
            return ""
        items = []
        for q, cid in refs:
            choice = q.choice(cid) if cid else None
            via = f" → <em>{esc(choice.label(lang))}</em>" if choice else ""
            items.append(f"<li>{self.link(q.id, lang)}{via}</li>")
        return f"<h2>{esc(label('reached_from', lang))}</h2><ul>{''.join(items)}</ul>"

    def routes(self, routes: tuple[Route, ...], lang: str) -> str:
        if len(routes) == 1 and routes[0].condition is None:
            return f" → {self.link(routes[0].target, lang)}"
        items = []
        for r in routes:
            cond = (
                f'{esc(label("if", lang))} <span class="cond">{esc(describe(r.condition, lang))}</span>'
                if r.condition
                else esc(label("otherwise", lang))
            )
            items.append(f"<li>{cond} → {self.link(r.target, lang)}</li>")
        return f'<ul class="routes">{"".join(items)}</ul>'

    def question(self, q: Question, lang: str) -> None:
        parts = [f"<h1>{esc(q.text(lang))}</h1>", f'<div class="badges">{badge(label("fact", lang) + ": " + q.fact)}{badge(q.id)}</div>']
        art = self.kb.articles.get(("questions", q.id, lang))
        if art:
            parts.append(f"<h2>{esc(label('why_we_ask', lang))}</h2>{markdown_html(art.body)}")
        parts.append(self.terms(q.text(lang) + "\n" + (art.body if art else ""), lang))
        if q.kind == "choice":
            parts.append(f"<h2>{esc(label('choices', lang))}</h2><ul class='routes'>")
            for c in q.choices:
                parts.append(f"<li><strong>{esc(c.label(lang))}</strong>{self.routes(c.routes, lang)}</li>")
            parts.append("</ul>")
            if q.unknown:
                chosen = q.choice(q.unknown)
                parts.append(f"<p class='note'>{esc(label('unknown', lang))}: {esc(chosen.label(lang) if chosen else q.unknown)}</p>")
        else:
            parts.append(f"<h2>{esc(label('then', lang))}</h2><p>{esc(label('typed', lang))}</p>{self.routes(q.routes, lang)}")
        if q.auto:
            parts.append(f"<h2>{esc(label('suggested', lang))}</h2><ul>")
            for a in q.auto:
                chosen = q.choice(a.answer)
                answer = chosen.label(lang) if chosen else a.answer
                parts.append(f"<li><strong>{esc(answer)}</strong> — {esc(label('when', lang))} <span class='cond'>{esc(describe(a.condition, lang))}</span></li>")
            parts.append("</ul>")
        parts.append(self.reached_from(q.id, lang))
        self.page(lang, f"questions/{q.id}.html", q.text(lang), "".join(parts))

    def leaf(self, leaf: Leaf, lang: str) -> None:
        def t(key: str) -> str:
            return esc(ui(key, lang))

        head = [badge(f"{ui('evidence', lang)}: {ui('evidence.' + leaf.evidence, lang)}", leaf.evidence)]
        head.append(badge(f"{ui('root_cause', lang)}: {ui(leaf.root_cause_status, lang)}", leaf.root_cause_status))
        if not leaf.versions.is_any:
            head.append(badge(f"vLLM {leaf.versions.text}", "versions"))
        head += [badge(s) for s in leaf.scenarios]
        parts = [f"<h1>{esc(leaf.title(lang))}</h1>", f'<div class="badges">{"".join(head)}</div>']
        parts.append(f"<p><strong>{t('conclusion')}:</strong> {inline_html(leaf.conclusion(lang))}</p>")
        parts.append(f"<p><strong>{t('root_cause')} ({t(leaf.root_cause_status)}):</strong> {inline_html(leaf.root_cause(lang))}</p>")
        parts.append(f"<p><strong>{t('environment')}:</strong> {inline_html(leaf.environment(lang))}</p>")
        parts.append(f"<h2>{t('fixes')}</h2>")
        for i, rf in enumerate(render_fixes(leaf, None, lang), 1):
            fix = rf.fix
            parts.append(f'<section class="fix {esc(fix.evidence)}" id="{esc(fix.id)}"><h3>{i}. {esc(fix.title(lang))}</h3>')
            parts.append(
                f'<div class="badges">{badge(ui("cost." + fix.cost, lang), "cost-" + fix.cost)}'
                f'{badge(ui("evidence." + fix.evidence, lang), fix.evidence)}</div>'
            )
            parts.append(f"<p>{inline_html(fix.cost_note(lang))}</p>")
            for rv in rf.variants:
                if rv.versions and rv.versions != "*":
                    parts.append(f'<div class="badges">{badge("vLLM " + rv.versions, "versions")}</div>')
                parts.append(f'<pre class="cmd"><code>{esc(rv.script)}</code></pre>')
                values = [(r.value, r.why) for r in rv.values if r.why is not None]
                if values:
                    parts.append("<ul class='note'>" + "".join(f"<li><code>{esc(v)}</code>: {esc(why(lang))}</li>" for v, why in values) + "</ul>")
                if rv.missing:
                    parts.append(f"<p class='note'>{t('fill_in')}: " + ", ".join(f"<code>{esc(m)}</code>" for m in rv.missing) + "</p>")
                if rv.note:
                    parts.append(f"<p class='note'>{inline_html(rv.note(lang))}</p>")
            if fix.why:
                parts.append(f"<p>{inline_html(fix.why(lang))}</p>")
            if fix.sources:
                parts.append("<p class='note'>" + " · ".join(_source_link(s) for s in fix.sources) + "</p>")
            parts.append("</section>")
        parts.append(f"<h2>{t('checklist')}</h2><ul class='checklist'>")
        for c in leaf.checks:
            auto = " " + badge(ui("auto_check", lang), "auto") if c.auto else ""
            parts.append(f"<li>{inline_html(c.text(lang))}{auto}</li>")
        parts.append("</ul>")
        if leaf.caveats:
            parts.append(f"<h2>{t('caveats')}</h2><ul>" + "".join(f"<li>{inline_html(cv(lang))}</li>" for cv in leaf.caveats) + "</ul>")
        art = self.kb.articles.get(("leaves", leaf.id, lang))
        if art:
            parts.append(markdown_html(art.body))
        parts.append(self.terms("\n".join([leaf.title(lang), leaf.conclusion(lang), leaf.root_cause(lang),
                                             leaf.environment(lang), art.body if art else ""]), lang))
        parts.append(f"<h2>{t('sources')}</h2><ul>")
        for s in leaf.sources:
            parts.append(f"<li>{_source_link(s.url)}" + (f" — {esc(s.title)}" if s.title else "") + "</li>")
        parts.append("</ul>")
        parts.append(self.reached_from(leaf.id, lang))
        self.page(lang, f"leaves/{leaf.id}.html", leaf.title(lang), "".join(parts))


def _source_link(url: str) -> str:
    if url.startswith("https://"):
        return f'<a href="{esc(url)}">{esc(url)}</a>'
    ref = parse_code_ref(url)
    if ref is not None:  # released source: the file at the release's tag
        return f'<a href="{esc(ref.url)}"><code>{esc(url)}</code></a>'
    return f"<code>{esc(url)}</code>"  # a fixture reading: a name, not a link


def _frame(lang: str, title: str, css: str, nav: str, body: str, footer: str, scripts: tuple[str, ...] = (),
           copy: tuple[str, str] = ("Copy", "Copied")) -> str:
    tags = "".join(f'<script src="{esc(src)}"></script>\n' for src in scripts)
    return (
        "<!doctype html>\n"
        f'<html lang="{esc(lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n"
        f'<link rel="stylesheet" href="{esc(css)}">\n'
        f'<link rel="icon" href="{esc(css[: -len("style.css")])}favicon.svg">\n{tags}</head>\n<body data-copy="{esc(copy[0])}" data-copied="{esc(copy[1])}">\n'
        f"<header>{nav}</header>\n<main>\n{body}\n</main>\n"
        f"<footer>{esc(footer)}</footer>\n</body>\n</html>\n"
    )


FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
           '<rect width="16" height="16" rx="3" fill="#0b5cad"/><path d="M4 11V5h8v6z" fill="#fff"/></svg>\n')


def write_html(kb: KnowledgeBase, out: Path, langs: tuple[str, ...]) -> int:
    """Write the whole site under ``out``; returns the number of files written."""
    site = Site(kb, out, langs)
    css = resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")
    site.write(out / "style.css", css)
    site.write(out / "favicon.svg", FAVICON)  # a browser asks for an icon; answer it from the export
    site.root_index()
    for lang in langs:
        site.index(lang)
        for q in kb.questions.values():
            site.question(q, lang)
        for leaf in kb.leaves.values():
            site.leaf(leaf, lang)
    write_onboarding(site)
    return site.count
