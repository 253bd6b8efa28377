"""The prompts of plain mode, two ways: questionary menus, or bare lines for a dumb terminal.

``TERM=dumb`` (an Emacs shell, a serial console, a recorder) cannot take cursor movement, so
:class:`LinePrompts` writes nothing but text and newlines and reads whole lines: choices are
numbered and typed, an empty line takes the default. Not one escape sequence is written. Where
the terminal can, :class:`TermPrompts` gives arrow-key menus and Tab completion of paths.
Both measure text in terminal cells, so Chinese wraps at the width like any other text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from .i18n import ui
from .text.cells import wrap

Validate = Callable[[str], "bool | str"]
YES = ("y", "yes", "是", "好")


def ask(question: Any) -> Any:
    """Ask; SIGINT from ``kill -INT`` cancels like Ctrl+C (prompt_toolkit turns it into a key
    that questionary's prompts do not bind)."""
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
    from prompt_toolkit.keys import Keys

    extra = KeyBindings()

    @extra.add(Keys.SIGINT)
    def _(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    app = question.application
    app.key_bindings = merge_key_bindings([b for b in (app.key_bindings, extra) if b is not None])
    return question.unsafe_ask()


class LinePrompts:
    """Prompts as plain lines on ``out``, answers as lines from ``inp``; EOF cancels."""

    def __init__(self, inp: TextIO, out: TextIO, width: int, lang: str) -> None:
        self.inp, self.out, self.width, self.lang = inp, out, width, lang

    def say(self, text: str, indent: str = "", hang: str = "") -> None:
        for para in text.split("\n"):
            lines = wrap(para, self.width - 1, indent, hang or indent) if para.strip() else [""]
            self.out.write("\n".join(lines) + "\n")
        self.out.flush()

    def _line(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.inp.readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    def select(self, message: str, choices: list[tuple[str, str]], default: str | None, instruction: str) -> str:
        self.say(message)
        digits = len(str(len(choices)))
        for i, (title, _) in enumerate(choices, 1):
            self.say(title, f"  {i:>{digits}}. ", " " * (digits + 4))
        if instruction:
            self.say(instruction, "  ", "    ")
        values = [v for _, v in choices]
        default_n = values.index(default) + 1 if default in values else None
        prompt = f"1-{len(values)}" + (f" [{default_n}]" if default_n else "") + ": "
        while True:
            raw = self._line(prompt).strip()
            if not raw and default_n:
                return values[default_n - 1]
            if raw.isdigit() and 1 <= int(raw) <= len(values):
                return values[int(raw) - 1]
            self.say(ui("plain.pick", self.lang, n=len(values)))

    def text(self, message: str, default: str, instruction: str, validate: Validate) -> str:
        self.say(message)
        if instruction:
            self.say(instruction, "  ", "  ")
        while True:
            raw = self._line(f"[{default}]: " if default else "> ")
            value = raw if raw.strip() else default
            verdict = validate(value)
            if verdict is True:
                return value
            self.say(str(verdict), "  ", "  ")

    def path(self, message: str, validate: Validate, default: str = "") -> str:
        return self.text(message, default, "", validate)

    def confirm(self, message: str) -> bool:
        *before, last = wrap(f"{message} [y/N]:", self.width - 1) or ["[y/N]:"]
        if before:
            self.out.write("\n".join(before) + "\n")
        return self._line(last + " ").strip().lower() in YES

    def lines(self, message: str) -> str:
        """Lines up to one that holds only ``.`` (or the end of input): a pasted log."""
        self.say(message)
        got: list[str] = []
        while True:
            line = self.inp.readline()
            if not line or line.rstrip("\r\n") == ".":
                return "".join(got)
            got.append(line)


class TermPrompts(LinePrompts):
    """questionary menus and inputs; ``prompt_kwargs`` (``input``/``output``) let tests drive them."""

    def __init__(self, inp: TextIO, out: TextIO, width: int, lang: str, prompt_kwargs: dict[str, Any]) -> None:
        super().__init__(inp, out, width, lang)
        self.prompt_kwargs = prompt_kwargs

    def select(self, message: str, choices: list[tuple[str, str]], default: str | None, instruction: str) -> str:
        import questionary

        if instruction:
            # The source goes on its own lines: prompt_toolkit cuts long lines at the screen edge.
            self.say(instruction)
        # A long choice wraps under itself (the pointer and star take the first three cells).
        items = [questionary.Choice("\n".join(wrap(title, self.width - 5, "", "   ")) or title, value=value)
                 for title, value in choices]
        return str(ask(questionary.select(
            "\n".join(wrap(message, self.width - 3, "", "  ")) or message, choices=items, default=default, instruction=" ", use_jk_keys=False,
            **self.prompt_kwargs,
        )))

    def _wrapped(self, message: str) -> str:
        """The question wrapped by cells under itself (prompt_toolkit would break it mid-word)."""
        return "\n".join(wrap(message, self.width - 3, "", "  ")) or message

    def text(self, message: str, default: str, instruction: str, validate: Validate) -> str:
        import questionary

        return str(ask(questionary.text(
            self._wrapped(message), default=default, instruction=instruction, validate=validate, **self.prompt_kwargs
        )))

    def path(self, message: str, validate: Validate, default: str = "") -> str:
        import questionary

        message = ui("plain.tab_completes", self.lang, message=message)  # a line prompt cannot complete
        return str(ask(questionary.path(self._wrapped(message), default=default, validate=validate,
                                        **self.prompt_kwargs)))

    def confirm(self, message: str) -> bool:
        import questionary

        return bool(ask(questionary.confirm(self._wrapped(message), default=False, **self.prompt_kwargs)))
