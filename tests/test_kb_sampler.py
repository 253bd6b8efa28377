"""Sampler, migration and start-up branches: realistic facts reach the right leaf, with the right commands."""

from __future__ import annotations

import re

import pytest
from kbkit import GIB, MIB, facts, kb, leaf_for, script, walk_to

from oomwizard.kb.loader import load_kb

AREA_LEAVES = (
    "sampler-warmup",
    "sampler-sort-large-vocab",
    "sampler-sort-deepgemm",
    "sampler-warmup-mrv2",
    "v1-migration",
    "profile-run-oom",
    "profile-run-oom-v0",
    "multimodal-profile",
    "lora",
)
AREA_QUESTIONS = ("sampler_model", "sampler_deepgemm", "v0_baseline", "profile_multimodal")
TRUNK_QUESTIONS = ("symptom", "phase", "vllm_version", "changed_recently", "engine", "model_runner", "gpu_arch", "allocator")


# --- the knowledge base itself ------------------------------------------------------------------


def test_area_nodes_load_without_problems() -> None:
    _, problems = load_kb(strict=False)
    mine = [p for p in problems if any(n in str(p) for n in (*AREA_LEAVES, *AREA_QUESTIONS, "sampler.yaml", "startup.yaml", "migration.yaml"))]
    assert mine == []
    for leaf_id in AREA_LEAVES:
        assert leaf_id in kb().leaves
    for qid in (*AREA_QUESTIONS, *TRUNK_QUESTIONS):
        assert kb().questions[qid]


@pytest.mark.parametrize("node", [*AREA_QUESTIONS, *TRUNK_QUESTIONS])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_question_help_exists_in_both_languages(node: str, lang: str) -> None:
    art = kb().articles.get(("questions", node, lang))
    assert art is not None and art.title and "## " in art.body


@pytest.mark.parametrize("leaf_id", AREA_LEAVES)
def test_articles_have_matching_structure(leaf_id: str) -> None:
    en = kb().articles[("leaves", leaf_id, "en")].body
    zh = kb().articles[("leaves", leaf_id, "zh")].body
    heads = lambda text: re.findall(r"^## ", text, re.M)  # noqa: E731
    assert len(heads(en)) == len(heads(zh)) >= 4
    blocks = lambda text: [b for i, b in enumerate(text.split("```")) if i % 2 == 1]  # noqa: E731
    assert blocks(en) == blocks(zh)


# --- walks ---------------------------------------------------------------------------------------


def test_sampler_message_on_an_ordinary_model_reaches_the_warmup_leaf() -> None:
    fs = facts(diagnosis="sampler-warmup", vllm_version="0.9.2", model_arch="Qwen2ForCausalLM", sampler_dummy_requests=256)
    done = walk_to(fs)
    assert done.leaf.id == "sampler-warmup"
    assert ("sampler_model", "qwen") in [(s.question, s.answer) for s in done.path]


def test_sort_traceback_or_huge_vocabulary_reaches_the_sort_leaf() -> None:
    assert leaf_for(facts(diagnosis="sampler-sort-large-vocab", vllm_version="0.15.0")).id == "sampler-sort-large-vocab"
    assert leaf_for(facts(failure_phase="sampler_warmup", vllm_version="0.13.0", model_arch="GptOssForCausalLM")).id == (
        "sampler-sort-large-vocab"
    )
    assert leaf_for(facts(diagnosis="sampler-warmup", vllm_version="0.13.0", vocab_size=262208)).id == "sampler-sort-large-vocab"


def test_deepseek_v32_on_hopper_reaches_the_deepgemm_leaf() -> None:
    fs = facts(diagnosis="sampler-warmup", vllm_version="0.13.0", model_arch="DeepseekV32ForCausalLM", gpu_arch="hopper")
    done = walk_to(fs)
    assert done.leaf.id == "sampler-sort-deepgemm"
    assert ("sampler_deepgemm", "yes") in [(s.question, s.answer) for s in done.path]


def test_deepseek_v32_with_deepgemm_off_gets_the_plain_sort_leaf() -> None:
    fs = facts(
        diagnosis="sampler-warmup",
        vllm_version="0.13.0",
        model_arch="DeepseekV32ForCausalLM",
        gpu_arch="hopper",
        env_vllm_use_deep_gemm="0",
    )
    assert leaf_for(fs).id == "sampler-sort-large-vocab"


def test_model_runner_v2_warmup_goes_to_its_own_leaf() -> None:
    # 0.30.0 uses model runner V2 for every model; no "warming up sampler" message under it.
    assert leaf_for(facts(failure_phase="sampler_warmup", vllm_version="0.30.0", model_arch="Qwen3ForCausalLM")).id == (
        "sampler-warmup-mrv2"
    )
    # The V1-runner message proves the V1 runner, whatever the default would have been.
    assert leaf_for(facts(diagnosis="sampler-warmup", vllm_version="0.30.0", model_runner="v2")).id == "sampler-warmup"


def test_the_v1_warmup_count_beats_a_v2_default_also_for_the_sort_leaf() -> None:
    # "warming up sampler with 256 dummy requests" with a sort traceback on 0.29: the release default is V2,
    # but only the V1 runner prints that message, so the sort leaf applies, not the model runner V2 one.
    fs = facts(diagnosis="sampler-sort-large-vocab", vllm_version="0.29.0", sampler_dummy_requests=256, model_arch="GptOssForCausalLM")
    assert leaf_for(fs).id == "sampler-sort-large-vocab"


def test_sort_checks_ignore_the_flashinfer_info_line_but_catch_the_traceback() -> None:
    info = "(Worker pid=238) INFO 05-24 18:56:13 [topk_topp_sampler.py:45] Using FlashInfer for top-p & top-k sampling."
    frame = '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/sample/ops/topk_topp_sampler.py", line 262, in forward_native'
    for leaf_id in ("sampler-sort-large-vocab", "sampler-sort-deepgemm"):
        absent = [c.auto.log_absent for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_absent]
        assert not any(re.search(p, info) for p in absent), leaf_id
        assert any(re.search(p, frame) for p in absent), leaf_id


@pytest.mark.parametrize(
    "ready",
    [
        "(EngineCore_DP0 pid=412) INFO 03-04 10:11:12 [core.py:218] init engine (profile, create kv cache, warmup model) took 88.31 seconds",
        "(APIServer pid=1) INFO 05-08 16:20:01 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000",
        "INFO:     Application startup complete.",
    ],
)
def test_start_up_checks_accept_every_releases_ready_line(ready: str) -> None:
    for leaf_id in ("sampler-warmup", "sampler-warmup-mrv2", "sampler-sort-large-vocab", "sampler-sort-deepgemm"):
        present = [c.auto.log_present for c in kb().leaves[leaf_id].checks if c.auto and c.auto.log_present]
        assert any(re.search(p, ready) for p in present), leaf_id


def test_upgrade_from_v0_reaches_the_migration_leaf() -> None:
    fs = facts(diagnosis="sampler-warmup", vllm_version="0.8.2", changed_recently="vllm_upgrade")
    assert leaf_for(fs, {"v0_baseline": "ran_on_v0"}).id == "v1-migration"
    # A leftover VLLM_USE_V1=0 on 0.12 says the deployment came from V0.
    fs = facts(diagnosis="sampler-warmup", vllm_version="0.12.0", changed_recently="vllm_upgrade", env_vllm_use_v1="0")
    assert leaf_for(fs).id == "v1-migration"


def test_upgrade_within_v1_keeps_the_symptom_branch() -> None:
    fs = facts(diagnosis="sampler-warmup", vllm_version="0.15.0", changed_recently="vllm_upgrade", model_arch="LlamaForCausalLM")
    done = walk_to(fs, {"v0_baseline": "already_v1"})
    assert done.leaf.id == "sampler-warmup"
    fs = facts(diagnosis="kv-cache-too-small", vllm_version="0.15.0", changed_recently="vllm_upgrade")
    assert leaf_for(fs, {"v0_baseline": "already_v1"}).id == "kv-cache-too-small"


def test_no_upgrade_never_asks_about_v0() -> None:
    done = walk_to(facts(diagnosis="sampler-warmup", vllm_version="0.9.2", changed_recently="config_change"))
    assert "v0_baseline" not in [s.question for s in done.path]


def test_profile_branch_by_model_kind_and_engine() -> None:
    assert leaf_for(facts(diagnosis="profile-run-oom", vllm_version="0.20.0")).id == "profile-run-oom"
    assert leaf_for(facts(failure_phase="profile_run", vllm_version="0.7.3")).id == "profile-run-oom-v0"
    assert leaf_for(facts(diagnosis="profile-run-oom", vllm_version="0.20.0", lora_enabled=True)).id == "lora"
    assert leaf_for(facts(diagnosis="profile-run-oom", vllm_version="0.20.0", is_multimodal=True)).id == "multimodal-profile"
    assert leaf_for(facts(diagnosis="multimodal-profile", vllm_version="0.11.0")).id == "multimodal-profile"


# --- commands per release ----------------------------------------------------------------------------


def test_sampler_commands_carry_the_computed_values() -> None:
    fs = facts(
        vllm_version="0.15.0",
        sampler_dummy_requests=256,
        oom_free_bytes=int(212.62 * MIB),
        oom_total_bytes=int(23.52 * GIB),
        vocab_size=154880,
        gpu_memory_utilization=0.9,
    )
    # the profiling run sampled the same 256 rows, so a fit from the free memory (32) would only grow the KV cache
    assert script("sampler-warmup", "lower-max-num-seqs", fs) == (True, "vllm serve <MODEL> --max-num-seqs 128  # plus your other flags")
    ok, text = script("sampler-warmup", "lower-gpu-memory-utilization", fs)
    assert ok and "--gpu-memory-utilization 0.82" in text


def test_post_kv_warmup_leaves_give_back_utilization_before_capping_sequences() -> None:
    # vllm/v1/worker/gpu_model_runner.py@0.8.0: profile_run() samples the same rows, so util is the lever that widens the margin
    for lid in ("sampler-warmup", "sampler-sort-large-vocab", "sampler-sort-deepgemm"):
        ids = [f.id for f in kb().leaves[lid].fixes]
        assert ids.index("lower-gpu-memory-utilization") < ids.index("lower-max-num-seqs"), lid
        seqs = next(f for f in kb().leaves[lid].fixes if f.id == "lower-max-num-seqs")
        assert seqs.evidence == "code" and any("@0." in s for s in seqs.sources)
        assert "does not change" not in seqs.cost_note.en and "KV cache grows" in seqs.cost_note.en


def test_graph_accounting_switch_by_release() -> None:
    ok, text = script("sampler-warmup", "count-cudagraphs-in-budget", facts(vllm_version="0.19.0"))
    assert ok and "export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1" in text
    ok, text = script("sampler-warmup", "count-cudagraphs-in-budget", facts(vllm_version="0.21.0"))
    assert ok and "unset VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" in text
    ok, _ = script("sampler-warmup", "count-cudagraphs-in-budget", facts(vllm_version="0.17.0"))
    assert not ok  # the variable does not exist before 0.18.0


def test_v0_fallback_only_where_v0_exists() -> None:
    ok, text = script("v1-migration", "back-to-v0", facts(vllm_version="0.9.2"))
    assert ok and "export VLLM_USE_V1=0" in text
    ok, text = script("v1-migration", "back-to-v0", facts(vllm_version="0.7.3"))
    assert ok and "unset VLLM_USE_V1" in text
    ok, _ = script("v1-migration", "back-to-v0", facts(vllm_version="0.11.0"))
    assert not ok


def test_no_swap_space_and_no_invented_switches_anywhere() -> None:
    for leaf_id in AREA_LEAVES:
        for fix in kb().leaves[leaf_id].fixes:
            for v in fix.variants:
                names = {name for name, _ in v.flags} | {name for name, _ in v.env}
                assert "--swap-space" not in names and "--use-deepgemm" not in names
                assert "VLLM_ALLOW_WORKSPACE_GROWTH" not in names


def test_deepgemm_is_switched_by_the_variable() -> None:
    ok, text = script("sampler-sort-deepgemm", "deepgemm-off", facts(vllm_version="0.13.0"))
    assert ok and "export VLLM_USE_DEEP_GEMM=0" in text
    ok, text = script("sampler-sort-deepgemm", "moe-without-deepgemm", facts(vllm_version="0.11.0"))
    assert not ok  # VLLM_MOE_USE_DEEP_GEMM arrived in 0.11.1


def test_multimodal_limit_spelling_by_release() -> None:
    base = {"limit_mm_per_prompt": '{"image": 8, "video": 1}', "max_model_len": 32768}
    ok, text = script("multimodal-profile", "zero-unused-modalities", facts(vllm_version="0.8.4", **base))
    assert ok and "--limit-mm-per-prompt image=8,video=0" in text  # V1: the image count is kept
    ok, text = script("multimodal-profile", "zero-unused-modalities", facts(vllm_version="0.8.4", engine="v0", **base))
    assert ok and "--limit-mm-per-prompt image=4,video=0" in text  # V0: halved
    ok, text = script("multimodal-profile", "zero-unused-modalities", facts(vllm_version="0.10.0", **base))
    assert ok and """--limit-mm-per-prompt '{"image": 8, "video": 0}'""" in text
    ok, text = script("multimodal-profile", "language-model-only", facts(vllm_version="0.17.0"))
    assert ok and "--language-model-only" in text
    ok, text = script("multimodal-profile", "language-model-only", facts(vllm_version="0.16.0"))
    assert ok and """'{"image": 0, "video": 0}'""" in text
    # the per-modality dummy options first ship in 0.11.1 (vllm/config/multimodal.py@0.11.1)
    assert script("multimodal-profile", "profile-with-your-size", facts(vllm_version="0.14.0"))[0]
    assert not script("multimodal-profile", "profile-with-your-size", facts(vllm_version="0.11.0"))[0]


def test_profile_commands_use_the_token_budget() -> None:
    fs = facts(vllm_version="0.20.0", max_num_batched_tokens=131072, oom_requested_bytes=4 * GIB, oom_free_bytes=1 * GIB)
    ok, text = script("profile-run-oom", "lower-max-num-batched-tokens", fs)
    assert ok and "--max-num-batched-tokens 26112" in text
    ok, text = script("profile-run-oom-v0", "chunked-prefill", facts(vllm_version="0.7.3", engine="v0", max_model_len=65536))
    assert ok and "--enable-chunked-prefill" in text and "--max-num-batched-tokens 32768" in text


def test_fix_applied_to_the_operators_own_command() -> None:
    fs = facts(
        vllm_version="0.9.2",
        serve_command="vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 1024 --gpu-memory-utilization 0.95",
        sampler_dummy_requests=1024,
    )
    ok, text = script("sampler-warmup", "lower-max-num-seqs", fs)
    assert ok and text == "vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 512 --gpu-memory-utilization 0.95"


def test_v0_profile_leaf_does_not_lead_with_chunked_prefill() -> None:
    # vllm/worker/utils.py@0.7.3 and engine/arg_utils.py@0.7.3: V0 refuses chunked prefill for
    # encoder-decoder (Llama-3.2-Vision, the model this leaf's reports use) and pooling models
    leaf = kb().leaves["profile-run-oom-v0"]
    ids = [f.id for f in leaf.fixes]
    assert ids[0] == "lower-max-num-seqs" and ids.index("chunked-prefill") > ids.index("shorter-context")
    chunked = next(f for f in leaf.fixes if f.id == "chunked-prefill")
    note = chunked.variants[0].note
    assert note is not None
    for text in (note.en, note.zh):
        assert "Chunked prefill for encoder/decoder models is not currently supported." in text
        assert "Chunked prefill is not supported for pooling models" in text
    ok, text = script("profile-run-oom-v0", "lower-max-num-seqs", facts(vllm_version="0.7.3", engine="v0", max_num_seqs=256))
    assert ok and "--max-num-seqs 128" in text
    assert "32K" in leaf.root_cause.en or "32K" in leaf.conclusion.en


def test_mrv2_warmup_leaf_names_the_releases_that_have_the_gap() -> None:
    # gpu_worker.py@0.17.0 calls warmup_kernels(); gpu/sample/sampler.py@0.23.0 first uses FlashInfer;
    # gpu/model_runner.py@0.33.0 profiles with SamplingParams.for_sampler_warmup()
    leaf = kb().leaves["sampler-warmup-mrv2"]
    assert not script(leaf.id, "native-sampler", facts(vllm_version="0.20.0"))[0]
    assert script(leaf.id, "native-sampler", facts(vllm_version="0.23.0"))[0]
    ok, cmd = script(leaf.id, "upgrade-to-0-33", facts(vllm_version="0.30.0"))
    assert ok and "vllm>=0.33" in cmd
    assert not script(leaf.id, "upgrade-to-0-33", facts(vllm_version="0.33.0"))[0]
    assert "0.17.0" in leaf.conclusion.en and "0.33.0" in leaf.root_cause.en


def test_a_sampler_oom_before_any_kv_cache_line_is_the_profile() -> None:
    # v1/worker/gpu_model_runner.py@0.8.0: profile_run() raises the same "warming up sampler" message
    base = dict(diagnosis="sampler-warmup", sampler_dummy_requests=256, vllm_version="0.15.0", weights_gib=14.0)
    assert leaf_for(facts(**base)).id == "profile-run-oom"
    assert leaf_for(facts(**base, kv_cache_gib=3.2)).id == "sampler-warmup"
    assert leaf_for(facts(**base, kv_cache_tokens=40000)).id == "sampler-warmup"
    # a log that starts after the weights says nothing about the phase
    assert leaf_for(facts(diagnosis="sampler-warmup", sampler_dummy_requests=256, vllm_version="0.15.0")).id == "sampler-warmup"
