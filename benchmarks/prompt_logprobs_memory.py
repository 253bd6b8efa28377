"""Measure the GPU memory that prompt logprobs take per prompt token, for real vocabulary sizes.

Why: the runtime-oom-logprobs leaf sizes --max-num-batched-tokens from the vocabulary
(calculation ``logprobs_batched_tokens``). vLLM's V1 runner computes the logits of every scheduled
prompt token in the model's dtype and then a float32 log-softmax over the vocabulary before it picks
the requested top-k. This script repeats those operations on random data and reads PyTorch's
peak-allocation counter, so the bytes per (token x vocabulary element) come from a GPU, not from
reasoning.

Run on a CUDA machine:  python benchmarks/prompt_logprobs_memory.py [--out FILE]
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import json
import sys

VOCABS = {"llama3": 128256, "qwen3": 151936, "qwen2.5": 152064, "gemma3": 262144}
TOKENS = (1024, 4096)
HIDDEN = 4096
TOP_K = 20


def measure(torch, vocab: int, tokens: int) -> dict:  # type: ignore[no-untyped-def]
    dev = torch.device("cuda")
    lm_head = torch.randn(vocab, HIDDEN, dtype=torch.bfloat16, device=dev)
    hidden = torch.randn(tokens, HIDDEN, dtype=torch.bfloat16, device=dev)
    targets = torch.randint(0, vocab, (tokens, 1), device=dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    logits = hidden @ lm_head.t()  # the model's dtype, as compute_logits returns it
    logprobs = logits.log_softmax(dim=-1, dtype=torch.float32)
    top = logprobs.topk(TOP_K, dim=-1)
    own = logprobs.gather(-1, targets)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated(dev) - base
    del logits, logprobs, top, own, lm_head, hidden, targets
    torch.cuda.empty_cache()
    elements = tokens * vocab
    return {
        "vocab": vocab,
        "tokens": tokens,
        "peak_bytes": peak,
        "bytes_per_element": round(peak / elements, 3),
        "mib_per_token": round(peak / tokens / 2**20, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    import torch  # only on the GPU machine

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = [dict(name=name, **measure(torch, vocab, n)) for name, vocab in VOCABS.items() for n in TOKENS]
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "hidden": HIDDEN,
        "top_k": TOP_K,
        "rows": rows,
        "max_bytes_per_element": max(r["bytes_per_element"] for r in rows),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
