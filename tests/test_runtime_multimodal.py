"""A run-time OOM in the multimodal encoder: from the log (or the answers) to its commands."""

from __future__ import annotations

from kbkit import facts, leaf_for, script, walk_to
from logkit import LOGS

from oomwizard.logs.diagnose import diagnose_paths
from oomwizard.report.leaf import leaf_text


def _walk(name: str):
    diag = diagnose_paths([str(LOGS / name)])
    return diag, walk_to(diag.facts)


def test_v1_runner_with_skipped_profiling_drops_the_flag():
    diag, done = _walk("mm_encoder_runtime_v1_0250.log")
    assert diag.facts.value("diagnosis") == "runtime-oom-multimodal"
    assert done.leaf.id == "runtime-oom-multimodal"
    assert [s.question for s in done.path[:1]] == ["symptom"]
    ok, cmd = script("runtime-oom-multimodal", "profile-mm-again", done.facts)
    assert ok and "vllm serve Qwen/Qwen2.5-VL-32B-Instruct" in cmd and "--skip-mm-profiling" not in cmd
    # the V1 runner already profiles the encoder: the V2-only fixes do not apply to 0.25's V1 run
    text = leaf_text(done.leaf, done.facts, done.path)
    assert "--mm-processor-kwargs '{\"max_pixels\": " in text


def test_model_runner_v2_before_0_27_goes_back_to_the_v1_runner():
    diag, done = _walk("mm_encoder_runtime_mrv2_0260.log")
    assert diag.facts.value("model_runner") == "v2"
    assert done.leaf.id == "runtime-oom-multimodal"
    ok, cmd = script("runtime-oom-multimodal", "v1-runner-profiles-the-encoder", done.facts)
    assert ok and "export VLLM_USE_V2_MODEL_RUNNER=0" in cmd
    ok, cmd = script("runtime-oom-multimodal", "upgrade-v2-encoder-profiling", done.facts)
    assert ok and "vllm>=0.27" in cmd


def test_from_0_27_the_runner_v2_fixes_do_not_apply():
    fs = facts(vllm_version="0.27.0", model_runner="v2")
    for fix in ("v1-runner-profiles-the-encoder", "upgrade-v2-encoder-profiling"):
        ok, _ = script("runtime-oom-multimodal", fix, fs)
        assert not ok, fix


def test_encoder_oom_inside_the_v2_profile_is_a_start_up_case():
    """0.27.0's profile calls execute_mm_encoder too, from profile_encoder_cache: not a run-time OOM."""
    diag, done = _walk("mm_encoder_profile_mrv2_0270.log")
    assert diag.facts.value("diagnosis") == "multimodal-profile"
    assert done.leaf.id == "multimodal-profile"


def test_answers_alone_reach_the_leaf():
    leaf = leaf_for(facts(vllm_version="0.26.0"), {"symptom": "serving", "serving_feature": "multimodal"})
    assert leaf.id == "runtime-oom-multimodal"


def test_a_multimodal_model_serving_oom_is_suggested_the_multimodal_choice():
    done = walk_to(facts(vllm_version="0.26.0", failure_phase="serving", is_multimodal=True))
    step = next(s for s in done.path if s.question == "serving_feature")
    assert step.answer == "multimodal" and done.leaf.id == "runtime-oom-multimodal"


# --- prompt logprobs, by the frames that compute them ----------------------------------------------


def test_prompt_logprobs_on_the_v1_runner_cap_the_step():
    diag, done = _walk("prompt_logprobs_v1_0250.log")
    assert diag.facts.value("diagnosis") == "runtime-oom-logprobs"
    assert done.leaf.id == "runtime-oom-logprobs"
    assert next(s for s in done.path if s.question == "serving_feature").answer == "prompt_logprobs"
    ok, cmd = script("runtime-oom-logprobs", "step-sized-for-logits", done.facts)
    assert ok and "--max-num-batched-tokens" in cmd and "--max-num-batched-tokens 32768" not in cmd


def test_whole_vocabulary_prompt_logprobs_go_back_to_the_default_limit():
    """0.29.0 under model runner V2 with --max-logprobs -1: the fix that bounds the output is the limit."""
    diag, done = _walk("prompt_logprobs_all_mrv2_0290.log")
    assert diag.facts.value("model_runner") == "v2" and done.leaf.id == "runtime-oom-logprobs"
    ok, cmd = script("runtime-oom-logprobs", "cap-logprobs", done.facts)
    assert ok and "--max-logprobs 20" in cmd and "--max-logprobs -1" not in cmd


_EC = "ERROR 09-20 19:54:33 [core.py:398] "
_VISION = (f'{_EC}  File "/opt/vllm/model_executor/models/qwen2_vl.py", line 241, in apply_rotary_pos_emb_vision\n'
           f"{_EC}    output = apply_rotary_emb(t_, cos, sin).type_as(t)\n")
_OOM = (f"{_EC}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.17 GiB. GPU 0 has a total capacity "
        "of 79.44 GiB of which 1.02 GiB is free.\n")


def test_an_oom_inside_the_vision_encoder_with_no_step_in_view_ranks_both_encoder_cases_first():
    from oomwizard.logs.diagnose import diagnose_text
    from oomwizard.logs.signatures import CONFIDENT

    ranked = diagnose_text(_VISION + _OOM).matches
    assert [m.scenario for m in ranked][:3] == ["runtime-oom-multimodal", "multimodal-profile", "runtime-oom"]
    assert ranked[0].score < CONFIDENT
    # while serving, the encoder ran on a request's images: the start-up profile is out
    serving = (f'{_EC}  File "/opt/vllm/v1/engine/core.py", line 964, in run_busy_loop\n'
               f"{_EC}    self._process_engine_step()\n")
    ranked = diagnose_text(serving + _VISION + _OOM).matches
    assert ranked[0].scenario == "runtime-oom-multimodal"
    assert "multimodal-profile" not in [m.scenario for m in ranked]
    # the same OOM in a text model's layers stays the generic run-time OOM
    text_model = _VISION.replace("qwen2_vl.py", "llama.py").replace("apply_rotary_pos_emb_vision", "forward")
    assert diagnose_text(text_model + _OOM).matches[0].scenario == "runtime-oom"
