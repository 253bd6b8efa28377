"""The engine arguments a log records, read safely, and the command line rebuilt from them.

vLLM prints its arguments three ways: ``non-default args: {...}`` (0.9+, a Python dict repr),
``args: Namespace(...)`` (older API servers, every argument), and the engine's ``Initializing …
LLM engine (vX) with config: model='…', dtype=torch.bfloat16, …`` line. Values are Python reprs
that may embed objects (``CompilationConfig(...)``, ``<CUDAGraphMode.FULL: 2>``), so the text is
split at its top-level commas and each value goes through ``ast.literal_eval`` on its own;
what does not parse stays a string. Nothing is ever ``eval``-ed.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from .. import safejson
from ..facts.vllm_args import parse_argv, sub_config
from ..kb.releases import DATA_FILE
from ..text.redact import redact_argv
from ..versions import Version

_OPEN = "([{"
_CLOSE = ")]}"


def _walk(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """``(index, depth)`` of every character outside quotes from ``start``; depth counts open brackets
    before that character (a closing bracket reports the depth it closes)."""
    depth = 0
    quote = ""
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            depth += 1
            yield i, depth
        elif c in _CLOSE:
            yield i, depth
            depth = max(0, depth - 1)
        else:
            yield i, depth
        i += 1


def split_top(text: str, sep: str = ",") -> Iterator[str]:
    """Split at ``sep`` outside brackets and quotes (a repr's top level)."""
    start = 0
    for i, depth in _walk(text):
        if depth == 0 and text[i] == sep:
            yield text[start:i]
            start = i + 1
    tail = text[start:]
    if tail.strip():
        yield tail


def _closing(text: str, start: int) -> int | None:
    """Index just past the bracket closing the one at ``start``, or None when the text ends first."""
    for i, depth in _walk(text, start):
        if text[i] in _CLOSE and depth == 1:
            return i + 1
    return None


def _matching(text: str, start: int) -> int:
    """Index just past the bracket closing the one at ``start`` (or len(text) if unclosed)."""
    end = _closing(text, start)
    return len(text) if end is None else end


def literal(text: str) -> Any:
    """A Python literal if ``text`` is one, else the text itself (stripped)."""
    t = text.strip()
    if not t:
        return t
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    if t.startswith("{") and t.endswith("}"):
        # vLLM prints some configs as JSON (true/false/null).
        try:
            return safejson.loads(t)
        except ValueError:
            pass
    return t


def _cut(raw: str, value: Any) -> bool:
    """A quoted value that does not parse: the line was cut inside it (a paste or a preview that
    stopped mid-string), so what it says is not the value."""
    t = raw.strip()
    return isinstance(value, str) and t[:1] in ("'", '"') and value == t


def _body(blob: str) -> str:
    """What is inside the bracket ``blob`` opens, up to its closing one. When the line was cut
    before it, the items before the last: the last one may stop inside its value (a number or a
    path cut short reads as another value)."""
    end = _closing(blob, 0)
    if end is not None:
        return blob[1:end - 1]
    body = blob[1:]
    commas = [i for i, depth in _walk(body) if depth == 0 and body[i] == ","]
    return body[:commas[-1]] if commas else ""


def parse_dict_repr(text: str) -> dict[str, Any]:
    """``{'model': 'x', 'max_model_len': 32768, 'compilation_config': CompilationConfig(...)}``."""
    body = text.strip()
    if body.startswith("{"):
        body = _body(body)
    try:
        value = ast.literal_eval("{" + body + "}")
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    out: dict[str, Any] = {}
    for item in split_top(body):
        key, colon, value = item.partition(":")
        if not colon:
            continue
        k, v = literal(key), literal(value)
        if isinstance(k, str) and k and not _cut(value, v):
            out[k] = v
    return out


def parse_kv_repr(text: str) -> dict[str, Any]:
    """``host=None, port=8000, model='x', dtype=torch.bfloat16`` (a Namespace or config line)."""
    out: dict[str, Any] = {}
    for item in split_top(text):
        key, eq, value = item.partition("=")
        key = key.strip()
        if eq and re.fullmatch(r"[A-Za-z_]\w*", key):
            v = literal(value)
            if not _cut(value, v):
                out[key] = v
    return out


_NON_DEFAULT_RE = re.compile(r"non-default args:\s*(\{.*)")
_NAMESPACE_RE = re.compile(r"args:\s*Namespace\((.*)")
_CONFIG_RE = re.compile(
    r"Initializing an?\s*(?:(?P<engine>V[01])\s*)?LLM engine\s*(?:\((?P<version>v?[^)\s]+)\)\s*)?with config:\s*(?P<cfg>.*)"
)


def parse_non_default_args(text: str) -> dict[str, Any] | None:
    m = _NON_DEFAULT_RE.search(text)
    if not m:
        return None
    return parse_dict_repr(m.group(1))


def parse_namespace(text: str) -> dict[str, Any] | None:
    m = _NAMESPACE_RE.search(text)
    if not m:
        return None
    return parse_kv_repr(_body("(" + m.group(1)))


def parse_engine_config(text: str) -> tuple[str | None, str | None, dict[str, Any]] | None:
    """``(engine, version, config)`` from the engine's start-up line (early releases print no
    version in it)."""
    m = _CONFIG_RE.search(text)
    if not m:
        return None
    version = m.group("version")
    return m.group("engine"), version.lstrip("v") if version else None, parse_kv_repr(m.group("cfg"))


# --- rebuilding the command line ------------------------------------------------------------------

# Arguments that never belong on a rebuilt command line.
_SKIP = {
    "model_tag", "model", "subparser", "dispatch_function", "func", "cmd", "config",
    "disable_log_requests", "disable_log_stats",
}
# For the old ``Namespace(...)`` line, which lists every argument: only these are carried over,
# and only when they differ from the defaults below (or vLLM's defaults for the release).
NAMESPACE_KEYS = (
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_model_len",
    "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "enforce_eager", "kv_cache_dtype",
    "quantization", "dtype", "swap_space", "cpu_offload_gb", "enable_prefix_caching", "enable_chunked_prefill",
    "disable_custom_all_reduce", "enable_lora", "max_loras", "max_lora_rank", "lora_modules",
    "speculative_model", "num_speculative_tokens", "speculative_config", "limit_mm_per_prompt",
    "trust_remote_code", "served_model_name", "enable_expert_parallel", "kv_cache_memory_bytes",
    "compilation_config", "enable_sleep_mode", "block_size", "max_seq_len_to_capture", "host", "port",
    "num_gpu_blocks_override", "tokenizer", "max_num_partial_prefills", "distributed_executor_backend",
)
_NAMESPACE_DEFAULTS: dict[str, Any] = {
    "dtype": "auto", "kv_cache_dtype": "auto", "swap_space": 4, "cpu_offload_gb": 0, "max_loras": 1,
    "max_lora_rank": 16, "block_size": 16, "port": 8000, "max_seq_len_to_capture": 8192,
    "tensor_parallel_size": 1, "pipeline_parallel_size": 1, "data_parallel_size": 1,
    "gpu_memory_utilization": 0.9, "enforce_eager": False, "trust_remote_code": False,
    "disable_custom_all_reduce": False, "enable_lora": False, "enable_expert_parallel": False,
    "enable_sleep_mode": False, "distributed_executor_backend": None,
}


@lru_cache(maxsize=1)
def _release_data() -> dict[str, Any]:
    try:
        with open(DATA_FILE, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):  # pragma: no cover - the data ships with the package
        return {}
    return data if isinstance(data, dict) else {}


def _release_defaults(version: str | None) -> dict[str, Any]:
    """``key_flag_defaults`` of the newest bundled release not newer than ``version``."""
    v = Version.try_parse(version) if version else None
    if v is None:
        return {}
    best: dict[str, Any] = {}
    best_v = None
    for name, rel in _release_data().items():
        rv = Version.try_parse(name)
        if rv is None or rv > v or (best_v is not None and rv <= best_v):
            continue
        defaults = rel.get("key_flag_defaults") if isinstance(rel, dict) else None
        if isinstance(defaults, dict):
            best, best_v = {k[2:].replace("-", "_"): val for k, val in defaults.items()}, rv
    return best


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _value_words(key: str, value: Any, negatable: bool = True) -> list[str] | None:
    """The command-line words for one argument, or None to leave it out. ``--no-X`` exists only
    from 0.8.5 on (``BooleanOptionalAction``), so an old ``Namespace`` never produces it."""
    if value is None:
        return None
    flag = _flag(key)
    if value is True:
        return [flag]
    if value is False:
        # Switches whose name already says "disable"/"no" are off by default: nothing to say.
        if (not negatable or key.startswith(("disable_", "no_"))
                or key in ("enforce_eager", "trust_remote_code", "enable_lora")):
            return None
        return ["--no-" + key.replace("_", "-")]
    if isinstance(value, (dict,)):
        if not value:
            return None
        return [flag, json.dumps(value, separators=(",", ":"), default=str)]
    if isinstance(value, (list, tuple)):
        if not value:
            return None
        if all(isinstance(v, (str, int, float)) for v in value):
            return [flag, *[str(v) for v in value]]
        return [flag, json.dumps(list(value), default=str)]
    text = str(value)
    if re.fullmatch(r"[A-Za-z]\w*\(.*\)", text, re.S):
        return None  # an object repr (CompilationConfig(...)): not something to paste back
    return [flag, text]


def serve_command(args: dict[str, Any], *, namespace: bool = False, version: str | None = None) -> str | None:
    """``vllm serve MODEL --flag value …`` from the arguments a log recorded, secrets redacted."""
    model = args.get("model_tag") or args.get("model")
    if not model:
        return None
    argv = ["vllm", "serve", str(model)]
    if namespace:
        defaults = {**_NAMESPACE_DEFAULTS, **_release_defaults(version)}
        items = [(k, args[k]) for k in NAMESPACE_KEYS if k in args and args[k] != defaults.get(k)]
        items = [(k, v) for k, v in items if not (k == "served_model_name" and v in ([model], model, None))]
    else:
        items = [(k, v) for k, v in args.items() if k not in _SKIP]
    for key, value in items:
        words = _value_words(key, value, negatable=not namespace)
        if words:
            argv.extend(words)
    return " ".join(shlex.quote(a) for a in redact_argv(argv, version))


_COMMAND_RE = re.compile(
    r"(?:^|[\s;&|$#>])(?P<cmd>(?:[A-Z_][A-Z0-9_]*=\S+\s+)*"
    r"(?:vllm\s+serve|python[\d.]*\s+-m\s+vllm\.entrypoints\.(?:openai\.)?api_server)\b.*)"
)


_ENTRY_RE = re.compile(r"^(?:vllm\.entrypoints\.(?:openai\.)?api_server|.*[/\\]api_server\.py)$")


def _after_entrypoint(argv: list[str]) -> tuple[list[str], bool]:
    """The words after ``serve`` (True: its first positional is the model) or after the API
    server's module; the whole line when neither is there."""
    for i, word in enumerate(argv):
        if word == "serve":
            return argv[i + 1:], True
        if _ENTRY_RE.match(word):
            return argv[i + 1:], False
    return argv, False


def command_args(cmd: str, version: str | None = None) -> dict[str, Any]:
    """The arguments of a quoted ``vllm serve`` / ``python -m vllm.entrypoints…`` command, as the
    argument parser would name them (:mod:`oomwizard.facts.vllm_args`, ``-O`` as ``version``
    reads it): ``--max-model-len 4096`` and ``--max_model_len=4096`` both give ``max_model_len:
    4096``; a switch alone is ``True``, ``--no-X`` is ``X: False``; dotted keys are merged into
    their JSON option (``-cc.cudagraph_mode=FULL``)."""
    try:
        argv = shlex.split(cmd)
    except ValueError:
        argv = cmd.split()
    words, serve = _after_entrypoint(argv)
    parsed = parse_argv(words, version)
    out: dict[str, Any] = {}
    if serve and parsed.positionals:
        out["model_tag"] = parsed.positionals[0]
    for key, value in parsed.args.items():
        head = key.partition(".")[0]
        if not re.fullmatch(r"[A-Za-z_]\w*", head):
            continue
        if "." in key:
            out[head] = {k: literal(v) if isinstance(v, str) else v for k, v in sub_config(parsed.args, head).items()}
        else:
            out[key] = literal(value) if isinstance(value, str) else value
    return out


_LLM_CALL_RE = re.compile(r"\bLLM\((?P<args>[^()]*(?:\([^()]*\)[^()]*)*)\)")


def llm_call_args(text: str, version: str | None = None) -> dict[str, Any] | None:
    """The keyword arguments of an offline ``LLM(...)`` call written on one line, named as the
    argument parser of ``version`` names them (:func:`parse_argv`: the same names as ``vllm
    serve``'s options); the first positional argument is the model."""
    m = _LLM_CALL_RE.search(text)
    if not m:
        return None
    out: dict[str, Any] = {}
    words: list[str] = []
    values: dict[str, Any] = {}
    for i, item in enumerate(split_top(m.group("args"))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if eq and re.fullmatch(r"[A-Za-z_]\w*", key):
            values[key] = literal(value)
            words.append(f"--{key}={key}")  # the value is the Python one, kept aside
        elif i == 0:
            model = literal(item)
            if isinstance(model, str) and model and not model.startswith(("*", "{")):
                out["model"] = model
    for name, kwarg in parse_argv(words, version).args.items():
        if isinstance(kwarg, str) and kwarg in values:
            out[name] = values[kwarg]
    return out or None


def find_command(text: str, version: str | None = None) -> str | None:
    """A ``vllm serve`` / ``python -m vllm.entrypoints…`` command line quoted in the log, its
    secrets hidden as ``version``'s parser reads the words."""
    m = _COMMAND_RE.search(text)
    if not m:
        return None
    cmd = m.group("cmd").strip().rstrip("\\").strip()
    try:
        argv = shlex.split(cmd)
    except ValueError:
        argv = cmd.split()
    if len(argv) < 3 and "api_server" not in cmd:
        return None
    return " ".join(shlex.quote(a) for a in redact_argv(argv, version))
