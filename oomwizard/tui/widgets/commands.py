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
from textual.selection import Selection
from textual.widgets import Button, Static

from ...advice.commands import RenderedFix, RenderedVariant, paste_text
from ...i18n import ui
from ...report.script import SHOWN_PLACEHOLDER_RE


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

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """Text selected with the mouse, without the ``$ `` drawn before each command: what is
        copied pastes into a shell as the Copy button's text does."""
        got = super().get_selection(selection)
        if got is None:
            return None
        text, end = got
        return "\n".join(line.removeprefix("$ ") for line in text.split("\n")), end


def _tag(rf: RenderedFix, rv: RenderedVariant, lang: str) -> str:
    parts = [ui(f"cost.{rf.fix.cost}", lang), ui(f"evidence.{rf.fix.evidence}", lang)]
    if rv.versions and rv.versions != "*":
        parts.append(f"vLLM {rv.versions}")
    return " · ".join(parts)


class FixCard(Vertical, can_focus=True):
    """One fix: title, cost, the commands for this machine, and where every number came from.

    A fix that does not apply to the known vLLM version shows only its title and why, dimmed and
    without commands or a Copy button (the leaf lists it last): pasting it could only fail or mislead.
    """

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
        """What ``copy`` puts on the clipboard: :func:`~oomwizard.advice.commands.paste_text`."""
        return paste_text(self.rendered, self.lang)

    @property
    def not_available(self) -> str:
        """Why this fix does not apply to the known version, or ``""`` when it does."""
        rf = self.rendered
        if rf.available:
            return ""
        spec = " | ".join(v.versions.text for v in rf.fix.variants)
        return ui("not_for_version", self.lang, version=rf.version, spec=spec)

    def compose(self) -> ComposeResult:
        rf, lang = self.rendered, self.lang
        yield Static(
            Content.assemble((f"{self.number}. ", "bold"), (rf.fix.title(lang), "bold")),
            classes="fix-title",
        )
        if not rf.available:
            self.add_class("unavailable")
            yield Static(Content(self.not_available), classes="fix-warning")
            if rf.fix.why:
                yield Static(Content(rf.fix.why(lang)), classes="fix-why")
            return
        for i, rv in enumerate(rf.variants):
            if len(rf.variants) > 1:  # the version unknown: which spelling Copy gives, and the others
                mark = ui("cmd.variant_live", lang) if i == 0 else ui("cmd.variant_other", lang, versions=rv.versions)
                yield Static(Content(mark), classes="fix-variant" if i == 0 else "fix-variant other")
            yield Static(Content(f"[{_tag(rf, rv, lang)}]  {rf.fix.cost_note(lang)}"), classes="fix-meta")
            yield CommandBlock(rv.script, rv.missing, classes="commands" if i == 0 else "commands other")
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
                yield Static(Content(ui("cmd.assumed", lang, version=rv.assumed)), classes="fix-note")
        if rf.fix.why:
            yield Static(Content(rf.fix.why(lang)), classes="fix-why")
        if rf.fix.sources:
            yield Static(Content("  ".join(rf.fix.sources)), classes="fix-sources")
        yield Button(f"{self.copy_label} {self.number}", classes="copy", compact=True)
