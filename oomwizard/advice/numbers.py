"""Values computed for *this* machine and *this* log, used in command templates as ``{name}``.

A template names either a calculation defined here or a fact from the catalog. Each calculation
returns the value to paste plus a sentence showing the arithmetic, so the operator can see why we
say ``--max-model-len 40960`` rather than just "lower it". When the inputs are unknown the
command keeps a visible placeholder such as ``<MAX_MODEL_LEN>`` and the reason is shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..facts.catalog import CATALOG
from ..facts.model import FactSet
from ..i18n import Text, msg
from ..text.units import GIB
from ..versions import Version


@dataclass(frozen=True)
class Computed:
    value: str
    why: Text
    inputs: tuple[str, ...] = ()


def explain(value: object, why: Text, inputs: Iterable[str] = ()) -> Computed:
    """The usual result: the value as pasted, its arithmetic in both languages (:func:`said`), the facts it read."""
    return Computed(str(value), why, tuple(inputs))


def said(key: str, /, **fields: object) -> Text:
    """The catalogue sentence ``key`` in both languages, formatted now.

    A field that is itself a :class:`Text` (a clause built by another calculation) gives each
    language its own text, so a sentence can name a clause without being cut into fragments.
    """
    text = msg(key)
    return Text(*(text(lang).format(**{k: v(lang) if isinstance(v, Text) else v for k, v in fields.items()})
                  for lang in ("en", "zh")))


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


def src(facts: FactSet, *names: str) -> str:
    """``name = value (source)`` for each known fact: the inputs an explanation cites."""
    return "; ".join(f"{n} = {f.value} ({f.source})" for n in names if (f := facts.get(n)) is not None)


def origin(facts: FactSet, name: str) -> str:
    """Where a fact came from (``vllm.log:12``, ``answered``), without repeating its value."""
    f = facts.get(name)
    return f.source if f is not None else "?"


def num(facts: FactSet, name: str) -> float | None:
    """A numeric fact as a float; None when unknown or not a number (booleans are not numbers)."""
    value = facts.value(name)
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def as_int(facts: FactSet, name: str) -> int | None:
    value = num(facts, name)
    return None if value is None else int(value)



def ceil2(x: float) -> float:
    """Round a fraction up to the next 0.01 (vLLM takes any float; two digits are readable)."""
    return math.ceil(round(x * 100, 6)) / 100


def floor2(x: float) -> float:
    return math.floor(round(x * 100, 6)) / 100


def floor_to(value: float, step: int) -> int:
    return int(value // step * step)


def pow2_floor(n: float) -> int:
    return 1 if n < 2 else 2 ** int(math.log2(n))


def half_pow2(n: float) -> int:
    """Half of ``n`` rounded down to a power of two, at least 1: how a limit is halved everywhere."""
    return max(1, pow2_floor(n / 2))


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
    name = str(facts.value("gpu_name") or "").upper()
    if v is not None and v < Version.parse("0.8.0") and engine != "v1":
        return 256, f"vLLM {v} runs the V0 engine by default (256)"
    if v is not None and v < Version.parse("0.8.4"):
        return 1024, f"vLLM {v} V1 default"
    if v is not None and v.release == (0, 8, 4):
        # 0.8.4 chose by name: 1024 only on H100/H200.
        if not name:
            return 256, "vLLM 0.8.4 V1 default (1024 on H100/H200)"
        return (1024 if ("H100" in name or "H200" in name) else 256), "vLLM 0.8.4 V1 default for this GPU"
    if total is None:
        return 256, "V1 default on GPUs under 70 GiB (1024 on larger ones)"
    if v is not None and v.release == (0, 8, 5):
        return (1024 if total >= 70 * GIB else 256), "vLLM 0.8.5 V1 default for this GPU"
    big = total >= 70 * GIB and "A100" not in name
    return (1024 if big else 256), "V1 default for this GPU"


def total_gib(facts: FactSet) -> tuple[float, str] | None:
    """Memory of one GPU: vLLM's own start-up reading first, then NVML, then the OOM message."""
    for name, scale in (("startup_total_gib", 1.0), ("gpu_mem_total_bytes", 1 / GIB), ("oom_total_bytes", 1 / GIB)):
        v = num(facts, name)
        if v:
            return v * scale, name
    return None



def default_max_num_batched_tokens(facts: FactSet) -> tuple[int, str] | None:
    """vLLM's default for ``vllm serve`` when the flag was not given (None where it depends on more).

    V1: 8192 on the large tier (H100/H200 up to 0.8.4, 70 GiB or more later; 16384 from 160 GiB on
    0.33.0), 2048 otherwise. V0 without chunked prefill uses max(max_model_len, 2048), which we
    only know when max_model_len is known.
    """
    v = Version.try_parse(facts.value("vllm_version"))
    total = total_gib(facts)
    if facts.value("engine") == "v0":
        mml = num(facts, "max_model_len")
        if mml:
            return max(int(mml), 2048), "V0 default without chunked prefill: max(max_model_len, 2048)"
        return None
    if total is None:
        return 2048, "V1 default on GPUs under 70 GiB (8192 on larger ones)"
    gib = total[0]
    name = str(facts.value("gpu_name") or "").lower()
    early = v is not None and v < Version.parse("0.8.5")
    if early:
        big = "h100" in name or "h200" in name
    else:
        # From 0.9.0 the A100 stays in the small tier whatever its memory (same rule as max_num_seqs).
        big = gib >= 70 and not ("a100" in name and (v is None or v >= Version.parse("0.9.0")))
    if big and v is not None and v >= Version.parse("0.33.0") and gib >= 160:
        return 16384, f"vLLM {v} default for GPUs of 160 GiB or more"
    if not big and "a100" in name and gib >= 70:
        return 2048, "V1 default: an A100 stays in the small tier from 0.9.0"
    return (8192, "V1 default for this GPU") if big else (2048, "V1 default for this GPU")



# The calculations themselves live in calcs/, one module per subject (calcs/__init__.py lists them).


# --- resolving placeholders -------------------------------------------------------------------

_loaded = False


def _ensure_loaded() -> None:
    """Import the per-area calculation modules (``advice/calcs/``) once."""
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
        return Resolved(name, str(f.value), msg("advice.numbers.fact_source").format(name=name, source=f.source), placeholder)
    raise KeyError(name)


def known_placeholder(name: str) -> bool:
    _ensure_loaded()
    return name in CALCS or name in CATALOG
