"""The kernel warm-up and the CUDA graph memory profile: frames name their own phase (cut or not),
the sampler's wrapper under profile_run() is the profiling run, and each leaf's commands carry
this log's numbers and this release's spelling."""

from __future__ import annotations

from pathlib import Path

from kbkit import GIB, H200_BYTES, MIB, facts, value, why
from logkit import LOGS

from oomwizard.engine import Done, walk
from oomwizard.kb.loader import get_kb
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.report.leaf import leaf_text

SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
EC = "(EngineCore pid=77) ERROR 05-02 09:01:30 [core.py:1093] "
START = [
    "(APIServer pid=1) INFO 05-02 09:00:00 [api_server.py:1901] vLLM API server version {v}",
    "(EngineCore pid=77) INFO 05-02 09:00:40 [gpu_model_runner.py:4410] Model loading took 60.1000 GiB and 50.0 seconds",
]
HEAD = [f"{EC}EngineCore failed to start.", f"{EC}Traceback (most recent call last):",
        f'{EC}  File "{SITE}/v1/engine/core.py", line 283, in _initialize_kv_caches',
        f"{EC}    self.model_executor.initialize_from_config(kv_cache_configs)"]
WARMUP = [f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 586, in compile_or_warm_up_model',
          f"{EC}    kernel_warmup(self)",
          f'{EC}  File "{SITE}/model_executor/warmup/kernel_warmup.py", line 46, in kernel_warmup',
          f"{EC}    flashinfer_autotune(worker.model_runner)",
          f'{EC}  File "{SITE}/model_executor/warmup/kernel_warmup.py", line 103, in flashinfer_autotune',
          f"{EC}    runner._dummy_run(",
          f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 5480, in _dummy_run',
          f"{EC}    outputs = self.model("]
PROFILE = [f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 385, in determine_available_memory',
           f"{EC}    cudagraph_memory_estimate = self.model_runner.profile_cudagraph_memory()",
           f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 5992, in profile_cudagraph_memory',
           f"{EC}    self._warmup_and_capture(",
           f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 6163, in _warmup_and_capture',
           f"{EC}    self._dummy_run(",
           f'{EC}  File "{SITE}/compilation/cuda_graph.py", line 318, in __call__',
           f"{EC}    with torch.cuda.graph(cudagraph, pool=self.graph_pool, stream=stream):"]
OOM = (f"{EC}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.19 GiB of which 1.50 GiB is free. Including non-PyTorch memory, this process has 77.68 GiB memory in use.")


def _log(tmp_path: Path, lines: list[str], v: str = "0.20.0") -> Path:
    p = tmp_path / "start.log"
    p.write_text("\n".join(ln.format(v=v) for ln in lines) + "\n", encoding="utf-8")
    return p


def _top(path: Path) -> tuple[str, str | None]:
    d = diagnose_paths([str(path)])
    return d.matches[0].scenario, d.facts.value("failure_phase")


# --- routing by frames ------------------------------------------------------------------------------


def test_a_traceback_through_the_kernel_warmup_is_not_graph_capture(tmp_path: Path) -> None:
    # compile_or_warm_up_model is a capture frame and _dummy_run a profiling one: kernel_warmup wins
    assert _top(_log(tmp_path, [*START, *HEAD, *WARMUP, OOM])) == ("kernel-warmup-oom", "kernel_warmup")


def test_a_cut_traceback_through_the_kernel_warmup_still_names_it(tmp_path: Path) -> None:
    d = diagnose_paths([str(_log(tmp_path, [*START, *HEAD, *WARMUP]))])
    assert d.matches[0].scenario == "kernel-warmup-oom"
    assert all(m.scenario != "cudagraph-capture" for m in d.matches)


def test_a_traceback_through_the_cudagraph_profile_is_before_the_kv_cache(tmp_path: Path) -> None:
    assert _top(_log(tmp_path, [*START, *HEAD[:2], *PROFILE, OOM])) == ("cudagraph-profile-oom", "cudagraph_profile")


def test_a_cut_traceback_through_the_cudagraph_profile_still_names_it(tmp_path: Path) -> None:
    d = diagnose_paths([str(_log(tmp_path, [*START, *HEAD[:2], *PROFILE]))])
    assert [m.scenario for m in d.matches][:1] == ["cudagraph-profile-oom"]


def test_model_runner_v2_profile_runs_capture_model_and_stays_the_profile() -> None:
    # 0.29.0 V2: profile_cudagraph_memory() calls capture_model(), a capture frame, and the log says V2
    d = diagnose_paths([str(LOGS / "cudagraph_profile_0290_mrv2_tp2.log")])
    assert d.matches[0].scenario == "cudagraph-profile-oom"
    assert "mrv2-cudagraph-profile-zero" not in [m.scenario for m in d.matches]


def test_an_ordinary_capture_traceback_still_goes_to_the_capture_leaf(tmp_path: Path) -> None:
    capture = [f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 590, in compile_or_warm_up_model',
               f"{EC}    cuda_graph_memory_bytes = self.model_runner.capture_model()",
               f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 6217, in capture_model']
    assert _top(_log(tmp_path, [*START, *HEAD, *capture, OOM])) == ("cudagraph-capture", "graph_capture")


def test_an_unfinished_deepgemm_bar_places_an_oom_without_traceback(tmp_path: Path) -> None:
    lines = [*START, "(EngineCore pid=77) INFO 05-02 09:01:00 [gpu_worker.py:436] Available KV cache memory: 10.00 GiB",
             "DeepGEMM warmup:  12%|█▏        | 180/1498 [00:09<01:05, 20.1it/s]", OOM]
    assert _top(_log(tmp_path, lines)) == ("kernel-warmup-oom", "kernel_warmup")


def test_profiling_cudagraph_memory_line_places_an_oom_without_traceback(tmp_path: Path) -> None:
    lines = [*START, "(EngineCore pid=77) INFO 05-02 09:00:50 [gpu_model_runner.py:5962] Profiling CUDA graph memory: "
             "PIECEWISE=67 (largest=512), FULL=35 (largest=256)", OOM]
    assert _top(_log(tmp_path, lines)) == ("cudagraph-profile-oom", "cudagraph_profile")


# --- the sampler's wrapper inside profile_run() --------------------------------------------------------

SAMPLER_MSG = ("RuntimeError: CUDA out of memory occurred when warming up sampler with 512 dummy requests. Please try "
               "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")


def _sampler_tb(outer: str, func: str) -> str:
    return "\n".join([
        "Traceback (most recent call last):",
        f'  File "{SITE}/v1/worker/gpu_worker.py", line 370, in {outer}',
        f"    self.model_runner.{func}()",
        f'  File "{SITE}/v1/worker/gpu_model_runner.py", line 5668, in _dummy_sampler_run',
        "    raise RuntimeError(",
        SAMPLER_MSG,
    ])


def test_the_sampler_message_under_profile_run_is_the_profiling_run() -> None:
    d = diagnose_text(_sampler_tb("determine_available_memory", "profile_run"), "x.log")
    assert [m.scenario for m in d.matches][:2] == ["profile-run-oom", "sampler-warmup"]
    assert d.facts.value("failure_phase") == "profile_run"


def test_the_sampler_message_after_capture_stays_the_sampler_warmup() -> None:
    d = diagnose_text(_sampler_tb("compile_or_warm_up_model", "capture_model"), "x.log")
    assert d.matches[0].scenario == "sampler-warmup"
    assert "profile-run-oom" not in [m.scenario for m in d.matches]


# --- calculations -------------------------------------------------------------------------------------


def test_batched_tokens_scale_with_the_failed_allocation() -> None:
    fs = facts(vllm_version="0.20.0", gpu_mem_total_bytes=H200_BYTES, max_num_batched_tokens=8192,
               oom_requested_bytes=4 * GIB, oom_free_bytes=3 * GIB)
    # 8192 x 3 / (2 x 4) = 3072 -> power of two 2048
    assert value("kernel_warmup_max_num_batched_tokens", fs) == "2048"
    assert "8192 x 3.00 GiB / (2 x 4.00 GiB) = 3072" in why("kernel_warmup_max_num_batched_tokens", fs)


def test_batched_tokens_never_below_max_num_seqs() -> None:
    fs = facts(vllm_version="0.20.0", gpu_mem_total_bytes=H200_BYTES, max_num_batched_tokens=8192, max_num_seqs=1024,
               oom_requested_bytes=8 * GIB, oom_free_bytes=512 * MIB)
    assert value("kernel_warmup_max_num_batched_tokens", fs) == "1024"
    assert "lower --max-num-seqs too" in why("kernel_warmup_max_num_batched_tokens", fs)


def test_batched_tokens_unknown_without_the_oom_numbers() -> None:
    fs = facts(vllm_version="0.20.0", gpu_mem_total_bytes=H200_BYTES, max_num_batched_tokens=8192)
    assert value("kernel_warmup_max_num_batched_tokens", fs) is None


def test_util_gives_the_warmup_two_buffers() -> None:
    fs = facts(vllm_version="0.20.0", oom_total_bytes=80 * GIB, gpu_memory_utilization=0.9,
               oom_requested_bytes=2 * GIB, oom_free_bytes=1 * GIB)
    # (2 x 2 - 1) / 80 = 0.0375 -> 0.04; 0.9 - 0.04 = 0.86
    assert value("kernel_warmup_gpu_util", fs) == "0.86"


# --- log to commands ----------------------------------------------------------------------------------


def _walk_text(path: Path) -> tuple[str, str]:
    kb = get_kb()
    d = diagnose_paths([str(path)])
    done = walk(kb, d.facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done)
    return done.leaf.id, leaf_text(done.leaf, done.facts, done.path)


def test_deepgemm_log_walks_to_its_numbers() -> None:
    leaf, text = _walk_text(LOGS / "kernel_warmup_deepgemm_0200_dp8.log")
    assert leaf == "kernel-warmup-oom"
    # 8192 (H200 default) x 2.71 GiB / (2 x 4.03 GiB) = 2754 -> 2048; (2 x 4.03 - 2.71) / 139.80 -> 0.04
    assert "--max-num-batched-tokens 2048" in text and "--gpu-memory-utilization 0.91" in text
    assert "VLLM_DEEP_GEMM_WARMUP=skip" in text and "VLLM_SKIP_DEEP_GEMM_WARMUP" not in text
    assert text.index("--max-num-batched-tokens 2048") < text.index("--gpu-memory-utilization 0.91")
    assert "--no-enable-flashinfer-autotune" in text and "--disable-flashinfer-autotune" not in text
    assert "cudagraph" not in text.split("Fixes")[-1].split("Verify")[0].lower()


def test_flashinfer_log_walks_with_its_own_batched_tokens() -> None:
    leaf, text = _walk_text(LOGS / "kernel_warmup_flashinfer_autotune_0250_tp4.log")
    assert leaf == "kernel-warmup-oom"
    # 32768 x 1.62 GiB / (2 x 3.75 GiB) = 7078 -> 4096
    assert "--max-num-batched-tokens 4096" in text and "--no-enable-flashinfer-autotune" in text


def test_an_older_release_gets_the_older_warmup_switch(tmp_path: Path) -> None:
    leaf, text = _walk_text(_log(tmp_path, [*START, *HEAD, *WARMUP, OOM], v="0.10.2"))
    assert leaf == "kernel-warmup-oom"
    assert "VLLM_SKIP_DEEP_GEMM_WARMUP=1" in text and "VLLM_DEEP_GEMM_WARMUP=skip" not in text
    assert "flashinfer-autotune" not in text  # the switch arrives in 0.16.0
    assert "unset VLLM_USE_DEEP_GEMM" in text  # off by default before 0.11.0


def test_cudagraph_profile_log_walks_to_fewer_sizes_not_utilization() -> None:
    leaf, text = _walk_text(LOGS / "cudagraph_profile_0200_h100.log")
    assert leaf == "cudagraph-profile-oom"
    fixes = text.split("Verify")[0]
    # default max_num_seqs 1024 on an 80 GiB card: min(2 x 1024, 512) = 512, half = 256
    assert "--max-cudagraph-capture-size 256" in fixes
    assert '"cudagraph_mode": "PIECEWISE"' in fixes and "--enforce-eager" in fixes
    assert "export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" not in fixes
    assert "--gpu-memory-utilization 0.9" not in fixes.replace("--gpu-memory-utilization 0.95", "")


# --- neighbouring leaves ------------------------------------------------------------------------------


def test_no_kv_memory_names_the_estimate_switch_per_release() -> None:
    leaf = get_kb().leaves["no-kv-cache-memory"]
    # 0.18-0.19 apply the estimate only when the operator set the variable to 1: unset it
    old = leaf_text(leaf, facts(vllm_version="0.19.0", gpu_mem_total_bytes=80 * GIB))
    assert "unset VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS" in old
    assert "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" not in old.split("Verify")[0]
    new = leaf_text(leaf, facts(vllm_version="0.20.0", gpu_mem_total_bytes=80 * GIB))
    assert "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" in new
    # a shorter capture list shrinks the estimate while keeping it in the budget
    assert "--max-cudagraph-capture-size 256" in new


def test_mrv2_warmup_leaf_says_the_gap_is_closed_on_0_33() -> None:
    text = leaf_text(get_kb().leaves["sampler-warmup-mrv2"], facts(vllm_version="0.33.0"))
    assert "On 0.33.0 the gap this leaf describes is closed" in text
    assert "warmup_kernels() runs only with the JIT kernel warm-up on" in text
