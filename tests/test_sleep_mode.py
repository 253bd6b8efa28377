"""Sleep mode end to end: which failures the log reader gives to it, how the sleep and wake lines
place an error, and which of its two leaves a walk ends in, with the commands computed there."""

from __future__ import annotations

import pytest
from logkit import LOGS

from oomwizard.advice.commands import render_fix
from oomwizard.engine import Done, walk
from oomwizard.facts.model import Fact, FactSet
from oomwizard.kb.loader import get_kb
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.logs.signatures import CONFIDENT
from oomwizard.versions import Version

SITE = "/usr/lib/python3/dist-packages"


def _walk(facts: FactSet) -> Done:
    done = walk(get_kb(), facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done)
    return done


def _log(**values: object) -> FactSet:
    return FactSet.of(Fact(k, v, f"log line 1 ({k})", kind="log") for k, v in values.items())


@pytest.mark.parametrize(("name", "leaf"), [
    ("sleep_wake_kv_cumem_verl_083.log", "sleep-mode"),
    ("sleep_wakeup_cumem_oom_rl.log", "sleep-mode"),
    ("sleep_trainer_oom_asleep_openrlhf_0151.log", "sleep-mode"),
    ("sleep_expandable_assert_trl_0102.log", "sleep-mode-expandable-segments"),
    ("sleep_kv_connector_expandable_0270_compose.log", "sleep-mode-expandable-segments"),
])
def test_each_log_ends_in_its_leaf(name: str, leaf: str) -> None:
    done = _walk(diagnose_paths([str(LOGS / name)]).facts)
    assert done.leaf.id == leaf
    assert done.path[0].question == "symptom" and done.path[0].answer == "sleep_wake"


def test_a_weights_only_wake_up_places_the_error_in_the_weight_sync() -> None:
    d = diagnose_paths([str(LOGS / "sleep_wake_kv_cumem_verl_083.log")])
    reasons = [r.en for r in d.best.reasons]
    assert any("wake_up and its cumem allocator" in r for r in reasons)
    assert d.facts.get("failure_phase") is None  # waking up is no start-up phase


def test_an_oom_while_vllm_sleeps_is_the_trainers_and_names_the_release() -> None:
    d = diagnose_paths([str(LOGS / "sleep_trainer_oom_asleep_openrlhf_0151.log")])
    assert d.best.scenario == "sleep-mode" and d.best.score >= CONFIDENT
    reasons = " ".join(r.en for r in d.best.reasons)
    assert "vLLM was asleep" in reasons and "0.14.0-0.16.x" in reasons
    # The sleep line is evidence; the engine was not serving while it slept.
    assert any("fall asleep" in e.text for e in d.best.evidence)
    assert d.facts.get("failure_phase") is None


def _traceback(frames: list[tuple[str, str]], last: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for path, func in frames:
        lines += [f'  File "{SITE}/{path}", line 10, in {func}', "    x = y()"]
    return "\n".join([*lines, last]) + "\n"


def test_a_report_that_retypes_the_error_in_lower_case() -> None:
    d = diagnose_text("# cuda error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n\n"
                      "I am trying to run verl with vllm 0.7 on 8 H100s.\n")
    assert d.best is not None and d.best.scenario == "sleep-mode" and d.best.score >= CONFIDENT
    assert d.facts.value("error_platform") == "cuda"


def test_the_cumem_error_at_start_up_is_that_phase_first() -> None:
    """The pool also holds the weights while they load: the phase's leaf leads, sleep mode follows."""
    text = _traceback(
        [("vllm/v1/worker/gpu_worker.py", "load_model"), ("vllm/model_executor/model_loader/default_loader.py", "load_weights")],
        "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:163")
    d = diagnose_text(text)
    assert [m.scenario for m in d.matches[:2]] == ["weights-load-oom", "sleep-mode"]
    assert d.facts.value("failure_phase") == "load_weights"


def test_a_pytorch_oom_under_wake_up_is_sleep_mode() -> None:
    text = _traceback(
        [("vllm/entrypoints/llm.py", "wake_up"), ("vllm/v1/worker/gpu_worker.py", "wake_up")],
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.19 GiB of which 1.02 GiB is free.")
    d = diagnose_text(text)
    assert d.best.scenario == "sleep-mode" and d.best.score >= 0.9


def test_an_unplaced_oom_leans_to_sleep_mode_only_when_it_is_on() -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.\n"
    assert diagnose_text(oom).best.scenario == "runtime-oom"
    on = ("INFO 09-21 14:02:19 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-8B', "
          "'enable_sleep_mode': True}\n")
    d = diagnose_text(on + oom)
    assert d.best.scenario == "sleep-mode" and d.best.score >= CONFIDENT
    assert d.facts.value("sleep_mode") is True


def test_after_a_full_wake_up_the_error_is_no_longer_the_trainers() -> None:
    text = ("INFO 04-18 02:19:07 [worker.py:133] Sleep mode freed 47.92 GiB memory, 6.10 GiB memory is still in use.\n"
            "INFO 04-18 02:20:02 [executor_base.py:226] It took 0.95 seconds to wake up tags ['weights', 'kv_cache'].\n"
            + _traceback([("vllm/v1/worker/gpu_model_runner.py", "execute_model")],
                         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."))
    d = diagnose_text(text)
    assert d.best.scenario == "runtime-oom"
    assert "sleep-mode" in [m.scenario for m in d.matches]


def test_expandable_segments_harmless_from_0_21_with_sleep_mode() -> None:
    """0.21.0+ switch the option off around their pool: a wake-up OOM there is the main leaf's."""
    base = dict(diagnosis="sleep-mode", expandable_segments=True, vllm_version=Version.parse("0.22.0"))
    assert _walk(_log(**base, sleep_mode=True)).leaf.id == "sleep-mode"
    assert _walk(_log(**base)).leaf.id == "sleep-mode-expandable-segments"  # a KV connector's refusal
    old = dict(base, vllm_version=Version.parse("0.10.2"), sleep_mode=True)
    assert _walk(_log(**old)).leaf.id == "sleep-mode-expandable-segments"


def test_an_unplaced_oom_with_sleep_mode_on_reaches_the_leaf() -> None:
    assert _walk(_log(sleep_mode=True)).leaf.id == "sleep-mode"
    assert _walk(_log()).leaf.id == "oom-triage"


def test_commands_follow_the_release_and_the_log() -> None:
    d = diagnose_paths([str(LOGS / "sleep_expandable_assert_trl_0102.log")])
    kb = get_kb()
    lower = next(f for f in kb.leaves["sleep-mode"].fixes if f.id == "lower-vllm-share")
    rf = render_fix(lower, d.facts)
    assert "--gpu-memory-utilization 0.25" in rf.variants[0].script
    tags = next(f for f in kb.leaves["sleep-mode"].fixes if f.id == "wake-in-two-steps")
    assert not render_fix(tags, _log(vllm_version=Version.parse("0.8.2"))).available
    assert render_fix(tags, _log(vllm_version=Version.parse("0.8.3"))).available
    drop = next(f for f in kb.leaves["sleep-mode-expandable-segments"].fixes if f.id == "drop-expandable-for-vllm")
    script = render_fix(drop, d.facts).variants[0].script
    # an unset alone would let torch 2.10+ read expandable_segments:True from PYTORCH_ALLOC_CONF
    # (c10/cuda/CUDAAllocatorConfig.h@2.10.0), which vLLM <= 0.30 never checks
    assert "unset PYTORCH_CUDA_ALLOC_CONF" not in script
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False" in script and "unset PYTORCH_ALLOC_CONF" in script
    pool = next(f for f in kb.leaves["sleep-mode-expandable-segments"].fixes if f.id == "kv-cache-in-cumem-pool")
    assert "--enable-cumem-allocator" in render_fix(pool, _log(vllm_version=Version.parse("0.27.0"))).variants[0].script
    assert "--enable-sleep-mode" in render_fix(pool, _log(vllm_version=Version.parse("0.21.0"))).variants[0].script


def test_both_variables_set_keeps_the_other_options_and_switches_torch_off() -> None:
    both = _log(vllm_version=Version.parse("0.19.0"), alloc_conf="expandable_segments:True,max_split_size_mb:512",
                alloc_conf_var="PYTORCH_ALLOC_CONF", expandable_segments=True)
    drop = next(f for f in get_kb().leaves["sleep-mode-expandable-segments"].fixes if f.id == "drop-expandable-for-vllm")
    script = render_fix(drop, both).variants[0].script
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False,max_split_size_mb:512" in script
    assert "unset PYTORCH_ALLOC_CONF" in script


def test_option_only_in_pytorch_alloc_conf_routes_to_the_special_leaf_on_021_to_030() -> None:
    """vllm/device_allocator/cumem.py@0.30.0 switches the option off only when PYTORCH_CUDA_ALLOC_CONF has it."""
    base = dict(diagnosis="sleep-mode", expandable_segments=True, sleep_mode=True, alloc_conf_var="PYTORCH_ALLOC_CONF")
    assert _walk(_log(**base, vllm_version=Version.parse("0.25.0"))).leaf.id == "sleep-mode-expandable-segments"
    # 0.31.0 reads the live allocator settings (device_allocator/alloc_conf.py@0.31.0)
    assert _walk(_log(**base, vllm_version=Version.parse("0.31.0"))).leaf.id == "sleep-mode"
