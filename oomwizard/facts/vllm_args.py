"""vLLM's command line, read the way each release's own parser reads it.

One reader for every place a ``vllm serve`` line is met: a running server's argv
(:mod:`.processes`) and a command quoted in a log (:mod:`oomwizard.logs.args`). vLLM's
``FlexibleArgumentParser`` accepts ``--flag value`` and ``--flag=value``, underscores for dashes,
``--no-x`` for a boolean's off side, JSON values and their dotted keys (``--compilation-config.
cudagraph_mode PIECEWISE``), short aliases (``-tp``, ``-pp``, ``-dp``, ``-q``; ``-cc`` from 0.12.0,
``-sc`` from 0.19.0, ``-ep`` from 0.14.0), and ``-O``, whose meaning changed:

* up to 0.9.1 ``-O`` is ``--compilation-config`` (``-O3``: compilation level 3; the rewrite in
  ``vllm/utils.py@0.9.1`` never fires, argparse attaches the value);
* 0.9.2-0.11.0 ``-O3``, ``-O=3`` and ``-O 3`` become ``-O.level=3``, and 0.11.1-0.11.x
  ``-O.mode=3`` (``vllm/utils/__init__.py@0.10.2``, ``vllm/utils/argparse_utils.py@0.11.1``);
* 0.12.x ``-O3``/``-O 3`` become ``--optimization-level 3`` and ``-O.<key>`` becomes
  ``-cc.<key>`` (``vllm/utils/argparse_utils.py@0.12.0``);
* from 0.13.0 every ``-O<x>`` is ``--optimization-level <x>`` (``argparse_utils.py@0.13.0``).

Without a release ``-O3`` stays ``O: "3"``: both readings are possible. Values stay the strings
given; callers type them (:func:`human_int`, :func:`as_bool`, :func:`sub_config`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .. import safejson
from ..versions import Version

SHORT_FLAGS = {
    "-tp": "tensor_parallel_size",
    "-pp": "pipeline_parallel_size",
    "-dp": "data_parallel_size",
    "-ep": "enable_expert_parallel",
    "-q": "quantization",
    "-cc": "compilation_config",
    "-sc": "speculative_config",
}
SWITCHES = frozenset({
    "enforce_eager", "trust_remote_code", "async_scheduling", "skip_tokenizer_init", "headless",
    "fully_sharded_loras", "calculate_kv_scales", "kv_sharing_fast_prefill", "use_tqdm_on_load",
    "return_tokens_as_token_ids", "worker_use_ray", "ray_workers_use_nsight", "enable_expert_parallel",
})
"""Engine/server options that take no value (``store_true`` or ``BooleanOptionalAction``); any
``enable_*``/``disable_*``/``no_*`` option is one too."""
BOOL_WORDS = {"true": True, "false": False, "True": True, "False": False, "1": True, "0": False}
"""What older releases accepted after a switch (``--enforce-eager True``)."""
LEVELS = frozenset({"0", "1", "2", "3"})
_NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?$")
_HUMAN_INT_RE = re.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT])$")

O_COMPILATION, O_LEVEL, O_MODE, O_OPT_DOTTED, O_OPT, O_UNKNOWN = (
    "compilation", "level", "mode", "optimization+dotted", "optimization", "unknown")


def o_style(version: Version | str | None) -> str:
    """What ``-O`` means in ``version`` (see the module's docstring)."""
    v = Version.try_parse(version) if isinstance(version, str) else version
    if v is None:
        return O_UNKNOWN
    for bound, style in (("0.9.2", O_COMPILATION), ("0.11.1", O_LEVEL), ("0.12.0", O_MODE), ("0.13.0", O_OPT_DOTTED)):
        if v < Version.parse(bound):
            return style
    return O_OPT


@lru_cache(maxsize=64)
def release_flags(version: str | None) -> frozenset[str] | None:
    """The flags of the newest bundled release not newer than ``version`` (None: not known)."""
    v = Version.try_parse(version) if version else None
    if v is None:
        return None
    from ..kb.releases import load_releases

    known = [r for r in load_releases() if r.version <= v]
    return known[-1].flags if known else None


@dataclass
class Parsed:
    args: dict[str, Any] = field(default_factory=dict)
    """Option -> the string given (``True``/``False`` for switches); a later repetition wins."""
    positionals: list[str] = field(default_factory=list)


def canonical_key(flag: str, version: str | None = None) -> str:
    """``--max-num-seqs`` / ``--max_num_seqs`` -> ``max_num_seqs``; ``-tp`` -> ``tensor_parallel_size``
    (a short alias the release does not register keeps its own name); dotted JSON keys keep their
    tail: ``-cc.cudagraph_mode`` -> ``compilation_config.cudagraph_mode``."""
    head, dot, tail = flag.partition(".")
    flags = release_flags(version)
    if head in SHORT_FLAGS and (flags is None or head in flags):
        head = SHORT_FLAGS[head]
    head = head.lstrip("-").replace("-", "_")
    return head + (dot + tail if dot else "")


def is_switch(key: str) -> bool:
    """An option that takes no value (``--enforce-eager``, ``--no-x``, ``--enable-x``, ``--disable-x``)."""
    return key in SWITCHES or key.startswith(("no_", "enable_", "disable_"))


def _is_value(tok: str | None) -> bool:
    return tok is not None and (not tok.startswith("-") or bool(_NUMBER_RE.match(tok)))


def _dash_o_dotted(tok: str, nxt: str | None, style: str) -> tuple[dict[str, str], bool]:
    """``-O.<key>=<value>`` / ``-O.<key> <value>``: a compilation-config key from 0.9.2 to 0.12.x."""
    if style == O_COMPILATION:
        return {"compilation_config": tok[2:]}, False  # argparse attaches ".key=value"; vLLM refuses it
    if style == O_OPT:
        return {"optimization_level": tok[2:]}, False  # 0.13+: rewritten as is; vLLM refuses it
    key, eq, val = tok[3:].partition("=")
    name = "O" if style == O_UNKNOWN else "compilation_config"
    if eq:
        return {f"{name}.{key}": val}, False
    return ({f"{name}.{key}": nxt}, True) if nxt is not None and _is_value(nxt) else ({}, False)


def _dash_o(tok: str, nxt: str | None, style: str) -> tuple[dict[str, str], bool]:
    """``-O`` in one of its spellings -> the options it stands for, and whether ``nxt`` was taken."""
    if tok.startswith("-O."):
        return _dash_o_dotted(tok, nxt, style)
    attached = tok[2:].removeprefix("=") if tok != "-O" else None
    if attached is None and (nxt is None or not _is_value(nxt)):
        return {}, False
    value = attached if attached is not None else str(nxt)
    took = attached is None
    if style == O_COMPILATION:
        return {"compilation_config": value}, took
    if style in (O_LEVEL, O_MODE):
        if took and value not in LEVELS:
            return {"compilation_config": value}, took  # -O '{"level": 3}': the alias itself
        return {f"compilation_config.{style}": value}, took
    if style in (O_OPT, O_OPT_DOTTED) and (not took or value in LEVELS):
        return {"optimization_level": value}, took
    return {"O": value}, took


def _option(tokens: Sequence[str], i: int, version: str | None) -> tuple[dict[str, Any], int]:
    """The option at ``tokens[i]`` -> its ``{key: value}`` and the index after it."""
    tok = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if tok.startswith("-O") and not tok.startswith("--"):
        got, took = _dash_o(tok, nxt, o_style(version))
        return got, i + 1 + int(took)
    name, eq, val = tok.partition("=")
    key = canonical_key(name, version)
    if eq:
        return {key: val}, i + 1
    if is_switch(key):
        if nxt in BOOL_WORDS:
            value = BOOL_WORDS[nxt]
            return ({key[3:]: not value} if key.startswith("no_") else {key: value}), i + 2
        return ({key[3:]: False} if key.startswith("no_") else {key: True}), i + 1
    if _is_value(nxt):
        return {key: nxt}, i + 2
    return {key: True}, i + 1


def parse_argv(tokens: Sequence[str], version: str | None = None) -> Parsed:
    """Command-line tokens after ``serve`` (or after the API server's module) -> options and
    positionals, read as ``version``'s parser reads them (``-O``, short aliases)."""
    out = Parsed()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "--":
            out.positionals.extend(tokens[i + 1:])
            break
        if tok == "-" or _is_value(tok):
            out.positionals.append(tok)
            i += 1
            continue
        got, i = _option(tokens, i, version)
        out.args.update(got)
    return out


def human_int(raw: Any) -> int | None:
    """vLLM's human-readable integers: ``32768``, ``32k`` (x1000), ``32K`` (x1024), ``1.5m``."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int):
        return raw
    s = str(raw).strip()
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    m = _HUMAN_INT_RE.match(s)
    if not m:
        return None
    num, unit = m.group(1), m.group(2)
    power = "kmgt".index(unit.lower()) + 1
    if unit.islower():
        return int(float(num) * 1000**power)
    if "." in num:
        return None
    return int(num) << (10 * power)  # x 1024**power


def as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in BOOL_WORDS:
        return BOOL_WORDS[v]
    return None


def _json_obj(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return None
    try:
        val = safejson.loads(raw)
    except ValueError:
        return None
    return val if isinstance(val, dict) else None


def sub_config(args: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A JSON option merged with its dotted spellings (``--speculative-config.method eagle``)."""
    out = dict(_json_obj(args.get(key)) or {})
    prefix = key + "."
    for k, v in args.items():
        if k.startswith(prefix):
            out[k[len(prefix):]] = v
    return out
