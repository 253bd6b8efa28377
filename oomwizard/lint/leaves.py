"""Leaves an operator can act on: complete, cheapest fix first, every claim traceable to a source.

The loader checks that fields have the right shape; this checks that a leaf says enough to be
trusted: a conclusion, the environment it applies to, a root cause, at least one fix with a command,
a checklist and sources, fixes ordered by cost, "verified" only where an issue, a pull request or
our own readings back it, "code" only with a ``file@version`` reference to released source, and no
text left untranslated.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..kb.coderef import LOOKS_LIKE_CODE_REF_RE, parse_code_ref
from ..kb.model import COSTS, Fix, Leaf
from ..kb.releases import load_releases, releases_in, span
from ..text.cells import JOINED_SCRIPT
from ..versions import Version
from .conditions import parse_range
from .context import LintContext, walk_mappings

ISSUE_RE = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(?:issues|pull)/\d+(?:#[\w.-]+)?$")
GITHUB_OTHER_RE = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(?:blob|tree|commit|releases|discussions)/\S+$")
FIXTURE_RE = re.compile(r"^(?:shared/)?fixtures/[\w.-]+/[\w.-]+$")
"""Our own readings (``fixtures/h200/oom_expandable.json``) count as evidence, like an issue."""

_CJK_END_RE = re.compile(f"[{JOINED_SCRIPT}]$")
_CJK_START_RE = re.compile(f"^[{JOINED_SCRIPT}]")
_LITERAL_RE = re.compile(r":\s*\|[-+]?\d*\s*$")
_CODE_OR_QUOTE_RE = re.compile(r"`[^`]*`|\"[^\"]*\"|'[^']*'|“[^”]*”|‘[^’]*’|https?://\S+|--?[\w.-]+|\b\w*[_.(){}/]\w*\b")
_WORD_RE = re.compile(r"[A-Za-z]{2,}")


def is_evidence(source: str) -> bool:
    return bool(ISSUE_RE.match(source) or FIXTURE_RE.match(source))


def code_ref_problem(ref: str) -> str | None:
    """Why ``ref`` is not a ``file@version`` reference to a release we know, or None."""
    parsed = parse_code_ref(ref)
    if parsed is None:
        return (
            f"source {ref!r} is not a file@version reference (vllm/<path>.py@X.Y.Z or torch/<path>@X.Y.Z, "
            "the path inside the released wheel)"
        )
    if parsed.project == "vllm":
        known = {str(r) for r in load_releases()}
        if Version.parse(parsed.version).base not in known:
            return f"source {ref!r}: vLLM {parsed.version} is not a known release ({span(list(load_releases()))})"
    return None


def source_problem(url: str) -> tuple[str, str] | None:
    """(severity, message) when ``url`` is not an issue/PR, a fixture, a file@version reference or an
    https documentation page."""
    if FIXTURE_RE.match(url) or ISSUE_RE.match(url):
        return None
    if "://" not in url and LOOKS_LIKE_CODE_REF_RE.match(url):
        problem = code_ref_problem(url)
        return ("error", problem) if problem else None
    parts = urlsplit(url)
    if parts.scheme != "https" or "." not in parts.netloc or any(c.isspace() for c in url):
        return "error", f"source {url!r} is not a well-formed https URL (or a fixtures/<set>/<file> reading)"
    if parts.netloc in ("github.com", "www.github.com"):
        if GITHUB_OTHER_RE.match(url):
            return "warning", f"source {url!r}: cite the issue or pull request (github.com/<org>/<repo>/issues|pull/N) where there is one"
        return "error", f"source {url!r}: a GitHub source must be github.com/<org>/<repo>/issues/N or /pull/N"
    return None


def is_prose(text: str) -> bool:
    """Enough words outside code, quotes, flags and identifiers that a reader needs them translated."""
    return len(_WORD_RE.findall(_CODE_OR_QUOTE_RE.sub(" ", text))) >= 3


def folded_cjk_breaks(text: str) -> list[int]:
    """Lines that continue Chinese text from the line before: YAML folds the break into a space.

    ``"在模型允许的\n情况下"`` in a ``>-`` or plain scalar reads ``在模型允许的 情况下``. Literal
    blocks (``|``) keep the break and are skipped.
    """
    lines = text.splitlines()
    out: list[int] = []
    literal: int | None = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal is not None and stripped and indent <= literal:
            literal = None
        if literal is not None:
            continue
        if _LITERAL_RE.search(line):
            literal = indent
            continue
        if i + 1 < len(lines) and _CJK_END_RE.search(line.rstrip()) and _CJK_START_RE.match(lines[i + 1].lstrip()):
            out.append(i + 2)
    return out


def check_leaves(ctx: LintContext) -> None:
    for leaf in ctx.kb.leaves.values():
        _check_leaf(ctx, leaf)
    _check_texts(ctx)


def _check_leaf(ctx: LintContext, leaf: Leaf) -> None:
    f = leaf.file

    def at(key: str) -> int:
        return ctx.line_in(f, leaf.line, key)

    what = f"leaf {leaf.id}"
    if not leaf.fixes:
        ctx.error(f, at("fixes"), f"{what}: needs at least one fix with a command")
    if not leaf.checks:
        ctx.error(f, at("checks"), f"{what}: needs a checklist (at least one check) so the operator can tell the fix worked")
    if not leaf.sources:
        ctx.error(f, at("sources"), f"{what}: needs sources")
    if not leaf.versions.is_any:
        _, why = parse_range(leaf.versions.text)
        if why:
            ctx.error(f, at("versions"), f"{what}: {why}")
        elif not releases_in(leaf.versions):
            known = span(list(load_releases()))
            ctx.error(f, at("versions"), f"{what}: versions {leaf.versions.text!r} cover no known vLLM release ({known})")
    if leaf.evidence == "verified" and not any(is_evidence(s.url) for s in leaf.sources):
        ctx.error(f, at("evidence"), f"{what}: 'verified' needs an issue/PR URL or a fixtures/ reading among its sources")
    if leaf.evidence == "code" and not any(parse_code_ref(s.url) for s in leaf.sources):
        ctx.error(f, at("evidence"), f"{what}: 'code' needs a file@version reference (vllm/<path>.py@X.Y.Z) among its sources")
    seen: dict[str, int] = {}
    for s in leaf.sources:
        _check_source(ctx, f, s.line, s.url, seen, what)
    _check_fixes(ctx, leaf)


def _check_source(ctx: LintContext, file: str, line: int, url: str, seen: dict[str, int], what: str) -> None:
    if url in seen:
        ctx.error(file, line, f"{what}: source {url!r} is listed twice (also line {seen[url]})")
        return
    seen[url] = line
    problem = source_problem(url)
    if problem:
        ctx.report(problem[0], file, line, f"{what}: {problem[1]}")


def _check_fixes(ctx: LintContext, leaf: Leaf) -> None:
    f = leaf.file
    ids: dict[str, int] = {}
    previous: Fix | None = None
    for fix in leaf.fixes:
        what = f"leaf {leaf.id}, fix {fix.id}"
        if fix.id in ids:
            ctx.error(f, fix.line, f"{what}: fix id used twice in this leaf (also line {ids[fix.id]})")
        ids.setdefault(fix.id, fix.line)
        ranked = previous is not None and fix.cost in COSTS and previous.cost in COSTS  # else the loader reports it
        if ranked and previous is not None and COSTS.index(fix.cost) < COSTS.index(previous.cost):
            ctx.error(
                f,
                ctx.line_in(f, fix.line, "cost"),
                f"{what}: cost {fix.cost!r} after {previous.id} ({previous.cost!r}); list fixes cheapest first "
                f"({' < '.join(COSTS)})",
            )
        previous = fix
        if fix.evidence == "verified" and not any(is_evidence(s) for s in fix.sources):
            ctx.error(f, ctx.line_in(f, fix.line, "evidence"), f"{what}: 'verified' needs an issue/PR URL or a fixtures/ reading in its sources")
        if fix.evidence == "code" and not any(parse_code_ref(s) for s in fix.sources):
            ctx.error(f, ctx.line_in(f, fix.line, "evidence"), f"{what}: 'code' needs a file@version reference (vllm/<path>.py@X.Y.Z) in its sources")
        seen: dict[str, int] = {}
        for i, url in enumerate(fix.sources):
            _check_source(ctx, f, ctx.line_in(f, fix.line, "sources", i), url, seen, what)


def _check_texts(ctx: LintContext) -> None:
    """zh text identical to en where it is prose (someone forgot to translate), and Chinese broken
    across lines where YAML will join it with a space."""
    trees = ctx.base / "decision_trees"
    files = [trees / "scenarios.yaml", trees / "tree.yaml", *sorted((trees / "questions").glob("*.yaml"))]
    files += sorted((trees / "leaves").glob("*.yaml"))
    for path in files:
        if not path.is_file():
            continue
        rel = path.relative_to(ctx.base).as_posix()
        try:
            breaks = folded_cjk_breaks(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            breaks = []  # the loader reports unreadable files
        for line in breaks:
            ctx.warn(rel, line, "this line continues Chinese text from the line above; YAML joins them with a space (keep the Chinese on one line)")
        for d in walk_mappings(ctx.raw(rel)):
            en, zh = d.get("en"), d.get("zh")
            if set(d) == {"en", "zh"} and isinstance(en, str) and en.strip() == (zh or "").strip() and is_prose(en):
                ctx.warn(rel, d.line_of("zh"), f"the Chinese text is the English one, untranslated: {en.strip()[:60]!r}")
