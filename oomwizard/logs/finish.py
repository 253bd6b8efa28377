"""What needs the whole log, once it is read: the V0 block count that was too small, tracebacks
the input stops inside, a start-up that stopped with no error, each error's neighbours, and the
facts that hold at the error or come from the whole log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import facts as fact_rules
from .failure import MAX_FAILURES, Failure, Traceback, sanitize
from .signatures import BLOCK_SIZE, KV_BLOCKS_SHORT, NEAR_LINES, OTHER_PROCESS_LINES

if TYPE_CHECKING:
    from .collect import Collector


def value_at(col: Collector, name: str, file: str, line: int) -> Any:
    """The value a fact had at ``file:line`` (the last one read before, else the first after)."""
    hist = col.history.get(name)
    if not hist or file not in col.files:
        return None
    at = (col.files.index(file), line)
    started = [h for h in hist if h[0] <= at]
    return (started[-1][3] if started[-1][2] <= at else started[-1][1]).value if started else hist[0][1].value


def short_blocks(col: Collector) -> None:
    """V0 raises when max_model_len needs more tokens than its GPU blocks hold; the block count
    it printed just before tells, even when the paste stops ahead of the error."""
    private_size = col.private.get("_block_size")
    for run in col.runs:
        for file, line, blocks, text in run.blocks:
            mml = value_at(col, "max_model_len", file, line)
            size = int(private_size[0]) if private_size else BLOCK_SIZE
            if not isinstance(mml, int) or blocks * size >= mml or len(col.failures) >= MAX_FAILURES:
                continue
            groups = {"tokens": f"{blocks * size:,}", "blocks": str(blocks), "block_size": str(size),
                      "mml": f"{mml:,}"}
            col.failures.append(Failure(file=file, line=line, text=text, proc="", rank=None, run=run.index,
                                         signature=KV_BLOCKS_SHORT, groups=groups, timeline="kv_cache_alloc"))
            if "kv_cache_tokens" not in col.facts:
                col.put_at("kv_cache_tokens", blocks * size, file, line, text)


def cut_tracebacks(col: Collector) -> None:
    """A traceback whose exception line never came (the input stops inside it, or starts in its
    middle and stops before its end) still names the phase its frames were running. For a
    start of the engine with no failure of its own, the last such traceback is kept as a
    failure marked ``cut``: evidence, not a verdict. One cut right at its header (no frame) counts
    when start-up marks came before it: they are all that places it."""
    open_tbs = sorted((tb for tb in col.tracebacks.values() if not tb.closed and (tb.frames or _in_startup(col, tb))),
                      key=lambda tb: (col.files.index(tb.file) if tb.file in col.files else -1, tb.line))
    for tb in reversed(open_tbs):
        if any(f.run == tb.run for f in col.failures) or len(col.failures) >= MAX_FAILURES:
            continue
        frames = tb.phase_frames()
        proc = next((k for k, v in col.tracebacks.items() if v is tb), "")
        last = f" … {frames[-1].func}" if frames else ""
        col.failures.append(Failure(
            file=tb.file, line=tb.line, text=sanitize(f"Traceback (most recent call last):{last}"),
            proc=proc, rank=None, run=tb.run, frames=frames, code=list(tb.code),
            timeline=col.runs[tb.run].phase if tb.run < len(col.runs) else None, cut=True))


def _in_startup(col: Collector, tb: Traceback) -> bool:
    """A traceback cut at its header, with no frame at all, says something only when start-up
    marks before it show how far the engine had got."""
    return tb.run < len(col.runs) and col.runs[tb.run].phase not in (None, "serving")


def ended(col: Collector) -> None:
    """A log with no error and no traceback at all that stops during start-up (the operator
    came because it died): the last start-up line read is kept as a failure marked ``ended``.
    A start that reached serving, any traceback (another failure), or an input whose reading
    stopped early (where the text stops is not where the log stops) says nothing."""
    run = col.runs[-1]
    if col.failures or run.tracebacks or run.phase == "serving":
        return
    if run.phase is None:
        # Stopped after the line that began the start, before any step: placed at the first step.
        if run.began is None or run.began[0] in col.unfinished:
            return
        file, line, text = run.began
        col.failures.append(Failure(file=file, line=line, text=text, proc="", rank=None, run=run.index,
                                     timeline=None, ended=True))
        return
    if run.mark is None:
        return
    file, line, text = run.mark
    if file in col.unfinished:
        return
    col.failures.append(Failure(file=file, line=line, text=text, proc="", rank=None, run=run.index,
                                 timeline=run.phase, ended=True))


def link(col: Collector) -> None:
    """For errors that carry no frames of their own: the worker methods named close by, a
    progress bar flushed right after them (the stage it counts was running when they died) and
    the request layer reporting the engine's death right after them (it was serving)."""
    for f in col.failures:
        run = col.runs[f.run]
        near = sorted((abs(line - f.line), method) for file, line, method in run.methods
                      if file == f.file and abs(line - f.line) <= NEAR_LINES)
        f.near_methods = list(dict.fromkeys(m for _, m in near))
        f.after = next(((phase, text) for file, line, phase, text in run.bars
                        if file == f.file and 0 < line - f.line <= NEAR_LINES), None)
        if not f.frames:
            f.next_frames = next((tb.phase_frames() for file, line, proc, tb in run.tracebacks
                                  if file == f.file and proc == f.proc and 0 < line - f.line <= NEAR_LINES), [])
            others = [(abs(tb.line - f.line), tb) for proc, tb in col.tracebacks.items()
                      if proc != f.proc and tb.run == f.run and tb.file == f.file and tb.frames
                      and abs(tb.line - f.line) <= OTHER_PROCESS_LINES]
            f.other_frames = [tb.phase_frames() for _, tb in sorted(others, key=lambda o: o[0])]
        f.reported = next((text for file, line, text in run.deaths
                           if file == f.file and 0 < line - f.line <= NEAR_LINES), "")


def settle(col: Collector, file: str, line: int) -> bool:
    """Make every fact the value in force at ``file:line`` (the error being diagnosed): the last
    one read at or before it, else the first one after. A setting named again later (a restart,
    or the fix described after the crash) must not rewrite what was true when it failed.
    Returns whether anything changed."""
    if file not in col.files:
        return False
    at = (col.files.index(file), line)
    changed = False
    for name, hist in col.history.items():
        started = [h for h in hist if h[0] <= at]
        if started:
            _, first_fact, last, last_fact = started[-1]
            chosen = last_fact if last <= at else first_fact
        else:
            chosen = hist[0][1]
        current = col.facts.get(name)
        if current is None or current.value != chosen.value:
            col.facts[name] = chosen
            changed = True
    return changed


def _quoted_with_release(col: Collector) -> None:
    """A command line quoted in the log was read before the log said its release (or without
    one): read it again as the release printed in the same log reads it (``-O`` and the short
    aliases changed meaning across releases)."""
    for key, call in (("_quoted_command", False), ("_quoted_call", True)):
        quoted = col.private.get(key)
        if quoted is None:
            continue
        text, file, line, shown = quoted
        version = value_at(col, "vllm_version", file, line) if "vllm_version" in col.history else None
        if version is None:
            continue

        def put(name: str, raw: Any, file: str = file, line: int = line, shown: str = shown) -> None:
            col.put_at(name, raw, file, line, shown)

        cmd = fact_rules.quoted_with_release(text, call, str(version), put)
        literal = col.private.get("_serve_command_literal")
        if cmd is not None and literal is not None and literal[1:3] == (file, line):
            col.private["_serve_command_literal"] = (cmd, *literal[1:])


def derive(col: Collector) -> None:
    """Facts that need the whole log: the command line, GPU count, the model's family."""
    for name in col._derived:
        col.facts.pop(name, None)
    before = set(col.facts)
    _quoted_with_release(col)
    literal = col.private.get("_serve_command_literal")
    from_args = col.private.get("_serve_command_from_args")
    ns = col.private.get("_namespace")
    chosen = literal or from_args
    if chosen is None and ns is not None:
        from .args import serve_command

        version = col.facts.get("vllm_version")
        cmd = serve_command(ns[0], namespace=True, version=str(version.value) if version else None)
        if cmd:
            chosen = (cmd, ns[1], ns[2], ns[3])
    if chosen is not None:
        col.put_at("serve_command", chosen[0], chosen[1], chosen[2], chosen[3])
    if col.gpu_indices:
        gpu = col.facts.get("gpu_name")
        if gpu is not None:
            col.put_at("gpu_count", len(col.gpu_indices), gpu.file or col.file, gpu.line or 0,
                        gpu.detail or "")
    model = col.facts.get("model")
    arch = col.facts.get("model_arch")
    derived = fact_rules.derive_model_facts(model.value if model else None, arch.value if arch else None)
    src = arch or model
    if src is not None:
        for name, value in derived.items():
            if name not in col.facts:
                col.put_at(name, value, src.file or col.file, src.line or 0, src.detail or "")
    col._derived = set(col.facts) - before
