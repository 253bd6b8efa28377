"""Reproduce a fragmentation OOM and check that expandable segments serve the same request.

Why: the fragmentation leaf and the serving question call an OOM "fragmentation" when the memory
"reserved by PyTorch but unallocated" is larger than the request, and recommend
expandable_segments:True. This script builds that state on purpose, under a per-process memory cap
so it runs in seconds: fill the cap with 100 MiB tensors, free every other one, put a 60 MiB tensor
into each hole (each hole keeps 40 MiB that no large request can use), then ask for 1 GiB. It runs
the pattern once with the default allocator and once with PYTORCH_CUDA_ALLOC_CONF set, each in a
fresh process, and records the outcome and PyTorch's own message.

Run on a CUDA machine:  python benchmarks/fragmentation_expandable.py [--out FILE]
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

MIB = 2**20
CAP_FRACTION = 0.08
REQUEST = 1024 * MIB


def pattern() -> dict:
    import torch  # only on the GPU machine

    dev = torch.device("cuda", 0)
    torch.cuda.set_per_process_memory_fraction(CAP_FRACTION, dev)
    blocks = []
    try:
        while True:
            blocks.append(torch.empty(100 * MIB, dtype=torch.uint8, device=dev))
    except torch.OutOfMemoryError:
        pass
    holes = list(range(0, len(blocks), 2))
    for i in holes:
        blocks[i] = None
    small = []
    for _ in holes:
        small.append(torch.empty(60 * MIB, dtype=torch.uint8, device=dev))
    before = {
        "allocated_mib": torch.cuda.memory_allocated(dev) // MIB,
        "reserved_mib": torch.cuda.memory_reserved(dev) // MIB,
    }
    before["reserved_unallocated_mib"] = before["reserved_mib"] - before["allocated_mib"]
    out = {"blocks": len(blocks), "holes": len(holes), "before_request": before, "request_mib": REQUEST // MIB}
    try:
        big = torch.empty(REQUEST, dtype=torch.uint8, device=dev)
        out["outcome"] = "allocated"
        del big
    except torch.OutOfMemoryError as e:
        out["outcome"] = "oom"
        out["message"] = str(e)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(pattern()))
        return 0
    runs = {}
    for name, conf in (("default", None), ("expandable_segments", "expandable_segments:True")):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        proc = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=False)
        runs[name] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.stderr[-2000:]}
    import torch

    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cap_fraction": CAP_FRACTION, "runs": runs}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
