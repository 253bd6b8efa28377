"""The calculation framework behind ``{name}`` placeholders, and vLLM's defaults it falls back on."""

from __future__ import annotations

import pytest

from oomwizard.advice.numbers import (
    CALCS,
    GIB,
    Computed,
    calc,
    default_gpu_memory_utilization,
    default_max_num_seqs,
    floor_to,
    known_placeholder,
    pow2_floor,
    resolve,
)
from oomwizard.facts.model import Fact, FactSet
from oomwizard.i18n import Text


def facts(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"test {k}", kind="machine") for k, v in values.items())


def test_rounding_helpers() -> None:
    assert floor_to(34736, 1024) == 33792 and floor_to(1023, 1024) == 0
    assert [pow2_floor(n) for n in (0.5, 1, 2, 3, 128, 255, 256)] == [1, 1, 2, 2, 128, 128, 256]


@pytest.mark.parametrize(("version", "expected"), [(None, 0.9), ("0.19.0", 0.9), ("0.20.0", 0.92), ("0.20.0rc1", 0.92), ("0.33.0", 0.92)])
def test_default_gpu_memory_utilization(version: str | None, expected: float) -> None:
    fs = facts(vllm_version=version) if version else FactSet()
    assert default_gpu_memory_utilization(fs)[0] == expected


H200 = 143 * GIB
A100_80 = 80 * GIB
L4 = 22 * GIB


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"engine": "v0", "vllm_version": "0.10.0", "gpu_mem_total_bytes": H200}, 256),
        ({"vllm_version": "0.7.3", "gpu_mem_total_bytes": H200}, 256),  # V0 is the default engine before 0.8.0
        ({"vllm_version": "0.7.3", "engine": "v1", "gpu_mem_total_bytes": L4}, 1024),
        ({"vllm_version": "0.8.3", "gpu_mem_total_bytes": L4}, 1024),  # V1 1024 on every GPU up to 0.8.3
        ({"vllm_version": "0.8.4", "gpu_name": "NVIDIA H200", "gpu_mem_total_bytes": H200}, 1024),
        ({"vllm_version": "0.8.4", "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_mem_total_bytes": A100_80}, 256),
        ({"vllm_version": "0.8.5", "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_mem_total_bytes": A100_80}, 1024),
        ({"vllm_version": "0.8.5", "gpu_mem_total_bytes": L4}, 256),
        ({"vllm_version": "0.9.0", "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_mem_total_bytes": A100_80}, 256),
        ({"vllm_version": "0.11.0", "gpu_name": "NVIDIA H200", "gpu_mem_total_bytes": H200}, 1024),
        ({"vllm_version": "0.11.0", "startup_total_gib": 139.8}, 1024),
        ({"vllm_version": "0.11.0"}, 256),
        ({}, 256),
    ],
)
def test_default_max_num_seqs_per_release_and_gpu(values: dict[str, object], expected: int) -> None:
    n, why = default_max_num_seqs(facts(**values))
    assert n == expected, why
    assert why


def test_resolve_a_calculation_a_fact_or_a_placeholder() -> None:
    name = "test_only_double_tp"

    @calc(name, Text("double", "两倍"), "<N>")
    def _double(fs: FactSet) -> Computed | None:
        tp = fs.value("tp")
        return Computed(str(tp * 2), Text("twice tp", "tp 的两倍"), ("tp",)) if tp else None

    try:
        assert known_placeholder(name)
        r = resolve(name, facts(tp=4))
        assert (r.value, r.why.en, r.placeholder) == ("8", "twice tp", "<N>")  # type: ignore[union-attr]
        missing = resolve(name, FactSet())
        assert (missing.value, missing.why, missing.placeholder) == (None, None, "<N>")
        with pytest.raises(ValueError, match="defined twice"):
            calc(name, Text("", ""), "<N>")(_double)
    finally:
        del CALCS[name]
    fact = resolve("tp", facts(tp=4))
    assert (fact.value, fact.placeholder) == ("4", "<TP>") and fact.why.en == "tp from test tp"  # type: ignore[union-attr]
    assert resolve("tp", FactSet()).value is None
    with pytest.raises(KeyError):
        resolve("no_such_thing", FactSet())
    assert not known_placeholder("no_such_thing")


def test_every_calculation_module_registers_its_names() -> None:
    assert known_placeholder("max_model_len_fit") and known_placeholder("gpu_util_lower")
    for c in CALCS.values():
        assert c.placeholder.startswith("<") and c.placeholder.endswith(">"), c.name
        assert c.title.en and c.title.zh, c.name
