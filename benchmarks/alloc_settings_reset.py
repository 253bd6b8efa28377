"""What the allocator keeps when a program sets one option at run time, as vLLM 0.21-0.30 do.

Why: from 0.21.0 to 0.30.0 the V1 worker wraps model loading in ``_scoped_allocator_max_split``
(``vllm/v1/worker/gpu_worker.py@0.21.0``): it calls
``torch._C._accelerator_setAllocatorSettings("max_split_size_mb:20")`` and afterwards
``…("max_split_size_mb:<original or SIZE_MAX>")``. Whether the operator's other options
(``roundup_power2_divisions``, ``garbage_collection_threshold``, ``expandable_segments``) survive
depends on how torch parses a settings string: if it resets every option the string leaves out,
the operator's allocator tuning is gone for the whole run after loading. This script starts a
fresh process per environment, replays those two calls, and observes each option by its effect:

* roundup_power2_divisions:4 rounds a 1100 MiB request up to a 1280 MiB segment (without it: 1100 MiB);
* expandable_segments:True shows as ``is_expandable`` segments in the allocator snapshot;
* the parsed values where torch exposes a getter.

Run on a CUDA machine:  python benchmarks/alloc_settings_reset.py [--out FILE]
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

MIB = 2**20
CONF = "roundup_power2_divisions:4,garbage_collection_threshold:0.6,expandable_segments:True"


def observe(label: str) -> dict:
    import torch  # only on the GPU machine

    dev = torch.device("cuda", 0)
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved(dev)
    x = torch.empty(1100 * MIB, dtype=torch.uint8, device=dev)
    grew = torch.cuda.memory_reserved(dev) - before
    segments = torch.cuda.memory._snapshot()["segments"]
    expandable = sorted({bool(s.get("is_expandable", False)) for s in segments})
    del x
    torch.cuda.empty_cache()
    getters = {}
    for name in ("_accelerator_getAllocatorSettings", "_cuda_getAllocatorSettings"):
        fn = getattr(torch._C, name, None)
        if fn is not None:
            try:
                getters[name] = str(fn())
            except Exception as e:  # noqa: BLE001 - a probe: record whatever the getter does
                getters[name] = f"{type(e).__name__}: {e}"
    return {"when": label, "reserved_growth_mib_for_1100_mib": grew / MIB, "segments_expandable": expandable,
            "getters": getters}


def child() -> dict:
    import torch

    torch.cuda.init()
    out = {"torch": torch.__version__, "env": {k: os.environ.get(k) for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")},
           "setter": hasattr(torch._C, "_accelerator_setAllocatorSettings"), "steps": [observe("at start")]}
    if out["setter"]:
        torch._C._accelerator_setAllocatorSettings("max_split_size_mb:20")
        out["steps"].append(observe("inside the load scope (max_split_size_mb:20)"))
        size_max_mb = (2**64 - 1) // (1024 * 1024)
        torch._C._accelerator_setAllocatorSettings(f"max_split_size_mb:{size_max_mb}")
        out["steps"].append(observe("after the scope (max_split_size_mb restored)"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child()))
        return 0
    runs = []
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
        env[var] = CONF
        p = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True)
        runs.append(json.loads(p.stdout) if p.returncode == 0 else {"env": {var: CONF}, "error": p.stderr[-2000:]})
    text = json.dumps({"conf": CONF, "runs": runs}, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
