"""The knowledge base's YAML as the program reads it: a generated JSON copy, used only while it is exact.

Parsing the YAML (PyYAML's composer, then every node turned into a located value) is most of what
loading the diagnosis rules costs, and importing PyYAML itself is as much again; the wizard's
diagnosis screen waits for both. ``scripts/gen_compiled.py`` writes, for each bundle below, the
located values of every file (:class:`~.yamlsrc.LDict` and :class:`~.yamlsrc.LList` with their
lines) and the problems the parse found, with the sha256 of the bytes they came from.
:func:`load_source` returns that copy only when the file on disk has exactly those bytes; any
other file (an edited rule, another knowledge base under ``$OOMWIZARD_KB``, a file added since) is
parsed from its YAML, so an edit can never be ignored. The YAML stays the one source: ``oomwizard
lint`` reports a compiled entry that no longer matches its file, and a test regenerates every
bundle and compares.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from .yamlsrc import LDict, LList, Problem, load_yaml

FORMAT = 1
DATA = Path(__file__).resolve().parent.parent / "data" / "compiled"

_MAP = "\x00"
"""First key of a mapping's JSON object: ``[line, line of each key...]``."""
_SEQ = "\x01"
"""First key of a sequence's JSON object: ``[line, line of each item...]``, then ``"": [items]``."""


def bundle_of(display: str) -> str | None:
    """The bundle holding the file shown as ``display`` (relative to the knowledge base's root).

    ``diagnosis``: what the log diagnosis and the diagnosis screen read (the rules and the scenario
    titles), kept apart so the wizard's first diagnosis decodes nothing else; ``kb``: the tree.
    """
    if display == "decision_trees/scenarios.yaml" or display.startswith("decision_trees/diagnosis/"):
        return "diagnosis" if display.endswith(".yaml") and display.count("/") <= 2 else None
    if display == "decision_trees/tree.yaml":
        return "kb"
    if display.startswith(("decision_trees/questions/", "decision_trees/leaves/")):
        return "kb" if display.endswith(".yaml") and display.count("/") == 2 else None
    return None


BUNDLES = ("diagnosis", "kb")


def bundle_sources(root: Path, name: str) -> list[str]:
    """The files of bundle ``name`` under ``root`` (display paths, sorted)."""
    trees = root / "decision_trees"
    found = [trees / "scenarios.yaml", trees / "tree.yaml", *trees.glob("diagnosis/*.yaml"),
             *trees.glob("questions/*.yaml"), *trees.glob("leaves/*.yaml")]
    shown = (p.relative_to(root).as_posix() for p in found if p.is_file())
    return sorted(d for d in shown if bundle_of(d) == name)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- reading ----------------------------------------------------------------------------------


def _hook(pairs: list[tuple[str, Any]]) -> Any:
    if pairs and pairs[0][0] == _MAP:
        lines = pairs[0][1]
        d = LDict(pairs[1:])
        d.line = lines[0]
        d.key_lines = {k: line for (k, _), line in zip(pairs[1:], lines[1:], strict=True)}
        return d
    if pairs and pairs[0][0] == _SEQ:
        lines = pairs[0][1]
        lst = LList(pairs[1][1])
        lst.line = lines[0]
        lst.item_lines = lines[1:]
        return lst
    return dict(pairs)


@cache
def _bundle(name: str) -> dict[str, Any]:
    """The compiled files of a bundle by display path; empty when it is missing or of another format."""
    try:
        data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"), object_pairs_hook=_hook)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        return {}
    files: dict[str, Any] = data["files"]
    return files


def load_source(path: Path, display: str, problems: list[Problem]) -> Any:
    """What :func:`~.yamlsrc.load_yaml` returns for ``path`` (and the problems it appends), from the
    compiled copy when it was made from exactly these bytes, otherwise from the YAML."""
    name = bundle_of(display)
    entry = _bundle(name).get(display) if name else None
    if entry is not None:
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        if data is not None and digest(data) == entry["sha256"]:
            problems.extend(Problem(display, line, message, severity) for line, message, severity in entry["problems"])
            return entry["doc"]
    return load_yaml(path, display, problems)


# --- writing (scripts/gen_compiled.py) and checking (lint, tests) ------------------------------


class Unencodable(ValueError):
    """A value JSON cannot carry as YAML gave it (a date, bytes, a key that looks like a marker)."""


def _encode(v: Any) -> Any:
    if isinstance(v, LDict):
        if _MAP in v or _SEQ in v:
            raise Unencodable("a key that is a marker of the compiled form")
        return {_MAP: [v.line, *(v.key_lines[k] for k in v)], **{k: _encode(x) for k, x in v.items()}}
    if isinstance(v, LList):
        return {_SEQ: [v.line, *v.item_lines], "": [_encode(x) for x in v]}
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    raise Unencodable(f"a value of type {type(v).__name__}")


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types (``1`` is not ``True``) with the same lines."""
    if type(a) is not type(b):
        return False
    if isinstance(a, LDict):
        return (a.line == b.line and list(a) == list(b) and a.key_lines == b.key_lines
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, LList):
        return (a.line == b.line and a.item_lines == b.item_lines and len(a) == len(b)
                and all(same(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(a, float) and a != a:
        return bool(b != b)  # NaN
    return bool(a == b)


def _entry(root: Path, display: str) -> str | None:
    """One file's compiled entry as a JSON line, or None when JSON cannot carry it exactly (the
    program then parses that file's YAML)."""
    path = root / display
    problems: list[Problem] = []
    doc = load_yaml(path, display, problems)
    if any(p.file != display for p in problems):
        return None
    try:
        text = json.dumps({"sha256": digest(path.read_bytes()),
                           "problems": [[p.line, p.message, p.severity] for p in problems],
                           "doc": _encode(doc)}, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (Unencodable, ValueError):
        return None
    back = json.loads(text, object_pairs_hook=_hook)
    return text if same(back["doc"], doc) else None


def compile_bundle(root: Path, name: str) -> str:
    """The text of ``data/compiled/<name>.json`` for the files under ``root``: one line per file, so
    a change to one file is a change to one line."""
    lines = []
    for display in bundle_sources(root, name):
        entry = _entry(root, display)
        if entry is not None:
            lines.append(f"{json.dumps(display, ensure_ascii=False)}:{entry}")
    return f'{{"format":{FORMAT},"files":{{\n' + ",\n".join(lines) + "\n}}\n"


def stale(root: Path) -> list[Problem]:
    """Files whose compiled copy is missing or was made from other bytes, and compiled entries
    whose file is gone: the program reads those files' YAML, slower; lint says to regenerate."""
    out = []
    hint = "run python scripts/gen_compiled.py"
    for name in BUNDLES:
        shown = f"oomwizard/data/compiled/{name}.json"
        files = _read_fresh(name)
        if files is None:
            out.append(Problem(shown, None, f"missing or not of format {FORMAT}: {hint}"))
            continue
        sources = bundle_sources(root, name)
        for display in sources:
            entry = files.get(display)
            if entry is None:
                if _entry(root, display) is not None:  # else JSON cannot carry it: its YAML is read
                    out.append(Problem(display, None, f"not in {shown}: {hint}"))
            elif entry.get("sha256") != digest((root / display).read_bytes()):
                out.append(Problem(display, None, f"{shown} was generated from another version of this file: {hint}"))
        for display in sorted(set(files) - set(sources)):
            out.append(Problem(shown, None, f"holds {display}, which no longer exists: {hint}"))
    return out


def _read_fresh(name: str) -> dict[str, Any] | None:
    """The bundle's entries as they are on disk now (not the copy this process loaded)."""
    try:
        data = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        return None
    files: dict[str, Any] = data["files"]
    return files
