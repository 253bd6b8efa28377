"""Rules added as data: numbers that say the mechanism, a cut traceback placed by the start-up
marks around it, a report's own words that name the phase, and message variants."""

from __future__ import annotations

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT, CUT, CUT_TIMELINE

OOM_256 = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 256.00 GiB. GPU 0 has a total capacity of "
           "31.98 GiB of which 21.21 GiB is free.")
VISION_FRAME = ('  File "/opt/venv/lib/python3.12/site-packages/vllm/model_executor/models/qwen2_5_vl.py", line 338, '
                "in forward\n    output_i = F.scaled_dot_product_attention(q_i,\n")


def _first(text: str) -> tuple[str | None, float]:
    d = diagnose_text(text)
    return (d.matches[0].scenario, d.matches[0].score) if d.matches else (None, 0.0)


def test_a_request_larger_than_the_gpu_is_one_giant_buffer() -> None:
    assert _first(OOM_256) == ("profile-run-oom", 0.45)
    scenario, score = _first("Traceback (most recent call last):\n" + VISION_FRAME + OOM_256)
    assert scenario == "multimodal-profile" and score >= CONFIDENT
    # a request that fits the GPU says nothing of the kind
    small = OOM_256.replace("256.00 GiB", "2.00 GiB").replace("21.21 GiB is free", "1.21 GiB is free")
    assert _first(small)[0] == "runtime-oom"


def test_weights_larger_than_the_gpu_share_cannot_have_loaded() -> None:
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 384.00 MiB. GPU 0 has a total capacity "
           "of 79.33 GiB of which 351.81 MiB is free.")
    cmd = "python -m vllm.entrypoints.openai.api_server --model qwen/Qwen1.5-72B-Chat"
    d = diagnose_text(cmd + "\n" + oom)
    assert d.matches[0].scenario == "weights-load-oom"
    assert any("72B" in r.en or "Qwen1.5-72B" in r.en for r in d.matches[0].reasons)
    # split over 8 GPUs it fits; quantized, the name's count says nothing about bytes
    assert _first(cmd + " --tensor-parallel-size 8\n" + oom)[0] != "weights-load-oom"
    assert _first(cmd + "-AWQ --quantization awq\n" + oom)[0] != "weights-load-oom"


def test_pytorch_misspelt_capacity_still_gives_the_total() -> None:
    d = diagnose_text("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 518.00 MiB. GPU 0 has a "
                      "total capacty of 21.67 GiB of which 4.06 MiB is free.")
    assert d.oom_messages and d.oom_messages[0]["total"] == round(21.67 * (1 << 30))


def test_a_cut_traceback_without_phase_frames_is_placed_by_the_marks_around_it() -> None:
    log = (
        "INFO 04-29 01:07:41 [gpu_model_runner.py:1347] Model loading took 14.2474 GiB and 558.868858 seconds\n"
        "ERROR 04-29 01:10:12 [multiproc_executor.py:470] Traceback (most recent call last):\n"
        'ERROR 04-29 01:10:12 [multiproc_executor.py:470]   File "/usr/lib/vllm/model_executor/layers/fused_moe/'
        'fused_moe.py", line 1295, in fused_experts_impl\n'
        "ERROR 04-29 01:10:12 [multiproc_executor.py:470]     cache13 = torch.empty(M * top_k_num * max(N, K),\n"
    )
    d = diagnose_text(log)
    assert d.matches and d.matches[0].scenario == "profile-run-oom"
    assert d.matches[0].score == CUT_TIMELINE < CUT < CONFIDENT
    assert d.missing
    # with no start-up mark, the frames of the model's own layers still say a forward pass ran:
    # the first one at start-up, at the same tier, saying so
    bare = diagnose_text(log.split("\n", 1)[1])
    assert [(m.scenario, m.score) for m in bare.matches] == [("profile-run-oom", CUT_TIMELINE)]
    assert "forward pass" in bare.matches[0].reasons[0].en


def test_a_reports_own_words_name_the_phase_below_a_confident_claim() -> None:
    scenario, score = _first("# [Bug]: GLM-4.7-Flash OOM during sampler warmup with tensor parallelism on RTX 4090")
    assert scenario == "sampler-warmup" and score < CONFIDENT
    # vLLM's own advice printed at every capture is not a report of an OOM
    assert not diagnose_text("INFO 01-01 [model_runner.py:1] If out-of-memory error occurs during cudagraph capture, "
                             "consider decreasing `gpu_memory_utilization` or switching to eager mode.").matches


def test_message_variants() -> None:
    assert _first("Cuda error /workspace/csrc/custom_all_reduce.cuh:143 'invalid resource handle'")[0] == \
        "custom-allreduce-ipc"
    assert _first("RuntimeError: Aborted due to the lack of CPU swap space. Please increase the swap space to avoid "
                  "this error.") == ("host-memory", 0.95)
    assert _first("(raylet) Refer to the documentation on how to address the out of memory issue: "
                  "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html.")[0] == "host-memory"
    # an 'invalid resource handle' from another library is not custom all-reduce
    assert _first("RuntimeError: CUDA error: invalid resource handle") == (None, 0.0)
