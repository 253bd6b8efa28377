"""The lines vLLM prints while it builds the profiling run's multimodal dummy batch place an OOM
after them in that run, even when no other start-up line made it into the excerpt."""

from __future__ import annotations

import pytest

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT

OOM_V0 = ("ERROR 05-14 09:12:44 [engine.py:448] CUDA out of memory. Tried to allocate 1.17 GiB. GPU 0 has a "
          "total capacity of 23.53 GiB of which 611.25 MiB is free. Including non-PyTorch memory, this process "
          "has 22.93 GiB memory in use. Of the allocated memory 22.40 GiB is allocated by PyTorch, and "
          "61.02 MiB is reserved by PyTorch but unallocated.\n"
          "ERROR 05-14 09:12:44 [engine.py:448] Traceback (most recent call last):\n")
TOO_SHORT = ("WARNING 05-14 09:12:40 [profiling.py:245] The sequence length used for profiling (max_num_batched_"
             "tokens / max_num_seqs = 8192) is too short to hold the multi-modal embeddings in the worst case "
             "(32768 tokens in total, out of which {'image': 32768} are reserved for multi-modal embeddings). "
             "This may cause certain multi-modal inputs to fail during inference, even when the input text is "
             "short. To avoid this, you should increase `max_model_len`, reduce `max_num_seqs`, and/or reduce "
             "`mm_counts`.\n")
BUDGET = ("(EngineCore_0 pid=88) INFO 09-30 17:02:11 [gpu_model_runner.py:3345] Encoder cache will be "
          "initialized with a budget of 16384 tokens, and profiled with 4 image items of the maximum feature "
          "size.\n")
OOM_V1 = ("(EngineCore_0 pid=88) ERROR 09-30 17:02:13 [core.py:708] torch.OutOfMemoryError: CUDA out of "
          "memory. Tried to allocate 3.25 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is "
          "free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. Of the allocated "
          "memory 76.90 GiB is allocated by PyTorch, and 412.33 MiB is reserved by PyTorch but unallocated.\n")
SERVING = "(APIServer pid=1) INFO:     Application startup complete.\n"


@pytest.mark.parametrize(("text", "what"), [(TOO_SHORT + OOM_V0, "V0 dummy data"), (BUDGET + OOM_V1, "V1 budget")],
                         ids=["v0-too-short", "v1-encoder-budget"])
def test_an_oom_after_the_multimodal_dummy_batch_is_the_multimodal_profile(text: str, what: str) -> None:
    d = diagnose_text(text, "vllm.log")
    assert d.matches and d.matches[0].scenario == "multimodal-profile", (what, d.matches)
    assert d.matches[0].score >= CONFIDENT
    assert d.facts.value("failure_phase") == "profile_run"


def test_the_same_oom_once_serving_is_not_the_profiling_run() -> None:
    d = diagnose_text(BUDGET + SERVING + OOM_V1, "vllm.log")
    assert d.matches and d.matches[0].scenario != "multimodal-profile"
    assert "multimodal-profile" not in [m.scenario for m in d.matches[:1]]
    assert d.facts.value("failure_phase") == "serving"


def test_without_the_line_the_bare_oom_is_not_placed_in_profiling() -> None:
    d = diagnose_text(OOM_V0, "vllm.log")
    assert not d.matches or d.matches[0].scenario not in ("multimodal-profile", "profile-run-oom")
