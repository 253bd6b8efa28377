"""An out-of-memory error whose traceback runs through no file of vLLM: the function names in it
(`step`, `generate`, `load_weights`) are another program's, a trainer beside vLLM or a library,
and place no vLLM phase."""

from __future__ import annotations

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 130.00 MiB. GPU 0 has a total capacity "
       "of 94.99 GiB of which 87.19 MiB is free. Of the allocated memory 80.10 GiB is allocated by PyTorch, "
       "and 20.00 MiB is reserved by PyTorch but unallocated.")
ENV = "/opt/conda/envs/rl/lib/python3.10/site-packages"


def _tb(*frames: tuple[str, int, str]) -> str:
    lines = ["[rank0]: Traceback (most recent call last):"]
    for path, line, func in frames:
        lines += [f'[rank0]:   File "{path}", line {line}, in {func}', "[rank0]:     out = func(*args, **kwargs)"]
    return "\n".join([*lines, f"[rank0]: {OOM}", ""])


def test_an_optimizer_step_is_not_the_engine_step() -> None:
    d = diagnose_text(_tb((f"{ENV}/trl/trainer/grpo_trainer.py", 910, "training_step"),
                          (f"{ENV}/torch/optim/optimizer.py", 487, "wrapper"),
                          (f"{ENV}/torch/optim/adamw.py", 220, "step")))
    assert d.matches, "a GPU OOM is still reported"
    assert d.matches[0].score < CONFIDENT, [(m.scenario, m.score) for m in d.matches]


def test_the_engine_step_in_vllm_still_places_serving() -> None:
    d = diagnose_text(_tb((f"{ENV}/vllm/engine/llm_engine.py", 1380, "step"),
                          (f"{ENV}/vllm/worker/model_runner.py", 1700, "execute_model")))
    assert d.matches[0].scenario == "runtime-oom" and d.matches[0].score >= CONFIDENT


def test_a_trainer_frame_above_vllm_frames_keeps_their_phase() -> None:
    d = diagnose_text(_tb((f"{ENV}/verl/workers/rollout/vllm_rollout/vllm_rollout.py", 120, "__init__"),
                          (f"{ENV}/vllm/v1/worker/gpu_worker.py", 300, "determine_available_memory"),
                          (f"{ENV}/vllm/v1/worker/gpu_model_runner.py", 3900, "profile_run")))
    assert d.matches[0].scenario == "profile-run-oom" and d.matches[0].score >= CONFIDENT


def test_pytorch_graph_capture_frames_alone_place_graph_capture() -> None:
    # A paste that kept only PyTorch's frames under `with torch.cuda.graph(...)`: in a vLLM log
    # only graph capture calls torch/cuda/graphs.py, so its frames name the phase.
    head = "INFO 05-02 10:11:40 [kv_cache_utils.py:716] GPU KV cache size: 171,056 tokens\n"
    d = diagnose_text(head + _tb((f"{ENV}/torch/cuda/graphs.py", 186, "__exit__"),
                                 (f"{ENV}/torch/cuda/graphs.py", 84, "capture_end")))
    assert d.matches[0].scenario == "cudagraph-capture" and d.matches[0].score >= CONFIDENT, \
        [(m.scenario, m.score) for m in d.matches]


def test_other_torch_frames_alone_still_place_nothing() -> None:
    d = diagnose_text(_tb((f"{ENV}/torch/nn/modules/module.py", 1751, "_call_impl"),
                          (f"{ENV}/torch/cuda/memory.py", 200, "capture")))
    assert not d.matches or d.matches[0].score < CONFIDENT, [(m.scenario, m.score) for m in d.matches]
