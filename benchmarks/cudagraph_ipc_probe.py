"""CUDA graph pool memory, and whether its buffers can be exported with legacy CUDA IPC.

Why: the custom all-reduce leaves say that under expandable_segments:True the buffers a CUDA graph
keeps (its private memory pool) cannot be exported with cudaIpcGetMemHandle, which is what custom
all-reduce does when it registers graph buffers; and the capture leaves say that graphs captured
largest-first into one shared pool cost about the largest graph plus a little per graph. This script
checks both on real hardware, in a fresh process per allocator setting (default,
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, PYTORCH_ALLOC_CONF=expandable_segments:True):

1. cudaIpcGetMemHandle on an ordinary tensor and on a tensor allocated inside a graph capture;
2. the pool memory (torch.cuda.memory_reserved) after capturing an MLP step for the largest batch
   size, and after capturing nine smaller ones into the same pool, as vLLM does.

Run on a CUDA machine:  python benchmarks/cudagraph_ipc_probe.py [--out FILE]
It needs torch and a GPU; the product never imports it.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys

SIZES = [512, 256, 128, 64, 32, 16, 8, 4, 2, 1]
HIDDEN, FFN = 8192, 28672


def _cudart() -> ctypes.CDLL:
    import torch

    base = os.path.dirname(torch.__file__)
    cands = sorted(glob.glob(os.path.join(base, "..", "nvidia", "cu*", "lib", "libcudart.so*")))
    cands += sorted(glob.glob(os.path.join(base, "..", "nvidia", "cuda_runtime", "lib", "libcudart.so*")))
    cands += sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so*"))
    lib = ctypes.CDLL(cands[0])
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    return lib


def _ipc(lib: ctypes.CDLL, ptr: int) -> str:
    """cudaIpcGetMemHandle's answer; the error is then cleared so later CUDA calls are not blamed."""
    handle = (ctypes.c_byte * 64)()
    rc = lib.cudaIpcGetMemHandle(ctypes.byref(handle), ctypes.c_void_p(ptr))
    lib.cudaGetLastError()
    return lib.cudaGetErrorString(rc).decode()


def probe() -> dict:
    import torch  # only on the GPU machine

    lib = _cudart()
    dev = torch.device("cuda")
    out: dict = {
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
        "PYTORCH_ALLOC_CONF": os.environ.get("PYTORCH_ALLOC_CONF"),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(dev),
    }
    plain = torch.empty(64 << 20, dtype=torch.uint8, device=dev)

    w1 = torch.randn(HIDDEN, FFN, device=dev, dtype=torch.bfloat16)
    w2 = torch.randn(FFN, HIDDEN, device=dev, dtype=torch.bfloat16)
    inputs = {bs: torch.randn(bs, HIDDEN, device=dev, dtype=torch.bfloat16) for bs in SIZES}

    def step(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ w1) @ w2

    for x in inputs.values():  # warm up the kernels outside the capture
        step(x)
    torch.cuda.synchronize()
    pool = torch.cuda.graph_pool_handle()
    graphs, outputs = [], {}
    before = torch.cuda.memory_reserved(dev)
    reserved = []
    for bs in SIZES:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            outputs[bs] = step(inputs[bs])
        graphs.append(g)
        torch.cuda.synchronize()
        reserved.append(torch.cuda.memory_reserved(dev) - before)
    out["pool_bytes_after_each_capture"] = dict(zip(map(str, SIZES), reserved, strict=True))
    out["activation_bytes_largest"] = SIZES[0] * FFN * 2 + SIZES[0] * HIDDEN * 2
    # IPC last: a failed call leaves a CUDA error behind that the next torch call would report
    out["ipc_plain_tensor"] = _ipc(lib, plain.data_ptr())
    out["ipc_graph_output"] = _ipc(lib, outputs[SIZES[0]].data_ptr())
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "cudagraph_ipc_h200.json"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(probe()))
        return 0
    runs = {}
    settings = {
        "default": {},
        "PYTORCH_CUDA_ALLOC_CONF": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
        "PYTORCH_ALLOC_CONF": {"PYTORCH_ALLOC_CONF": "expandable_segments:True"},
    }
    for name, extra in settings.items():
        env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")}
        env.update(extra)
        proc = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=300)
        lines = proc.stdout.strip().splitlines()
        runs[name] = json.loads(lines[-1]) if proc.returncode == 0 and lines else {"error": proc.stderr[-2000:]}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(runs, fh, indent=1)
    print(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
