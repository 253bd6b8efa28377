"""Allocator settings keep the operator's other options and set only expandable_segments."""

from __future__ import annotations

from kbkit import facts

from oomwizard.advice.calcs.alloc import with_expandable
from oomwizard.advice.numbers import resolve
from oomwizard.facts.env import split_fields


def test_other_options_survive_and_brackets_stay_whole() -> None:
    conf = "garbage_collection_threshold:0.8,roundup_power2_divisions:[256:1,>:2],expandable_segments:True"
    assert split_fields(conf) == ["garbage_collection_threshold:0.8", "roundup_power2_divisions:[256:1,>:2]", "expandable_segments:True"]
    assert with_expandable(conf, False) == "expandable_segments:False,garbage_collection_threshold:0.8,roundup_power2_divisions:[256:1,>:2]"
    assert with_expandable(None, True) == "expandable_segments:True"


def test_the_export_carries_the_detected_setting() -> None:
    r = resolve("alloc_conf_expandable_off", facts(alloc_conf="expandable_segments:True,max_split_size_mb:512"))
    assert r.value == "expandable_segments:False,max_split_size_mb:512"
    assert "max_split_size_mb:512" in r.why.en and "其他选项保留" in r.why.zh
    on = resolve("alloc_conf_expandable_on", facts(alloc_conf="garbage_collection_threshold:0.8"))
    assert on.value == "expandable_segments:True,garbage_collection_threshold:0.8"


def test_without_a_detected_setting_the_plain_option_is_printed_with_advice() -> None:
    r = resolve("alloc_conf_expandable_off", facts())
    assert r.value == "expandable_segments:False" and "after a comma" in r.why.en


def test_fragmentation_export_keeps_the_operators_other_options() -> None:
    from kbkit import script

    fs = facts(vllm_version="0.15.0", alloc_conf="garbage_collection_threshold:0.8")
    ok, cmd = script("fragmentation", "expandable-segments", fs)
    assert ok and "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,garbage_collection_threshold:0.8" in cmd
    ok, cmd = script("weights-load-oom", "expandable-segments-while-loading", facts(vllm_version="0.15.0"))
    assert ok and "unset PYTORCH_ALLOC_CONF" in cmd


def test_pipeline_stages_follow_the_gpu_count() -> None:
    from kbkit import script

    ok, cmd = script("weights-load-oom", "uneven-pipeline-stages", facts(vllm_version="0.15.0", gpu_count=3))
    assert ok and "--pipeline-parallel-size 3" in cmd
    assert "VLLM_PP_LAYER_PARTITION='<LAYERS_ON_GPU0>,<LAYERS_ON_GPU1>,<LAYERS_ON_GPU2>'" in cmd
