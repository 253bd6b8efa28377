"""An error printed without frames of its own (a worker's last lines) is placed by the traceback
another process of the same start printed: the driver or engine core that was waiting on that
worker, its frames naming the phase (V0 with Ray, multi-process V1)."""

from __future__ import annotations

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT, OTHER_PROCESS, WEAK

SITE = "/usr/local/lib/python3.10/dist-packages/vllm"
W = "(RayWorkerWrapper pid=2210, ip=10.0.0.7) ERROR 03-04 05:06:07 worker_base.py:467] "
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 380.00 MiB. GPU 0 has a total capacity "
       "of 23.64 GiB of which 14.81 MiB is free. Of the allocated memory 22.80 GiB is allocated by PyTorch, and "
       "40.00 MiB is reserved by PyTorch but unallocated.")
DRIVER = [
    "```",
    f'[rank0]:   File "{SITE}/engine/llm_engine.py", line 276, in __init__',
    "[rank0]:     self._initialize_kv_caches()",
    f'[rank0]:   File "{SITE}/engine/llm_engine.py", line 416, in _initialize_kv_caches',
    "[rank0]:     self.model_executor.determine_num_available_blocks())",
    f'[rank0]:   File "{SITE}/executor/distributed_gpu_executor.py", line 39, in determine_num_available_blocks',
    "[rank0]:     num_blocks = self._run_workers(\"determine_num_available_blocks\", )",
    "```",
]
WORKER = ["```", f"{W}    probs = torch.softmax(logits, dim=-1)", f"{W}{OOM}", f"{W}", "```"]


def test_the_drivers_frames_place_the_workers_oom() -> None:
    d = diagnose_text("\n".join(["Two nodes of 24 GB cards:", *DRIVER, "", *WORKER]) + "\n")
    top = d.matches[0]
    assert top.scenario == "profile-run-oom", [(m.scenario, m.score) for m in d.matches]
    assert WEAK < top.score < CONFIDENT  # tied to the worker only by the start they share
    assert "another process" in top.reasons[0].en


def test_in_either_order() -> None:
    d = diagnose_text("\n".join([*WORKER, "", *DRIVER]) + "\n")
    assert d.matches[0].scenario == "profile-run-oom"


def test_without_the_driver_nothing_places_it() -> None:
    d = diagnose_text("\n".join(WORKER) + "\n")
    assert d.matches[0].score <= WEAK


def test_a_traceback_far_from_the_error_does_not_place_it() -> None:
    """Only the chunks of one paste: a traceback hundreds of lines away is another story."""
    filler = [f"DEBUG 03-04 05:06:07 custom_op.py:1] op_{i} registered" for i in range(300)]
    d = diagnose_text("\n".join([*DRIVER, *filler, *WORKER]) + "\n")
    assert d.matches[0].scenario != "profile-run-oom" or d.matches[0].score != OTHER_PROCESS
