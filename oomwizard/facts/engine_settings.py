"""A running server's engine arguments as the settings the wizard uses, and its ``--config`` file.

:mod:`.vllm_args` reads a command line as a release's parser does; this turns the parsed
arguments into typed facts (``engine_settings``) and reads the YAML a server was pointed at with
``--config``, bounded and redacted, since it is another user's file.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..i18n import Text, msg
from ..text.redact import REDACTED, SECRET_FLAGS, redact_text, secret_env_name
from ..text.units import MIB
from .metadata_probe import read_head
from .vllm_args import as_bool, canonical_key, human_int, parse_argv, sub_config

CONFIG_LIMIT = MIB


def parse_engine_args(tokens: Sequence[str], version: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """Command-line tokens after ``serve`` -> ``({option: value}, positionals)``, as ``version``'s
    parser reads them (:mod:`.vllm_args`: every spelling, ``-O`` per release)."""
    parsed = parse_argv(tokens, version)
    return parsed.args, parsed.positionals


_COUNTS = (("tp", "tensor_parallel_size"), ("pp", "pipeline_parallel_size"), ("dp", "data_parallel_size"),
           ("max_loras", "max_loras"), ("max_lora_rank", "max_lora_rank"))
_POSITIVE = ("max_model_len", "max_num_seqs", "max_num_batched_tokens", "kv_cache_memory_bytes")
"""Sizes where ``-1`` or ``0`` means "let vLLM decide": left out."""
_STRINGS = ("kv_cache_dtype", "quantization", "dtype", "limit_mm_per_prompt", "kv_transfer_config")
_SWITCH_FACTS = (
    ("enforce_eager", "enforce_eager", "no_enforce_eager"),
    ("ep", "enable_expert_parallel", "disable_expert_parallel"),
    ("lora_enabled", "enable_lora", "no_enable_lora"),
    ("prefix_caching", "enable_prefix_caching", "disable_prefix_caching"),
    ("chunked_prefill", "enable_chunked_prefill", "disable_chunked_prefill"),
    ("custom_all_reduce_disabled", "disable_custom_all_reduce", "enable_custom_all_reduce"),
    ("sleep_mode", "enable_sleep_mode", "no_enable_sleep_mode"),
)
"""``(fact, on, off)``: a switch and its opposite; the opposite wins when both are given."""


def _numbers(args: Mapping[str, Any], s: dict[str, Any]) -> None:
    for fact, key in _COUNTS:
        v = human_int(args.get(key))
        if v is not None:
            s[fact] = v
    for fact in _POSITIVE:
        v = human_int(args.get(fact))
        if v is not None and v > 0:
            s[fact] = v
    gmu = args.get("gpu_memory_utilization", args.get("device_memory_utilization"))
    for fact, raw in (("gpu_memory_utilization", gmu), ("cpu_offload_gb", args.get("cpu_offload_gb")),
                      ("swap_space_gb", args.get("swap_space"))):
        try:
            if raw is not None and not isinstance(raw, bool):
                s[fact] = float(raw)
        except ValueError:
            pass


def _switch(args: Mapping[str, Any], on: str, off: str) -> bool | None:
    val = as_bool(args[on]) if on in args else None
    off_val = as_bool(args.get(off))
    if off_val is not None:
        val = not off_val
    if as_bool(args.get("no_" + on)):
        val = False
    return val


def _speculative(args: Mapping[str, Any], s: dict[str, Any]) -> None:
    spec = sub_config(args, "speculative_config")
    if spec:
        method = spec.get("method") or ("ngram" if spec.get("model") == "[ngram]" else None)
        s["speculative_method"] = str(method or "unspecified")
        n = human_int(spec.get("num_speculative_tokens"))
    elif isinstance(args.get("speculative_model"), str):
        s["speculative_method"] = "ngram" if args["speculative_model"] == "[ngram]" else "draft_model"
        n = human_int(args.get("num_speculative_tokens"))
    else:
        return
    if n is not None:
        s["num_speculative_tokens"] = n


def engine_settings(args: Mapping[str, Any], positionals: Sequence[str], entrypoint: str) -> dict[str, Any]:
    """The arguments that matter for memory, typed, keyed by fact name (unset ones left out)."""
    s: dict[str, Any] = {}
    model = args.get("model") if isinstance(args.get("model"), str) else None
    if entrypoint.endswith("serve") and positionals:
        model = positionals[0]
    if model:
        s["model"] = model
    _numbers(args, s)
    s.update({fact: args[fact] for fact in _STRINGS if isinstance(args.get(fact), str)})
    for fact, on, off in _SWITCH_FACTS:
        val = _switch(args, on, off)
        if val is not None:
            s[fact] = val
    _speculative(args, s)
    comp = sub_config(args, "compilation_config")
    if comp.get("cudagraph_mode"):
        s["cudagraph_mode"] = str(comp["cudagraph_mode"])
    return s


def read_config_file(path: str, proc_root: Path, pid: int) -> tuple[dict[str, Any] | None, Text | None]:
    """``--config FILE`` (YAML of engine arguments), resolved against the process's directory."""
    p = Path(path)
    full = p if p.is_absolute() else proc_root / str(pid) / "cwd" / p
    # The file is another user's choice: a FIFO, a device or a huge file must not stall detection.
    try:
        st = full.stat()
    except OSError as e:
        return None, msg("facts.config.cannot_read").format(path=path, why=e.strerror or e)
    if not stat.S_ISREG(st.st_mode):
        return None, msg("facts.config.not_regular").format(path=path)
    if st.st_size > CONFIG_LIMIT:
        return None, msg("facts.config.too_large").format(path=path, mib=CONFIG_LIMIT // MIB)
    text = read_head(str(full), CONFIG_LIMIT)
    if text is None:
        return None, msg("facts.config.unreadable").format(path=path)
    import yaml

    try:
        # Aliases can multiply a small file into billions of values once it is walked.
        if any(isinstance(ev, yaml.AliasEvent) for ev in yaml.parse(text, Loader=yaml.SafeLoader)):
            return None, msg("facts.config.aliases").format(path=path)
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        return None, msg("facts.config.bad_yaml").format(path=path, why=str(e).splitlines()[0] if str(e) else type(e).__name__)
    if not isinstance(data, dict):
        return None, msg("facts.config.not_mapping").format(path=path)
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = canonical_key("--" + str(k))
        if "--" + key.replace("_", "-") in SECRET_FLAGS or secret_env_name(key):
            out[key] = REDACTED
            continue
        value = json.dumps(v) if isinstance(v, (dict, list)) else (v if isinstance(v, bool) else str(v))
        out[key] = redact_text(value) if isinstance(value, str) else value
    return out, None
