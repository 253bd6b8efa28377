"""Allocator settings to export: the operator's own options with expandable_segments set one way.

An ``export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` replaces whatever the variable held
(a garbage_collection_threshold, a max_split_size_mb), so the command keeps every other option of
the setting torch actually uses (the ``alloc_conf`` fact, which may come from PYTORCH_ALLOC_CONF)
and only sets expandable_segments. The result goes into PYTORCH_CUDA_ALLOC_CONF: every torch from
2.8 to 2.14 reads it for CUDA, and vLLM up to 0.30 looks nowhere else
(``vllm/device_allocator/cumem.py@0.20.0``, ``vllm/config/vllm.py@0.33.0`` for the KV-connector
check). The leaves unset PYTORCH_ALLOC_CONF next to it, so no other variable can disagree.
On vLLM 0.21-0.30 the explanation also names the options that release still drops after loading
(:mod:`oomwizard.facts.alloc_reset`): written into PYTORCH_CUDA_ALLOC_CONF, max_split_size_mb
survives, garbage_collection_threshold and roundup_power2_divisions do not.
"""

from __future__ import annotations

from ...facts.alloc_reset import in_range
from ...facts.env import split_fields
from ...facts.model import FactSet
from ...i18n import msg
from ..numbers import Computed, calc, explain, said
from ..numbers import src as _src

KEY = "expandable_segments"


def with_expandable(conf: str | None, enabled: bool) -> str:
    """``conf`` with expandable_segments set to ``enabled``, first, and every other field verbatim."""
    others = [f for f in split_fields(conf or "") if f.split(":", 1)[0].strip() != KEY]
    return ",".join([f"{KEY}:{enabled}", *others])


def still_reset(facts: FactSet) -> list[str]:
    """Options of the operator's setting that this vLLM resets after loading even from PYTORCH_CUDA_ALLOC_CONF."""
    lost = facts.value("alloc_reset_after_load")
    if not lost or not in_range(facts.value("vllm_version")):
        return []
    return [k for k in str(lost).split(",") if k and k != "max_split_size_mb"]


def _computed(facts: FactSet, enabled: bool) -> Computed:
    conf = facts.value("alloc_conf")
    value = with_expandable(str(conf) if conf else None, enabled)
    if conf and value != f"{KEY}:{enabled}":
        source, lost = _src(facts, "alloc_conf"), still_reset(facts)
        why = (said("calc.alloc.kept_reset", conf=conf, source=source, key=KEY, enabled=enabled,
                    version=facts.value("vllm_version"), names=", ".join(lost)) if lost
               else said("calc.alloc.kept", conf=conf, source=source, key=KEY, enabled=enabled))
        return Computed(value, why, ("alloc_conf", "alloc_reset_after_load"))
    shadowed = facts.value("alloc_conf_shadowed")
    if shadowed:
        return Computed(
            value,
            said("calc.alloc.shadowed", key=KEY, enabled=enabled, source=_src(facts, "alloc_conf_shadowed"),
                 shadowed=shadowed),
            ("alloc_conf_shadowed",),
        )
    return explain(value, said("calc.alloc.plain", key=KEY, enabled=enabled), ("alloc_conf",))


@calc(
    "alloc_conf_expandable_off",
    msg("calc.alloc.expandable_off.title"),
    "<ALLOC_CONF>",
)
def alloc_conf_expandable_off(facts: FactSet) -> Computed | None:
    """An explicit False rather than an unset: on torch 2.10+ an unset PYTORCH_CUDA_ALLOC_CONF lets a
    PYTORCH_ALLOC_CONF ``expandable_segments:True`` take effect (``CUDAAllocatorConfig.h@2.10.0``)."""
    return _computed(facts, False)


@calc(
    "alloc_conf_expandable_on",
    msg("calc.alloc.expandable_on.title"),
    "<ALLOC_CONF>",
)
def alloc_conf_expandable_on(facts: FactSet) -> Computed | None:
    return _computed(facts, True)
