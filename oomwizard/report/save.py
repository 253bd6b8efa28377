"""Saving a leaf to a file, shared by the TUI's save dialog, plain mode and ``diagnose --output``.

The extension picks the form (a ``.sh`` that runs nothing until asked by number, Markdown, or
plain text) so the three ways to save write byte for byte the same file. An existing file is
never replaced unless the caller says so, and a file that appears meanwhile is not either.
"""

from __future__ import annotations

from pathlib import Path

from ..engine import Done
from ..kb.model import KnowledgeBase
from ..text.output import clean_text
from .leaf import leaf_markdown, leaf_text
from .script import leaf_script


def default_filename(done: Done) -> str:
    return f"./oomwizard-fix-{done.leaf.id}.sh"


def leaf_file_text(filename: str, done: Done, kb: KnowledgeBase, lang: str) -> str:
    """The file's content, by its extension: a safe shell script, Markdown, or plain text."""
    suffix = Path(filename).suffix.lower()
    if suffix == ".sh":
        text = leaf_script(done.leaf, done.facts, done.path, lang)
    elif suffix in (".md", ".markdown"):
        art = kb.article("leaves", done.leaf.id, lang)
        text = leaf_markdown(done.leaf, done.facts, done.path, lang, article=art.body if art else None)
    else:
        text = leaf_text(done.leaf, done.facts, done.path, lang)
    return clean_text(text)


def write_new(path: Path, text: str, overwrite: bool) -> None:
    """Write ``text``; without ``overwrite`` fail if the file appeared meanwhile (mode ``x``)."""
    with path.open("w" if overwrite else "x", encoding="utf-8") as fh:
        fh.write(text)


def save_leaf(raw: str, done: Done, kb: KnowledgeBase, lang: str, overwrite: bool) -> Path:
    """Write the leaf to ``raw`` (``~`` expanded); the resolved path. Raises ``FileExistsError``
    for an existing file without ``overwrite``, ``IsADirectoryError`` for a folder, ``OSError``."""
    path = Path(raw).expanduser()
    if path.is_dir():
        raise IsADirectoryError(21, "is a folder")
    if path.exists() and not overwrite:
        raise FileExistsError(17, "exists")
    write_new(path, leaf_file_text(raw, done, kb, lang), overwrite)
    return path.resolve()
