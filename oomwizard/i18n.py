"""Languages: every user-facing string exists in English and Chinese.

The program's own strings live in one catalogue per language, ``content/<lang>/strings.yaml``: flat,
dotted keys grouped by area (``cli.error.…``, ``report.machine.…``), ``{name}`` placeholders for
``str.format``. Code names a string by its key (:func:`msg` for a :class:`Text`, :func:`ui` for the
text in one language). The program reads the compiled form, ``oomwizard/data/strings/<lang>.json``
(``scripts/gen_strings.py`` writes it): one ``json.loads`` of one language, on first use, so the
first frame pays neither for a YAML parser nor for the other language. ``oomwizard lint`` checks
both catalogues against each other, against the code and against their compiled form.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LANGS: tuple[str, ...] = ("en", "zh")
DEFAULT_LANG = "en"


@dataclass(frozen=True)
class Text:
    """One string in every supported language."""

    en: str
    zh: str

    def __call__(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def as_dict(self) -> dict[str, str]:
        return {"en": self.en, "zh": self.zh}

    def format(self, **fmt: object) -> Text:
        """Both languages with the same placeholders filled in; a field that is itself a
        :class:`Text` (a reason inside a message) is filled in each language with its own."""
        return Text(self.en.format(**_in("en", fmt)), self.zh.format(**_in("zh", fmt)))

    @classmethod
    def same(cls, s: str) -> Text:
        return cls(s, s)


def _in(lang: str, fmt: dict[str, object]) -> dict[str, object]:
    return {k: v(lang) if isinstance(v, Text) else v for k, v in fmt.items()}


class TextError(Exception):
    """An error the operator reads, in either language: ``text`` holds both (``str()`` is the
    English, for tracebacks and logs); :func:`said` prints it in the operator's language."""

    def __init__(self, text: Text | str) -> None:
        self.text = text if isinstance(text, Text) else Text.same(text)
        super().__init__(self.text.en)


def said(e: BaseException, lang: str) -> str:
    """An error's message in ``lang``: its ``text`` when it carries both languages, else ``str(e)``."""
    text = getattr(e, "text", None)
    return str(text(lang)) if callable(text) else str(e)


class Msg(Text):
    """A catalogue string: a key until a language is asked for, then that language's text."""

    key: str

    def __init__(self, key: str) -> None:  # the dataclass fields are read from the catalogue
        object.__setattr__(self, "key", key)

    @property
    def en(self) -> str:
        return _lookup("en", self.key)

    @property
    def zh(self) -> str:
        return _lookup("zh", self.key)

    def __call__(self, lang: str) -> str:
        return _lookup("zh" if lang == "zh" else "en", self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and (self.en, self.zh) == (other.en, other.zh)

    def __hash__(self) -> int:
        return hash((self.en, self.zh))

    def __repr__(self) -> str:
        return f"Msg({self.key!r})"


def compiled_path(lang: str) -> Path:
    """The compiled catalogue of ``lang``, shipped inside the package.

    Not under ``$OOMWIZARD_KB``: the program's words belong to the program; a knowledge base given
    from elsewhere brings only its own articles and leaves.
    """
    return Path(__file__).resolve().parent / "data" / "strings" / f"{lang}.json"


@cache
def strings(lang: str) -> Mapping[str, str]:
    """Every string of one language by key, read once, on first use."""
    import json

    data: Any = json.loads(compiled_path(lang).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise RuntimeError(f"{compiled_path(lang)}: not a mapping of keys to strings")
    return data


def _lookup(lang: str, key: str) -> str:
    try:
        return strings(lang)[key]
    except KeyError:
        raise KeyError(f"no string {key!r} in the {lang} catalogue ({compiled_path(lang)})") from None


def msg(key: str) -> Text:
    """The catalogue string ``key`` in every language (read lazily)."""
    return Msg(key)


def ui(key: str, lang: str, /, **fmt: object) -> str:
    """The catalogue string ``key`` in ``lang``, its placeholders filled from ``fmt``."""
    lang = "zh" if lang == "zh" else "en"
    text = _lookup(lang, key)
    return text.format(**_in(lang, fmt)) if fmt else text


class _Catalogue(Mapping[str, Text]):
    """Every key of the catalogue as a :class:`Text` (for code that looks keys up by value)."""

    def __getitem__(self, key: str) -> Text:
        if key not in strings(DEFAULT_LANG):
            raise KeyError(key)
        return Msg(key)

    def __iter__(self) -> Iterator[str]:
        return iter(strings(DEFAULT_LANG))

    def __len__(self) -> int:
        return len(strings(DEFAULT_LANG))


UI: Mapping[str, Text] = _Catalogue()


def detect_lang(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """``--lang`` wins; then ``$OOMWIZARD_LANG`` (``en``, ``zh``, or a locale such as ``zh_CN.UTF-8``;
    another value is passed over); then the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``)."""
    if explicit:
        if explicit not in LANGS:
            raise ValueError(f"unsupported language {explicit!r} (choose from {', '.join(LANGS)})")
        return explicit
    env = os.environ if environ is None else environ
    own = env.get("OOMWIZARD_LANG", "").strip().lower()
    for lang in LANGS:
        if own == lang or own.startswith((f"{lang}_", f"{lang}-", f"{lang}.")):
            return lang
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else DEFAULT_LANG
    return DEFAULT_LANG


def both(key: str, /, **fmt: object) -> tuple[str, str]:
    """``(en, zh)`` of the catalogue string ``key``, formatted: for APIs that take the two apart."""
    return ui(key, "en", **fmt), ui(key, "zh", **fmt)
