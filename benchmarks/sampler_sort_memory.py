"""Measure the GPU memory that sort-based top-k/top-p sampling needs, per (request x vocabulary) element.

Why: the sampler warm-up advice ("lower max_num_seqs") needs a number. vLLM's V1 model runner warms
the sampler with min(max_num_seqs, max_num_batched_tokens) dummy requests, top_p < 1 and top_k just
below the vocabulary size, which forces the PyTorch fallback to sort every row of the logits. This
script rebuilds that sequence of tensor operations (float32 upcast, full sort with int64 indices,
softmax and cumulative sum over the sorted values, masks, scatter back, softmax and exponential
noise for the draw) and reads PyTorch's peak-allocation counter around it.

Run on a CUDA machine:  python benchmarks/sampler_sort_memory.py [--out FILE]
It prints one JSON object per (vocabulary, requests) case and a summary of bytes per element.
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import json
import sys

VOCABS = {
    "deepseek_v3 (129280)": 129280,
    "llama3 (128256)": 128256,
    "qwen2.5/qwen3 (151936)": 151936,
    "glm4 (151552)": 151552,
    "gpt_oss (201088)": 201088,
    "gemma3 (262144)": 262144,
}
REQUESTS = (64, 256, 1024)


def sorted_top_k_top_p_draw(torch, logits_model_dtype, top_k, top_p):  # type: ignore[no-untyped-def]
    """One sampling step the way the fallback path spends memory; returns the drawn token ids."""
    logits = logits_model_dtype.to(torch.float32)
    logits.div_(0.5)  # temperature, in place
    values, order = logits.sort(dim=-1)
    cutoff = values.gather(1, (values.size(1) - top_k.long()).unsqueeze(1))
    values.masked_fill_(values < cutoff, float("-inf"))
    cumulative = values.softmax(dim=-1)
    torch.cumsum(cumulative, dim=-1, out=cumulative)
    drop = cumulative <= (1 - top_p).unsqueeze(1)
    drop[:, -1] = False
    values.masked_fill_(drop, float("-inf"))
    del cumulative, drop
    logits.scatter_(dim=-1, index=order, src=values)
    del values, order
    probs = logits.softmax(dim=-1, dtype=torch.float32)
    noise = torch.empty_like(probs).exponential_()
    return probs.div_(noise).argmax(dim=-1)


def measure(torch, vocab: int, requests: int) -> dict:  # type: ignore[no-untyped-def]
    dev = torch.device("cuda")
    torch.cuda.empty_cache()
    logits = torch.randn(requests, vocab, dtype=torch.bfloat16, device=dev)
    top_k = torch.full((requests,), vocab - 1, device=dev, dtype=torch.int32)
    top_p = torch.full((requests,), 0.9, device=dev)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    out = sorted_top_k_top_p_draw(torch, logits, top_k, top_p)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated(dev) - base
    elements = requests * vocab
    del out, logits
    return {
        "vocab": vocab,
        "requests": requests,
        "elements": elements,
        "peak_bytes": peak,
        "bytes_per_element": round(peak / elements, 2),
        "peak_gib": round(peak / 2**30, 3),
        "sort_index_tensor_mib": round(elements * 8 / 2**20, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the results as JSON to this file")
    args = ap.parse_args()
    import torch  # only here: the benchmark runs on the GPU machine

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = []
    for name, vocab in VOCABS.items():
        for requests in REQUESTS:
            row = measure(torch, vocab, requests)
            row["family"] = name
            rows.append(row)
            print(json.dumps(row), flush=True)
    per = [r["bytes_per_element"] for r in rows]
    summary = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "bytes_per_element_min": min(per),
        "bytes_per_element_max": max(per),
    }
    print(json.dumps(summary), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"rows": rows, "summary": summary}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
