"""Environment collection and the allocator-variable precedence table, row by row."""

from __future__ import annotations

import pytest

from oomwizard.facts.env import (
    ALLOC_VAR,
    CUDA_VAR,
    HIP_VAR,
    collect_env,
    decide_alloc_conf,
    parse_alloc_conf,
    torch_alloc_rule,
    vllm_alloc_reads,
)

ON = "expandable_segments:True"
OFF = "expandable_segments:False"


def test_collect_env_filters_and_redacts():
    env = {
        "VLLM_USE_V1": "1",
        "VLLM_API_KEY": "sk-abcdefghijklmnopqrstuv",
        "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NCCL_DEBUG": "INFO",
        "PYTORCH_CUDA_ALLOC_CONF": ON,
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        "NVIDIA_VISIBLE_DEVICES": "all",
        "HOME": "/root",
        "PATH": "/usr/bin",
    }
    out = collect_env(env)
    assert out == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NCCL_DEBUG": "INFO",
        "NVIDIA_VISIBLE_DEVICES": "all",
        "PYTORCH_CUDA_ALLOC_CONF": ON,
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        "VLLM_API_KEY": "<redacted>",
        "VLLM_USE_V1": "1",
    }
    assert list(out) == sorted(out)


# --- parsing ------------------------------------------------------------------------------------


def test_parse_fields_typed():
    conf = parse_alloc_conf("expandable_segments:True,max_split_size_mb:512, garbage_collection_threshold:0.6,backend:native")
    assert conf.fields == {"expandable_segments": True, "max_split_size_mb": 512, "garbage_collection_threshold": 0.6, "backend": "native"}
    assert conf.problems == []


def test_parse_bracketed_list_is_one_item():
    conf = parse_alloc_conf("roundup_power2_divisions:[256:1,512:2,1024:4,>:8],expandable_segments:False")
    assert conf.fields == {"roundup_power2_divisions": "[256:1,512:2,1024:4,>:8]", "expandable_segments": False}
    assert parse_alloc_conf("roundup_power2_divisions:4").fields == {"roundup_power2_divisions": 4}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("expandable_segment:True", "alloc_unknown_key"),
        ("expandable_segments", "alloc_no_value"),
        ("expandable_segments:yes", "alloc_bad_bool"),
        ("expandable_segments:true", "alloc_bool_spelling"),
        ("max_split_size_mb:16", "alloc_split_too_small"),
        ("max_split_size_mb:big", "alloc_bad_int"),
        ("garbage_collection_threshold:1.5", "alloc_gc_range"),
        ("garbage_collection_threshold:x", "alloc_bad_float"),
    ],
)
def test_parse_problems(text, code):
    assert [p["code"] for p in parse_alloc_conf(text).problems] == [code]


def test_lowercase_true_still_means_on():
    assert parse_alloc_conf("expandable_segments:true").fields["expandable_segments"] is True


# --- the precedence table -----------------------------------------------------------------------

# (torch version, platform) -> (variables read in order, certainty, PYTORCH_ALLOC_CONF ignored?)
TABLE = [
    ("2.5.1", "cuda", (CUDA_VAR,), "source", True),
    ("2.8.0+cu128", "cuda", (CUDA_VAR,), "source", True),
    ("2.9.0", "cuda", (CUDA_VAR,), "source", True),
    ("2.9.1+cu128", "cuda", (CUDA_VAR,), "source", True),
    ("2.10.0", "cuda", (CUDA_VAR, ALLOC_VAR), "assumed", False),
    ("2.11.0+cu130", "cuda", (CUDA_VAR, ALLOC_VAR), "measured", False),
    ("2.13.0", "cuda", (CUDA_VAR, ALLOC_VAR), "assumed", False),
    (None, "cuda", (CUDA_VAR, ALLOC_VAR), "unknown", False),
    ("2.8.0+rocm6.3", "rocm", (CUDA_VAR, HIP_VAR), "source", True),
    ("2.11.0+rocm7.0", "rocm", (CUDA_VAR, HIP_VAR, ALLOC_VAR), "assumed", False),
]


@pytest.mark.parametrize(("tv", "platform", "reads", "certainty", "alloc_ignored"), TABLE)
def test_torch_alloc_rule(tv, platform, reads, certainty, alloc_ignored):
    rule = torch_alloc_rule(tv, platform)
    assert rule.reads == reads
    assert rule.certainty == certainty
    assert (ALLOC_VAR in {v for v, _, _ in rule.ignored}) is alloc_ignored
    assert rule.basis_en and rule.basis_zh


# (torch, env) -> (variable torch uses, expandable segments on?)
DECISIONS = [
    # only the CUDA name: every release honours it
    ("2.5.1", {CUDA_VAR: ON}, CUDA_VAR, True),
    ("2.9.1", {CUDA_VAR: ON}, CUDA_VAR, True),
    ("2.11.0", {CUDA_VAR: ON}, CUDA_VAR, True),
    # only the new name: ignored before 2.10 (2.9.1: pytorch#183387), honoured on 2.11
    ("2.8.0", {ALLOC_VAR: ON}, None, False),
    ("2.9.1", {ALLOC_VAR: ON}, None, False),
    ("2.11.0", {ALLOC_VAR: ON}, ALLOC_VAR, True),
    # both set, opposite values: the rows of fixtures/h200/alloc_precedence.txt (torch 2.11)
    ("2.11.0", {ALLOC_VAR: "expandable_segments:True", CUDA_VAR: "expandable_segments:False"}, CUDA_VAR, False),
    ("2.11.0", {ALLOC_VAR: "expandable_segments:False", CUDA_VAR: "expandable_segments:True"}, CUDA_VAR, True),
    ("2.11.0", {ALLOC_VAR: ON, CUDA_VAR: ON}, CUDA_VAR, True),
    ("2.11.0", {}, None, False),
    # HIP variable on a CUDA build: ignored
    ("2.11.0", {HIP_VAR: ON}, None, False),
]


@pytest.mark.parametrize(("tv", "env", "var", "expandable"), DECISIONS)
def test_decide(tv, env, var, expandable):
    d = decide_alloc_conf(env, tv, "cuda")
    assert d.var == var
    assert d.expandable_segments is expandable
    assert d.certain is True


def test_measured_fixture_rows_match():
    """Every line of the real H200 measurement agrees with the decision for torch 2.11."""
    rows = [
        (None, None, False),
        (None, ON, True),
        (None, OFF, False),
        (ON, None, True),
        (ON, ON, True),
        (ON, OFF, False),
        (OFF, None, False),
        (OFF, ON, True),
        (OFF, OFF, False),
    ]
    for alloc, cuda, measured_on in rows:
        env = {k: v for k, v in ((ALLOC_VAR, alloc), (CUDA_VAR, cuda)) if v is not None}
        assert decide_alloc_conf(env, "2.11.0+cu130").expandable_segments is measured_on, env


def test_ignored_variable_is_explained():
    d = decide_alloc_conf({ALLOC_VAR: ON}, "2.9.1+cu128", "cuda")
    assert d.ignored == [
        {
            "var": ALLOC_VAR,
            "value": ON,
            "en": "torch 2.9.x reads only PYTORCH_CUDA_ALLOC_CONF for CUDA (CUDAAllocatorConfig.h@2.9.1, pytorch#183387)",
            "zh": "torch 2.9.x 在 CUDA 上只读取 PYTORCH_CUDA_ALLOC_CONF（CUDAAllocatorConfig.h@2.9.1，pytorch#183387）",
        }
    ]
    assert "alloc_ignored" in [n["code"] for n in d.notes]


def test_losing_variable_says_which_wins():
    d = decide_alloc_conf({ALLOC_VAR: ON, CUDA_VAR: OFF}, "2.11.0")
    assert d.ignored[0]["en"] == f"{CUDA_VAR} takes precedence"


def test_unknown_torch_with_only_new_name_is_uncertain():
    d = decide_alloc_conf({ALLOC_VAR: ON}, None)
    assert d.var == ALLOC_VAR and d.certain is False
    assert "alloc_torch_unknown" in [n["code"] for n in d.notes]
    # the CUDA name is safe whatever the version
    assert decide_alloc_conf({CUDA_VAR: ON}, None).certain is True


def test_rocm_reads_hip_when_cuda_name_unset():
    d = decide_alloc_conf({HIP_VAR: "expandable_segments:True"}, "2.8.0+rocm6.3", "rocm")
    assert d.var == HIP_VAR and d.expandable_segments is True
    d = decide_alloc_conf({HIP_VAR: ON, CUDA_VAR: OFF}, "2.8.0+rocm6.3", "rocm")
    assert d.var == CUDA_VAR


def test_empty_value_alone_gives_torch_defaults():
    d = decide_alloc_conf({CUDA_VAR: "  "}, "2.11.0")
    assert d.var is None and d.shadowed_by_blank is None
    assert [n["level"] for n in d.notes if n["code"] == "alloc_empty"] == ["info"]


@pytest.mark.parametrize("tv", ["2.10.0", "2.11.0+cu130", "2.13.0", None])
@pytest.mark.parametrize("blank", ["", "  "])
def test_empty_cuda_variable_hides_the_new_name(tv, blank):
    """An image's ``ENV PYTORCH_CUDA_ALLOC_CONF=`` still counts as set (get_env, env.h@2.10.0), so
    torch 2.10+ never looks at PYTORCH_ALLOC_CONF: expandable segments stay off."""
    d = decide_alloc_conf({CUDA_VAR: blank, ALLOC_VAR: ON}, tv)
    assert d.var is None and d.expandable_segments is False and d.certain is True
    assert d.shadowed_by_blank == ALLOC_VAR
    assert [ig["var"] for ig in d.ignored] == [ALLOC_VAR]
    warn = [n for n in d.notes if n["code"] == "alloc_empty"]
    assert len(warn) == 1 and warn[0]["level"] == "warning"
    assert ALLOC_VAR in warn[0]["en"] and f"unset {CUDA_VAR}" in warn[0]["en"] and ALLOC_VAR in warn[0]["zh"]


def test_empty_cuda_variable_on_torch_2_9_is_not_the_reason():
    """On 2.9.x PYTORCH_ALLOC_CONF is ignored for CUDA whatever the other variable holds."""
    d = decide_alloc_conf({CUDA_VAR: "", ALLOC_VAR: ON}, "2.9.1")
    assert d.shadowed_by_blank is None
    assert "2.9.x" in d.ignored[0]["en"]


def test_empty_new_name_does_not_hide_the_cuda_one():
    d = decide_alloc_conf({CUDA_VAR: ON, ALLOC_VAR: ""}, "2.11.0")
    assert d.var == CUDA_VAR and d.expandable_segments is True and d.shadowed_by_blank is None


# --- what vLLM itself reads ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vv", "reads"),
    [
        ("0.11.0", (CUDA_VAR,)),
        ("0.30.0", (CUDA_VAR,)),
        ("0.31.0", (ALLOC_VAR, CUDA_VAR, HIP_VAR)),
        ("0.33.0rc1", (ALLOC_VAR, CUDA_VAR, HIP_VAR)),
        (None, None),
    ],
)
def test_vllm_alloc_reads(vv, reads):
    assert vllm_alloc_reads(vv) == reads


def test_vllm_and_torch_disagree():
    # vLLM 0.31+ looks at PYTORCH_ALLOC_CONF first, torch 2.11 lets PYTORCH_CUDA_ALLOC_CONF win
    d = decide_alloc_conf({ALLOC_VAR: ON, CUDA_VAR: OFF}, "2.11.0", "cuda", "0.31.0")
    assert (d.vllm_var, d.vllm_value) == (ALLOC_VAR, ON)
    assert (d.var, d.value) == (CUDA_VAR, OFF)
    assert "alloc_vllm_disagrees" in [n["code"] for n in d.notes]


def test_old_vllm_misses_the_new_name():
    # torch 2.11 turns expandable segments on from PYTORCH_ALLOC_CONF; vLLM 0.11 never sees it
    d = decide_alloc_conf({ALLOC_VAR: ON}, "2.11.0", "cuda", "0.11.0")
    assert d.expandable_segments is True
    assert d.vllm_var is None
    assert "alloc_vllm_disagrees" in [n["code"] for n in d.notes]


def test_agreement_adds_no_note():
    d = decide_alloc_conf({CUDA_VAR: ON}, "2.8.0", "cuda", "0.11.0")
    assert [n["code"] for n in d.notes] == []
    assert d.to_json()["vllm_reads"] == {"var": CUDA_VAR, "value": ON}
