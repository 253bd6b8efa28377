"""vLLM's KV cache arithmetic per release: page sizes, groups, blocks, the two lines it logs, the check.

Read from the released sources (``vllm/v1/kv_cache_interface.py``, ``vllm/v1/core/kv_cache_utils.py``
and, from 0.33.0, ``vllm/v1/core/kv_cache_planning.py``; V0: ``vllm/worker/cache_engine.py``,
``vllm/executor/gpu_executor.py``). Integer arithmetic throughout, as vLLM does it, so the
token count and the concurrency match the log to the last digit for the same available bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..i18n import both
from ..text.units import GIB
from ..versions import Version
from .arch import Layer
from .errors import PlanError

FP8_DS_MLA_BYTES = 656
"""Bytes per token per layer of DeepSeek's sparse fp8 MLA cache (``MLAAttentionSpec`` @0.11.0+)."""


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def v(text: str) -> Version:
    return Version.parse(text)


@dataclass(frozen=True)
class Spec:
    """One layer's cache on one GPU (vLLM's ``FullAttentionSpec``/``SlidingWindowSpec``/``MLAAttentionSpec``)."""

    kind: str
    heads: int
    head_size: int
    dtype_bytes: int
    block_size: int
    window: int | None = None
    ds_mla: bool = False
    state_page: int = 0
    """A state layer's page (``MambaSpec``, padded to the attention page)."""
    state_pages: int = 1
    """State pages one request holds: 1 ("none"), 2 ("align": the running state and its checkpoint)."""

    @property
    def bytes_per_token(self) -> int:
        if self.kind == "state":
            return 0
        if self.kind == "mla":
            return FP8_DS_MLA_BYTES if self.ds_mla else self.heads * self.head_size * self.dtype_bytes
        return 2 * self.heads * self.head_size * self.dtype_bytes

    @property
    def page_size_bytes(self) -> int:
        if self.kind == "state":
            return self.state_page
        return self.block_size * self.bytes_per_token

    def max_memory_usage_bytes(self, max_model_len: int, in_flight_tokens: int) -> int:
        """Bytes one request at ``max_model_len`` may hold (``max_memory_usage_bytes``); one page for a
        state layer without prefix caching, two in mamba_cache_mode "align"."""
        if self.kind == "state":
            return self.state_page * self.state_pages
        if self.kind == "sliding" and self.window:
            tokens = min(self.window - 1 + in_flight_tokens, max_model_len)
            return (cdiv(tokens, self.block_size) + 1) * self.page_size_bytes
        return cdiv(max_model_len, self.block_size) * self.page_size_bytes


def layer_specs(layers: list[Layer], *, tp: int, pp: int, dtype_bytes: int, block_size: int,
                kv_cache_dtype: str, state_page: int = 0, state_block: int = 0, state_pages: int = 1) -> list[Spec]:
    """The specs of the layers one GPU of the first pipeline stage holds.

    KV heads: ``max(1, heads // tp)`` (``ModelConfig.get_num_kv_heads``); MLA keeps one latent
    "head" on every rank. Pipeline stages split layers as evenly as vLLM's default partition.
    """
    ds = kv_cache_dtype == "fp8_ds_mla"
    if ds and not all(layer.kind == "mla" for layer in layers):
        raise PlanError(*both("plan.kv.kv_cache_dtype_fp8"))
    n = cdiv(len(layers), pp)
    out = []
    for layer in layers[:n]:
        if layer.kind == "state":
            out.append(Spec("state", 0, 0, 0, state_block, state_page=state_page, state_pages=state_pages))
            continue
        heads = 1 if layer.kind == "mla" else max(1, layer.num_kv_heads // tp)
        out.append(Spec(layer.kind, heads, layer.head_size, dtype_bytes, block_size, layer.window, ds))
    return out


@dataclass
class Groups:
    """vLLM's KV cache groups: ``specs[i]`` repeated over ``sizes[i]`` layers (padding not counted)."""

    specs: list[Spec]
    sizes: list[int]
    group_size: int
    note: str

    @property
    def bytes_per_block(self) -> int:
        return self.group_size * self.specs[0].page_size_bytes


def group(specs: list[Spec], release: Version) -> Groups:
    """Uniform models: one group of every layer. Sliding-window hybrids (same page size): layers
    split by type into groups of ``group_size`` layers (``_get_kv_cache_groups_uniform_page_size``)."""
    kinds: dict[Spec, int] = {}
    for s in specs:
        kinds[s] = kinds.get(s, 0) + 1
    if len(kinds) == 1:
        s = specs[0]
        return Groups([s], [len(specs)], len(specs), f"one group of {len(specs)} layers")
    if len({s.page_size_bytes for s in kinds}) != 1:
        raise PlanError(*both("plan.kv.the_layers_of_this"))
    counts = list(kinds.values())
    lo, hi = min(counts), max(counts)
    size = lo
    factor = 1.5 if release >= v("0.18.0") else 1.25 if release >= v("0.12.0") else None
    if factor and hi < lo * factor:
        size = hi
    out_specs, out_sizes = [], []
    for s, count in kinds.items():
        for i in range(cdiv(count, size)):
            out_specs.append(s)
            out_sizes.append(len(range(i, count, cdiv(count, size))))
    return Groups(out_specs, out_sizes, size,
                  f"{len(out_specs)} groups of {size} layers ({', '.join(f'{c} {s.kind}' for s, c in kinds.items())})")


@dataclass
class Capacity:
    """What vLLM computes from the available bytes: blocks, the logged tokens and concurrency."""

    num_blocks: int
    kv_tokens: int
    max_concurrency: float
    blocks_per_request: int
    tokens_formula: str
    concurrency_formula: str
    source: str


def capacity(groups: Groups, available: int, max_model_len: int, in_flight: int, release: Version,
             engine: str) -> Capacity:
    """``num_blocks``, ``GPU KV cache size`` and ``Maximum concurrency`` as the release logs them."""
    s0 = groups.specs[0]
    bpb = groups.bytes_per_block
    num_blocks = max(0, available // bpb)
    if engine == "v0":
        tokens = num_blocks * s0.block_size
        return Capacity(num_blocks, tokens, tokens / max_model_len, cdiv(max_model_len, s0.block_size),
                        "num_gpu_blocks x block_size",
                        "num_gpu_blocks x block_size / max_model_len",
                        f"vllm/worker/worker.py, vllm/executor/gpu_executor.py @{release.text}")
    per_request = sum(cdiv(g.max_memory_usage_bytes(max_model_len, in_flight), g.page_size_bytes) for g in groups.specs)
    src = ("vllm/v1/core/kv_cache_planning.py" if release >= v("0.33.0") else "vllm/v1/core/kv_cache_utils.py")
    src += f" @{release.text}"
    if release < v("0.9.1"):
        tokens = num_blocks * s0.block_size
        return Capacity(num_blocks, tokens, tokens / max_model_len, per_request, "num_blocks x block_size",
                        "kv_tokens / max_model_len", src)
    conc = num_blocks / per_request
    if release >= v("0.21.0"):
        return Capacity(num_blocks, int(conc * max_model_len), conc, per_request,
                        "int(max_concurrency x max_model_len)",
                        "num_blocks / sum over groups of cdiv(max_memory_usage_bytes, page_size_bytes)", src)
    tokens = num_blocks // len(groups.specs) * min(g.block_size for g in groups.specs)
    return Capacity(num_blocks, tokens, conc, per_request, "num_blocks // num_groups x block_size",
                    "num_blocks / cdiv(max_memory_usage_bytes per request, page_size_bytes)", src)


def needed_bytes(specs: list[Spec], max_model_len: int, in_flight: int) -> int:
    """``max_memory_usage_bytes`` summed over this GPU's layers: one request at ``max_model_len``."""
    return sum(s.max_memory_usage_bytes(max_model_len, in_flight) for s in specs)


def needed_for_check(specs: list[Spec], groups: Groups, max_model_len: int, in_flight: int, release: Version) -> int:
    """The bytes the start-up check asks for, as each release computes them.

    Before 0.14.0 the sum over layers (``max_memory_usage_bytes``); from 0.14.0
    ``_max_memory_usage_bytes_from_groups``: group_size x page x blocks, where blocks are those of
    the first group only in 0.14-0.18 and the sum over groups from 0.19.0. The same for uniform models.
    """
    if release < v("0.14.0"):
        return needed_bytes(specs, max_model_len, in_flight)
    page = groups.specs[0].page_size_bytes
    chosen = groups.specs[:1] if release < v("0.19.0") else groups.specs
    blocks = sum(cdiv(g.max_memory_usage_bytes(max_model_len, in_flight), page) for g in chosen)
    return groups.group_size * page * blocks


def _gib(b: int, release: Version) -> str:
    """vLLM's GiB formatting: ``%.2f`` before 0.14.0, ``str(round(x, 2))`` (``format_gib``) after."""
    return f"{round(b / GIB, 2)}" if release >= v("0.14.0") else f"{b / GIB:.2f}"


def estimate_max_len(specs: list[Spec], available: int, max_model_len: int, in_flight: int,
                     groups: Groups | None = None, release: Version | None = None) -> int:
    """``estimate_max_model_len``: the binary search vLLM runs for its error message."""
    def need(n: int) -> int:
        if groups is None or release is None:
            return needed_bytes(specs, n, in_flight)
        return needed_for_check(specs, groups, n, in_flight, release)

    if need(1) > available:
        return 0
    lo, hi, best = 1, max_model_len, 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if need(mid) <= available:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def startup_error(specs: list[Spec], groups: Groups, available: int, max_model_len: int, in_flight: int,
                  release: Version, engine: str) -> str | None:
    """The ``ValueError`` vLLM raises at start-up when the KV cache cannot hold one request, else ``None``."""
    docs = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    new = engine == "v1" and release >= v("0.29.0")
    if engine == "v1" and release >= v("0.29.0"):
        available -= groups.bytes_per_block  # the null block the pool keeps back (check_enough_kv_cache_memory)
    tail = " (this flag also controls CPU memory reservation on the CPU backend, despite its name)" if new else ""
    if available <= 0:
        msg = f"No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine{tail}."
        return msg + (docs if engine == "v1" and release >= v("0.13.0") else "")
    if engine == "v0":
        max_seq_len = available // groups.bytes_per_block * groups.specs[0].block_size
        if max_model_len > max_seq_len:
            return (f"The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be "
                    f"stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` or decreasing "
                    "`max_model_len` when initializing the engine.")
        return None
    need = needed_for_check(specs, groups, max_model_len, in_flight, release)
    if need <= available:
        return None
    head = "To serve at least one request with the {m} max seq len ({L}), ({n} {u} KV cache is needed, which is larger " \
           "than the available KV cache memory ({a} {u})."
    try_ = "Try increasing {util} or decreasing `max_model_len` when initializing the engine."
    if release < v("0.8.5"):  # 0.8.0-0.8.3: no estimate; "GB" until 0.8.2
        unit = "GiB" if release >= v("0.8.3") else "GB"
        return (head.format(m="models's", L=max_model_len, n=f"{need / GIB:.2f}", a=f"{available / GIB:.2f}", u=unit)
                + " " + try_.format(util="`gpu_memory_utilization`"))
    est = estimate_max_len(specs, available, max_model_len, in_flight, groups, release)
    h = head.format(m="model's" if new else "models's", L=max_model_len, n=_gib(need, release),
                    a=_gib(available, release), u="GiB")
    if release < v("0.9.1"):
        # 0.8.5-0.9.0 build the estimate as ' Based on the available memory,' (the rest of the f-string is a
        # separate statement in that code) followed by two spaces.
        return h + (" Based on the available memory," if est > 0 else "") + "  " + try_.format(util="`gpu_memory_utilization`")
    util = "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend)" if new else "`gpu_memory_utilization`"
    if release >= v("0.14.0"):
        est_msg = f"Based on the available memory, the estimated maximum model length is {est}. " if est > 0 else ""
        body = f"{h} {est_msg}{try_.format(util=util)}"
    else:
        est_msg = f"Based on the available memory, the estimated maximum model length is {est}." if est > 0 else ""
        body = f"{h} {est_msg} {try_.format(util=util)}"
    return body + (docs if release >= v("0.13.0") else "")
