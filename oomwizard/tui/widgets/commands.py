"""Commands shown so that nothing is ever cut off: every character of a command stays on screen.

Textual's Markdown code fences clip long lines, and a ``vllm serve`` line that loses its last
flags is worse than none. :class:`CommandBlock` wraps instead (breaking inside a word only when a
word is wider than the screen), starts each command with ``$`` so a wrapped continuation is
visibly not a new command, and shows placeholders still to be filled in reversed, so they read
even without colour.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Button, Static

from ...advice.commands import RenderedFix, RenderedVariant
from ...i18n import ui
from ...report.script import SHOWN_PLACEHOLDER_RE
from ...text.output import clean_text


def command_content(script: str) -> Content:
    """The script as display content: ``$ `` before each command, placeholders (``<N>``) reversed."""
    parts: list[str | tuple[str, str]] = []
    for i, line in enumerate(script.splitlines()):
        if i:
            parts.append("\n")
        parts.append(("$ ", "dim"))
        pos = 0
        for m in SHOWN_PLACEHOLDER_RE.finditer(line):
            parts.append(line[pos : m.start()])
            parts.append((m.group(0), "reverse bold"))
            pos = m.end()
        parts.append(line[pos:])
    return Content.assemble(*parts)


class CommandBlock(Static):
    """A wrapped, never clipped block of shell commands."""

    DEFAULT_CSS = """
    CommandBlock {
        width: 1fr;
        height: auto;
        text-wrap: wrap;
        text-overflow: fold;
    }
    """

    def __init__(self, script: str, missing: list[str] | None = None, **kwargs: object) -> None:
        self.script = script
        self.missing = list(missing or ())
        super().__init__(command_content(script), **kwargs)  # type: ignore[arg-type]


def fix_copy_text(rf: RenderedFix) -> str:
    """What ``copy`` puts on the clipboard: the commands, one spelling per vLLM version if several."""
    if len(rf.variants) == 1:
        return clean_text(rf.variants[0].script)
    blocks = [f"# vLLM {rv.versions}\n{rv.script}" for rv in rf.variants]
    return clean_text("\n\n".join(blocks))


def _tag(rf: RenderedFix, rv: RenderedVariant, lang: str) -> str:
    parts = [ui(f"cost.{rf.fix.cost}", lang), ui(f"evidence.{rf.fix.evidence}", lang)]
    if rv.versions and rv.versions != "*":
        parts.append(f"vLLM {rv.versions}")
    return " · ".join(parts)


class FixCard(Vertical, can_focus=True):
    """One fix: title, cost, the commands for this machine, and where every number came from."""

    DEFAULT_CSS = """
    FixCard {
        height: auto;
    }
    """

    def __init__(self, number: int, rf: RenderedFix, lang: str, copy_label: str = "Copy", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.copy_label = copy_label
        self.number = number
        self.rendered = rf
        self.lang = lang

    @property
    def copy_text(self) -> str:
        return fix_copy_text(self.rendered)

    def compose(self) -> ComposeResult:
        rf, lang = self.rendered, self.lang
        yield Static(
            Content.assemble((f"{self.number}. ", "bold"), (rf.fix.title(lang), "bold")),
            classes="fix-title",
        )
        if not rf.available:
            spec = " | ".join(v.versions.text for v in rf.fix.variants)
            yield Static(Content(ui("not_for_version", lang, version=rf.version, spec=spec)), classes="fix-warning")
        for rv in rf.variants:
            yield Static(Content(f"[{_tag(rf, rv, lang)}]  {rf.fix.cost_note(lang)}"), classes="fix-meta")
            yield CommandBlock(rv.script, rv.missing, classes="commands")
            why = [r for r in rv.values if r.why is not None]
            for r in why:
                yield Static(
                    Content.assemble(("= ", "dim"), (str(r.value), "bold"), ": ", r.why(lang)),  # type: ignore[misc]
                    classes="fix-number",
                )
            if rv.missing:
                yield Static(
                    Content.assemble(
                        (f"{ui('fill_in', lang)}: ", "bold"),
                        *[part for m in rv.missing for part in ((m, "reverse bold"), " ")],
                    ),
                    classes="fix-missing",
                )
            if rv.note:
                yield Static(Content(rv.note(lang)), classes="fix-note")
            if rv.assumed:
                yield Static(Content(f"(pre-release build read as {rv.assumed})"), classes="fix-note")
        if rf.fix.why:
            yield Static(Content(rf.fix.why(lang)), classes="fix-why")
        if rf.fix.sources:
            yield Static(Content("  ".join(rf.fix.sources)), classes="fix-sources")
        yield Button(f"{self.copy_label} {self.number}", classes="copy", compact=True)
