"""What the sampler warm-up already holds when its top-k/top-p sort runs out of memory.

Why: ``sampler_max_num_seqs`` and ``sampler_gpu_util`` count the warm-up's own tensors as room when
the allocation that failed is the sort's int64 order (8 bytes per element). That rests on the order
in which the warm-up allocates: the model's bf16 logits, their float32 copy, then the sort's values
and, last, its int64 order. This script rebuilds that sequence under a memory cap placed just below
what the order needs, catches the OOM and reports what was requested and what the warm-up held.

Run on a CUDA machine:  python benchmarks/sampler_sort_oom_point.py [--out FILE]
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

CASES = ((256, 151936), (256, 154880), (1024, 129280), (512, 262144))
MIB = 1 << 20


def held_at_sort_failure(torch, requests: int, vocab: int) -> dict:  # type: ignore[no-untyped-def]
    dev = torch.device("cuda", 0)
    torch.cuda.empty_cache()
    elements = requests * vocab
    base = torch.cuda.memory_allocated(dev)
    total = torch.cuda.get_device_properties(dev).total_memory
    # allow the logits, the float32 copy and the sorted values, but not the int64 order
    allowed = base + elements * (2 + 4 + 4) + 64 * MIB
    torch.cuda.set_per_process_memory_fraction(allowed / total, dev)
    row = {"requests": requests, "vocab": vocab, "elements": elements}
    try:
        logits = torch.randn(requests, vocab, dtype=torch.bfloat16, device=dev)
        work = logits.to(torch.float32)
        work.div_(0.5)
        values, order = work.sort(dim=-1)
        row["outcome"] = "no OOM"
        del values, order
    except torch.OutOfMemoryError as e:
        held = torch.cuda.memory_allocated(dev) - base
        m = re.search(r"Tried to allocate ([\d.]+) (MiB|GiB)", str(e))
        asked = float(m.group(1)) * (1024 if m and m.group(2) == "GiB" else 1) if m else None
        row.update(
            outcome="OOM in sort",
            requested_mib=asked,
            order_mib=round(elements * 8 / MIB, 2),
            held_mib=round(held / MIB, 2),
            held_bytes_per_element=round(held / elements, 2),
        )
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, dev)
        torch.cuda.empty_cache()
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="also write the results as JSON to this file")
    args = ap.parse_args()
    import torch  # only here: the benchmark runs on the GPU machine

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = []
    for requests, vocab in CASES:
        row = held_at_sort_failure(torch, requests, vocab)
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    print(json.dumps(summary), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"rows": rows, "summary": summary}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
