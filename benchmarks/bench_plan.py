"""How close `oomwizard plan` comes to what vLLM printed, on real start-ups (benchmarks/plan_cases.json).

    python benchmarks/bench_plan.py            # table per case, then error per split, release and family
    python benchmarks/bench_plan.py --json out.json
    python benchmarks/bench_plan.py --cases fresh.json   # a set kept outside, scored once

Two checks per case, where the log printed what they need:

* KV arithmetic: from the printed "Available KV cache memory" (rounded to 0.01 GiB, so every byte
  count in that interval is tried) the planner's blocks, "GPU KV cache size" tokens, concurrency,
  the start-up error's needed GiB and estimated length must include what vLLM printed. Pass/fail.
* Hybrid models: the attention block size vLLM chose to hold a state page, where it was printed.
* Budget: the available KV memory predicted without the log (weights, activation peak, non-torch
  estimated), and with the log of an earlier start of the same model (``calibrate_from``), as a
  percentage error against the printed figure.

Peers, side by side where they run offline on a local config.json: ``vramscout`` (its ``--engine vllm``
budget: available KV = memory budget - weights - runtime - prefill scratch) when the command is on
PATH or in $VRAMSCOUT (``pip install '.[bench-peers]'``). ``modelinfo-cli`` needs a checkpoint file or
the Hugging Face Hub, so it cannot run on a bare config and is not compared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from oomwizard.plan import kv  # noqa: E402
from oomwizard.plan.inputs import Inputs  # noqa: E402
from oomwizard.plan.planner import plan  # noqa: E402

GIB = 1 << 30
CASES = Path(__file__).resolve().parent / "plan_cases.json"


def _inputs(case: dict, log_facts: dict | None = None) -> Inputs:
    return Inputs(model=case["model"], gpu=case.get("gpu"),
                  gpu_memory_gib=case.get("gpu_total_gib") or case.get("assumed_total_gib") or 80.0,
                  tp=case.get("tp", 1),
                  pp=case.get("pp", 1),
                  max_model_len=case.get("max_model_len"), gpu_memory_utilization=case.get("util"),
                  vllm_version=case["release"], kv_cache_dtype=case.get("kv_cache_dtype", "auto"),
                  quantization=case.get("quantization"), enable_prefix_caching=case.get("enable_prefix_caching"),
                  max_num_seqs=case.get("max_num_seqs"), max_num_batched_tokens=case.get("max_num_batched_tokens"),
                  log_facts=log_facts or {}, log_name=case.get("calibrate_from"))


def kv_check(case: dict) -> dict:
    """Does some byte count that prints as the logged GiB give exactly the logged KV numbers?"""
    pr = case["printed"]
    p = plan(_inputs(case))
    groups = p.kv_groups
    cspecs, cgroups = p.check_specs, p.check_groups
    kv_gib = pr.get("kv_gib", 0.0)
    lo, hi = int((kv_gib - 0.005) * GIB), int((kv_gib + 0.005) * GIB)  # what prints as kv_gib
    want = {k: pr[k] for k in ("blocks", "kv_tokens", "concurrency", "error_tokens", "needed_gib", "estimated_max_len")
            if k in pr and "kv_gib" in pr}
    mml = case.get("max_model_len") or p.settings["max_model_len"]  # not stated: the model's own, as vLLM takes it
    step = max(1, groups.bytes_per_block // 4)
    seen: dict[str, set] = {k: set() for k in want}
    for avail in range(lo, hi + 1, step):
        cap = kv.capacity(groups, avail, mml, p.settings["max_num_batched_tokens"], p.release, p.engine)
        got = {"blocks": cap.num_blocks, "kv_tokens": cap.kv_tokens, "concurrency": round(cap.max_concurrency, 2)}
        if p.engine == "v0":
            got["error_tokens"] = cap.kv_tokens
        if "needed_gib" in want:
            flight = p.settings["max_num_batched_tokens"]
            got["needed_gib"] = round(kv.needed_for_check(cspecs, cgroups, mml, flight, p.release) / GIB, 2)
            room = avail - (cgroups.bytes_per_block if p.release >= kv.v("0.29.0") else 0)  # the null block, 0.29+
            got["estimated_max_len"] = kv.estimate_max_len(cspecs, room, mml, flight, cgroups, p.release)
        for k in want:
            seen[k].add(got[k])
    if "attention_block_size" in pr:  # hybrid models: the block size vLLM chose to fit a state page
        want["attention_block_size"] = pr["attention_block_size"]
        seen["attention_block_size"] = {p.settings["block_size"]}
    ok = all(want[k] in seen[k] for k in want) if want else None  # nothing printed to check
    return {"kv_ok": ok, "checked": sorted(want), "kv_bytes_per_token": p.value("kv_bytes_per_token"),
            "found": {k: sorted(v)[:3] for k, v in seen.items() if want[k] not in v}}


def vramscout_available(case: dict, exe: str) -> float | None:
    """vramscout's available KV GiB for the case, run on the bundled config.json, or None."""
    from oomwizard.plan.sources import bundled_models, find_bundled

    key = find_bundled(case["model"])
    if key is None or "gpu_total_gib" not in case:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "config.json"
        cfg.write_text(json.dumps(bundled_models()[key]), "utf-8")
        cmd = [exe, str(cfg), "--engine", "vllm", "--vram-gib", str(case["gpu_total_gib"]), "--context",
               str(case["max_model_len"]), "--tp", str(case.get("tp", 1)), "--json",
               "--gpu-memory-utilization", str(case.get("util") or 0.9)]
        if case.get("kv_cache_dtype") == "fp8":
            cmd += ["--kv-dtype", "fp8"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
            doc = json.loads(out)
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
    parts = doc.get("parts_gib", {})
    non_kv = sum(v for k, v in parts.items() if k != "KV cache")
    return float(doc["memory_budget_gib"]) - non_kv


def log_facts(src: dict) -> dict:
    """What ``--log`` of the earlier start gives the planner: what that log printed and its settings.

    V0 logs print the whole breakdown; V1 logs at INFO often only the load size and the KV line."""
    s = src["printed"]
    facts = {"kv_cache_gib": s["kv_gib"], "gpu_memory_utilization": src.get("util"),
             "max_model_len": src["max_model_len"], "vllm_version": src["release"], "tp": src.get("tp", 1),
             "kv_cache_dtype": src.get("kv_cache_dtype", "auto"), "quantization": src.get("quantization"),
             "max_num_batched_tokens": src.get("max_num_batched_tokens")}
    for key, name in (("weights_gib", "weights_gib"), ("activation_gib", "activation_peak_gib"),
                      ("non_torch_gib", "non_torch_gib")):
        if key in s:
            facts[name] = s[key]
    return {k: v for k, v in facts.items() if v is not None}


def budget_check(case: dict, by_id: dict) -> dict | None:
    pr = case["printed"]
    src = by_id.get(case.get("calibrate_from", ""))
    if "kv_gib" not in pr or ("gpu_total_gib" not in case and not src):
        return None
    out: dict = {"printed_gib": pr["kv_gib"]}
    if "gpu_total_gib" in case:  # without the total only the with-log prediction is made (the total cancels there)
        p = plan(_inputs(case))
        pred = p.value("available_kv_bytes") / GIB
        out.update({"predicted_gib": round(pred, 3), "error_pct": round(100 * (pred - pr["kv_gib"]) / pr["kv_gib"], 2)})
        if "weights_gib" in pr:
            w = p.value("weights_bytes_per_gpu") / GIB
            out["weights_error_pct"] = round(100 * (w - pr["weights_gib"]) / pr["weights_gib"], 2)
    if src:
        q = plan(_inputs(case, log_facts(src)))
        cal = q.value("available_kv_bytes") / GIB
        out.update({"calibrated_gib": round(cal, 3),
                    "calibrated_error_pct": round(100 * (cal - pr["kv_gib"]) / pr["kv_gib"], 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--cases", metavar="FILE", type=Path, default=CASES,
                    help="another set in the same form (a list, or {'cases': [...]}): a fresh one, scored once")
    args = ap.parse_args()
    peer = os.environ.get("VRAMSCOUT") or shutil.which("vramscout")
    loaded = json.loads(args.cases.read_text("utf-8"))
    cases = loaded["cases"] if isinstance(loaded, dict) else loaded
    by_id = {c["id"]: c for c in cases}
    rows = []
    for c in cases:
        row = {"id": c["id"], "split": c["split"], "release": c["release"], "family": c["family"], "url": c["url"],
               **kv_check(c)}
        b = budget_check(c, by_id)
        if b:
            row.update(b)
            vs = vramscout_available(c, peer) if peer and "predicted_gib" in b else None
            if vs is not None:
                row["vramscout_gib"] = round(vs, 3)
                row["vramscout_error_pct"] = round(100 * (vs - b["printed_gib"]) / b["printed_gib"], 2)
        rows.append(row)
    print(f"{'case':<28} {'split':<7} {'rel':<7} {'KV exact':<9} {'pred GiB':>9} {'printed':>8} {'err %':>7} "
          f"{'calib %':>8} {'weights %':>10} {'vramscout %':>12}")
    for r in rows:
        mark = "-" if r["kv_ok"] is None else "yes" if r["kv_ok"] else "NO"
        print(f"{r['id']:<28} {r['split']:<7} {r['release']:<7} {mark:<9} "
              f"{r.get('predicted_gib', ''):>9} {r.get('printed_gib', ''):>8} {r.get('error_pct', ''):>7} "
              f"{r.get('calibrated_error_pct', ''):>8} {r.get('weights_error_pct', ''):>10} "
              f"{r.get('vramscout_error_pct', ''):>12}")
    print()
    for key in ("split", "release", "family"):
        for value in sorted({r[key] for r in rows}):
            sel = [r for r in rows if r[key] == value]
            errs = [abs(r["error_pct"]) for r in sel if "error_pct" in r]
            checked = [r for r in sel if r["kv_ok"] is not None]
            kv_ok = sum(bool(r["kv_ok"]) for r in checked)
            mean = f"{statistics.mean(errs):.2f} %" if errs else "-"
            peers = [abs(r["vramscout_error_pct"]) for r in sel if "vramscout_error_pct" in r]
            peer_mean = f", vramscout {statistics.mean(peers):.2f} %" if peers else ""
            cal = [abs(r["calibrated_error_pct"]) for r in sel if "calibrated_error_pct" in r]
            cal_s = (f"; with the earlier log mean |error| {statistics.mean(cal):.2f} %, max {max(cal):.2f} % over "
                     f"{len(cal)}") if cal else ""
            print(f"{key}={value:<10} KV exact {kv_ok}/{len(checked)}   budget mean |error| {mean} over {len(errs)} "
                  f"case(s){peer_mean}{cal_s}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", "utf-8")
    return 0 if all(r["kv_ok"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
