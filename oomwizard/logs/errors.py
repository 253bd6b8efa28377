"""The errors a line reports: messages that name their cause, and PyTorch's (or NCCL's) GPU OOM.

A message may be broken over the lines that follow it (PyTorch's sentence cut after its first
part, a report that puts its numbers on indented lines): it is left open and completed from them.
The facts a message's groups carry come from the rules (``facts:`` in ``messages.yaml``), read by
:mod:`.message_facts`; nothing here names a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .failure import Frame
from .lines import Logical
from .message_facts import values_of
from .signatures import GPU_OOM_FACTS, METHOD_RE, OOM_RE, SIGNATURES, Signature
from .torch_oom import parse_torch_oom
from .triggers import _NCCL_OOM_RE, _TRIED_RE, CONTINUE_LINES

if TYPE_CHECKING:
    from .collect import Collector


PROSE_MAX = 8192
"""The longest line read as a report's sentence."""


def reads_as_words(text: str) -> bool:
    """Whether a line can be a sentence: words between spaces, almost no replacement characters or
    control bytes (the text lines found in binary data have them everywhere), and no longer than a
    paragraph (a line of many kilobytes is data, and the report patterns would only cost time there)."""
    if len(text) > PROSE_MAX or (" " not in text.strip() and not any("\u4e00" <= c <= "\u9fff" for c in text)):
        return False
    bad = sum(1 for c in text if c == "\ufffd" or (c < " " and c != "\t"))
    return bad <= len(text) // 50


def _matching(text: str, frames: list[Frame], fallback: bool = False) -> Iterator[tuple[Signature, re.Match[str]]]:
    """Each message rule whose trigger, pattern and (when it names some) frames hold on ``text``;
    only the ``fallback`` rules when asked for, else only the others."""
    lower: str | None = None
    words: bool | None = None
    for sig in SIGNATURES:
        if sig.fallback is not fallback or not any(t in text for t in sig.triggers):
            continue
        if sig.prose:
            words = reads_as_words(text) if words is None else words
            if not words:
                continue
        if sig.also:
            lower = text.lower() if lower is None else lower
            if not any(t in lower for t in sig.also):
                continue
        m = sig.pattern.search(text)
        if not m:
            continue
        if sig.frames is not None and not any(sig.frames.search(fr.path) or sig.frames.search(fr.func)
                                              for fr in frames):
            continue
        yield sig, m


def signatures(col: Collector, lg: Logical, frames: list[Frame], code: list[str], exc_type: str | None) -> None:
    """Messages that name their cause on this line, then PyTorch's generic OOM unless one did."""
    text = lg.text
    if not frames and "method" in text:
        m = METHOD_RE.search(text)
        if m:
            frames = [Frame("", m.group("func"))]
    named_oom = False
    found = list(_matching(text, frames)) or list(_matching(text, frames, fallback=True))
    for sig, m in found:
        _named(col, lg, sig, m, frames, code, exc_type)
        named_oom = named_oom or sig.oom
    if not named_oom:
        _gpu_oom(col, lg, frames, code, exc_type)


def _named(col: Collector, lg: Logical, sig: Signature, m: re.Match[str], frames: list[Frame], code: list[str],
           exc_type: str | None) -> None:
    text = lg.text
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    # A message that quotes PyTorch's error keeps its numbers (the chained error may be cut).
    inline = parse_torch_oom(text) if sig.oom else None
    if inline is not None and inline.requested is None:
        inline = None
    failure = col._new_failure(lg, m.start(), signature=sig, groups=groups, frames=frames, code=code,
                               exc_type=exc_type, is_oom=sig.oom, oom=inline)
    if failure is not None and any(g not in groups for g in sig.fact_groups):
        col._open = (failure, sig, text, lg, lg.lines[-1] if lg.lines else lg.line, CONTINUE_LINES)
    if inline is not None and inline.total is not None:
        col.put("gpu_mem_total_bytes", inline.total)
    for fact, value in values_of(sig.facts, groups):
        col.put(fact, value)


def _gpu_oom(col: Collector, lg: Logical, frames: list[Frame], code: list[str], exc_type: str | None) -> None:
    """PyTorch's (or NCCL's) generic GPU out-of-memory error."""
    text = lg.text
    m = OOM_RE.search(text) or _NCCL_OOM_RE.search(text)
    if not m:
        return
    oom = parse_torch_oom(text)
    failure = col._new_failure(lg, m.start(), oom=oom, is_oom=True, frames=frames, code=code, exc_type=exc_type)
    if failure is not None and (oom is None or oom.requested is None):
        col._open = (failure, None, text, lg, lg.lines[-1] if lg.lines else lg.line, 1)
    if oom is not None:
        if oom.platform:
            col.put("error_platform", oom.platform)
        if oom.total is not None:
            col.put("gpu_mem_total_bytes", oom.total)
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    for fact, value in values_of(GPU_OOM_FACTS, groups):
        col.put(fact, value)


def continue_open(col: Collector, lg: Logical) -> bool:
    """Complete the message left open from the lines that follow it: PyTorch's OOM broken after
    its first sentence ("Tried to allocate …" on the next line), or a message whose numbers a
    report put on indented lines of their own. Returns True when the line was only that."""
    assert col._open is not None
    failure, sig, text, first, last, left = col._open
    col._open = None
    if failure.file != col.file or not 0 < lg.line - last <= 2 or lg.proc != failure.proc:
        return False
    if sig is None:
        if not _TRIED_RE.match(lg.text):
            return False
        more = parse_torch_oom("out of memory. " + lg.text.strip())
        if more is None:
            return False
        if failure.oom is None:
            failure.oom = more
        else:
            for name, value in more.__dict__.items():
                if getattr(failure.oom, name) in (None, []):
                    setattr(failure.oom, name, value)
        if failure.oom.total is not None:
            col._line, current = first, lg
            col.put("gpu_mem_total_bytes", failure.oom.total)
            col._line = current
        return True
    joined = f"{text} {lg.text.strip()}"
    m = sig.pattern.search(joined)
    added = {k: v for k, v in (m.groupdict() if m else {}).items() if v is not None and k not in failure.groups}
    if added:
        failure.groups.update(added)
        col._line = first  # the facts come from the message, which starts there
        for fact, value in values_of(sig.facts, failure.groups, only=set(added)):
            col.put(fact, value)
        col._line = lg
    if left > 1 and any(g not in failure.groups for g in sig.fact_groups):
        col._open = (failure, sig, joined, first, lg.line, left - 1)
    return False
