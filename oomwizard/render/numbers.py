"""Values computed for *this* machine and *this* log, used in command templates as ``{name}``.

A template names either a calculation defined here or a fact from the catalog. Each calculation
returns the value to paste plus a sentence showing the arithmetic, so the operator can see why we
say ``--max-model-len 40960`` rather than just "lower it". When the inputs are unknown the
command keeps a visible placeholder such as ``<MAX_MODEL_LEN>`` and the reason is shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..facts.catalog import CATALOG
from ..facts.model import FactSet
from ..i18n import Text
from ..versions import Version

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class Computed:
    value: str
    why: Text
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Calc:
    name: str
    title: Text
    placeholder: str
    func: Callable[[FactSet], Computed | None]


CALCS: dict[str, Calc] = {}


def calc(name: str, title: Text, placeholder: str) -> Callable[[Callable[[FactSet], Computed | None]], Callable[[FactSet], Computed | None]]:
    def register(func: Callable[[FactSet], Computed | None]) -> Callable[[FactSet], Computed | None]:
        if name in CALCS:
            raise ValueError(f"calculation {name!r} defined twice")
        CALCS[name] = Calc(name, title, placeholder, func)
        return func

    return register


def _src(facts: FactSet, *names: str) -> str:
    parts = []
    for n in names:
        f = facts.get(n)
        if f is not None:
            parts.append(f"{n} = {f.value} ({f.source})")
    return "; ".join(parts)


def _gib(n: float) -> str:
    return f"{n:.2f} GiB"


def floor_to(value: float, step: int) -> int:
    return int(value // step * step)


def pow2_floor(n: float) -> int:
    return 1 if n < 2 else 2 ** int(math.log2(n))


def default_gpu_memory_utilization(facts: FactSet) -> tuple[float, str]:
    """vLLM's default when the flag was not given: 0.9 before 0.20.0, 0.92 from 0.20.0."""
    v = Version.try_parse(facts.value("vllm_version"))
    if v is None:
        return 0.9, "vLLM default 0.9 (0.92 from 0.20.0)"
    if v >= Version.parse("0.20.0"):
        return 0.92, f"vLLM {v} default"
    return 0.9, f"vLLM {v} default"


def default_max_num_seqs(facts: FactSet) -> tuple[int, str]:
    """V1 default when the flag was not given (depends on GPU memory and version)."""
    v = Version.try_parse(facts.value("vllm_version"))
    engine = facts.value("engine")
    if engine == "v0":
        return 256, "V0 default"
    total = facts.value("gpu_mem_total_bytes") or (
        int(facts.value("startup_total_gib") * GIB) if facts.value("startup_total_gib") else None
    )
    name = str(facts.value("gpu_name") or "")
    if v is not None and v < Version.parse("0.8.4"):
        return 1024, f"vLLM {v} V1 default"
    if total is None:
        return 256, "V1 default on GPUs under 70 GiB (1024 on larger ones)"
    big = total >= 70 * GIB and "A100" not in name
    return (1024 if big else 256), "V1 default for this GPU"


# --- the calculations -----------------------------------------------------------------------


@calc(
    "max_model_len_fit",
    Text("A context length whose KV cache fits", "KV cache 放得下的上下文长度"),
    "<MAX_MODEL_LEN>",
)
def _max_model_len_fit(facts: FactSet) -> Computed | None:
    est = facts.value("estimated_max_model_len")
    if est:
        step = 1024 if est >= 8192 else 256
        val = max(step, floor_to(est, step))
        return Computed(
            str(val),
            Text(
                f"vLLM estimated {est:,} tokens fit ({_src(facts, 'estimated_max_model_len')}); rounded down to {val:,}.",
                f"vLLM 估算可容纳 {est:,} 个 token（{_src(facts, 'estimated_max_model_len')}），向下取整为 {val:,}。",
            ),
            ("estimated_max_model_len",),
        )
    tokens = facts.value("kv_cache_tokens")
    if tokens:
        step = 1024 if tokens >= 8192 else 256
        val = max(step, floor_to(tokens, step))
        return Computed(
            str(val),
            Text(
                f"the KV cache holds {tokens:,} tokens ({_src(facts, 'kv_cache_tokens')}); one request of {val:,} tokens fits.",
                f"KV cache 可容纳 {tokens:,} 个 token（{_src(facts, 'kv_cache_tokens')}），单个 {val:,} token 的请求放得下。",
            ),
            ("kv_cache_tokens",),
        )
    return None


@calc(
    "gpu_util_fit_free",
    Text("The utilization that fits in the memory free at start-up", "能装进启动时空闲显存的利用率"),
    "<FRACTION>",
)
def _gpu_util_fit_free(facts: FactSet) -> Computed | None:
    free, total = facts.value("startup_free_gib"), facts.value("startup_total_gib")
    names: tuple[str, ...] = ("startup_free_gib", "startup_total_gib")
    if not (free and total):
        fb, tb = facts.value("gpu_mem_free_bytes"), facts.value("gpu_mem_total_bytes")
        if not (fb and tb):
            return None
        free, total = fb / GIB, tb / GIB
        names = ("gpu_mem_free_bytes", "gpu_mem_total_bytes")
    # Keep 0.5 GiB for the CUDA context and allocator slack, then round down to 0.01.
    util = math.floor((free - 0.5) / total * 100) / 100
    if util <= 0.05:
        return None
    return Computed(
        f"{util:.2f}",
        Text(
            f"{_gib(free)} free of {_gib(total)} ({_src(facts, *names)}); (free - 0.5 GiB) / total = {util:.2f}.",
            f"空闲 {_gib(free)}，总量 {_gib(total)}（{_src(facts, *names)}）；(空闲 - 0.5 GiB) / 总量 = {util:.2f}。",
        ),
        names,
    )


@calc(
    "gpu_util_lower",
    Text("gpu_memory_utilization lowered by 0.05", "gpu_memory_utilization 降低 0.05"),
    "<FRACTION>",
)
def _gpu_util_lower(facts: FactSet) -> Computed | None:
    cur = facts.value("gpu_memory_utilization")
    if cur is not None:
        basis = f"now {cur} ({_src(facts, 'gpu_memory_utilization')})"
        basis_zh = f"当前为 {cur}（{_src(facts, 'gpu_memory_utilization')}）"
    else:
        cur, why = default_gpu_memory_utilization(facts)
        basis, basis_zh = f"now {cur} ({why})", f"当前为 {cur}（{why}）"
    new = round(max(0.5, float(cur) - 0.05), 2)
    return Computed(
        f"{new:.2f}",
        Text(f"{basis}; 0.05 less leaves room outside vLLM's budget.", f"{basis_zh}；降低 0.05，为预算外的分配留出空间。"),
        ("gpu_memory_utilization",),
    )


@calc(
    "sampler_max_num_seqs",
    Text("max_num_seqs halved for the sampler warm-up", "为 sampler 预热减半的 max_num_seqs"),
    "<N>",
)
def _sampler_max_num_seqs(facts: FactSet) -> Computed | None:
    n = facts.value("sampler_dummy_requests")
    source = "sampler_dummy_requests"
    if not n:
        n = facts.value("max_num_seqs")
        source = "max_num_seqs"
    if n:
        basis, basis_zh = _src(facts, source), _src(facts, source)
    else:
        n, why = default_max_num_seqs(facts)
        basis, basis_zh = f"max_num_seqs = {n} ({why})", f"max_num_seqs = {n}（{why}）"
    new = max(1, pow2_floor(n / 2))
    return Computed(
        str(new),
        Text(
            f"the warm-up ran {n} dummy requests ({basis}); half of that, as a power of two, is {new}.",
            f"预热使用了 {n} 个虚拟请求（{basis_zh}）；减半并取 2 的幂为 {new}。",
        ),
        (source,),
    )


@calc(
    "kv_cache_memory_bytes",
    Text("KV cache size vLLM itself suggests", "vLLM 自己建议的 KV cache 大小"),
    "<BYTES>",
)
def _kv_cache_memory_bytes(facts: FactSet) -> Computed | None:
    b = facts.value("suggested_kv_cache_bytes")
    if not b:
        return None
    return Computed(
        str(int(b)),
        Text(
            f"vLLM's own start-up message suggests {int(b):,} bytes ({b / GIB:.2f} GiB) to fit the requested memory ({_src(facts, 'suggested_kv_cache_bytes')}).",
            f"vLLM 启动日志建议 {int(b):,} 字节（{b / GIB:.2f} GiB）以符合申请的显存（{_src(facts, 'suggested_kv_cache_bytes')}）。",
        ),
        ("suggested_kv_cache_bytes",),
    )


# --- resolving placeholders -------------------------------------------------------------------

_loaded = False


def _ensure_loaded() -> None:
    """Import the per-area calculation modules (``render/calcs/``) once."""
    global _loaded
    if not _loaded:
        _loaded = True
        from .calcs import load_all

        load_all()


@dataclass(frozen=True)
class Resolved:
    name: str
    value: str | None
    why: Text | None
    placeholder: str


def resolve(name: str, facts: FactSet) -> Resolved:
    """The value for ``{name}`` in a template: a calculation, else a fact, else a placeholder."""
    _ensure_loaded()
    c = CALCS.get(name)
    if c is not None:
        out = c.func(facts)
        if out is None:
            return Resolved(name, None, None, c.placeholder)
        return Resolved(name, out.value, out.why, c.placeholder)
    if name in CATALOG:
        f = facts.get(name)
        placeholder = f"<{name.upper()}>"
        if f is None:
            return Resolved(name, None, None, placeholder)
        return Resolved(name, str(f.value), Text(f"{name} from {f.source}", f"{name} 来自 {f.source}"), placeholder)
    raise KeyError(name)


def known_placeholder(name: str) -> bool:
    _ensure_loaded()
    return name in CALCS or name in CATALOG
