"""The output boundary: everything the tool prints, saves or copies passes one of these.

Collection already redacts and cleans what it reads, but text is assembled from many places (fact
values, file names, process arguments, ``--set`` values). Running the same two functions over the
finished text — :func:`~.safe_text.printable` and :func:`~.redact.redact_text` — makes sure that
nothing from the inputs reaches a terminal, a clipboard or a file raw, whatever path it took.
"""

from __future__ import annotations

from typing import Any, TextIO

from .redact import redact_data, redact_text
from .safe_text import json_dumps, printable


def clean_text(text: str) -> str:
    """Text safe for a terminal, a clipboard or a file: no escapes, no invisible characters, no secrets."""
    return redact_text(printable(text))


def one_line(text: str) -> str:
    """:func:`clean_text` on one line, runs of white space folded: for a value or an error shown inline."""
    return " ".join(clean_text(text).split())


def clean_json(data: Any, indent: int | None = 2) -> str:
    """JSON with secrets redacted and control, C1 and bidi characters escaped."""
    return json_dumps(redact_data(data), indent=indent)


class SafeStream:
    """A text stream whose every write goes through :func:`clean_text`."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(clean_text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer ...
        return getattr(self.inner, name)


def write_clean(stream: TextIO, text: str) -> None:
    """Write ``text`` that already passed :func:`clean_json` past a :class:`SafeStream`: a second
    pass would read JSON escapes (``\\n``) as part of a secret and cut the document."""
    (stream.inner if isinstance(stream, SafeStream) else stream).write(text)


def safe_stream(stream: TextIO) -> TextIO:
    return stream if isinstance(stream, SafeStream) else SafeStream(stream)  # type: ignore[return-value]
