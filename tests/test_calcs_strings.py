"""The calculations speak through the catalogue: titles and sentences are keys, clauses keep their language."""

from __future__ import annotations

import re

from oomwizard.advice import numbers
from oomwizard.advice.calcs.sampler import warmup_peak_bytes
from oomwizard.facts.model import Fact, FactSet
from oomwizard.i18n import Text, strings
from oomwizard.lint.strings import CJK_RE


def _facts(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"vllm.log:{i}", kind="log") for i, (k, v) in enumerate(values.items(), 1))


def test_a_clause_given_to_a_sentence_keeps_each_language() -> None:
    why = numbers.said("calc.readings.setting", name="max_num_seqs", value=256, source=Text("V1 default", "V1 默认值"))
    assert why.en == "max_num_seqs = 256 (V1 default)"
    assert why.zh == "max_num_seqs = 256（V1 默认值）"


def test_numbers_are_formatted_by_the_catalogue_placeholders() -> None:
    why = numbers.said("calc.host.kv_offloading", avail=123.6, source="NVML", val=61)
    assert why.en == "124 GiB of host RAM is available (NVML); half of it is 61 GiB."
    assert why.zh == "主机可用内存 124 GiB（NVML）；取一半为 61 GiB。"


def _pattern(template: str) -> re.Pattern[str]:
    """A catalogue string as a regex: each ``{placeholder}`` stands for any text."""
    parts = re.split(r"({[^{}]*})", template)  # odd items are the placeholders
    return re.compile("".join(".+" if i % 2 else re.escape(part) for i, part in enumerate(parts)))


def test_every_calculation_title_is_a_catalogue_title_in_both_languages() -> None:
    numbers.known_placeholder("kv_cache_memory_bytes")  # loads every calculation module
    titles = [k for k in strings("en") if k.startswith("calc.") and k.endswith(".title")]
    assert len(titles) == len(numbers.CALCS)
    for c in numbers.CALCS.values():
        assert any(_pattern(strings("en")[k]).fullmatch(c.title.en) and _pattern(strings("zh")[k]).fullmatch(c.title.zh)
                   for k in titles), c.name
        assert CJK_RE.search(c.title.zh) and not CJK_RE.search(c.title.en), c.name


def test_a_nested_clause_reaches_the_chinese_sentence_in_chinese() -> None:
    """The vocabulary clause sits inside the peak's sentence: each language gets its own all the way down."""
    peak = warmup_peak_bytes(_facts(vocab_size=151936, vllm_version="0.17.0"), 256)
    assert peak is not None
    assert "vocabulary 151,936 (vocab_size = 151936 (vllm.log:1)); an upper bound" in peak[1].en
    assert "词表 151,936（vocab_size = 151936 (vllm.log:1)）；这是上限" in peak[1].zh
    assert not CJK_RE.search(peak[1].en)
