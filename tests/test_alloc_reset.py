"""vLLM 0.21-0.30 drops allocator options after loading: which ones, when, and what the wizard says."""

from __future__ import annotations

import pytest
from kbkit import facts

from oomwizard.advice.numbers import resolve
from oomwizard.facts.alloc_reset import lost_after_load
from oomwizard.facts.env import ALLOC_VAR, CUDA_VAR, decide_alloc_conf
from oomwizard.facts.machine import facts_from_data

GC = "garbage_collection_threshold:0.6"


@pytest.mark.parametrize(
    ("env", "lost"),
    [
        # gc threshold and roundup go back to defaults from either variable
        ({CUDA_VAR: f"expandable_segments:True,{GC}"}, ("garbage_collection_threshold",)),
        ({ALLOC_VAR: "roundup_power2_divisions:4"}, ("roundup_power2_divisions",)),
        # max_split_size_mb is restored from PYTORCH_CUDA_ALLOC_CONF only
        ({CUDA_VAR: "max_split_size_mb:512"}, ()),
        ({ALLOC_VAR: "max_split_size_mb:512"}, ("max_split_size_mb",)),
        # expandable segments are not reset
        ({ALLOC_VAR: "expandable_segments:True"}, ()),
        ({}, ()),
    ],
)
def test_what_the_post_load_write_drops(env, lost):
    d = decide_alloc_conf(env, "2.13.0", "cuda")
    assert lost_after_load(d.fields, env) == lost
    assert d.reset_after_load == lost


def test_nothing_is_dropped_off_cuda():
    assert lost_after_load({"garbage_collection_threshold": 0.6}, {CUDA_VAR: GC}, "rocm") == ()


@pytest.mark.parametrize(("vv", "warned"), [("0.20.0", False), ("0.21.0", True), ("0.30.0", True), ("0.31.0", False), (None, False)])
def test_the_note_only_for_the_releases_that_drop_them(vv, warned):
    d = decide_alloc_conf({CUDA_VAR: GC}, "2.13.0", "cuda", vv)
    codes = [n["code"] for n in d.notes]
    assert ("alloc_reset_after_load" in codes) is warned


def test_detected_environment_gives_the_fact():
    data = {"packages": {"versions": {"torch": "2.13.0"}}, "env": {ALLOC_VAR: f"max_split_size_mb:512,{GC}"}}
    fs = facts_from_data(data)
    assert fs.value("alloc_reset_after_load") == "max_split_size_mb,garbage_collection_threshold"


def test_empty_cuda_variable_in_the_detected_environment():
    data = {"packages": {"versions": {"torch": "2.11.0"}}, "env": {CUDA_VAR: "", ALLOC_VAR: "expandable_segments:True"}}
    fs = facts_from_data(data)
    assert fs.value("alloc_conf_shadowed") == ALLOC_VAR
    assert fs.value("expandable_segments") is False


def test_printed_setting_names_what_0_25_still_drops():
    fs = facts(vllm_version="0.25.0", alloc_conf=f"max_split_size_mb:512,{GC}",
               alloc_reset_after_load="max_split_size_mb,garbage_collection_threshold")
    r = resolve("alloc_conf_expandable_on", fs)
    assert r.value == f"expandable_segments:True,max_split_size_mb:512,{GC}"
    # written into PYTORCH_CUDA_ALLOC_CONF, max_split_size_mb survives; the gc threshold does not
    assert "still resets garbage_collection_threshold" in r.why.en and "max_split_size_mb to" not in r.why.en
    assert "garbage_collection_threshold" in r.why.zh and "0.31.0" in r.why.zh
    later = resolve("alloc_conf_expandable_on", facts(vllm_version="0.31.0", alloc_conf=GC,
                                                      alloc_reset_after_load="garbage_collection_threshold"))
    assert "still resets" not in later.why.en


# --- a KV connector the refusal cannot see --------------------------------------------------------

KV = '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'


def test_engine_settings_carry_the_kv_connector():
    from oomwizard.facts.processes import engine_settings, parse_engine_args

    args, pos = parse_engine_args(["serve", "m", "--kv-transfer-config", KV])
    assert engine_settings(args, pos[1:], "vllm serve")["kv_transfer_config"] == KV


@pytest.mark.parametrize(
    ("env", "warned"),
    [
        # torch 2.13 takes the option from PYTORCH_ALLOC_CONF; vLLM's refusal reads only the CUDA name
        ({ALLOC_VAR: "expandable_segments:True"}, True),
        # the refusal sees this one and stops the server with its own message
        ({CUDA_VAR: "expandable_segments:True"}, False),
        # torch takes PYTORCH_CUDA_ALLOC_CONF first: expandable segments are off
        ({CUDA_VAR: "expandable_segments:False", ALLOC_VAR: "expandable_segments:True"}, False),
        ({}, False),
    ],
)
def test_unguarded_kv_connector(env, warned):
    from oomwizard.facts.kv_connector import unguarded

    d = decide_alloc_conf(env, "2.13.0", "cuda", "0.30.0")
    got = unguarded({"kv_transfer_config": KV}, env, d.expandable_segments)
    assert (got is not None) is warned
    assert unguarded({}, env, d.expandable_segments) is None


def test_printed_setting_explains_an_empty_cuda_variable():
    data = {"packages": {"versions": {"torch": "2.11.0"}}, "env": {CUDA_VAR: "", ALLOC_VAR: "expandable_segments:True"}}
    r = resolve("alloc_conf_expandable_on", facts_from_data(data))
    assert r.value == "expandable_segments:True"
    assert "set but empty" in r.why.en and ALLOC_VAR in r.why.en and "已设置但为空" in r.why.zh
