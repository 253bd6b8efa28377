"""One plan: the budget vLLM would compute for these settings, and whether it starts.

Each number is a :func:`num` record: value, basis (``exact`` = vLLM's own arithmetic on the
inputs, ``calibrated`` = measured in the given log, ``estimated``), the formula and where the
rule is in vLLM's code. Suggestions re-run the same plan with one setting changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..i18n import Text, both, msg
from ..text.units import GIB, gib
from ..versions import Version
from . import budget, hybrid, kv
from .arch import DTYPE_BYTES, ModelDesc
from .errors import PlanError
from .inputs import KV_DTYPE_BYTES, LATEST, Inputs
from .sources import detect_gpu, gpu_from_table, load_model
from .state import state_pages
from .weights import estimated_bytes, mxfp4_marlin_expert_bytes


def num(value: Any, basis: str, formula: str, source: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"value": value, "basis": basis, "formula": formula}
    if source:
        out["source"] = source
    return out


@dataclass
class Plan:
    inputs: Inputs
    model: ModelDesc
    release: Version
    engine: str
    gpu: dict[str, Any]
    settings: dict[str, Any]
    numbers: dict[str, dict[str, Any]]
    groups: list[dict[str, Any]]
    fits: bool
    error: str | None
    notes: list[Text] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    specs: list[kv.Spec] = field(default_factory=list, repr=False)
    kv_groups: kv.Groups | None = field(default=None, repr=False)
    check_specs: list[kv.Spec] = field(default_factory=list, repr=False)
    check_groups: kv.Groups | None = field(default=None, repr=False)

    def value(self, key: str) -> Any:
        return self.numbers[key]["value"]


def _gpu(inp: Inputs) -> dict[str, Any]:
    if inp.gpu_memory_gib:
        return {"name": inp.gpu or "given", "total_bytes": int(inp.gpu_memory_gib * GIB), "basis": "exact",
                "source": "--gpu-memory (GiB as vLLM prints it)", "free_bytes": None}
    lf = inp.log_facts
    if lf.get("gpu_mem_total_bytes") and not inp.gpu:
        return {"name": lf.get("gpu_name") or "from the log", "total_bytes": int(lf["gpu_mem_total_bytes"]),
                "basis": "calibrated", "source": f"total printed in {inp.log_name}", "free_bytes": None}
    if inp.gpu in (None, "detect"):
        found = detect_gpu()
        if found:
            name, total, count, free = found
            return {"name": name, "total_bytes": total, "basis": "exact", "source": "NVML", "count": count,
                    "free_bytes": free}
        if inp.gpu == "detect" or not lf.get("gpu_name"):
            raise PlanError(*both("plan.planner.no_gpu_detected_through"))
        g = gpu_from_table(str(lf["gpu_name"]))
    else:
        g = gpu_from_table(inp.gpu)
    if g.get("total_gib_seen"):
        return {"name": g["name"], "total_bytes": int(g["total_gib_seen"] * GIB), "basis": "estimated",
                "source": f"bundled table: {g['total_source']} (drivers differ a little; --gpu-memory makes it exact)",
                "free_bytes": None}
    return {"name": g["name"], "total_bytes": int(g["memory_gb"] * GIB), "basis": "estimated",
            "source": f"bundled table: {g['source']}; the total CUDA reports is a little lower, so pass --gpu-memory "
                      "with the total vLLM prints for an exact plan", "free_bytes": None}


def _release(inp: Inputs) -> Version:
    text = inp.vllm_version or inp.log_facts.get("vllm_version") or LATEST
    r = Version.try_parse(text)
    if r is None:
        raise PlanError(*both("plan.planner.bad_version", text=text))
    if r < Version.parse("0.6.6") or r.release[:2] > Version.parse(LATEST).release[:2]:
        raise PlanError(*both("plan.planner.unknown_release", text=text, LATEST=LATEST))
    return r


def _block_size(inp: Inputs, m: ModelDesc, gpu_name: str, release: Version, notes: list[Text]) -> int:
    if inp.block_size:
        return inp.block_size
    if m.use_mla and kv.v("0.8.0") <= release:
        # platforms/cuda.py forces 64 for FlashMLA (Hopper) and 128 for CUTLASS MLA (Blackwell, 0.10+).
        name = gpu_name.upper()
        if any(x in name for x in ("B200", "B100", "GB200", "B300")) and release >= kv.v("0.10.0"):
            size = 128
        elif any(x in name for x in ("H100", "H200", "H800", "H20", "GH200")):
            size = 64
        else:
            size = 16
        notes.append(msg("plan.planner.mla_block_size_size").format(size=size, gpu_name=gpu_name))
        return size
    return 16


def plan(inp: Inputs, model: ModelDesc | None = None, gpu: dict[str, Any] | None = None) -> Plan:
    """Plan ``inp``; ``model``/``gpu`` reuse what an earlier plan already loaded or detected."""
    m = model or load_model(inp.model)
    release = _release(inp)
    engine = budget.engine_of(release)
    notes: list[Text] = []
    if engine == "v0" and (m.use_mla or any(layer.kind == "sliding" for layer in m.layers)):
        raise PlanError(*both("plan.planner.v0_engine", text=release.text))
    gpu = gpu or _gpu(inp)
    total = gpu["total_bytes"]
    tp, pp = max(1, inp.tp), max(1, inp.pp)
    if inp.gpus and inp.gpus < tp * pp * max(1, inp.dp):
        raise PlanError(*both("plan.planner.too_few_gpus", tp=tp, pp=pp, dp=inp.dp, value=tp * pp * inp.dp, gpus=inp.gpus))
    if m.num_attention_heads % tp:
        raise PlanError(*both("plan.planner.heads_not_divisible", num_attention_heads=m.num_attention_heads, tp=tp))
    dtype = (inp.dtype if inp.dtype and inp.dtype != "auto" else m.dtype).replace("torch.", "")
    dtype_bytes = DTYPE_BYTES.get(dtype)
    if dtype_bytes is None:
        raise PlanError(*both("plan.planner.bad_dtype", dtype=dtype, known=", ".join(sorted(DTYPE_BYTES))))
    kvd = inp.kv_cache_dtype or "auto"
    if kvd != "auto" and kvd not in KV_DTYPE_BYTES:
        raise PlanError(*both("plan.planner.bad_kv_dtype", kvd=kvd, known=", ".join(KV_DTYPE_BYTES)))
    kv_bytes = dtype_bytes if kvd == "auto" else KV_DTYPE_BYTES[kvd]
    util = inp.gpu_memory_utilization or budget.default_util(release)
    total_gib = total / GIB
    max_len = inp.max_model_len or m.max_position
    batched = inp.max_num_batched_tokens or budget.default_batched_tokens(release, total_gib) or max(max_len, 2048)
    if engine == "v0" and not inp.max_num_batched_tokens and max_len > 32768:
        notes.append(msg("plan.planner.v0_turns_chunked_prefill"))
    seqs = inp.max_num_seqs or budget.default_max_num_seqs(release, total_gib, gpu["name"])
    block = _block_size(inp, m, gpu["name"], release, notes)
    state: dict[str, Any] = {}
    if m.is_hybrid:
        state = state_pages(inp, m, tp, pp, kv_bytes, dtype, release, gpu["name"], notes)
        block = state["block_size"]
    mode = hybrid.cache_mode(release, m.model_type, inp.enable_prefix_caching) if m.is_hybrid else "none"
    state_kw = {"state_page": state.get("padded_page", 0), "state_block": max_len if mode == "none" else block,
                "state_pages": 2 if mode == "align" else 1}
    specs = kv.layer_specs(m.layers, tp=tp, pp=pp, dtype_bytes=kv_bytes, block_size=block, kv_cache_dtype=kvd, **state_kw)
    groups = kv.group(specs, release)
    mixed = len(groups.specs) > 1 and not m.is_hybrid
    kv_basis = "exact"
    if mixed and release < kv.v("0.11.0"):
        kv_basis = "estimated"
        notes.append(msg("plan.planner.sliding_window_grouping_before"))
    elif mixed and release >= kv.v("0.20.0"):
        kv_basis = "estimated"
        notes.append(msg("plan.planner.from_0_20_0"))
    in_flight = batched
    if any(s.kind == "sliding" for s in specs) and release >= kv.v("0.26.0"):
        in_flight = 2 * batched * (1 if pp == 1 else pp)
        notes.append(msg("plan.planner.sliding_window_reservation_from"))
    rel_src = f"@{release.text}"
    numbers: dict[str, dict[str, Any]] = {}
    per_tok = sum(s.bytes_per_token for s in specs)
    numbers["kv_bytes_per_token"] = num(
        per_tok, "exact",
        " + ".join(sorted({f"{sum(1 for x in specs if x == s)} x {s.kind} "
                           f"({'1 x ' + str(s.head_size) if s.kind == 'mla' else '2 x ' + str(s.heads) + ' x ' + str(s.head_size)}"
                           f" x {s.dtype_bytes} B)" for s in specs if s.kind != "state"})),
        f"vllm/v1/kv_cache_interface.py page_size_bytes {rel_src}" if engine == "v1"
        else f"vllm/worker/cache_engine.py get_cache_block_size {rel_src}")
    quant = inp.quantization or m.quantization
    weights, wnum = _weights(inp, m, dtype_bytes, quant, tp, pp, gpu["name"], release)
    numbers["weights_bytes_per_gpu"] = wnum
    attn0 = next(s for s in specs if s.kind != "state")
    shape: dict[str, Any] = dict(hidden=m.hidden_size, inter_gpu=_inter(m) // tp, heads_gpu=m.num_attention_heads // tp,
                 kv_heads_gpu=attn0.heads, head_dim=attn0.head_size, vocab=m.vocab_size, max_num_seqs=seqs,
                 dtype_bytes=dtype_bytes, tp=tp, layers_gpu=len(specs), counted_graphs=True, release=release,
                 model_type=m.model_type, is_moe=m.is_moe, link=budget.link_of(gpu["name"]))
    est = budget.estimate(batched_tokens=batched, **shape)
    mrv2 = budget.mrv2_default(release, m.architecture, m.is_moe, bool(quant))
    counted, why = budget.cudagraph_counted(release, inp.enforce_eager, mrv2)
    lf = inp.log_facts
    log_batched = lf.get("max_num_batched_tokens") or (
        max(int(lf["max_model_len"]), 2048) if engine == "v0" and lf.get("max_model_len") else None)
    same_shape = (log_batched in (None, batched)) and int(lf.get("tp") or tp) == tp
    if lf.get("activation_peak_gib") is not None and not same_shape and log_batched:
        numbers["activation_peak_bytes"] = _rescaled_activation(inp, est, budget.estimate(
            batched_tokens=int(log_batched), **shape), int(log_batched), batched, int(lf.get("tp") or tp) == tp)
    else:
        numbers["activation_peak_bytes"] = _measured(inp, "activation_peak_gib", est.activation, est.activation_formula,
                                                     same_shape)
    numbers["non_torch_bytes"] = _measured(inp, "non_torch_gib", est.non_torch, est.non_torch_formula,
                                           int(lf.get("tp") or tp) == tp)
    numbers["cudagraph_bytes"], graphs_estimate = _graphs(inp, est, same_shape, counted, why)
    requested, req_f = budget.requested_bytes(total, util, release)
    numbers["requested_bytes"] = num(requested, gpu["basis"], f"{req_f} = {total_gib:.2f} GiB x {util}",
                                     f"vllm/v1/worker/utils.py request_memory {rel_src}" if release >= kv.v("0.14.0")
                                     else f"vllm/v1/worker/gpu_worker.py {rel_src}")
    log_release = Version.try_parse(lf.get("vllm_version")) or release
    counted_then = budget.cudagraph_counted(
        log_release, bool(lf.get("enforce_eager", inp.enforce_eager)),
        budget.mrv2_default(log_release, m.architecture, m.is_moe, bool(quant)))[0]
    numbers["available_kv_bytes"] = _available(inp, numbers, requested, weights, counted, release, total, same_shape,
                                               counted_then, graphs_estimate)
    available = numbers["available_kv_bytes"]["value"]
    cap = kv.capacity(groups, max(0, available), max_len, in_flight, release, engine)
    cap_basis = "exact" if numbers["available_kv_bytes"]["basis"] == "exact" and kv_basis == "exact" else (
        "calibrated" if numbers["available_kv_bytes"]["basis"] == "calibrated" and kv_basis == "exact" else "estimated")
    numbers["num_blocks"] = num(cap.num_blocks, cap_basis,
                                f"available_kv_bytes // (page_size_bytes {groups.specs[0].page_size_bytes} x "
                                f"{groups.group_size} layers per group)", cap.source)
    numbers["kv_tokens"] = num(cap.kv_tokens, cap_basis, cap.tokens_formula, cap.source)
    numbers["max_concurrency"] = num(round(cap.max_concurrency, 4), cap_basis, cap.concurrency_formula, cap.source)
    check_specs, check_groups = specs, groups
    if pp > 1 and kv.v("0.14.0") <= release < kv.v("0.17.0"):
        # get_kv_cache_configs @0.14-0.16 checks the groups of the whole model against the smallest worker
        check_specs = kv.layer_specs(m.layers, tp=tp, pp=1, dtype_bytes=kv_bytes, block_size=block, kv_cache_dtype=kvd)
        check_groups = kv.group(check_specs, release)
        notes.append(msg("plan.planner.this_release_checks_one"))
    need = kv.needed_for_check(check_specs, check_groups, max_len, in_flight, release)
    numbers["kv_bytes_needed_one_request"] = num(
        need, kv_basis, "sum over layers of max_memory_usage_bytes at max_model_len" if release < kv.v("0.14.0")
        else "group_size x page_size_bytes x blocks per request (_max_memory_usage_bytes_from_groups)",
        f"vllm/v1/core/kv_cache_utils.py {rel_src}")
    free = gpu.get("free_bytes")
    error = (_load_error(weights, total)
             or (budget.free_memory_error(free, total, util, requested, release) if free is not None else None)
             or kv.startup_error(check_specs, check_groups, available, max_len, in_flight,
                                                            release, engine)
             or (hybrid.mamba_blocks_error(seqs, cap.num_blocks, release, inp.enforce_eager) if m.is_hybrid else None))
    if state:
        numbers["state_page_bytes"] = num(state["padded_page"], kv_basis, state["formula"], state["source"])
    settings = {"tp": tp, "pp": pp, "dp": inp.dp, "dtype": dtype, "quantization": quant, "kv_cache_dtype": kvd,
                "max_model_len": max_len, "max_num_seqs": seqs, "max_num_batched_tokens": batched,
                "gpu_memory_utilization": util, "block_size": block, "enforce_eager": inp.enforce_eager,
                "model_runner": "v2" if mrv2 else "v1", "engine": engine,
                **({"mamba_cache_mode": mode} if m.is_hybrid else {})}
    group_list = [{"kind": s.kind, "layers": n, "bytes_per_token": s.bytes_per_token * n,
                   "page_size_bytes": s.page_size_bytes, **({"window": s.window} if s.window else {}),
                   **({"state_bytes": state["state_page"]} if s.kind == "state" else {})}
                  for s, n in zip(groups.specs, groups.sizes, strict=True)]
    if inp.log_facts:
        notes.extend(_check_log(inp, groups, max_len))
    return Plan(inp, m, release, engine, gpu, settings, numbers, group_list, error is None, error, notes,
                specs=specs, kv_groups=groups, check_specs=check_specs, check_groups=check_groups)


def _rescaled_activation(inp: Inputs, est: budget.Estimates, old: budget.Estimates, log_batched: int, batched: int,
                         same_tp: bool) -> dict[str, Any]:
    """The log's activation peak moved to another profiling batch.

    When the peak is in the layer stack at both sizes (every live tensor there is one row per
    token, so it is proportional to the tokens), the measured peak is scaled by the token ratio;
    otherwise (the sampler's logits dominate, or another TP) the estimate's change is added.
    """
    gib = inp.log_facts["activation_peak_gib"]
    measured = int(float(gib) * GIB)
    if same_tp and old.layer >= old.sampler and est.layer >= est.sampler:
        act = measured * batched // log_batched
        return num(act, "estimated", f"{gib} GiB measured in {inp.log_name} at {log_batched} tokens x {batched} / "
                                     f"{log_batched}: the peak is one layer's tensors, one row per token")
    act = measured + est.activation - old.activation
    return num(act, "estimated", f"{gib} GiB measured in {inp.log_name} at {log_batched} tokens + "
                                 f"({est.activation:,} - {old.activation:,}) B, the estimate's change for {batched} tokens")


def _inter(m: ModelDesc) -> int:
    return m.intermediate_size or 4 * m.hidden_size


def _weights(inp: Inputs, m: ModelDesc, dtype_bytes: int, quant: str | None, tp: int, pp: int,
             gpu_name: str = "", release: Version | None = None) -> tuple[int, dict]:
    lf = inp.log_facts
    if lf.get("weights_gib") is not None:
        log_tp = int(lf.get("tp") or 1)
        w = int(float(lf["weights_gib"]) * GIB * log_tp / tp)
        f = f"'Model loading took {lf['weights_gib']} GiB' in the log" + (f" x TP {log_tp} / {tp}" if log_tp != tp else "")
        return w, num(w, "calibrated" if log_tp == tp else "estimated", f)
    rope = m.params.get("rope_cache", 0) * dtype_bytes  # one buffer per GPU, not split (weights.rope_cache_elements)
    rope_f = f" + rotary cos/sin cache {m.params.get('rope_cache', 0):,} x {dtype_bytes} B" if rope else ""
    if m.weight_file_bytes and not (inp.quantization and inp.quantization != m.quantization):
        w = m.weight_file_bytes // (tp * pp) + rope
        return w, num(w, "estimated", f"{m.weight_file_bytes:,} B ({m.weight_file_source}) / (TP {tp} x PP {pp})"
                                      f"{rope_f}; vLLM's load adds small buffers and pads the vocabulary")
    experts = mxfp4_marlin_expert_bytes(m.params, gpu_name, release) if quant == "mxfp4" else None
    total, how = estimated_bytes(m.params, dtype_bytes, quant, experts)
    w = int(total / (tp * pp)) + rope
    return w, num(w, "estimated", f"({how}) / (TP {tp} x PP {pp}){rope_f}")


def _graphs(inp: Inputs, est: budget.Estimates, same_shape: bool, counted: bool, why: str) -> tuple[dict[str, Any], int]:
    """The CUDA graph figure shown (0 with --enforce-eager: none is captured), and what a start that
    captures graphs holds (a log's start may have, which a calibration from it gives back)."""
    cg = _measured(inp, "cudagraph_estimate_gib", est.cudagraph, est.cudagraph_formula, same_shape)
    estimate = int(cg["value"])
    if inp.enforce_eager:
        cg = num(0, "exact", "--enforce-eager: no CUDA graph is captured")
    cg["counted"] = counted
    cg["counted_why"] = why
    return cg, estimate


def _measured(inp: Inputs, key: str, estimate: int, formula: str, same: bool) -> dict[str, Any]:
    """A start-up measurement from the log when it was made with the same shape, else the estimate."""
    lf = inp.log_facts
    if lf.get(key) is not None:
        return num(int(float(lf[key]) * GIB), "calibrated" if same else "estimated",
                   f"{lf[key]} GiB measured in {inp.log_name}" + ("" if same else " (other TP or batch there)"))
    return num(estimate, "estimated", formula)


def _available(inp: Inputs, numbers: dict, requested: int, weights: int, counted: bool, release: Version,
               total: int, same_shape: bool, counted_then: bool, graphs_estimate: int) -> dict[str, Any]:
    lf = inp.log_facts
    if inp.kv_cache_memory_bytes and release >= kv.v("0.10.2"):
        return num(inp.kv_cache_memory_bytes, "exact",
                   "--kv-cache-memory-bytes: vLLM skips the profile's budget and uses this many bytes",
                   f"vllm/v1/worker/gpu_worker.py determine_available_memory @{release.text}")
    if inp.logged_kv_bytes is not None:
        return num(inp.logged_kv_bytes, "calibrated", "'Available KV cache memory' as the log printed it")
    parts = weights + numbers["activation_peak_bytes"]["value"] + numbers["non_torch_bytes"]["value"]
    cg = numbers["cudagraph_bytes"]["value"] if counted else 0
    if lf.get("kv_cache_gib") is not None and same_shape and not lf.get("kv_cache_memory_bytes") \
            and (inp.quantization in (None, lf.get("quantization"))) \
            and (inp.kv_cache_dtype == "auto" or lf.get("kv_cache_dtype") == inp.kv_cache_dtype):
        log_release = Version.try_parse(lf.get("vllm_version")) or release
        log_util = float(lf.get("gpu_memory_utilization") or budget.default_util(log_release))
        old_req, _ = budget.requested_bytes(total, log_util, log_release)
        non_kv = old_req - int(float(lf["kv_cache_gib"]) * GIB)
        f = (f"requested {gib(requested)} - non-KV {gib(non_kv)} measured in {inp.log_name} "
             f"(its requested at util {log_util} minus its 'Available KV cache memory' {lf['kv_cache_gib']} GiB)")
        graphs = graphs_estimate
        if counted and not counted_then:
            f += " - the CUDA graph estimate this release reserves and the log's did not"
            return num(requested - non_kv - graphs, "estimated", f)
        if counted_then and not counted:
            f += " + the CUDA graph estimate the log's release reserved and this one does not"
            return num(requested - non_kv + graphs, "estimated", f)
        return num(requested - non_kv, "calibrated", f)
    basis = "estimated" if any(numbers[k]["basis"] == "estimated" for k in
                               ("weights_bytes_per_gpu", "activation_peak_bytes", "non_torch_bytes")) else "calibrated"
    if counted and numbers["cudagraph_bytes"]["basis"] == "estimated":
        basis = "estimated"
    if numbers["requested_bytes"]["basis"] == "estimated":
        basis = "estimated"
    value = requested - parts - cg
    f = "requested - (weights + activation peak + non-torch)" + (" - CUDA graph estimate" if counted else "")
    src = f"vllm/v1/worker/gpu_worker.py determine_available_memory @{release.text}" if budget.engine_of(release) == "v1" \
        else f"vllm/worker/worker.py determine_num_available_blocks @{release.text}"
    return num(value, basis, f, src)


def _load_error(weights: int, total: int) -> str | None:
    if weights >= total:
        return (f"The weights ({gib(weights)} per GPU) do not fit in the GPU ({gib(total)}): loading "
                "fails with torch.OutOfMemoryError (CUDA out of memory).")
    return None


def _check_log(inp: Inputs, groups: kv.Groups, max_len: int) -> list[Text]:
    """The log's own KV line against our per-token bytes: a mismatch means the model or settings differ."""
    lf = inp.log_facts
    gib, tokens = lf.get("kv_cache_gib"), lf.get("kv_cache_tokens")
    if gib is None or not tokens or len(groups.specs) > 1:
        return []
    bpb = groups.bytes_per_block
    lo = int((float(gib) - 0.005) * GIB) // bpb * groups.specs[0].block_size
    hi = int((float(gib) + 0.005) * GIB) // bpb * groups.specs[0].block_size
    if lo - groups.specs[0].block_size <= int(tokens) <= hi + groups.specs[0].block_size:
        return [msg("plan.planner.log_kv_match").format(gib=gib, int=int(tokens))]
    return [msg("plan.planner.log_kv_mismatch").format(gib=gib, int=int(tokens), lo=lo, hi=hi)]
