"""``oomwizard plan``: arguments, the optional log, and the output in text or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..exitcodes import Exit
from ..i18n import said, ui
from .errors import PlanError
from .inputs import Inputs

LOG_KEYS = ("weights_gib", "activation_peak_gib", "non_torch_gib", "cudagraph_estimate_gib", "kv_cache_gib",
            "kv_cache_tokens", "gpu_mem_total_bytes", "gpu_memory_utilization", "vllm_version", "tp", "pp",
            "max_num_batched_tokens", "max_model_len", "kv_cache_dtype", "quantization", "gpu_name", "model",
            "kv_cache_memory_bytes", "max_concurrency")


def add_parser(sub: Any, lang: str) -> None:
    p = sub.add_parser("plan", help=ui("cli.help.plan", lang))
    p.add_argument("--model", required=True, metavar="M",
                   help=ui("cli.help.plan.model", lang))
    p.add_argument("--gpu", metavar="NAME|detect", help=ui("cli.help.plan.gpu", lang))
    p.add_argument("--gpu-memory", type=float, metavar="GIB", help=ui("cli.help.plan.gpu_memory", lang))
    p.add_argument("--gpus", type=int, metavar="N", help=ui("cli.help.plan.gpus", lang))
    p.add_argument("--tp", "--tensor-parallel-size", dest="tp", type=int, default=1, metavar="N")
    p.add_argument("--pp", "--pipeline-parallel-size", dest="pp", type=int, default=1, metavar="N")
    p.add_argument("--dp", "--data-parallel-size", dest="dp", type=int, default=1, metavar="N")
    p.add_argument("--dtype", metavar="D")
    p.add_argument("--quantization", metavar="Q")
    p.add_argument("--kv-cache-dtype", default="auto", metavar="K")
    p.add_argument("--max-model-len", type=int, metavar="L")
    p.add_argument("--max-num-seqs", type=int, metavar="S")
    p.add_argument("--max-num-batched-tokens", type=int, metavar="B")
    p.add_argument("--gpu-memory-utilization", type=float, metavar="U")
    p.add_argument("--block-size", type=int, metavar="N")
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None,
                   help=ui("cli.help.plan.enable_prefix_caching", lang))
    p.add_argument("--kv-cache-memory-bytes", type=int, metavar="N",
                   help=ui("cli.help.plan.kv_cache_memory_bytes", lang))
    p.add_argument("--vllm-version", metavar="V", help=ui("cli.help.plan.vllm_version", lang))
    p.add_argument("--log", metavar="FILE", help=ui("cli.help.plan.log", lang))
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--lang", choices=("en", "zh"))
    own = {"format": ui("cli.help.format", lang), "lang": ui("cli.help.common.lang", lang)}
    for action in p._actions:  # the rest are vllm serve's own flags, meaning what they mean there
        if action.help is None:
            action.help = own.get(action.dest) or ui("cli.help.plan.as_vllm", lang)


def _log_facts(path: str) -> dict[str, Any]:
    from ..logs.diagnose import diagnose_paths

    diag = diagnose_paths([path])
    out = {}
    for key in LOG_KEYS:
        value = diag.facts.value(key)
        if value is not None:
            out[key] = value
    return out


def _bad(value: float | int | None, lo: float, hi: float) -> bool:
    return value is not None and not (lo <= value <= hi)


def run(args: argparse.Namespace) -> int:
    from ..envelope import envelope
    from ..i18n import detect_lang
    from ..text.output import clean_json
    from .planner import plan
    from .report import body, text
    from .suggest import suggestions

    lang = detect_lang(args.lang)
    for name, value, lo, hi in (("--gpu-memory-utilization", args.gpu_memory_utilization, 0.01, 1.0),
                                ("--gpu-memory", args.gpu_memory, 0.5, 4096), ("--tp", args.tp, 1, 1024),
                                ("--pp", args.pp, 1, 1024), ("--dp", args.dp, 1, 4096),
                                ("--max-model-len", args.max_model_len, 1, 1 << 24),
                                ("--max-num-seqs", args.max_num_seqs, 1, 1 << 20),
                                ("--max-num-batched-tokens", args.max_num_batched_tokens, 1, 1 << 24),
                                ("--block-size", args.block_size, 1, 4096)):
        if _bad(value, lo, hi):
            print(f"oomwizard: {ui('plan.command.out_of_range', lang, name=name, value=value, lo=lo, hi=hi)}", file=sys.stderr)
            return Exit.USAGE
    facts: dict[str, Any] = {}
    if args.log:
        from ..logs.diagnose import InputError

        try:
            facts = _log_facts(args.log)
        except InputError as e:
            print(f"oomwizard: {said(e, lang)}", file=sys.stderr)
            return Exit.INPUT
    inp = Inputs(model=args.model, gpu=args.gpu, gpu_memory_gib=args.gpu_memory, gpus=args.gpus, tp=args.tp,
                 pp=args.pp, dp=args.dp, dtype=args.dtype, quantization=args.quantization,
                 kv_cache_dtype=args.kv_cache_dtype, max_model_len=args.max_model_len, max_num_seqs=args.max_num_seqs,
                 max_num_batched_tokens=args.max_num_batched_tokens, gpu_memory_utilization=args.gpu_memory_utilization,
                 vllm_version=args.vllm_version, block_size=args.block_size, enforce_eager=args.enforce_eager,
                 kv_cache_memory_bytes=args.kv_cache_memory_bytes, enable_prefix_caching=args.enable_prefix_caching,
                 log_facts=facts, log_name=args.log)
    try:
        p = plan(inp)
        p.suggestions = suggestions(p)
    except PlanError as e:
        print(f"oomwizard: {e.text(lang)}", file=sys.stderr)
        return Exit.INPUT
    if args.format == "json":
        sys.stdout.write(clean_json(envelope("plan", body(p))) + "\n")
    else:
        sys.stdout.write(text(p, lang))
    return Exit.OK if p.fits else Exit.CHECK_FAILED
