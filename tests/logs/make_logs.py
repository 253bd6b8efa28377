"""Write the synthetic vLLM logs in this folder (``python tests/logs/make_logs.py``).

Every log is built from the message formats vLLM and PyTorch print (per release, see the
project's vLLM facts) and dressed in the mess real logs carry: process and rank prefixes,
interleaved ranks, colour codes in three spellings, container and CI wrappers, JSON records,
terminal wrapping, blank lines, Markdown quoting, Windows paths, CRLF. Numbers inside one log
agree with each other. The files are committed; this script documents how they were made.
"""

from __future__ import annotations

import gzip
import json
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SITE = "/usr/local/lib/python3.12/dist-packages"
E = "\x1b"

Frame = tuple[str, int, str, str]


def torch_oom(req: str, gpu: int, total: str, free: str, alloc: str, unalloc: str, *, this: str | None = None,
              procs: Iterable[tuple[int, str]] = (), pools: str | None = None, plat: str = "CUDA",
              var: str = "PYTORCH_CUDA_ALLOC_CONF", url: str = "https://pytorch.org/docs/stable/notes/cuda.html#environment-variables",
              prefix: str = "torch.OutOfMemoryError: ") -> str:
    parts = [f"{prefix}{plat} out of memory. Tried to allocate {req}. GPU {gpu} has a total capacity of {total} of which {free} is free."]
    for pid, size in procs:
        parts.append(f"Process {pid} has {size} memory in use.")
    if this is not None:
        parts.append(f"Including non-PyTorch memory, this process has {this} memory in use.")
    pool = f" with {pools} allocated in private pools (e.g., CUDA Graphs)," if pools else ""
    parts.append(f"Of the allocated memory {alloc} is allocated by PyTorch,{pool} and {unalloc} is reserved by PyTorch but "
                 f"unallocated. If reserved but unallocated memory is large try setting {var}=expandable_segments:True to "
                 f"avoid fragmentation.  See documentation for Memory Management  ({url})")
    return " ".join(parts)


def traceback(frames: list[Frame], exc: str, *, carets: bool = False) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for path, line, func, code in frames:
        out.append(f'  File "{path}", line {line}, in {func}')
        if code:
            out.append(f"    {code}")
            if carets:
                out.append("    " + "^" * min(len(code), 40))
    out.append(exc)
    return out


def chained(first: list[str], second: list[str]) -> list[str]:
    return [*first, "", "The above exception was the direct cause of the following exception:", "", *second]


def prefixed(prefix: str, lines: Iterable[str]) -> list[str]:
    return [f"{prefix}{ln}" for ln in lines]


def wrap(lines: Iterable[str], width: int) -> list[str]:
    """What a terminal of ``width`` columns shows: long lines cut, mid-word, without prefixes."""
    out: list[str] = []
    for ln in lines:
        while len(ln) > width:
            out.append(ln[:width])
            ln = ln[width:]
        out.append(ln)
    return out


def f(mod: str, line: int, func: str, code: str = "", site: str = SITE) -> Frame:
    return (f"{site}/{mod}", line, func, code)


# Common frame stacks (V1 engine core start-up, 0.10-0.11 layout).
CORE_INIT = [
    f("vllm/v1/engine/core.py", 699, "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)"),
    f("vllm/v1/engine/core.py", 498, "__init__", "super().__init__(vllm_config, executor_class, log_stats,"),
    f("vllm/v1/engine/core.py", 92, "__init__", "self._initialize_kv_caches(vllm_config)"),
]
DETERMINE = [
    f("vllm/v1/engine/core.py", 190, "_initialize_kv_caches", "self.model_executor.determine_available_memory())"),
    f("vllm/v1/executor/abstract.py", 85, "determine_available_memory", 'return self.collective_rpc("determine_available_memory")'),
    f("vllm/executor/uniproc_executor.py", 83, "collective_rpc", "return [run_method(self.driver_worker, method, args, kwargs)]"),
    f("vllm/utils/__init__.py", 3122, "run_method", "return func(*args, **kwargs)"),
    f("torch/utils/_contextlib.py", 120, "decorate_context", "return func(*args, **kwargs)"),
    f("vllm/v1/worker/gpu_worker.py", 263, "determine_available_memory", "self.model_runner.profile_run()"),
    f("vllm/v1/worker/gpu_model_runner.py", 3017, "profile_run", "= self._dummy_run(self.max_num_tokens, is_profile=True)"),
    f("torch/utils/_contextlib.py", 120, "decorate_context", "return func(*args, **kwargs)"),
    f("vllm/v1/worker/gpu_model_runner.py", 2785, "_dummy_run", "outputs = self.model("),
]
WARMUP = [
    f("vllm/v1/engine/core.py", 207, "_initialize_kv_caches", "self.model_executor.initialize_from_config(kv_cache_configs)"),
    f("vllm/v1/executor/abstract.py", 75, "initialize_from_config", 'self.collective_rpc("compile_or_warm_up_model")'),
    f("vllm/executor/uniproc_executor.py", 83, "collective_rpc", "return [run_method(self.driver_worker, method, args, kwargs)]"),
    f("vllm/utils/__init__.py", 3122, "run_method", "return func(*args, **kwargs)"),
]
MODULE = [
    f("torch/nn/modules/module.py", 1773, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
    f("torch/nn/modules/module.py", 1784, "_call_impl", "return forward_call(*args, **kwargs)"),
]

LOGS: dict[str, Callable[[], list[str]]] = {}


def log(name: str) -> Callable[[Callable[[], list[str]]], Callable[[], list[str]]]:
    def deco(fn: Callable[[], list[str]]) -> Callable[[], list[str]]:
        LOGS[name] = fn
        return fn

    return deco


# --- sampler-warmup -------------------------------------------------------------------------------


@log("sampler_warmup_v082_tp8.log")
def _() -> list[str]:
    """vLLM 0.8.2, 8 x 24 GiB, max_num_seqs defaulting to 1024 on every GPU in that release;
    eight ranks fail together and their lines interleave."""
    out = [
        "INFO 03-19 07:25:01 [__init__.py:239] Automatically detected platform cuda.",
        "INFO 03-19 07:25:03 [api_server.py:981] vLLM API server version 0.8.2",
        "INFO 03-19 07:25:03 [api_server.py:982] args: Namespace(subparser='serve', model_tag='Qwen/QwQ-32B', "
        "config='', host=None, port=8000, model='Qwen/QwQ-32B', dtype='auto', max_model_len=32768, "
        "tensor_parallel_size=8, pipeline_parallel_size=1, gpu_memory_utilization=0.9, swap_space=4, "
        "cpu_offload_gb=0, max_num_seqs=None, max_num_batched_tokens=None, enforce_eager=False, "
        "kv_cache_dtype='auto', quantization=None, enable_lora=False, disable_custom_all_reduce=False)",
        "INFO 03-19 07:25:14 [core.py:53] Initializing a V1 LLM engine (v0.8.2) with config: model='Qwen/QwQ-32B', "
        "speculative_config=None, tokenizer='Qwen/QwQ-32B', dtype=torch.bfloat16, max_seq_len=32768, "
        "tensor_parallel_size=8, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, "
        "enforce_eager=False, kv_cache_dtype=auto, enable_prefix_caching=True, chunked_prefill_enabled=True",
    ]
    for r in range(8):
        out.append(f"(VllmWorker rank={r} pid={2961 + 17 * r}) INFO 03-19 07:26:40 [gpu_model_runner.py:1176] "
                   "Model loading took 7.6889 GB and 60.112 seconds")
    out += ["INFO 03-19 07:27:09 [kv_cache_utils.py:537] GPU KV cache size: 265,408 tokens",
            "INFO 03-19 07:27:09 [kv_cache_utils.py:540] Maximum concurrency for 32,768 tokens per request: 8.10x"]
    for r in range(8):
        out.append(f"(VllmWorker rank={r} pid={2961 + 17 * r}) INFO 03-19 07:27:46 [gpu_model_runner.py:1499] "
                   "Graph capturing finished in 37 secs, took 1.20 GiB")
    err = "ERROR 03-19 07:27:53 [multiproc_executor.py:375] "
    tb_inner = traceback(
        [f("vllm/v1/worker/gpu_model_runner.py", 1292, "_dummy_sampler_run", "sampler_output = self.model.sample("),
         f("vllm/model_executor/models/qwen2.py", 507, "sample", "next_tokens = self.sampler(logits, sampling_metadata)"),
         *MODULE,
         f("vllm/v1/sample/sampler.py", 51, "forward", "logits = logits.to(torch.float32)")],
        torch_oom("1.74 GiB", 0, "23.57 GiB", "594.88 MiB", "20.21 GiB", "185.98 MiB",
                  procs=[(133267, "22.97 GiB")], pools="128.00 MiB"))
    tb_outer = traceback(
        [f("vllm/v1/executor/multiproc_executor.py", 371, "worker_busy_loop", "output = func(*args, **kwargs)"),
         f("vllm/v1/worker/gpu_worker.py", 220, "compile_or_warm_up_model", "self.model_runner._dummy_sampler_run("),
         f("torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)"),
         f("vllm/v1/worker/gpu_model_runner.py", 1296, "_dummy_sampler_run", "raise RuntimeError(")],
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
        "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")
    blocks = {r: prefixed(f"(VllmWorker rank={r} pid={2961 + 17 * r}) {err}",
                          ["WorkerProc hit an exception: %s", *chained(tb_inner, tb_outer)]) for r in (3, 0, 5, 1)}
    # ranks print at the same time: interleave their lines
    longest = max(len(b) for b in blocks.values())
    for i in range(longest):
        for r in (3, 0, 5, 1):
            if i < len(blocks[r]):
                out.append(blocks[r][i])
    out += ["ERROR 03-19 07:27:54 [core.py:343] EngineCore hit an exception: Traceback (most recent call last):",
            "RuntimeError: Engine core initialization failed. See root cause above."]
    return out


@log("sampler_warmup_k8s_cri.log")
def _() -> list[str]:
    """vLLM 0.11.1 in Kubernetes: every line carries the CRI timestamp/stream/tag; colours raw."""
    api = f"{E}[1;36m(APIServer pid=1){E}[0;0m "
    ec = f"{E}[1;36m(EngineCore_DP0 pid=270){E}[0;0m "
    lines = [
        f"{api}INFO 11-19 12:10:02 [api_server.py:1896] vLLM API server version 0.11.1",
        f"{api}INFO 11-19 12:10:02 [utils.py:253] non-default args: {{'model_tag': 'google/gemma-3-27b-it', "
        "'model': 'google/gemma-3-27b-it', 'max_model_len': 16384, 'gpu_memory_utilization': 0.95, 'max_num_seqs': 256}",
        f"{ec}INFO 11-19 12:10:21 [core.py:93] Initializing a V1 LLM engine (v0.11.1) with config: "
        "model='google/gemma-3-27b-it', speculative_config=None, dtype=torch.bfloat16, max_seq_len=16384, "
        "tensor_parallel_size=1, pipeline_parallel_size=1, data_parallel_size=1, quantization=None, enforce_eager=False",
        f"{ec}INFO 11-19 12:11:40 [gpu_model_runner.py:2906] Model loading took 51.4611 GiB memory and 71.226 seconds",
        f"{ec}INFO 11-19 12:12:31 [gpu_worker.py:315] Available KV cache memory: 18.62 GiB",
        f"{ec}INFO 11-19 12:12:31 [kv_cache_utils.py:1229] GPU KV cache size: 34,816 tokens",
        f"{ec}INFO 11-19 12:12:58 [gpu_model_runner.py:3749] Graph capturing finished in 26 secs, took 0.84 GiB",
    ]
    err = f"{ec}ERROR 11-19 12:13:00 [core.py:842] "
    tb = chained(
        traceback([f("vllm/v1/worker/gpu_model_runner.py", 3214, "_dummy_sampler_run", "sampler_output = self.sampler("),
                   *MODULE, f("vllm/v1/sample/sampler.py", 93, "forward", "logits = self.apply_logits_processors(")],
                  torch_oom("264.00 MiB", 0, "79.19 GiB", "211.06 MiB", "76.25 GiB", "98.17 MiB",
                            this="78.97 GiB", pools="862.00 MiB")),
        traceback([*CORE_INIT, *WARMUP,
                   f("vllm/v1/worker/gpu_worker.py", 507, "compile_or_warm_up_model",
                     "self.model_runner._dummy_sampler_run(hidden_states=last_hidden_states)"),
                   f("vllm/v1/worker/gpu_model_runner.py", 3221, "_dummy_sampler_run", "raise RuntimeError(")],
                  "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please "
                  "try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine."))
    lines += prefixed(err, ["EngineCore failed to start.", *tb])
    out = []
    for i, ln in enumerate(lines):
        out.append(f"2025-11-19T20:{10 + i // 40:02d}:{i % 60:02d}.{96670 + i:09d}Z stderr F {ln}")
    return out


@log("pooler_warmup_jsonlines.log")
def _() -> list[str]:
    """Docker's json-file driver: each line a JSON record, colour codes escaped inside."""
    ec = "\u001b[1;36m(EngineCore_DP0 pid=118)\u001b[0;0m "
    msgs = [
        "INFO 09-30 08:00:01 [__init__.py:216] Automatically detected platform cuda.",
        f"{ec}INFO 09-30 08:00:09 [core.py:77] Initializing a V1 LLM engine (v0.10.2) with config: "
        "model='BAAI/bge-m3', speculative_config=None, dtype=torch.float16, max_seq_len=8192, tensor_parallel_size=1, "
        "pipeline_parallel_size=1, quantization=None, enforce_eager=False, pooler_config=PoolerConfig(pooling_type='CLS')",
        f"{ec}INFO 09-30 08:00:21 [gpu_model_runner.py:2338] Model loading took 1.0646 GiB and 3.112 seconds",
        f"{ec}INFO 09-30 08:00:26 [gpu_worker.py:298] Available KV cache memory: 19.75 GiB",
        f"{ec}INFO 09-30 08:00:39 [gpu_model_runner.py:3118] Graph capturing finished in 12 secs, took 0.31 GiB",
    ]
    err = f"{ec}ERROR 09-30 08:00:41 [core.py:718] "
    tb = traceback([*CORE_INIT, *WARMUP,
                    f("vllm/v1/worker/gpu_worker.py", 412, "compile_or_warm_up_model",
                      "self.model_runner._dummy_pooler_run(hidden_states)"),
                    f("vllm/v1/worker/gpu_model_runner.py", 3001, "_dummy_pooler_run", "raise RuntimeError(")],
                   "RuntimeError: CUDA out of memory occurred when warming up pooler (task='embed') with 1024 dummy "
                   "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")
    msgs += [f"{err}{ln}" for ln in ["EngineCore failed to start.", *tb]]
    return [json.dumps({"log": m + "\n", "stream": "stderr", "time": f"2025-09-30T08:00:{i:02d}.1234Z"}) for i, m in enumerate(msgs)]


# --- sampler-sort-large-vocab -------------------------------------------------------------------------


@log("sampler_sort_deepseek_v32_wrapped.log")
def _() -> list[str]:
    """DeepSeek-V3.2 on a nightly build with DeepGEMM; the operator copied a 120-column terminal."""
    w = "(Worker_TP2 pid=851) "
    lines = [
        "(APIServer pid=1) INFO 12-14 10:02:11 [api_server.py:1839] vLLM API server version 0.11.1rc2.dev142+g5a1f3e2d8",
        "(APIServer pid=1) INFO 12-14 10:02:11 [utils.py:233] non-default args: {'model_tag': "
        "'deepseek-ai/DeepSeek-V3.2-Exp', 'model': 'deepseek-ai/DeepSeek-V3.2-Exp', 'tensor_parallel_size': 8, "
        "'gpu_memory_utilization': 0.9, 'max_model_len': 65536}",
        "(APIServer pid=1) INFO 12-14 10:02:20 [model.py:547] Resolved architecture: DeepseekV32ForCausalLM",
        "(EngineCore_DP0 pid=305) INFO 12-14 10:02:31 [core.py:77] Initializing a V1 LLM engine (v0.11.1rc2.dev142+g5a1f3e2d8) "
        "with config: model='deepseek-ai/DeepSeek-V3.2-Exp', dtype=torch.bfloat16, max_seq_len=65536, tensor_parallel_size=8, "
        "quantization=fp8, enforce_eager=False, kv_cache_dtype=fp8_ds_mla",
        f"{w}INFO 12-14 10:03:02 [fp8.py:551] Using DeepGemm kernels for Fp8MoEMethod.",
        f"{w}INFO 12-14 10:09:44 [gpu_model_runner.py:2653] Model loading took 81.3310 GiB and 390.1 seconds",
        f"{w}INFO 12-14 10:12:19 [gpu_worker.py:298] Available KV cache memory: 39.07 GiB",
        f"{w}INFO 12-14 10:13:41 [gpu_model_runner.py:3480] Graph capturing finished in 71 secs, took 2.95 GiB",
    ]
    err = f"{w}ERROR 12-14 10:13:45 [multiproc_executor.py:671] "
    inner = traceback(
        [f("vllm/v1/worker/gpu_model_runner.py", 3226, "_dummy_sampler_run", "sampler_output = self.sampler(logits=logits,"),
         *MODULE,
         f("vllm/v1/sample/sampler.py", 95, "forward", "sampled, processed_logprobs = self.sample(logits, sampling_metadata)"),
         f("vllm/v1/sample/sampler.py", 165, "sample", "random_sampled, processed_logprobs = self.topk_topp_sampler("),
         *MODULE,
         f("vllm/v1/sample/ops/topk_topp_sampler.py", 102, "forward_native", "logits = self.apply_top_k_top_p(logits, k, p)"),
         f("vllm/v1/sample/ops/topk_topp_sampler.py", 198, "apply_top_k_top_p", "logits_sort, logits_idx = logits.sort(dim=-1, descending=False)")],
        torch_oom("1002.00 MiB", 2, "139.80 GiB", "637.25 MiB", "131.88 GiB", "412.07 MiB", this="139.17 GiB",
                  pools="2.95 GiB"))
    outer = traceback([f("vllm/v1/worker/gpu_worker.py", 389, "compile_or_warm_up_model", "self.model_runner._dummy_sampler_run("),
                       f("vllm/v1/worker/gpu_model_runner.py", 3231, "_dummy_sampler_run", "raise RuntimeError(")],
                      "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
                      "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")
    lines += prefixed(err, ["WorkerProc hit an exception.", *chained(inner, outer)])
    return wrap(lines, 120)


@log("sampler_sort_mrv2_flashinfer.log")
def _() -> list[str]:
    """Model runner V2 (0.22.0) prints no sampler wrapper message: a bare OOM under its sampler,
    inside FlashInfer's top-k/top-p."""
    ec = "(EngineCore_DP0 pid=77) "
    lines = [
        "INFO 06-18 14:00:02 [__init__.py:216] Automatically detected platform cuda.",
        "(APIServer pid=1) INFO 06-18 14:00:05 [api_server.py:1952] vLLM API server version 0.22.0",
        "(APIServer pid=1) INFO 06-18 14:00:14 [model.py:560] Resolved architecture: Qwen3ForCausalLM",
        f"{ec}INFO 06-18 14:00:25 [core.py:99] Initializing a V1 LLM engine (v0.22.0) with config: model='Qwen/Qwen3-32B', "
        "dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=1, quantization=None, enforce_eager=False",
        f"{ec}INFO 06-18 14:00:26 [gpu_worker.py:190] Using V2 Model Runner",
        f"{ec}INFO 06-18 14:01:21 [model_runner.py:412] Model loading took 61.03 GiB and 51.7 seconds",
        f"{ec}INFO 06-18 14:02:05 [gpu_worker.py:331] Available KV cache memory: 59.88 GiB",
        f"{ec}INFO 06-18 14:02:37 [model_runner.py:951] Graph capturing finished in 29 secs, took 1.42 GiB",
    ]
    tb = traceback(
        [*CORE_INIT, *WARMUP,
         f("vllm/v1/worker/gpu_worker.py", 455, "compile_or_warm_up_model", "self.model_runner.warmup_sampler()"),
         f("vllm/v1/worker/gpu/model_runner.py", 1107, "warmup_sampler", "self.sampler(logits, self.dummy_sampling_metadata)"),
         *MODULE,
         f("vllm/v1/worker/gpu/sample/sampler.py", 88, "forward", "sampled = flashinfer_sample(logits, k, p, generators)"),
         f("vllm/v1/sample/ops/topk_topp_sampler.py", 301, "flashinfer_sample",
           "next_token_ids = flashinfer.sampling.top_k_top_p_sampling_from_logits("),
         f("flashinfer/sampling.py", 934, "top_k_top_p_sampling_from_logits", "probs = torch.softmax(masked_logits, dim=-1)")],
        torch_oom("4.00 GiB", 0, "139.80 GiB", "1.12 GiB", "134.30 GiB", "708.00 MiB", this="138.67 GiB", pools="1.42 GiB",
                  url="https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"),
        carets=True)
    return lines + prefixed(f"{ec}ERROR 06-18 14:02:39 [core.py:1012] ", ["EngineCore failed to start.", *tb])


# --- profile-run-oom ----------------------------------------------------------------------------------


@log("profile_run_v1_0101.log")
def _() -> list[str]:
    """0.10.1 (process prefix ``EngineCore_0``), one L40S, max_num_batched_tokens raised to 32768."""
    ec = "(EngineCore_0 pid=4121) "
    lines = [
        "INFO 08-22 16:40:00 [__init__.py:241] Automatically detected platform cuda.",
        "(APIServer pid=4003) INFO 08-22 16:40:04 [api_server.py:1805] vLLM API server version 0.10.1",
        "(APIServer pid=4003) INFO 08-22 16:40:04 [utils.py:326] non-default args: {'model_tag': 'mistralai/Mistral-Small-24B-Instruct-2501', "
        "'model': 'mistralai/Mistral-Small-24B-Instruct-2501', 'max_num_batched_tokens': 32768, 'gpu_memory_utilization': 0.95}",
        f"{ec}INFO 08-22 16:40:13 [core.py:75] Initializing a V1 LLM engine (v0.10.1) with config: "
        "model='mistralai/Mistral-Small-24B-Instruct-2501', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, "
        "quantization=None, enforce_eager=False, kv_cache_dtype=auto",
        f"{ec}INFO 08-22 16:40:15 [gpu_model_runner.py:1913] Starting to load model mistralai/Mistral-Small-24B-Instruct-2501...",
        f"{ec}INFO 08-22 16:41:02 [gpu_model_runner.py:1962] Model loading took 43.9203 GiB and 46.3 seconds",
    ]
    tb = traceback([*CORE_INIT, *DETERMINE, *MODULE,
                    f("vllm/model_executor/models/llama.py", 584, "forward", "model_output = self.model(input_ids, positions,"),
                    f("vllm/model_executor/layers/activation.py", 84, "forward_native", "return F.silu(x[..., :d]) * x[..., d:]")],
                   torch_oom("2.50 GiB", 0, "44.39 GiB", "284.12 MiB", "43.54 GiB", "81.10 MiB", this="44.10 GiB"))
    return lines + prefixed(f"{ec}ERROR 08-22 16:41:09 [core.py:700] ", ["EngineCore failed to start.", *tb])


@log("profile_run_v0_066_journald.log")
def _() -> list[str]:
    """vLLM 0.6.6 (V0, logger prefix without brackets) running as a systemd unit."""
    host = "gpu-node-07 vllm-serve[31544]: "
    lines = [
        "INFO 12-27 09:14:02 api_server.py:651] vLLM API server version 0.6.6",
        "INFO 12-27 09:14:02 api_server.py:652] args: Namespace(subparser='serve', model_tag='meta-llama/Llama-3.1-8B-Instruct', "
        "host=None, port=8000, model='meta-llama/Llama-3.1-8B-Instruct', dtype='auto', max_model_len=131072, "
        "tensor_parallel_size=1, gpu_memory_utilization=0.9, max_num_seqs=256, max_num_batched_tokens=131072, "
        "enable_chunked_prefill=False, enforce_eager=False, swap_space=4)",
        "INFO 12-27 09:14:09 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: "
        "model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1, "
        "pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto",
        "INFO 12-27 09:14:29 model_runner.py:1099] Loading model weights took 14.9888 GB",
    ]
    tb = traceback(
        [f("vllm/engine/multiprocessing/engine.py", 366, "run_mp_engine", "engine = MQLLMEngine.from_engine_args(engine_args=engine_args,"),
         f("vllm/engine/llm_engine.py", 291, "__init__", "self._initialize_kv_caches()"),
         f("vllm/engine/llm_engine.py", 430, "_initialize_kv_caches", "self.model_executor.determine_num_available_blocks())"),
         f("vllm/executor/gpu_executor.py", 68, "determine_num_available_blocks", "return self.driver_worker.determine_num_available_blocks()"),
         f("vllm/worker/worker.py", 202, "determine_num_available_blocks", "self.model_runner.profile_run()"),
         f("vllm/worker/model_runner.py", 1331, "profile_run", "self.execute_model(model_input, kv_caches, intermediate_tensors)"),
         f("vllm/worker/model_runner.py", 1719, "execute_model", "hidden_or_intermediate_states = model_executable("),
         f("vllm/model_executor/layers/logits_processor.py", 82, "_get_logits", "logits = lm_head.linear_method.apply(lm_head,")],
        torch_oom("15.66 GiB", 0, "79.15 GiB", "12.88 GiB", "64.88 GiB", "1.05 MiB", this="66.26 GiB",
                  prefix="torch.OutOfMemoryError: "))
    lines += prefixed("ERROR 12-27 09:14:41 engine.py:366] ", tb)
    out = []
    for i, ln in enumerate(lines):
        out.append(f"Dec 27 09:14:{i % 60:02d} {host}{ln}")
    return out


# --- cudagraph-capture --------------------------------------------------------------------------------


@log("cudagraph_capture_ray_092.log")
def _() -> list[str]:
    """0.9.2 with Ray workers: colour codes half stripped, progress bars, repeated-line markers,
    and the raw CUDA error from the capture stream."""
    ray = "[36m(RayWorkerWrapper pid=10858, ip=10.18.66.58)[0m "
    lines = [
        "INFO 07-14 11:00:02 [api_server.py:1395] vLLM API server version 0.9.2",
        "INFO 07-14 11:00:02 [cli_args.py:325] non-default args: {'model': 'Qwen/Qwen2.5-72B-Instruct', "
        "'tensor_parallel_size': 4, 'pipeline_parallel_size': 2, 'gpu_memory_utilization': 0.98, "
        "'distributed_executor_backend': 'ray'}",
        "INFO 07-14 11:00:21 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-72B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=4, pipeline_parallel_size=2, quantization=None, "
        "enforce_eager=False",
        f"{ray}INFO 07-14 11:02:40 [gpu_model_runner.py:1770] Model loading took 17.0145 GiB and 126.1 seconds [repeated 7x across cluster]",
        f"{ray}INFO 07-14 11:03:27 [gpu_worker.py:232] Available KV cache memory: 20.12 GiB [repeated 7x across cluster]",
        "INFO 07-14 11:03:29 [kv_cache_utils.py:716] GPU KV cache size: 329,632 tokens",
        "Capturing CUDA graph shapes:   0%|          | 0/67 [00:00<?, ?it/s]\rCapturing CUDA graph shapes:  31%|███       | 21/67 [00:09<00:20,  2.21it/s]",
    ]
    frames = [f("vllm/v1/worker/gpu_worker.py", 286, "compile_or_warm_up_model", "self.model_runner.capture_model()"),
              f("vllm/v1/worker/gpu_model_runner.py", 2287, "capture_model", "self._dummy_run(num_tokens, capture_attn_cudagraph=full_cg)"),
              f("torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)"),
              f("vllm/v1/worker/gpu_model_runner.py", 2001, "_dummy_run", "outputs = model("),
              f("vllm/compilation/cuda_piecewise_backend.py", 195, "__call__", "with torch.cuda.graph(cudagraph, pool=self.graph_pool):"),
              f("torch/cuda/graphs.py", 186, "__exit__", "self.cuda_graph.capture_end()"),
              f("torch/cuda/graphs.py", 84, "capture_end", "super().capture_end()")]
    err = f"{ray}ERROR 07-14 11:03:41 [worker_base.py:620] "
    tb = traceback(frames, "RuntimeError: CUDA error: out of memory")
    lines += prefixed(err, ["Error executing method 'compile_or_warm_up_model'. This might cause deadlock in distributed execution.", *tb,
                            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"])
    return lines


@log("cudagraph_capture_v0_073_blank_lines.log")
def _() -> list[str]:
    """V0 (VLLM_USE_V1=0) on 0.7.3, pasted from a chat with a blank line after every line."""
    lines = [
        "INFO 02-21 15:03:11 __init__.py:207] Automatically detected platform cuda.",
        "INFO 02-21 15:03:13 api_server.py:912] vLLM API server version 0.7.3",
        "INFO 02-21 15:03:25 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: model='google/gemma-2-9b-it', "
        "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, quantization=None, enforce_eager=False",
        "INFO 02-21 15:03:40 model_runner.py:1115] Loading model weights took 17.3671 GB",
        "INFO 02-21 15:03:44 worker.py:267] Memory profiling takes 3.12 seconds",
        "INFO 02-21 15:03:44 worker.py:267] the current vLLM instance can use total_gpu_memory (21.96GiB) x gpu_memory_utilization (0.95) = 20.86GiB",
        "INFO 02-21 15:03:44 worker.py:267] model weights take 17.37GiB; non_torch_memory takes 0.08GiB; PyTorch activation peak memory takes 1.15GiB; the rest of the memory reserved for KV Cache is 2.26GiB.",
        "INFO 02-21 15:03:44 executor_base.py:111] # cuda blocks: 1234, # CPU blocks: 2184",
        "INFO 02-21 15:03:46 model_runner.py:1434] Capturing cudagraphs for decoding. This may lead to unexpected consequences "
        "if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI. "
        "If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to "
        "eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage.",
    ]
    tb = traceback(
        [f("vllm/engine/llm_engine.py", 276, "__init__", "self._initialize_kv_caches()"),
         f("vllm/engine/llm_engine.py", 434, "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)"),
         f("vllm/worker/worker.py", 308, "initialize_cache", "self._warm_up_model()"),
         f("vllm/worker/worker.py", 338, "_warm_up_model", "self.model_runner.capture_model(self.gpu_cache)"),
         f("vllm/worker/model_runner.py", 1506, "capture_model", "graph_runner.capture(**capture_inputs)"),
         f("vllm/worker/model_runner.py", 1874, "capture", "output_hidden_or_intermediate_states = self.model("),
         f("vllm/model_executor/models/gemma2.py", 148, "forward", "attn_output = self.attn(q, k, v)")],
        torch_oom("128.00 MiB", 0, "21.96 GiB", "43.06 MiB", "21.28 GiB", "87.95 MiB", this="21.90 GiB",
                  pools="1.31 GiB", prefix="torch.OutOfMemoryError: "))
    lines += prefixed("ERROR 02-21 15:04:02 engine.py:400] ", tb)
    out: list[str] = []
    for ln in lines:
        out += [ln, ""]
    return out


# --- kernel-warmup-oom ---------------------------------------------------------------------------------


@log("kernel_warmup_deepgemm_0200_dp8.log")
def _() -> list[str]:
    """0.20.0, DeepSeek-V3 FP8 on 8 x H200 with data parallel 8 and expert parallel: the DeepGEMM
    MoE warm-up sizes its buffers for 8 x max_num_batched_tokens x top-8 rows, after the KV cache."""
    dp3 = "(EngineCore_DP3 pid=611) "
    lines = [
        "(APIServer pid=1) INFO 04-30 08:00:02 [api_server.py:1901] vLLM API server version 0.20.0",
        "(APIServer pid=1) INFO 04-30 08:00:02 [utils.py:233] non-default args: {'model_tag': 'deepseek-ai/DeepSeek-V3', "
        "'model': 'deepseek-ai/DeepSeek-V3', 'data_parallel_size': 8, 'enable_expert_parallel': True, "
        "'gpu_memory_utilization': 0.95}",
        "(APIServer pid=1) INFO 04-30 08:00:11 [model.py:560] Resolved architecture: DeepseekV3ForCausalLM",
        f"{dp3}INFO 04-30 08:00:30 [core.py:98] Initializing a V1 LLM engine (v0.20.0) with config: "
        "model='deepseek-ai/DeepSeek-V3', dtype=torch.bfloat16, max_seq_len=163840, tensor_parallel_size=1, "
        "data_parallel_size=8, quantization=fp8, enforce_eager=False",
        f"{dp3}INFO 04-30 08:03:12 [gpu_model_runner.py:4410] Model loading took 88.1460 GiB and 160.2 seconds",
        f"{dp3}INFO 04-30 08:04:01 [gpu_worker.py:436] Available KV cache memory: 37.12 GiB",
        f"{dp3}INFO 04-30 08:04:02 [kv_cache_utils.py:1314] GPU KV cache size: 567,104 tokens",
        "DeepGEMM warmup:   3%|▎         | 41/1498 [00:02<01:15, 19.30it/s]",
    ]
    frames = [
        f("vllm/v1/engine/core.py", 283, "_initialize_kv_caches", "self.model_executor.initialize_from_config(kv_cache_configs)"),
        f("vllm/v1/executor/abstract.py", 124, "initialize_from_config", 'self.collective_rpc("compile_or_warm_up_model")'),
        f("vllm/v1/executor/uniproc_executor.py", 80, "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)"),
        f("vllm/v1/serial_utils.py", 510, "run_method", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 586, "compile_or_warm_up_model", "kernel_warmup(self)"),
        f("vllm/model_executor/warmup/kernel_warmup.py", 37, "kernel_warmup", "deep_gemm_warmup(model, max_tokens)"),
        f("vllm/model_executor/warmup/deep_gemm_warmup.py", 372, "deep_gemm_warmup",
          "deepgemm_grouped_fp8_gemm_nt_contiguous_warmup(model, max_tokens, pbar)"),
        f("vllm/model_executor/warmup/deep_gemm_warmup.py", 329, "deepgemm_grouped_fp8_gemm_nt_contiguous_warmup",
          "_deepgemm_grouped_fp8_gemm_nt_contiguous_warmup("),
        f("vllm/model_executor/warmup/deep_gemm_warmup.py", 303, "_deepgemm_grouped_fp8_gemm_nt_contiguous_warmup", "_warmup(w, ws)"),
        f("vllm/model_executor/warmup/deep_gemm_warmup.py", 288, "_warmup",
          "out = torch.empty((MAX_M, n), device=device, dtype=torch.bfloat16)"),
    ]
    tb = traceback(frames, torch_oom("4.03 GiB", 3, "139.80 GiB", "2.71 GiB", "134.02 GiB", "1.21 GiB", this="137.07 GiB",
                                     url="https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"))
    return lines + prefixed(f"{dp3}ERROR 04-30 08:04:05 [core.py:1093] ", ["EngineCore failed to start.", *tb])


@log("kernel_warmup_flashinfer_autotune_0250_tp4.log")
def _() -> list[str]:
    """0.25.0 on 4 x H100 with max_num_batched_tokens raised to 32768: FlashInfer's autotuner runs a
    32768-token dummy batch after the KV cache; one worker's traceback, the others' errors beside it."""
    lines = [
        "(APIServer pid=1) INFO 07-03 10:00:01 [api_server.py:2044] vLLM API server version 0.25.0",
        "(APIServer pid=1) INFO 07-03 10:00:01 [utils.py:241] non-default args: {'model_tag': 'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', "
        "'model': 'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', 'tensor_parallel_size': 4, 'max_num_batched_tokens': 32768, "
        "'gpu_memory_utilization': 0.92}",
        "(EngineCore pid=301) INFO 07-03 10:00:20 [core.py:101] Initializing a V1 LLM engine (v0.25.0) with config: "
        "model='Qwen/Qwen3-235B-A22B-Instruct-2507-FP8', dtype=torch.bfloat16, max_seq_len=262144, tensor_parallel_size=4, "
        "quantization=fp8, enforce_eager=False",
    ]
    lines += [f"(Worker_TP{r} pid={330 + r}) INFO 07-03 10:02:10 [gpu_model_runner.py:4880] Model loading took 54.8120 GiB and "
              "98.4 seconds" for r in range(4)]
    lines += [f"(Worker_TP{r} pid={330 + r}) INFO 07-03 10:02:58 [gpu_worker.py:491] Available KV cache memory: 12.41 GiB"
              for r in range(4)]
    lines.append("(EngineCore pid=301) INFO 07-03 10:03:00 [kv_cache_utils.py:1301] GPU KV cache size: 541,712 tokens")
    frames = [
        f("vllm/v1/executor/multiproc_executor.py", 802, "worker_busy_loop", "output = func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 758, "compile_or_warm_up_model", "kernel_warmup(self)"),
        f("vllm/model_executor/warmup/kernel_warmup.py", 95, "kernel_warmup", "flashinfer_autotune(worker.model_runner)"),
        f("vllm/model_executor/warmup/kernel_warmup.py", 157, "flashinfer_autotune", "runner._dummy_run("),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_model_runner.py", 6010, "_dummy_run", "outputs = self.model("),
        *MODULE,
        f("vllm/model_executor/layers/fused_moe/layer.py", 1702, "forward_impl", "final_hidden_states = self.quant_method.apply("),
    ]
    tb = traceback(frames, torch_oom("3.75 GiB", 2, "79.19 GiB", "1.62 GiB", "75.33 GiB", "812.40 MiB", this="77.56 GiB"))
    lines += prefixed("(Worker_TP2 pid=332) ERROR 07-03 10:03:09 [multiproc_executor.py:812] ", ["WorkerProc hit an exception.", *tb])
    lines.append("(EngineCore pid=301) ERROR 07-03 10:03:10 [core.py:1012] EngineCore failed to start.")
    return lines


# --- cudagraph-profile-oom -------------------------------------------------------------------------------


@log("cudagraph_profile_0200_h100.log")
def _() -> list[str]:
    """0.20.0, a 70B FP8 model alone on one H100: the weights nearly fill it, and the CUDA graph
    memory profile (before the KV cache) captures its two largest graphs per mode."""
    ec = "(EngineCore pid=212) "
    lines = [
        "(APIServer pid=1) INFO 04-29 13:10:00 [api_server.py:1901] vLLM API server version 0.20.0",
        "(APIServer pid=1) INFO 04-29 13:10:00 [utils.py:233] non-default args: {'model_tag': 'RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic', "
        "'model': 'RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic', 'max_model_len': 16384, 'gpu_memory_utilization': 0.95}",
        f"{ec}INFO 04-29 13:10:15 [core.py:98] Initializing a V1 LLM engine (v0.20.0) with config: "
        "model='RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic', dtype=torch.bfloat16, max_seq_len=16384, tensor_parallel_size=1, "
        "quantization=compressed-tensors, enforce_eager=False",
        f"{ec}INFO 04-29 13:11:40 [gpu_model_runner.py:4410] Model loading took 67.7213 GiB and 80.1 seconds",
        f"{ec}INFO 04-29 13:12:05 [gpu_model_runner.py:5962] Profiling CUDA graph memory: PIECEWISE=67 (largest=512), "
        "FULL=35 (largest=256)",
    ]
    frames = [
        f("vllm/v1/engine/core.py", 250, "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()"),
        f("vllm/v1/executor/abstract.py", 147, "determine_available_memory", 'return self.collective_rpc("determine_available_memory")'),
        f("vllm/v1/executor/uniproc_executor.py", 80, "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)"),
        f("vllm/v1/serial_utils.py", 510, "run_method", "return func(*args, **kwargs)"),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 385, "determine_available_memory",
          "cudagraph_memory_estimate = self.model_runner.profile_cudagraph_memory()"),
        f("vllm/v1/worker/gpu_model_runner.py", 5992, "profile_cudagraph_memory", "self._warmup_and_capture("),
        f("vllm/v1/worker/gpu_model_runner.py", 6163, "_warmup_and_capture", "self._dummy_run("),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_model_runner.py", 5480, "_dummy_run", "outputs = self.model("),
        f("vllm/compilation/cuda_graph.py", 318, "__call__", "with torch.cuda.graph(cudagraph, pool=self.graph_pool, stream=stream):"),
    ]
    tb = traceback(frames, torch_oom("1.02 GiB", 0, "79.19 GiB", "612.31 MiB", "76.02 GiB", "498.11 MiB", this="78.59 GiB",
                                     pools="1.37 GiB"))
    return lines + prefixed(f"{ec}ERROR 04-29 13:12:09 [core.py:1093] ", ["EngineCore failed to start.", *tb])


@log("cudagraph_profile_0290_mrv2_tp2.log")
def _() -> list[str]:
    """0.29.0, model runner V2 (the default for every model): its CUDA graph profile runs
    capture_model() into a throwaway pool before the KV cache; two ranks, colour codes left in."""
    lines = [
        f"(APIServer pid=1) {E}[32mINFO{E}[0m 09-10 06:00:00 [api_server.py:2101] vLLM API server version 0.29.0",
        f"(APIServer pid=1) {E}[32mINFO{E}[0m 09-10 06:00:00 [utils.py:241] non-default args: {{'model_tag': 'Qwen/Qwen3-32B', "
        "'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2, 'max_model_len': 40960}",
        f"(EngineCore pid=88) {E}[32mINFO{E}[0m 09-10 06:00:12 [core.py:101] Initializing a V1 LLM engine (v0.29.0) with config: "
        "model='Qwen/Qwen3-32B', dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=2, quantization=None, "
        "enforce_eager=False",
    ]
    for r in range(2):
        lines.append(f"(Worker_TP{r} pid={101 + r}) {E}[32mINFO{E}[0m 09-10 06:00:20 [gpu_worker.py:281] Using V2 Model Runner")
    lines += [f"(Worker_TP{r} pid={101 + r}) {E}[32mINFO{E}[0m 09-10 06:01:02 [model_runner.py:452] Model loading took "
              "30.5812 GiB and 38.7 seconds" for r in range(2)]
    frames = [
        f("vllm/v1/executor/multiproc_executor.py", 820, "worker_busy_loop", "output = func(*args, **kwargs)"),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 570, "determine_available_memory",
          "cudagraph_memory_estimate = self.model_runner.profile_cudagraph_memory()"),
        f("vllm/v1/worker/gpu/model_runner.py", 898, "profile_cudagraph_memory", "return _profile_cudagraph_memory(self)"),
        f("vllm/v1/worker/gpu/cudagraph_utils.py", 792, "profile_cudagraph_memory", "measured = int(runner.capture_model())"),
        f("vllm/v1/worker/gpu/model_runner.py", 931, "capture_model", "self.cudagraph_manager.capture("),
        f("vllm/v1/worker/gpu/cudagraph_utils.py", 317, "capture", "self._capture_graph(desc, mode)"),
    ]
    tb = traceback(frames, torch_oom("640.00 MiB", 1, "44.39 GiB", "402.19 MiB", "42.70 GiB", "211.06 MiB", this="43.98 GiB",
                                     pools="896.00 MiB"))
    lines += prefixed(f"(Worker_TP1 pid=102) {E}[31mERROR{E}[0m 09-10 06:01:15 [multiproc_executor.py:830] ",
                      ["WorkerProc hit an exception.", *tb])
    return lines


# --- profile-run-oom: the sampler's wrapper raised inside profile_run() -----------------------------------


@log("sampler_in_profile_0200.log")
def _() -> list[str]:
    """0.20.0: the sampler's out-of-memory wrapper raised at the end of profile_run(), before any KV
    cache; no start-up line after the weights, only the traceback tells."""
    ec = "(EngineCore pid=77) "
    lines = [
        "(APIServer pid=1) INFO 05-02 09:00:00 [api_server.py:1901] vLLM API server version 0.20.0",
        f"{ec}INFO 05-02 09:00:14 [core.py:98] Initializing a V1 LLM engine (v0.20.0) with config: "
        "model='google/gemma-3-27b-it', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, enforce_eager=False",
    ]
    frames = [
        f("vllm/v1/engine/core.py", 250, "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()"),
        f("vllm/v1/executor/abstract.py", 147, "determine_available_memory", 'return self.collective_rpc("determine_available_memory")'),
        f("vllm/v1/executor/uniproc_executor.py", 80, "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)"),
        f("vllm/v1/serial_utils.py", 510, "run_method", "return func(*args, **kwargs)"),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 370, "determine_available_memory", "self.model_runner.profile_run()"),
        f("vllm/v1/worker/gpu_model_runner.py", 5855, "profile_run", "output = self._dummy_sampler_run(last_hidden_states)"),
        f("torch/utils/_contextlib.py", 124, "decorate_context", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_model_runner.py", 5668, "_dummy_sampler_run", "raise RuntimeError("),
    ]
    tb = traceback(frames, "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. "
                           "Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")
    return lines + prefixed(f"{ec}ERROR 05-02 09:01:30 [core.py:1093] ", ["EngineCore failed to start.", *tb])


# --- mrv2-cudagraph-profile-zero -------------------------------------------------------------------------


@log("mrv2_capture_0251_tp8.log")
def _() -> list[str]:
    """0.25.1: model runner V2 by default for a dense model; graph memory never reserved."""
    lines = [
        "(APIServer pid=1) INFO 07-09 02:11:00 [api_server.py:2044] vLLM API server version 0.25.1",
        "(APIServer pid=1) INFO 07-09 02:11:00 [utils.py:241] non-default args: {'model_tag': 'meta-llama/Llama-3.1-70B-Instruct', "
        "'model': 'meta-llama/Llama-3.1-70B-Instruct', 'quantization': 'fp8', 'tensor_parallel_size': 8, "
        "'gpu_memory_utilization': 0.92}",
        "(APIServer pid=1) INFO 07-09 02:11:09 [model.py:571] Resolved architecture: LlamaForCausalLM",
        "(EngineCore pid=391) INFO 07-09 02:11:22 [core.py:101] Initializing a V1 LLM engine (v0.25.1) with config: "
        "model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=8, "
        "quantization=fp8, enforce_eager=False",
    ]
    for r in range(8):
        lines.append(f"(Worker_TP{r} pid={420 + r}) INFO 07-09 02:11:30 [gpu_worker.py:207] Using V2 Model Runner")
    lines += [f"(Worker_TP{r} pid={420 + r}) INFO 07-09 02:12:50 [model_runner.py:433] Model loading took 8.6120 GiB and 71.0 seconds"
              for r in range(8)]
    lines += [f"(Worker_TP{r} pid={420 + r}) INFO 07-09 02:13:31 [gpu_worker.py:353] Available KV cache memory: 119.32 GiB"
              for r in range(8)]
    lines.append("(EngineCore pid=391) INFO 07-09 02:13:33 [kv_cache_utils.py:1301] GPU KV cache size: 3,127,264 tokens, "
                 "Maximum concurrency for 131,072 tokens per request: 23.86x")
    frames = [f("vllm/v1/worker/gpu_worker.py", 612, "compile_or_warm_up_model", "cuda_graph_memory_bytes = self.model_runner.capture_model()"),
              f("vllm/v1/worker/gpu/model_runner.py", 871, "capture_model", "self.cudagraph_manager.capture(self._run_dummy)"),
              f("vllm/v1/worker/gpu/cudagraph_utils.py", 208, "capture", "self._capture_graph(batch_size, mode)"),
              f("vllm/v1/worker/gpu/cudagraph_utils.py", 251, "_capture_graph", "out = fn(batch_size)")]
    err = "(Worker_TP5 pid=425) ERROR 07-09 02:13:58 [multiproc_executor.py:812] "
    tb = traceback(frames, torch_oom("1.88 GiB", 5, "139.80 GiB", "1.05 GiB", "133.41 GiB", "1.51 GiB", this="138.74 GiB",
                                     pools="3.87 GiB", url="https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"))
    return lines + prefixed(err, ["WorkerProc hit an exception.", *tb])


@log("mrv2_capture_0210_markdown.log")
def _() -> list[str]:
    """An issue body: Markdown quote and code fence around a 0.21.0 log; the run opted into V2."""
    lines = [
        "$ VLLM_USE_V2_MODEL_RUNNER=1 vllm serve Qwen/Qwen3-14B --max-model-len 32768 --gpu-memory-utilization 0.93",
        "INFO 05-20 10:00:01 [__init__.py:216] Automatically detected platform cuda.",
        "(APIServer pid=2210) INFO 05-20 10:00:04 [api_server.py:1921] vLLM API server version 0.21.0",
        "(EngineCore pid=2301) INFO 05-20 10:00:15 [core.py:99] Initializing a V1 LLM engine (v0.21.0) with config: "
        "model='Qwen/Qwen3-14B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, "
        "enforce_eager=False",
        "(EngineCore pid=2301) INFO 05-20 10:00:16 [gpu_worker.py:188] Using V2 Model Runner",
        "(EngineCore pid=2301) INFO 05-20 10:00:48 [model_runner.py:420] Model loading took 27.5520 GiB and 30.2 seconds",
        "(EngineCore pid=2301) INFO 05-20 10:01:20 [gpu_worker.py:342] Available KV cache memory: 34.81 GiB",
        "Capturing CUDA graphs (FULL_AND_PIECEWISE):  62%|██████▏   | 42/67 [00:08<00:04,  5.02it/s]",
    ]
    tb = traceback([*CORE_INIT, *WARMUP,
                    f("vllm/v1/worker/gpu_worker.py", 598, "compile_or_warm_up_model", "self.model_runner.capture_model()"),
                    f("vllm/v1/worker/gpu/model_runner.py", 844, "capture_model", "capture_graphs(self.cudagraph_manager, ...)"),
                    f("vllm/v1/worker/gpu/cudagraph_utils.py", 190, "capture_graphs", "graph.replay()")],
                   torch_oom("512.00 MiB", 0, "79.19 GiB", "301.06 MiB", "76.83 GiB", "254.00 MiB", this="78.89 GiB",
                             pools="1.07 GiB", url="https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf"))
    lines += prefixed("(EngineCore pid=2301) ERROR 05-20 10:01:31 [core.py:1151] ", ["EngineCore failed to start.", *tb])
    return ["### What happened", "", "Startup dies while capturing graphs:", "", "> ```text",
            *[f"> {ln}" for ln in lines], "> ```", "", "Any idea?"]


# --- expandable-segments-custom-allreduce ---------------------------------------------------------------


@log("allreduce_expandable_0240_sm120.log")
def _() -> list[str]:
    """0.24.0, two RTX PRO 6000 Blackwell, expandable segments set on the command line."""
    lines = [
        "+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "+ vllm serve Qwen/Qwen3.6-27B-FP8 --tensor-parallel-size 2 --max-model-len 65536 --gpu-memory-utilization 0.9",
        "(APIServer pid=9101) INFO 06-30 09:00:03 [api_server.py:2011] vLLM API server version 0.24.0",
        "(EngineCore pid=9188) INFO 06-30 09:00:15 [core.py:101] Initializing a V1 LLM engine (v0.24.0) with config: "
        "model='Qwen/Qwen3.6-27B-FP8', dtype=torch.bfloat16, max_seq_len=65536, tensor_parallel_size=2, "
        "disable_custom_all_reduce=False, quantization=fp8, enforce_eager=False",
        "(Worker_TP0 pid=9240) INFO 06-30 09:00:40 [custom_all_reduce.py:181] Registering 4902 cuda graph addresses",
        "Capturing CUDA graphs (FULL_AND_PIECEWISE): 100%|██████████| 67/67 [00:11<00:00,  5.88it/s]",
    ]
    lines += ["(Worker_TP1 pid=9241) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
              "(Worker_TP0 pid=9240) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
              "(EngineCore pid=9188) ERROR 06-30 09:00:52 [multiproc_executor.py:154] Worker proc Worker_TP1 died unexpectedly, shutting down executor.",
              "(APIServer pid=9101) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore': 1}"]
    return lines


@log("allreduce_expandable_ray_collect_env.log")
def _() -> list[str]:
    """An issue paste: collect_env first (its environment section names the allocator setting),
    then a 0.13.0 Ray log whose colour codes were pasted as the literal text ESC[…m."""
    env = [
        "Collecting environment information...",
        "==============================",
        "        System Info",
        "==============================",
        "OS                           : Ubuntu 22.04.5 LTS (x86_64)",
        "PyTorch version              : 2.9.0+cu128",
        "vLLM Version                 : 0.13.0",
        "GPU models and configuration :",
        "GPU 0: NVIDIA A100-SXM4-80GB",
        "GPU 1: NVIDIA A100-SXM4-80GB",
        "GPU 2: NVIDIA A100-SXM4-80GB",
        "GPU 3: NVIDIA A100-SXM4-80GB",
        "==============================",
        "     Environment Variables",
        "==============================",
        "NCCL_CUMEM_ENABLE=0",
        "PYTORCH_ALLOC_CONF=expandable_segments:True",
        "TORCHINDUCTOR_COMPILE_THREADS=1",
        "",
    ]
    ray = "ESC[36m(RayWorkerWrapper pid=22817, ip=10.0.3.14)ESC[0m "
    log_lines = [
        "INFO 12-19 08:11:02 [api_server.py:1862] vLLM API server version 0.13.0",
        "INFO 12-19 08:11:20 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: model='meta-llama/Llama-3.3-70B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=4, pipeline_parallel_size=1, quantization=None, enforce_eager=False",
        "Capturing CUDA graphs (decode, FULL):  12%|█▏        | 8/67 [00:01<00:09,  6.20it/s]",
        f"{ray}ERROR 12-19 08:13:12 [worker_base.py:620] Error executing method 'compile_or_warm_up_model'.",
    ]
    tb = traceback(
        [f("vllm/v1/worker/gpu_worker.py", 520, "compile_or_warm_up_model", "self.model_runner.capture_model()"),
         f("vllm/v1/worker/gpu_model_runner.py", 3802, "capture_model", "with graph_capture(device=self.device):"),
         f("vllm/distributed/parallel_state.py", 1101, "graph_capture", "with get_tp_group().graph_capture(context), get_pp_group().graph_capture("),
         f("vllm/distributed/device_communicators/custom_all_reduce.py", 222, "capture", "self.register_graph_buffers()"),
         f("vllm/distributed/device_communicators/custom_all_reduce.py", 239, "register_graph_buffers", "handle, offset = ops.get_graph_buffer_ipc_meta(self._ptr)")],
        "RuntimeError: CUDA error: invalid argument")
    return env + log_lines + prefixed(f"{ray}ERROR 12-19 08:13:12 [worker_base.py:620] ", tb)


# --- custom-allreduce-ipc ------------------------------------------------------------------------------


@log("allreduce_ipc_compose_072.log")
def _() -> list[str]:
    """0.7.2 under docker compose (``vllm-1  | `` in front of every line), no allocator setting."""
    lines = [
        "INFO 02-08 10:01:02 api_server.py:838] vLLM API server version 0.7.2",
        "INFO 02-08 10:01:02 api_server.py:839] args: Namespace(model='/models/DeepSeek-R1-Distill-Llama-70B', "
        "tensor_parallel_size=8, gpu_memory_utilization=0.9, max_model_len=32768, disable_custom_all_reduce=False, enforce_eager=False)",
        "INFO 02-08 10:01:13 llm_engine.py:234] Initializing an LLM engine (v0.7.2) with config: "
        "model='/models/DeepSeek-R1-Distill-Llama-70B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=8, "
        "quantization=None, enforce_eager=False",
        "INFO 02-08 10:02:41 model_runner.py:1115] Loading model weights took 16.4329 GB",
        "INFO 02-08 10:03:10 model_runner.py:1434] Capturing cudagraphs for decoding.",
        "Capturing CUDA graph shapes: 100%|██████████| 35/35 [01:17<00:00,  2.20s/it]",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'",
        "(VllmWorkerProcess pid=512) Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'",
        "ERROR 02-08 10:04:28 multiproc_worker_utils.py:124] Worker VllmWorkerProcess pid 512 died, exit code: 1",
    ]
    return [f"vllm-1  | {ln}" for ln in lines]


@log("allreduce_ipc_crlf_caret.log")
def _() -> list[str]:
    """0.10.0 in a Windows terminal capture: CRLF, colour codes as ^[[…m, allocator set without
    expandable segments."""
    p = "^[[36m(VllmWorker rank=1 pid=3321)^[[0m "
    lines = [
        "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512",
        "INFO 07-25 13:00:05 [api_server.py:1755] vLLM API server version 0.10.0",
        "INFO 07-25 13:00:22 [core.py:69] Initializing a V1 LLM engine (v0.10.0) with config: model='microsoft/phi-4', "
        "dtype=torch.bfloat16, max_seq_len=16384, tensor_parallel_size=2, quantization=None, enforce_eager=False",
        f"{p}INFO 07-25 13:01:01 [gpu_model_runner.py:1892] Model loading took 13.7111 GiB and 24.5 seconds",
        f"{p}Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
        "ERROR 07-25 13:01:40 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.",
    ]
    return lines


# --- workspace-locked -----------------------------------------------------------------------------------


@log("workspace_locked_windows_0210.log")
def _() -> list[str]:
    """0.21.0 on Windows: site-packages under C:\\Users, TurboQuant KV cache with MTP."""
    site = "C:\\Users\\Administrator\\AppData\\Local\\Programs\\Python\\Python312\\Lib\\site-packages"
    ec = "(EngineCore pid=7972) "
    lines = [
        "(APIServer pid=15924) INFO 05-16 11:02:00 [api_server.py:1921] vLLM API server version 0.21.0",
        "(APIServer pid=15924) INFO 05-16 11:02:00 [utils.py:241] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', "
        "'model': 'Qwen/Qwen3.6-27B', 'kv_cache_dtype': 'turboquant_k8v4', 'speculative_config': {'method': 'mtp', "
        "'num_speculative_tokens': 2}, 'max_num_seqs': 1}",
        f"{ec}INFO 05-16 11:02:31 [core.py:99] Initializing a V1 LLM engine (v0.21.0) with config: model='Qwen/Qwen3.6-27B', "
        "dtype=torch.bfloat16, max_seq_len=114688, tensor_parallel_size=1, quantization=None, enforce_eager=False, "
        "kv_cache_dtype=turboquant_k8v4",
        f"{ec}INFO 05-16 11:06:12 [gpu_model_runner.py:4503] Graph capturing finished in 41 secs, took 0.88 GiB",
        "(APIServer pid=15924) INFO:     Application startup complete.",
        "(APIServer pid=15924) INFO 05-16 11:10:21 [logger.py:41] Received request chatcmpl-41f: prompt: 'hello'",
    ]
    frames = [(f"{site}\\vllm\\v1\\engine\\core.py", 1152, "step", "model_output = self.execute_model_with_error_logging("),
              (f"{site}\\vllm\\v1\\worker\\gpu_model_runner.py", 3620, "execute_model", "model_output = self.model("),
              (f"{site}\\vllm\\v1\\attention\\backends\\turboquant_attn.py", 879, "_decode_attention",
               "current_workspace_manager().get_simultaneous("),
              (f"{site}\\vllm\\v1\\worker\\workspace.py", 110, "get_simultaneous", "current_workspace = self._ensure_workspace_size(total_bytes)"),
              (f"{site}\\vllm\\v1\\worker\\workspace.py", 157, "_ensure_workspace_size", "raise AssertionError(")]
    tb = traceback(frames, "AssertionError: Workspace is locked but allocation from 'turboquant_attn.py:879:_decode_attention' "
                           "requires 0.76 MB, current size is 0.00 MB. Workspace growth is not allowed after locking.")
    return lines + prefixed(f"{ec}ERROR 05-16 11:10:22 [core.py:1161] ", ["EngineCore encountered a fatal error.", *tb])


@log("workspace_locked_moe_gke.log")
def _() -> list[str]:
    """0.26.0 on GKE, exported from Cloud Logging: severity, timestamp, resource labels."""
    ec = "(EngineCore pid=249) "
    lines = [
        "(APIServer pid=1) INFO 08-26 00:58:00 [api_server.py:2060] vLLM API server version 0.26.0",
        f"{ec}INFO 08-26 00:58:20 [core.py:101] Initializing a V1 LLM engine (v0.26.0) with config: "
        "model='moonshotai/Kimi-K2-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=8, "
        "quantization=fp8, enforce_eager=False",
        "(APIServer pid=1) INFO:     Application startup complete.",
    ]
    tb = traceback(
        [f("vllm/v1/engine/core.py", 1201, "step", "model_output = self.execute_model_with_error_logging("),
         f("vllm/model_executor/layers/fused_moe/modular_kernel.py", 1167, "_allocate_buffers",
           "common_workspace, workspace2 = current_workspace_manager().get_simultaneous("),
         f("vllm/v1/worker/workspace.py", 188, "_ensure_workspace_size", "raise AssertionError(")],
        "AssertionError: Workspace is locked but allocation from 'modular_kernel.py:1167:_allocate_buffers' requires "
        "146.41 MB, current size is 3.75 MB. Workspace growth is not allowed after locking.")
    lines += prefixed(f"{ec}ERROR 08-26 01:05:01 [core.py:1357] ", tb)
    return [f"ERROR 2026-08-26T01:05:{i:02d}.{96674521 + i}Z [resource.labels.containerName: vllm] {ln}"
            for i, ln in enumerate(lines)]


# --- kv-cache-too-small ---------------------------------------------------------------------------------


@log("kv_too_small_v1_0102.log")
def _() -> list[str]:
    ec = "(EngineCore_DP0 pid=2281) "
    lines = [
        "(APIServer pid=2201) INFO 09-16 08:30:00 [api_server.py:1896] vLLM API server version 0.10.2",
        "(APIServer pid=2201) INFO 09-16 08:30:00 [utils.py:328] non-default args: {'model_tag': 'Qwen/Qwen2.5-32B-Instruct', "
        "'model': 'Qwen/Qwen2.5-32B-Instruct', 'max_model_len': 131072, 'tensor_parallel_size': 2}",
        f"{ec}INFO 09-16 08:30:14 [core.py:76] Initializing a V1 LLM engine (v0.10.2) with config: "
        "model='Qwen/Qwen2.5-32B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=2, quantization=None",
        f"{ec}INFO 09-16 08:31:40 [gpu_worker.py:276] Available KV cache memory: 9.35 GiB",
    ]
    tb = traceback([*CORE_INIT,
                    f("vllm/v1/engine/core.py", 199, "_initialize_kv_caches", "kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs,"),
                    f("vllm/v1/core/kv_cache_utils.py", 1243, "get_kv_cache_configs", "check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker,"),
                    f("vllm/v1/core/kv_cache_utils.py", 716, "check_enough_kv_cache_memory", "raise ValueError(")],
                   "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
                   "needed, which is larger than the available KV cache memory (9.35 GiB). Based on the available memory, the "
                   "estimated maximum model length is 76592. Try increasing `gpu_memory_utilization` or decreasing "
                   "`max_model_len` when initializing the engine.")
    return lines + prefixed(f"{ec}ERROR 09-16 08:31:41 [core.py:718] ", ["EngineCore failed to start.", *tb])


@log("kv_too_small_v0_066_docker_ts.log")
def _() -> list[str]:
    """V0 wording, 0.6.6, ``docker logs --timestamps``."""
    lines = [
        "INFO 12-28 10:00:03 api_server.py:651] vLLM API server version 0.6.6",
        "INFO 12-28 10:00:14 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: model='Qwen/Qwen2.5-14B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, enforce_eager=True",
        "INFO 12-28 10:00:41 model_runner.py:1099] Loading model weights took 27.5947 GB",
        "INFO 12-28 10:00:46 worker.py:241] the current vLLM instance can use total_gpu_memory (31.74GiB) x gpu_memory_utilization (0.90) = 28.57GiB",
        "INFO 12-28 10:00:46 worker.py:241] model weights take 27.59GiB; non_torch_memory takes 0.10GiB; PyTorch activation peak memory takes 0.19GiB; the rest of the memory reserved for KV Cache is 0.69GiB.",
        "INFO 12-28 10:00:46 gpu_executor.py:76] # GPU blocks: 225, # CPU blocks: 1365",
    ]
    tb = traceback(
        [f("vllm/engine/llm_engine.py", 434, "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)"),
         f("vllm/worker/worker.py", 291, "initialize_cache", "raise_if_cache_size_invalid(num_gpu_blocks,"),
         f("vllm/worker/worker.py", 493, "raise_if_cache_size_invalid", "raise ValueError(")],
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV "
        "cache (3600). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    lines += prefixed("ERROR 12-28 10:00:46 engine.py:366] ", tb)
    return [f"2024-12-28T10:00:{i:02d}.{i * 7919 % 10 ** 9:09d}Z {ln}" for i, ln in enumerate(lines)]


@log("kv_too_small_0220_wrapped100.log")
def _() -> list[str]:
    """0.22.0 wording (``model's``, CPU-backend remark, docs URL), terminal 100 columns wide."""
    ec = "(EngineCore pid=612) "
    lines = [
        "(APIServer pid=530) INFO 06-12 18:00:02 [api_server.py:1953] vLLM API server version 0.22.0",
        f"{ec}INFO 06-12 18:00:19 [core.py:99] Initializing a V1 LLM engine (v0.22.0) with config: model='google/gemma-3-12b-it', "
        "dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1, quantization=None",
        f"{ec}INFO 06-12 18:01:10 [gpu_worker.py:340] Available KV cache memory: 2.13 GiB",
        f"{ec}ERROR 06-12 18:01:11 [core.py:1033] ValueError: To serve at least one request with the model's max seq len "
        "(131072), (4.31 GiB KV cache is needed, which is larger than the available KV cache memory (2.13 GiB). Based on the "
        "available memory, the estimated maximum model length is 64768. Try increasing `gpu_memory_utilization` (which also "
        "controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    ]
    return wrap(lines, 100)


# --- no-kv-cache-memory ---------------------------------------------------------------------------------


@log("no_kv_memory_085.log")
def _() -> list[str]:
    lines = [
        "INFO 05-14 09:00:01 [__init__.py:239] Automatically detected platform cuda.",
        "INFO 05-14 09:00:04 [api_server.py:1043] vLLM API server version 0.8.5",
        "INFO 05-14 09:00:04 [api_server.py:1044] args: Namespace(subparser='serve', model_tag='Qwen/Qwen2.5-VL-3B-Instruct', "
        "model='Qwen/Qwen2.5-VL-3B-Instruct', gpu_memory_utilization=0.3, max_model_len=None, tensor_parallel_size=1)",
        "INFO 05-14 09:00:16 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model='Qwen/Qwen2.5-VL-3B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=128000, tensor_parallel_size=1, quantization=None, enforce_eager=False",
        "INFO 05-14 09:00:31 [gpu_model_runner.py:1347] Model loading took 7.1557 GiB and 4.2 seconds",
        "INFO 05-14 09:00:40 [gpu_worker.py:227] Available KV cache memory: -1.41 GiB",
    ]
    tb = traceback([f("vllm/v1/engine/core.py", 387, "run_engine_core", "engine_core = EngineCoreProc(*args, **kwargs)"),
                    f("vllm/v1/engine/core.py", 137, "_initialize_kv_caches", "get_kv_cache_config(vllm_config, kv_cache_spec_one_worker,"),
                    f("vllm/v1/core/kv_cache_utils.py", 699, "get_kv_cache_config", "check_enough_kv_cache_memory(vllm_config, kv_cache_spec,"),
                    f("vllm/v1/core/kv_cache_utils.py", 527, "check_enough_kv_cache_memory", "raise ValueError(\"No available memory for the cache blocks. \"")],
                   "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")
    return lines + prefixed("ERROR 05-14 09:00:40 [core.py:396] ", ["EngineCore failed to start.", *tb])


@log("no_kv_memory_0220_json.log")
def _() -> list[str]:
    """0.22.0 wording in fluent-bit JSON records (``message`` field)."""
    ec = "(EngineCore pid=66) "
    msgs = [
        "(APIServer pid=1) INFO 06-20 07:00:02 [api_server.py:1953] vLLM API server version 0.22.0",
        f"{ec}INFO 06-20 07:00:15 [core.py:99] Initializing a V1 LLM engine (v0.22.0) with config: model='openai/gpt-oss-20b', "
        "dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1, quantization=mxfp4",
        f"{ec}INFO 06-20 07:00:40 [gpu_worker.py:340] Available KV cache memory: 0.00 GiB",
        f"{ec}ERROR 06-20 07:00:41 [core.py:1033] ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU "
        "backend, despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    ]
    return [json.dumps({"time": f"2026-06-20T07:00:{i:02d}Z", "level": "info", "message": m, "kubernetes": {"pod_name": "vllm-0"}})
            for i, m in enumerate(msgs)]


# --- weights-load-oom -----------------------------------------------------------------------------------


@log("weights_load_092.log")
def _() -> list[str]:
    ec = "(EngineCore pid=144) "
    lines = [
        "INFO 07-10 12:00:02 [api_server.py:1395] vLLM API server version 0.9.2",
        "INFO 07-10 12:00:02 [cli_args.py:325] non-default args: {'model': 'Qwen/Qwen2.5-72B-Instruct', 'max_model_len': 8192}",
        "INFO 07-10 12:00:14 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-72B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, quantization=None, enforce_eager=False",
        "INFO 07-10 12:00:16 [gpu_model_runner.py:1770] Starting to load model Qwen/Qwen2.5-72B-Instruct...",
        "Loading safetensors checkpoint shards:   0% Completed | 0/37 [00:00<?, ?it/s]\rLoading safetensors checkpoint shards:  54% Completed | 20/37 [00:41<00:35,  2.07s/it]",
    ]
    tb = traceback(
        [f("vllm/v1/worker/gpu_worker.py", 185, "load_model", "self.model_runner.load_model()"),
         f("vllm/v1/worker/gpu_model_runner.py", 1773, "load_model", "self.model = model_loader.load_model("),
         f("vllm/model_executor/model_loader/base_loader.py", 41, "load_model", "self.load_weights(model, model_config)"),
         f("vllm/model_executor/model_loader/default_loader.py", 269, "load_weights", "loaded_weights = model.load_weights("),
         f("vllm/model_executor/models/qwen2.py", 426, "load_weights", "weight_loader(param, loaded_weight, shard_id)"),
         f("vllm/model_executor/layers/linear.py", 806, "weight_loader", "param_data.copy_(loaded_weight)")],
        torch_oom("464.00 MiB", 0, "79.19 GiB", "385.06 MiB", "78.31 GiB", "16.40 MiB", this="78.80 GiB",
                  prefix="torch.OutOfMemoryError: "))
    return lines + prefixed(f"{ec}ERROR 07-10 12:01:03 [core.py:586] ", ["EngineCore failed to start.", *tb])


@log("weights_load_offline_rank0.log")
def _() -> list[str]:
    """A Python script with ``LLM(...)`` on 0.7.3 (V0): Python prints ``[rank0]:`` before every
    traceback line; the model is built layer by layer and runs out while allocating layers."""
    lines = [
        "INFO 03-02 18:20:01 __init__.py:207] Automatically detected platform cuda.",
        "INFO 03-02 18:20:09 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: "
        "model='meta-llama/Llama-3.3-70B-Instruct', dtype=torch.bfloat16, max_seq_len=4096, tensor_parallel_size=1, "
        "quantization=None, enforce_eager=True",
        "INFO 03-02 18:20:11 model_runner.py:1110] Starting to load model meta-llama/Llama-3.3-70B-Instruct...",
    ]
    tb = traceback(
        [("/home/ops/run_batch.py", 14, "<module>", "llm = LLM(model=MODEL, max_model_len=4096, enforce_eager=True)"),
         f("vllm/entrypoints/llm.py", 241, "__init__", "self.llm_engine = self.engine_class.from_engine_args("),
         f("vllm/engine/llm_engine.py", 273, "__init__", "self.model_executor = executor_class(vllm_config=vllm_config, )"),
         f("vllm/executor/uniproc_executor.py", 47, "_init_executor", 'self.collective_rpc("load_model")'),
         f("vllm/worker/model_runner.py", 1112, "load_model", "self.model = get_model(vllm_config=self.vllm_config)"),
         f("vllm/model_executor/model_loader/loader.py", 406, "load_model", "model = _initialize_model(vllm_config=vllm_config)"),
         f("vllm/model_executor/model_loader/loader.py", 125, "_initialize_model", "return model_class(vllm_config=vllm_config, prefix=prefix)"),
         f("vllm/model_executor/models/utils.py", 610, "make_layers", "maybe_offload_to_cpu(layer_fn(prefix=f\"{prefix}.{idx}\"))")],
        torch_oom("448.00 MiB", 0, "79.15 GiB", "261.12 MiB", "78.33 GiB", "1.04 MiB", this="78.88 GiB",
                  prefix="torch.OutOfMemoryError: "))
    return lines + [f"[rank0]: {ln}" for ln in tb]


# --- insufficient-free-memory-at-startup ----------------------------------------------------------------------


@log("free_memory_0102.log")
def _() -> list[str]:
    ec = "(EngineCore_DP0 pid=17374) "
    lines = [
        "(APIServer pid=17300) INFO 09-28 15:47:11 [api_server.py:1896] vLLM API server version 0.10.2",
        f"{ec}INFO 09-28 15:47:22 [core.py:76] Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen3-8B', "
        "dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=1, quantization=None",
    ]
    tb = traceback([*CORE_INIT,
                    f("vllm/v1/worker/gpu_worker.py", 180, "init_device", "raise ValueError(")],
                   "ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization "
                   "(0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")
    return lines + prefixed(f"{ec}ERROR 09-28 15:47:24 [core.py:718] ", ["EngineCore failed to start.", *tb])


@log("free_memory_buildkite_ray_0160.log")
def _() -> list[str]:
    """A CI run (Buildkite timestamps) of 0.16.0 with Ray: the error arrives wrapped in RayTaskError."""
    ec = "(EngineCore_DP0 pid=6940) "
    lines = [
        "(APIServer pid=6811) INFO 02-24 20:20:40 [api_server.py:1934] vLLM API server version 0.16.0",
        f"{ec}INFO 02-24 20:20:58 [core.py:97] Initializing a V1 LLM engine (v0.16.0) with config: model='facebook/opt-125m', "
        "dtype=torch.float16, max_seq_len=2048, tensor_parallel_size=2, quantization=None",
        f"{ec}  File \"/usr/local/lib/python3.12/dist-packages/ray/_private/worker.py\", line 958, in get_objects",
        f"{ec}    raise value.as_instanceof_cause()",
        f"{ec}ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method() (pid=7106, ip=192.168.10.10)",
        f"{ec}  File \"{SITE}/vllm/v1/worker/worker_base.py\", line 330, in execute_method",
        f"{ec}    return run_method(self, method, args, kwargs)",
        f"{ec}  File \"{SITE}/vllm/v1/worker/gpu_worker.py\", line 241, in init_device",
        f"{ec}    self.requested_memory = request_memory(init_snapshot, self.cache_config)",
        f"{ec}  File \"{SITE}/vllm/v1/worker/utils.py\", line 377, in request_memory",
        f"{ec}    raise ValueError(",
        f"{ec}ValueError: Free memory on device cuda:0 (19.77/22.05 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    ]
    return [f"[2026-02-24T20:21:{i:02d}Z] {ln}" for i, ln in enumerate(lines)]


@log("memory_profiling_error_092.log")
def _() -> list[str]:
    """Another process released its memory while vLLM was profiling (0.9.2 wording)."""
    lines = [
        "INFO 07-16 14:10:01 [api_server.py:1395] vLLM API server version 0.9.2",
        "INFO 07-16 14:10:13 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-7B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1",
        "INFO 07-16 14:10:30 [gpu_model_runner.py:1801] Model loading took 14.2488 GiB and 5.0 seconds",
    ]
    tb = traceback([*CORE_INIT, *DETERMINE[:6],
                    f("vllm/v1/worker/gpu_worker.py", 236, "determine_available_memory", "assert self.init_snapshot.free_memory > free_gpu_memory, (")],
                   "AssertionError: Error in memory profiling. Initial free memory 41.33 GiB, current free memory 60.17 GiB. "
                   "This happens when other processes sharing the same container release GPU memory while vLLM is profiling "
                   "during initialization. To fix this, ensure consistent GPU memory allocation or isolate vLLM in its own container.")
    return lines + prefixed("ERROR 07-16 14:10:42 [core.py:586] ", ["EngineCore failed to start.", *tb])


# --- runtime-oom ----------------------------------------------------------------------------------------------


@log("runtime_oom_0110_tp2.log")
def _() -> list[str]:
    """0.11.0 serving for a while, then one long prompt: rank 1 runs out in the MLP."""
    api = "(APIServer pid=1) "
    lines = [
        f"{api}INFO 10-20 09:00:04 [api_server.py:1839] vLLM API server version 0.11.0",
        f"{api}INFO 10-20 09:00:04 [utils.py:233] non-default args: {{'model_tag': 'meta-llama/Llama-3.1-70B-Instruct', "
        "'model': 'meta-llama/Llama-3.1-70B-Instruct', 'tensor_parallel_size': 2, 'max_model_len': 65536, "
        "'gpu_memory_utilization': 0.95, 'max_num_batched_tokens': 65536}",
        "(EngineCore_DP0 pid=201) INFO 10-20 09:00:21 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=65536, tensor_parallel_size=2",
        "(EngineCore_DP0 pid=201) INFO 10-20 09:02:40 [core.py:210] init engine (profile, create kv cache, warmup model) took 131.22 seconds",
        f"{api}INFO 10-20 09:02:42 [api_server.py:1912] Starting vLLM API server 0 on http://0.0.0.0:8000",
    ]
    for i in range(30):
        lines.append(f"{api}INFO 10-20 09:{3 + i // 10:02d}:{i % 60:02d} [loggers.py:123] Engine 000: Avg prompt throughput: "
                     f"{1200 + 37 * i:.1f} tokens/s, Avg generation throughput: {310 + i:.1f} tokens/s, Running: {i % 9} reqs, "
                     "Waiting: 0 reqs, GPU KV cache usage: 12.4%, Prefix cache hit rate: 31.0%")
    w = "(Worker_TP1 pid=262) ERROR 10-20 09:07:13 [multiproc_executor.py:671] "
    tb = traceback(
        [f("vllm/v1/executor/multiproc_executor.py", 666, "worker_busy_loop", "output = func(*args, **kwargs)"),
         f("vllm/v1/worker/gpu_worker.py", 447, "execute_model", "output = self.model_runner.execute_model(scheduler_output,"),
         f("vllm/v1/worker/gpu_model_runner.py", 2365, "execute_model", "model_output = self.model("),
         f("vllm/model_executor/layers/activation.py", 84, "forward_native", "return F.silu(x[..., :d]) * x[..., d:]")],
        torch_oom("3.50 GiB", 1, "79.19 GiB", "2.31 GiB", "75.20 GiB", "412.55 MiB", this="76.87 GiB", pools="1.18 GiB"))
    lines += prefixed(w, ["WorkerProc hit an exception.", *tb])
    lines.append("(EngineCore_DP0 pid=201) ERROR 10-20 09:07:13 [core.py:710] EngineCore encountered a fatal error.")
    lines.append(f"{api}ERROR 10-20 09:07:13 [async_llm.py:480] AsyncLLM output_handler failed.")
    return lines


@log("runtime_oom_v0_066_compose.log")
def _() -> list[str]:
    """V0 (0.6.6) under docker compose: the background loop dies during a request."""
    lines = [
        "INFO 12-20 20:25:00 api_server.py:651] vLLM API server version 0.6.6",
        "INFO 12-20 20:25:12 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: model='mistralai/Mistral-7B-Instruct-v0.3', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, enforce_eager=False",
        "INFO 12-20 20:25:46 worker.py:241] Memory profiling takes 19.77 seconds",
        "INFO 12-20 20:25:46 model_runner.py:1527] Graph capturing finished in 14 secs, took 0.35 GiB",
        "INFO:     Application startup complete.",
        "INFO 12-20 20:31:02 engine.py:267] Added request chatcmpl-7e2.",
        "INFO 12-20 20:31:07 metrics.py:467] Avg prompt throughput: 5021.3 tokens/s, Avg generation throughput: 2.1 tokens/s, "
        "Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 51.2%, CPU KV cache usage: 0.0%.",
    ]
    tb = traceback(
        [f("vllm/engine/multiprocessing/engine.py", 251, "engine_step", "raise e"),
         f("vllm/engine/llm_engine.py", 1390, "step", "outputs = self.model_executor.execute_model("),
         f("vllm/worker/model_runner.py", 1719, "execute_model", "hidden_or_intermediate_states = model_executable("),
         f("vllm/model_executor/layers/sampler.py", 1024, "_get_logprobs", "logprobs = torch.log_softmax(logits, dim=-1)")],
        torch_oom("15.29 GiB", 0, "15.77 GiB", "1.22 GiB", "13.92 GiB", "210.31 MiB", this="14.54 GiB",
                  prefix="torch.OutOfMemoryError: "))
    lines += prefixed("ERROR 12-20 20:31:09 engine.py:135] ", tb)
    return [f"vllm-openai-1  | {ln}" for ln in lines]


# --- runtime-oom-logprobs -------------------------------------------------------------------------------------


def _eval_server(version: str, extra_args: str) -> list[str]:
    """An 8B server scored by an evaluation harness (echo with prompt logprobs)."""
    api, core = "(APIServer pid=1) ", "(EngineCore_DP0 pid=188) "
    model = "meta-llama/Llama-3.1-8B-Instruct"
    return [
        f"{api}INFO 11-21 14:00:03 [api_server.py:1952] vLLM API server version {version}",
        f"{api}INFO 11-21 14:00:03 [utils.py:253] non-default args: {{'model_tag': '{model}', 'model': '{model}', "
        f"'max_model_len': 32768, 'max_num_batched_tokens': 32768{extra_args}}}",
        f"{core}INFO 11-21 14:00:20 [core.py:98] Initializing a V1 LLM engine (v{version}) with config: model='{model}', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1",
        f"{core}INFO 11-21 14:00:49 [gpu_model_runner.py:4021] Model loading took 14.99 GiB memory and 18.40 seconds",
        f"{core}INFO 11-21 14:01:12 [gpu_worker.py:436] Available KV cache memory: 52.37 GiB",
        f"{core}INFO 11-21 14:01:40 [core.py:299] init engine (profile, create kv cache, warmup model) took 80.31 seconds",
        f"{api}INFO:     Application startup complete.",
        f"{api}INFO:     127.0.0.1:51324 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    ]


_LP = "(EngineCore_DP0 pid=188) ERROR 11-21 14:06:02 [core.py:1031] "


@log("prompt_logprobs_v1_0250.log")
def _() -> list[str]:
    """0.25.0, V1 runner, 32K-token steps: a harness asks for prompt logprobs on long documents."""
    tb = traceback(
        [f("vllm/v1/engine/core.py", 1049, "run_busy_loop", "self._process_engine_step()"),
         f("vllm/v1/worker/gpu_worker.py", 1040, "sample_tokens", "return self.model_runner.sample_tokens(grammar_output)"),
         f("vllm/v1/worker/gpu_model_runner.py", 4628, "sample_tokens", ") = self._bookkeeping_sync("),
         f("vllm/v1/worker/gpu_model_runner.py", 3753, "_bookkeeping_sync", "prompt_logprobs_dict = self._get_prompt_logprobs_dict("),
         f("vllm/v1/worker/gpu_model_runner.py", 5598, "_get_prompt_logprobs_dict", "logprobs = self.sampler.compute_logprobs(logits)"),
         f("vllm/v1/sample/sampler.py", 306, "compute_logprobs", "return logits.log_softmax(dim=-1, dtype=torch.float32)")],
        torch_oom("15.66 GiB", 0, "79.19 GiB", "9.87 GiB", "68.41 GiB", "402.11 MiB", this="69.30 GiB"))
    return [*_eval_server("0.25.0", ""), *prefixed(_LP, ["EngineCore encountered a fatal error.", *tb])]


@log("prompt_logprobs_all_mrv2_0290.log")
def _() -> list[str]:
    """0.29.0, model runner V2 with --max-logprobs -1: prompt_logprobs=-1 concatenates whole-vocabulary rows."""
    tb = traceback(
        [f("vllm/v1/engine/core.py", 1049, "run_busy_loop", "self._process_engine_step()"),
         f("vllm/v1/worker/gpu_worker.py", 1105, "sample_tokens", "return self.model_runner.sample_tokens(grammar_output)"),
         f("vllm/v1/worker/gpu/model_runner.py", 1875, "sample_tokens", "prompt_logprobs_dict = self.prompt_logprobs_worker.compute_prompt_logprobs("),
         f("vllm/v1/worker/gpu/sample/prompt_logprob.py", 82, "compute_prompt_logprobs", "compute_prompt_logprobs_with_chunking("),
         f("vllm/v1/worker/gpu/sample/prompt_logprob.py", 233, "compute_prompt_logprobs_with_chunking",
           "token_ids = torch.cat(token_ids, dim=0) if len(token_ids) > 1 else token_ids[0]")],
        torch_oom("23.48 GiB", 0, "79.19 GiB", "11.02 GiB", "67.20 GiB", "388.00 MiB", this="68.15 GiB"))
    return [*_eval_server("0.29.0", ", 'max_logprobs': -1"), *prefixed(_LP, ["EngineCore encountered a fatal error.", *tb])]


# --- runtime-oom-multimodal ------------------------------------------------------------------------------------

_VL = "Qwen/Qwen2.5-VL-32B-Instruct"


def _vl_serving(version: str, *, runner_v2: bool, extra_args: str = "") -> list[str]:
    """A Qwen2.5-VL server that started and served text and images for a while."""
    api, core = "(APIServer pid=1) ", "(EngineCore_DP0 pid=211) "
    lines = [
        f"{api}INFO 11-20 09:00:04 [api_server.py:1952] vLLM API server version {version}",
        f"{api}INFO 11-20 09:00:04 [utils.py:253] non-default args: {{'model_tag': '{_VL}', 'model': '{_VL}', "
        f"'max_model_len': 32768, 'gpu_memory_utilization': 0.92{extra_args}}}",
        f"{core}INFO 11-20 09:00:25 [core.py:98] Initializing a V1 LLM engine (v{version}) with config: model='{_VL}', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1",
    ]
    if runner_v2:
        lines.append(f"{core}INFO 11-20 09:00:27 [gpu_worker.py:378] Using V2 Model Runner")
    lines += [
        f"{core}INFO 11-20 09:01:40 [gpu_model_runner.py:4021] Model loading took 62.73 GiB memory and 71.02 seconds",
        f"{core}INFO 11-20 09:02:02 [gpu_worker.py:436] Available KV cache memory: 7.91 GiB",
        f"{core}INFO 11-20 09:02:02 [kv_cache_utils.py:1320] GPU KV cache size: 32,384 tokens",
        f"{core}INFO 11-20 09:02:31 [core.py:299] init engine (profile, create kv cache, warmup model) took 124.05 seconds",
        f"{api}INFO:     Application startup complete.",
    ]
    for i in range(12):
        lines.append(f"{api}INFO 11-20 09:{3 + i // 6:02d}:{(7 * i) % 60:02d} [loggers.py:257] Engine 000: Avg prompt throughput: "
                     f"{2400 + 91 * i:.1f} tokens/s, Avg generation throughput: {120 + i:.1f} tokens/s, Running: {1 + i % 5} reqs, "
                     "Waiting: 0 reqs, GPU KV cache usage: 18.2%, Prefix cache hit rate: 4.0%")
    return lines


_W = "(EngineCore_DP0 pid=211) ERROR 11-20 09:05:41 [core.py:1031] "
_ENCODER_OOM = torch_oom("4.63 GiB", 0, "79.19 GiB", "2.87 GiB", "74.90 GiB", "318.40 MiB", this="76.31 GiB")


@log("mm_encoder_runtime_v1_0250.log")
def _() -> list[str]:
    """0.25.0, V1 runner, --skip-mm-profiling: the first batch of large images fails in the encoder."""
    lines = _vl_serving("0.25.0", runner_v2=False, extra_args=", 'skip_mm_profiling': True")
    tb = traceback(
        [f("vllm/v1/engine/core.py", 1022, "run_engine_core", "engine_core.run_busy_loop()"),
         f("vllm/v1/engine/core.py", 1049, "run_busy_loop", "self._process_engine_step()"),
         f("vllm/v1/worker/gpu_worker.py", 1015, "execute_model", "output = self.model_runner.execute_model("),
         f("vllm/v1/worker/gpu_model_runner.py", 4304, "execute_model", ") = self._preprocess("),
         f("vllm/v1/worker/gpu_model_runner.py", 3584, "_preprocess", "encoder_outputs = self._execute_mm_encoder(scheduler_output)"),
         f("vllm/v1/worker/gpu_model_runner.py", 3134, "_execute_mm_encoder", "batch_outputs = model.embed_multimodal(**mm_kwargs_batch)"),
         f("vllm/model_executor/models/qwen2_5_vl.py", 1666, "embed_multimodal", "image_embeddings = self._process_image_input(multimodal_input)")],
        _ENCODER_OOM)
    return [*lines, *prefixed(_W, ["EngineCore encountered a fatal error.", *tb])]


@log("mm_encoder_runtime_mrv2_0260.log")
def _() -> list[str]:
    """0.26.0, model runner V2 (no encoder profiling yet): the server dies on its first large images."""
    lines = _vl_serving("0.26.0", runner_v2=True)
    tb = traceback(
        [f("vllm/v1/engine/core.py", 1022, "run_engine_core", "engine_core.run_busy_loop()"),
         f("vllm/v1/engine/core.py", 1049, "run_busy_loop", "self._process_engine_step()"),
         f("vllm/v1/worker/gpu_worker.py", 1147, "execute_model", "output = self.model_runner.execute_model("),
         f("vllm/v1/worker/gpu/model_runner.py", 1287, "execute_model", "inputs_embeds = self.model_state.get_mm_embeddings("),
         f("vllm/v1/worker/gpu/model_states/default.py", 79, "get_mm_embeddings", "encoder_outputs = self.encoder_runner.execute_mm_encoder(mm_kwargs)"),
         f("vllm/v1/worker/gpu/mm/encoder_runner.py", 63, "execute_mm_encoder", "batch_outputs = self.model.embed_multimodal(**mm_kwargs_batch)"),
         f("vllm/model_executor/models/qwen2_5_vl.py", 1666, "embed_multimodal", "image_embeddings = self._process_image_input(multimodal_input)")],
        _ENCODER_OOM)
    return [*lines, *prefixed(_W, ["EngineCore encountered a fatal error.", *tb])]


@log("mm_encoder_profile_mrv2_0270.log")
def _() -> list[str]:
    """0.27.0, model runner V2 profiles the encoder itself: the OOM comes at start-up, in the profile."""
    core = "(EngineCore_DP0 pid=211) "
    lines = [
        "(APIServer pid=1) INFO 11-20 09:00:04 [api_server.py:1952] vLLM API server version 0.27.0",
        f"{core}INFO 11-20 09:00:25 [core.py:98] Initializing a V1 LLM engine (v0.27.0) with config: model='{_VL}', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1",
        f"{core}INFO 11-20 09:00:27 [gpu_worker.py:378] Using V2 Model Runner",
        f"{core}INFO 11-20 09:01:40 [gpu_model_runner.py:4021] Model loading took 62.73 GiB memory and 71.02 seconds",
    ]
    tb = traceback(
        [f("vllm/v1/engine/core.py", 293, "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()"),
         f("vllm/v1/worker/gpu_worker.py", 477, "determine_available_memory", "self.model_runner.profile_run()"),
         f("vllm/v1/worker/gpu/model_runner.py", 715, "profile_run", "self.model_state.encoder_runner.profile_encoder_cache("),
         f("vllm/v1/worker/gpu/mm/encoder_runner.py", 88, "profile_encoder_cache", "dummy_encoder_outputs = self.execute_mm_encoder(dummy_mm_inputs)"),
         f("vllm/v1/worker/gpu/mm/encoder_runner.py", 106, "execute_mm_encoder", "batch_outputs = self.model.embed_multimodal(**mm_kwargs_batch)")],
        _ENCODER_OOM)
    return [*lines, *prefixed(_W, ["EngineCore failed to start.", *tb])]


# --- fragmentation ----------------------------------------------------------------------------------------------


@log("fragmentation_torch210.log")
def _() -> list[str]:
    """0.18.0 (torch 2.10: the hint names PYTORCH_ALLOC_CONF); half the reserved pool is free but
    in pieces too small for a 2 GiB request."""
    ec = "(EngineCore pid=91) "
    lines = [
        "(APIServer pid=1) INFO 03-20 11:00:01 [api_server.py:1941] vLLM API server version 0.18.0",
        f"{ec}INFO 03-20 11:00:12 [core.py:97] Initializing a V1 LLM engine (v0.18.0) with config: model='Qwen/Qwen3-30B-A3B', "
        "dtype=torch.bfloat16, max_seq_len=40960, tensor_parallel_size=1, quantization=None",
        "(APIServer pid=1) INFO:     Application startup complete.",
        "(APIServer pid=1) INFO 03-20 11:40:02 [loggers.py:123] Engine 000: Avg prompt throughput: 8210.0 tokens/s, "
        "Avg generation throughput: 920.3 tokens/s, Running: 44 reqs, Waiting: 3 reqs, GPU KV cache usage: 97.1%",
    ]
    tb = traceback(
        [f("vllm/v1/engine/core.py", 398, "step", "model_output = self.execute_model_with_error_logging("),
         f("vllm/v1/worker/gpu_model_runner.py", 2640, "execute_model", "model_output = self.model("),
         f("vllm/model_executor/layers/fused_moe/fused_moe.py", 1604, "fused_experts_impl", "intermediate_cache2 = torch.empty(")],
        torch_oom("2.00 GiB", 0, "79.19 GiB", "1.75 GiB", "68.02 GiB", "6.21 GiB", this="77.42 GiB",
                  var="PYTORCH_ALLOC_CONF"))
    return lines + prefixed(f"{ec}ERROR 03-20 11:40:05 [core.py:1011] ", ["EngineCore encountered a fatal error.", *tb])


@log("fragmentation_rocm_no_traceback.log")
def _() -> list[str]:
    """ROCm (HIP wording): the OOM is logged without a traceback after serving started."""
    lines = [
        "INFO 04-02 09:00:00 [__init__.py:216] Automatically detected platform rocm.",
        "(APIServer pid=1) INFO 04-02 09:00:03 [api_server.py:1839] vLLM API server version 0.11.0",
        "(EngineCore_DP0 pid=64) INFO 04-02 09:00:15 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='meta-llama/Llama-3.3-70B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1",
        "(APIServer pid=1) INFO 04-02 09:05:10 [api_server.py:1912] Starting vLLM API server 0 on http://0.0.0.0:8000",
        "(APIServer pid=1) INFO 04-02 10:12:44 [logger.py:41] Received request cmpl-8a1: prompt: 'long document'",
        "(EngineCore_DP0 pid=64) ERROR 04-02 10:12:49 [core.py:812] EngineCore encountered an error: "
        + torch_oom("4.00 GiB", 0, "191.98 GiB", "3.02 GiB", "171.11 GiB", "16.84 GiB", this="188.96 GiB", plat="HIP",
                    var="PYTORCH_HIP_ALLOC_CONF", prefix=""),
    ]
    return lines


# --- multimodal-profile --------------------------------------------------------------------------------------


@log("multimodal_qwen25vl_0110.log")
def _() -> list[str]:
    ec = "(EngineCore_DP0 pid=322) "
    lines = [
        "(APIServer pid=1) INFO 10-30 13:00:02 [api_server.py:1839] vLLM API server version 0.11.0",
        "(APIServer pid=1) INFO 10-30 13:00:02 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen2.5-VL-72B-Instruct', "
        "'model': 'Qwen/Qwen2.5-VL-72B-Instruct', 'tensor_parallel_size': 4, 'limit_mm_per_prompt': {'image': 8, 'video': 2}}",
        "(APIServer pid=1) INFO 10-30 13:00:11 [model.py:547] Resolved architecture: Qwen2_5_VLForConditionalGeneration",
        f"{ec}INFO 10-30 13:00:25 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='Qwen/Qwen2.5-VL-72B-Instruct', dtype=torch.bfloat16, max_seq_len=128000, tensor_parallel_size=4",
        "(Worker_TP2 pid=401) INFO 10-30 13:02:10 [gpu_model_runner.py:2653] Model loading took 34.5921 GiB and 95.0 seconds",
        "(Worker_TP2 pid=401) INFO 10-30 13:02:12 [gpu_model_runner.py:3361] Encoder cache will be initialized with a budget "
        "of 32768 tokens, and profiled with 2 video items of the maximum feature size.",
    ]
    tb = traceback([*DETERMINE[5:8],
                    f("vllm/v1/worker/gpu_model_runner.py", 3395, "profile_run", "dummy_encoder_outputs = self.model.get_multimodal_embeddings("),
                    f("vllm/model_executor/models/qwen2_5_vl.py", 1210, "get_multimodal_embeddings", "video_embeddings = self._process_video_input(multimodal_input)"),
                    f("vllm/model_executor/models/qwen2_5_vl.py", 1143, "_process_video_input", "video_embeds = self.visual(pixel_values_videos, grid_thw=grid_thw)"),
                    *MODULE,
                    f("vllm/model_executor/models/qwen2_5_vl.py", 398, "forward", "attn_output = torch.nn.functional.scaled_dot_product_attention(")],
                   torch_oom("20.25 GiB", 2, "79.19 GiB", "8.88 GiB", "69.22 GiB", "401.01 MiB", this="70.30 GiB"))
    return lines + prefixed("(Worker_TP2 pid=401) ERROR 10-30 13:02:19 [multiproc_executor.py:671] ", ["WorkerProc hit an exception.", *tb])


@log("multimodal_rocm_vit_0171.log")
def _() -> list[str]:
    """0.17.1 on ROCm: a small VL model whose vision tower asks for 192 GiB at profiling."""
    ec = "(EngineCore_DP0 pid=43) "
    lines = [
        "INFO 03-20 17:38:40 [__init__.py:216] Automatically detected platform rocm.",
        "(APIServer pid=1) INFO 03-20 17:38:44 [api_server.py:1931] vLLM API server version 0.17.1",
        f"{ec}INFO 03-20 17:38:55 [core.py:97] Initializing a V1 LLM engine (v0.17.1) with config: model='Qwen/Qwen3.5-0.8B', "
        "dtype=torch.bfloat16, max_seq_len=262144, tensor_parallel_size=1",
        f"{ec}INFO 03-20 17:39:08 [gpu_model_runner.py:4216] Model loading took 1.6102 GiB memory and 9.8 seconds",
        f"{ec}INFO 03-20 17:39:10 [gpu_model_runner.py:4309] Encoder cache will be initialized with a budget of 262144 tokens, "
        "and profiled with 1 video items of the maximum feature size.",
    ]
    tb = traceback([*CORE_INIT, *DETERMINE,
                    f("vllm/v1/worker/gpu_model_runner.py", 4331, "profile_run", "dummy_encoder_outputs = self.model.embed_multimodal("),
                    f("vllm/v1/attention/ops/vit_attn_wrappers.py", 268, "vit_torch_sdpa_wrapper", "return torch.ops.vllm.torch_sdpa_wrapper("),
                    f("torch/_ops.py", 1209, "__call__", "return self._op(*args, **kwargs)"),
                    f("vllm/v1/attention/ops/vit_attn_wrappers.py", 236, "torch_sdpa_wrapper", "output_i = apply_sdpa(q_i, k_i, v_i, scale=scale, enable_gqa=enable_gqa)")],
                   torch_oom("192.00 GiB", 0, "191.98 GiB", "188.61 GiB", "1.92 GiB", "14.00 MiB", this="3.12 GiB", plat="HIP",
                             var="PYTORCH_HIP_ALLOC_CONF"))
    return lines + prefixed(f"{ec}ERROR 03-20 17:39:14 [core.py:1100] ", ["EngineCore failed to start.", *tb])


# --- lora ------------------------------------------------------------------------------------------------------


@log("lora_serving_0111.log")
def _() -> list[str]:
    ec = "(EngineCore_DP0 pid=270) "
    lines = [
        "(APIServer pid=1) INFO 11-19 12:00:01 [api_server.py:1896] vLLM API server version 0.11.1",
        "(APIServer pid=1) INFO 11-19 12:00:01 [utils.py:253] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'model': 'meta-llama/Llama-3.1-8B-Instruct', 'enable_lora': True, 'max_loras': 8, 'max_lora_rank': 64, "
        "'lora_modules': [LoRAModulePath(name='sql', path='/adapters/sql')]}",
        f"{ec}INFO 11-19 12:00:15 [core.py:93] Initializing a V1 LLM engine (v0.11.1) with config: "
        "model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1",
        "(APIServer pid=1) INFO:     Application startup complete.",
        "(APIServer pid=1) INFO 11-19 12:14:55 [async_llm.py:352] Added request cmpl-51.",
    ]
    tb = traceback(
        [f("vllm/v1/engine/core.py", 284, "step", "model_output = self.execute_model_with_error_logging("),
         f("vllm/v1/worker/gpu_model_runner.py", 2544, "execute_model", "model_output = self.model("),
         f("vllm/lora/layers/column_parallel_linear.py", 242, "forward", "output_parallel = self.apply(input_, bias)"),
         f("vllm/lora/punica_wrapper/punica_gpu.py", 251, "add_lora_linear", "buffer = torch.empty((len(output_slices), x.size(0), r),")],
        torch_oom("6.00 GiB", 0, "44.39 GiB", "3.88 GiB", "39.67 GiB", "298.64 MiB", this="40.47 GiB"))
    return lines + prefixed(f"{ec}ERROR 11-19 12:14:57 [core.py:842] ", ["EngineCore encountered a fatal error.", *tb])


@log("lora_profile_dummy_0100.log")
def _() -> list[str]:
    """0.10.0: the profiling pass loads dummy LoRA adapters and runs out inside the LoRA manager."""
    lines = [
        "INFO 07-25 10:00:01 [api_server.py:1755] vLLM API server version 0.10.0",
        "INFO 07-25 10:00:01 [cli_args.py:261] non-default args: {'model': 'Qwen/Qwen2.5-14B-Instruct', 'enable_lora': True, "
        "'max_loras': 16, 'max_lora_rank': 256}",
        "INFO 07-25 10:00:12 [core.py:69] Initializing a V1 LLM engine (v0.10.0) with config: model='Qwen/Qwen2.5-14B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1",
        "INFO 07-25 10:00:40 [gpu_model_runner.py:1892] Model loading took 28.1012 GiB and 20.1 seconds",
    ]
    tb = traceback([*DETERMINE,
                    f("vllm/v1/worker/lora_model_runner_mixin.py", 142, "maybe_dummy_run_with_lora", "self.add_dummy_lora(lora_request, rank=LORA_WARMUP_RANK)"),
                    f("vllm/lora/worker_manager.py", 132, "add_dummy_lora", "dummy_lora = self._adapter_manager.create_dummy_lora("),
                    f("vllm/lora/models.py", 542, "create_dummy_lora", "lora = LoRALayerWeights.create_dummy_lora_weights(")],
                   torch_oom("1.25 GiB", 0, "44.39 GiB", "611.00 MiB", "42.80 GiB", "40.50 MiB", this="43.79 GiB"))
    return lines + prefixed("ERROR 07-25 10:00:55 [core.py:632] ", ["EngineCore failed to start.", *tb])


# --- speculative-decoding ------------------------------------------------------------------------------------


@log("specdec_eagle_0101.log")
def _() -> list[str]:
    ec = "(EngineCore_0 pid=512) "
    lines = [
        "(APIServer pid=480) INFO 08-25 09:00:02 [api_server.py:1805] vLLM API server version 0.10.1",
        "(APIServer pid=480) INFO 08-25 09:00:02 [utils.py:326] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'model': 'meta-llama/Llama-3.1-8B-Instruct', 'speculative_config': {'method': 'eagle', "
        "'model': 'yuhuili/EAGLE-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 5}}",
        f"{ec}INFO 08-25 09:00:14 [core.py:75] Initializing a V1 LLM engine (v0.10.1) with config: "
        "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=SpeculativeConfig(method='eagle', "
        "model='yuhuili/EAGLE-LLaMA3.1-Instruct-8B', num_spec_tokens=5), dtype=torch.bfloat16, max_seq_len=131072",
        "(APIServer pid=480) INFO:     Application startup complete.",
    ]
    tb = traceback(
        [f("vllm/v1/engine/core.py", 237, "step", "model_output = self.execute_model_with_error_logging("),
         f("vllm/v1/worker/gpu_model_runner.py", 1709, "execute_model", "spec_token_ids = self.propose_draft_token_ids("),
         f("vllm/v1/worker/gpu_model_runner.py", 1883, "propose_draft_token_ids", "draft_token_ids = self.drafter.propose("),
         f("vllm/v1/spec_decode/eagle.py", 221, "propose", "logits = self.model.compute_logits(sample_hidden_states, None)")],
        torch_oom("2.45 GiB", 0, "23.53 GiB", "1.02 GiB", "21.75 GiB", "231.17 MiB", this="22.49 GiB"))
    return lines + prefixed(f"{ec}ERROR 08-25 09:31:40 [core.py:634] ", ["EngineCore encountered a fatal error.", *tb])


@log("specdec_draft_load_v0_066.log")
def _() -> list[str]:
    """V0 (0.6.6) with a draft model: the draft's weights do not fit next to the target's."""
    lines = [
        "INFO 12-30 08:00:02 api_server.py:651] vLLM API server version 0.6.6",
        "INFO 12-30 08:00:02 api_server.py:652] args: Namespace(model='Qwen/Qwen2.5-32B-Instruct', "
        "speculative_model='Qwen/Qwen2.5-7B-Instruct', num_speculative_tokens=5, tensor_parallel_size=4, "
        "gpu_memory_utilization=0.9)",
        "INFO 12-30 08:00:14 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: model='Qwen/Qwen2.5-32B-Instruct', "
        "speculative_config=SpeculativeConfig(draft_model='Qwen/Qwen2.5-7B-Instruct', num_spec_tokens=5), dtype=torch.bfloat16, "
        "max_seq_len=32768, tensor_parallel_size=4",
        "INFO 12-30 08:01:20 model_runner.py:1099] Loading model weights took 15.4031 GB",
    ]
    tb = traceback(
        [f("vllm/spec_decode/spec_decode_worker.py", 360, "load_model", "self.proposer_worker.load_model()"),
         f("vllm/spec_decode/multi_step_worker.py", 49, "load_model", "super().load_model()"),
         f("vllm/worker/model_runner.py", 1097, "load_model", "self.model = get_model(vllm_config=self.vllm_config)"),
         f("vllm/model_executor/model_loader/loader.py", 364, "load_model", "model.load_weights(self._get_all_weights(model_config, model))")],
        torch_oom("1.02 GiB", 0, "39.38 GiB", "518.06 MiB", "38.17 GiB", "3.99 MiB", this="38.87 GiB", prefix="torch.OutOfMemoryError: "))
    return lines + prefixed("ERROR 12-30 08:01:31 engine.py:366] ", tb)


# --- host-memory --------------------------------------------------------------------------------------------------


@log("host_oom_killer_dmesg.log")
def _() -> list[str]:
    """A shell session: the server dies without a Python error; dmesg shows the OOM killer."""
    return [
        "$ vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B --tensor-parallel-size 4 --swap-space 64",
        "INFO 02-12 10:00:01 __init__.py:190] Automatically detected platform cuda.",
        "INFO 02-12 10:00:03 api_server.py:840] vLLM API server version 0.7.2",
        "INFO 02-12 10:00:15 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.2) with config: "
        "model='deepseek-ai/DeepSeek-R1-Distill-Qwen-32B', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=4",
        "Loading safetensors checkpoint shards:  25% Completed | 2/8 [00:09<00:28,  4.71s/it]",
        "Killed",
        "$ sudo dmesg -T | tail -3",
        "[Wed Feb 12 10:01:44 2025] python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
        "[Wed Feb 12 10:01:44 2025] Out of memory: Killed process 48213 (python3) total-vm:187402236kB, anon-rss:121664312kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:245012kB oom_score_adj:0",
    ]


@log("host_swap_cannot_allocate.log")
def _() -> list[str]:
    """V0 (0.6.6) pinning a large CPU swap space on a small host."""
    lines = [
        "INFO 12-29 14:00:02 api_server.py:651] vLLM API server version 0.6.6",
        "INFO 12-29 14:00:14 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: model='Qwen/Qwen2.5-7B-Instruct', "
        "dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=8",
        "WARNING 12-29 14:00:14 config.py:1076] Possibly too large swap space. 256.00 GiB out of the 503.53 GiB total CPU memory is allocated for the swap space.",
        "INFO 12-29 14:01:02 worker.py:241] Memory profiling takes 2.03 seconds",
    ]
    tb = traceback(
        [f("vllm/worker/worker.py", 291, "initialize_cache", "self._init_cache_engine()"),
         f("vllm/worker/worker.py", 296, "_init_cache_engine", "self.cache_engine = ["),
         f("vllm/worker/cache_engine.py", 67, "__init__", 'self.cpu_cache = self._allocate_kv_cache(self.num_cpu_blocks, "cpu")'),
         f("vllm/worker/cache_engine.py", 86, "_allocate_kv_cache", "torch.zeros(kv_cache_shape,")],
        "RuntimeError: unable to mmap 34359738368 bytes from file </torch_1204_3312>: Cannot allocate memory (12)")
    return lines + prefixed("(VllmWorkerProcess pid=1204) ERROR 12-29 14:01:09 multiproc_worker_utils.py:233] ", tb)


@log("host_k8s_oomkilled.log")
def _() -> list[str]:
    """``kubectl describe`` pasted after the log: the container went over its memory limit."""
    return [
        "(APIServer pid=1) INFO 10-01 06:00:02 [api_server.py:1839] vLLM API server version 0.11.0",
        "(EngineCore_DP0 pid=97) INFO 10-01 06:00:14 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='meta-llama/Llama-3.1-70B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=4",
        "(Worker_TP0 pid=130) INFO 10-01 06:00:20 [gpu_model_runner.py:2602] Starting to load model meta-llama/Llama-3.1-70B-Instruct...",
        "",
        "$ kubectl describe pod vllm-70b-6f7d9 | sed -n '/Last State/,/Exit Code/p'",
        "    Last State:     Terminated",
        "      Reason:       OOMKilled",
        "      Exit Code:    137",
    ]


# --- mamba-cache-blocks ---------------------------------------------------------------------------------


def mamba_blocks_error(seqs: int, blocks: int) -> str:
    """vllm/config/compilation.py@0.20.0-0.33.0, one message in every release."""
    return (f"ValueError: max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks}). Each decode sequence "
            "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most "
            f"{blocks} or increase gpu_memory_utilization.")


@log("mamba_blocks_nemotron_0280.log")
def _() -> list[str]:
    """0.28.0, one H100, Nemotron-H with a float32 SSM state at utilization 0.35 and the default 1024
    sequences; V1 model runner, the check raised from initialize_attn_backend()."""
    ec = "(EngineCore pid=318) "
    lines = [
        "(APIServer pid=1) INFO 11-20 10:00:02 [api_server.py:2060] vLLM API server version 0.28.0",
        "(APIServer pid=1) INFO 11-20 10:00:02 [utils.py:280] non-default args: {'model_tag': "
        "'nvidia/NVIDIA-Nemotron-Nano-12B-v2', 'model': 'nvidia/NVIDIA-Nemotron-Nano-12B-v2', 'trust_remote_code': True, "
        "'max_model_len': 131072, 'gpu_memory_utilization': 0.35}",
        f"{ec}INFO 11-20 10:00:19 [core.py:104] Initializing a V1 LLM engine (v0.28.0) with config: "
        "model='nvidia/NVIDIA-Nemotron-Nano-12B-v2', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=1, "
        "quantization=None, enforce_eager=False, kv_cache_dtype=auto, enable_prefix_caching=False, "
        "compilation_config={'mode': <CompilationMode.VLLM_COMPILE: 3>, 'cudagraph_mode': "
        "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'max_cudagraph_capture_size': 512}",
        f"{ec}INFO 11-20 10:00:21 [config.py:661] Updating mamba_ssm_cache_dtype to 'float32' for NemotronH model",
        f"{ec}INFO 11-20 10:00:44 [gpu_model_runner.py:4410] Model loading took 22.91 GiB memory and 18.402 seconds",
        f"{ec}INFO 11-20 10:01:12 [gpu_worker.py:579] Available KV cache memory: 2.47 GiB",
        f"{ec}INFO 11-20 10:01:12 [kv_cache_utils.py:1869] GPU KV cache size: 92,928 tokens, Maximum concurrency for "
        "131,072 tokens per request: 5.87x",
    ]
    frames = [
        f("vllm/v1/engine/core.py", 1315, "run_engine_core", "engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)"),
        f("vllm/v1/engine/core.py", 1040, "__init__", "super().__init__("),
        f("vllm/v1/engine/core.py", 144, "__init__", "kv_cache_config = self._initialize_kv_caches(vllm_config)"),
        f("vllm/v1/engine/core.py", 329, "_initialize_kv_caches", "self.model_executor.initialize_from_config(kv_cache_configs)"),
        f("vllm/v1/executor/abstract.py", 122, "initialize_from_config",
          'self.collective_rpc("initialize_from_config", args=(kv_cache_configs,))'),
        f("vllm/v1/executor/uniproc_executor.py", 103, "collective_rpc",
          "result = run_method(self.driver_worker, method, args, kwargs)"),
        f("vllm/v1/serial_utils.py", 510, "run_method", "return func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 680, "initialize_from_config", "self.model_runner.initialize_kv_cache(kv_cache_config)"),
        f("vllm/v1/worker/gpu_model_runner.py", 7775, "initialize_kv_cache",
          "self.initialize_attn_backend(kv_cache_config, is_profiling=is_profiling)"),
        f("vllm/v1/worker/gpu_model_runner.py", 7250, "initialize_attn_backend", "self._check_and_update_cudagraph_mode("),
        f("vllm/v1/worker/gpu_model_runner.py", 7323, "_check_and_update_cudagraph_mode",
          "cudagraph_mode = self.compilation_config.resolve_cudagraph_mode_and_sizes("),
        f("vllm/config/compilation.py", 1507, "resolve_cudagraph_mode_and_sizes", "raise ValueError("),
    ]
    tb = traceback(frames, mamba_blocks_error(1024, 176))
    return lines + prefixed(f"{ec}ERROR 11-20 10:01:13 [core.py:1324] ", ["EngineCore failed to start.", *tb]) + [
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {'EngineCore': 1}",
    ]


@log("mamba_blocks_qwen3next_tp2_docker_0300.log")
def _() -> list[str]:
    """0.30.0 in docker compose, Qwen3-Next at TP=2 with max_num_seqs 512 and model runner V2; both
    workers raise, interleaved, and the container prefix is on every line."""
    pre = "vllm-1  | "
    ec = "(EngineCore pid=214) "
    lines = [
        "(APIServer pid=1) INFO 12-02 07:40:10 [api_server.py:2071] vLLM API server version 0.30.0",
        "(APIServer pid=1) INFO 12-02 07:40:10 [utils.py:280] non-default args: {'model_tag': "
        "'Qwen/Qwen3-Next-80B-A3B-Instruct', 'model': 'Qwen/Qwen3-Next-80B-A3B-Instruct', 'max_model_len': 262144, "
        "'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.9, 'max_num_seqs': 512}",
        f"{ec}INFO 12-02 07:40:31 [core.py:104] Initializing a V1 LLM engine (v0.30.0) with config: "
        "model='Qwen/Qwen3-Next-80B-A3B-Instruct', dtype=torch.bfloat16, max_seq_len=262144, tensor_parallel_size=2, "
        "quantization=None, enforce_eager=False, kv_cache_dtype=auto",
    ]
    for r in (0, 1):
        w = f"(Worker_TP{r} pid={301 + r}) "
        lines += [
            f"{w}INFO 12-02 07:40:52 [gpu_worker.py:230] Using V2 Model Runner",
            f"{w}INFO 12-02 07:42:20 [model_runner.py:447] Model loading took 74.38 GiB memory and 81.2 seconds",
            f"{w}INFO 12-02 07:43:02 [gpu_worker.py:591] Available KV cache memory: 1.93 GiB",
        ]
    lines.append(f"{ec}INFO 12-02 07:43:03 [kv_cache_utils.py:1874] GPU KV cache size: 26,752 tokens, Maximum "
                 "concurrency for 262,144 tokens per request: 0.72x")
    frames = [
        f("vllm/v1/executor/multiproc_executor.py", 1047, "worker_busy_loop", "output = func(*args, **kwargs)"),
        f("vllm/v1/worker/gpu_worker.py", 754, "initialize_from_config", "self.model_runner.initialize_kv_cache("),
        f("vllm/v1/worker/gpu/model_runner.py", 705, "initialize_kv_cache",
          "cudagraph_mode = self.compilation_config.resolve_cudagraph_mode_and_sizes("),
        f("vllm/config/compilation.py", 1535, "resolve_cudagraph_mode_and_sizes", "raise ValueError("),
    ]
    tbs = []
    for r in (0, 1):
        err = f"(Worker_TP{r} pid={301 + r}) ERROR 12-02 07:43:03 [multiproc_executor.py:1055] "
        tbs.append(prefixed(err, ["WorkerProc hit an exception.", *traceback(frames, mamba_blocks_error(512, 209))]))
    lines += [ln for pair in zip(*tbs, strict=True) for ln in pair]
    lines += [
        f"{ec}ERROR 12-02 07:43:04 [core.py:1324] EngineCore failed to start.",
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {'EngineCore': 1}",
    ]
    return [pre + ln for ln in lines]


# --- forms seen in real reports: each log carries one class of wording or damage -------------------


@log("weights_load_message_tail_0191.log")
def _() -> list[str]:
    """``docker logs --tail``: the paste starts at the model runner's own message for an OOM while
    loading weights (it quotes the PyTorch error inside), wrapped by a 150-column terminal; the
    traceback that follows lost its frames to the tail."""
    ec = "(EngineCore pid=412) "
    oom = torch_oom("136.00 MiB", 0, "44.39 GiB", "41.06 MiB", "43.71 GiB", "98.20 MiB", this="44.30 GiB",
                    prefix="", var="PYTORCH_ALLOC_CONF")
    msg = (f"{ec}ERROR 06-03 09:41:27 [gpu_model_runner.py:4431] Failed to load model - not enough GPU memory. Try lowering "
           "--gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. "
           f"See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: {oom})")
    return [
        "Loading safetensors checkpoint shards:  76% Completed | 13/17 [00:41<00:12,  3.02s/it]",
        *wrap([msg], 150),
        f"{ec}ERROR 06-03 09:41:27 [core.py:1012] EngineCore failed to start.",
        f"{ec}ERROR 06-03 09:41:27 [core.py:1012] Traceback (most recent call last):",
        f"{ec}ERROR 06-03 09:41:27 [core.py:1012]   ...",
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]


@log("no_kv_blocks_zero_v0_073_cut.log")
def _() -> list[str]:
    """vLLM 0.7.3 (V0) on a 12 GiB card: the weights leave a negative KV budget and zero GPU blocks;
    the paste stops inside the traceback, before the message that names the cause."""
    return [
        "INFO 02-26 10:12:40 __init__.py:207] Automatically detected platform cuda.",
        "INFO 02-26 10:12:49 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: "
        "model='Qwen/Qwen2.5-7B-Instruct', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, "
        "enforce_eager=False, kv_cache_dtype=auto",
        "INFO 02-26 10:13:02 model_runner.py:1115] Loading model weights took 9.8712 GB",
        "INFO 02-26 10:13:05 worker.py:267] Memory profiling takes 2.91 seconds",
        "INFO 02-26 10:13:05 worker.py:267] the current vLLM instance can use total_gpu_memory (11.76GiB) x "
        "gpu_memory_utilization (0.90) = 10.59GiB",
        "INFO 02-26 10:13:05 worker.py:267] model weights take 9.87GiB; non_torch_memory takes 0.06GiB; PyTorch activation "
        "peak memory takes 1.21GiB; the rest of the memory reserved for KV Cache is -0.55GiB.",
        "INFO 02-26 10:13:05 executor_base.py:111] # cuda blocks: 0, # CPU blocks: 4681",
        "INFO 02-26 10:13:05 executor_base.py:116] Maximum concurrency for 8192 tokens per request: 0.00x",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/srv/app/serve.py", line 41, in <module>',
        "[rank0]:     llm = LLM(**engine_kwargs)",
    ]


@log("xpu_ipex_oldform_serving.log")
def _() -> list[str]:
    """An IPEX build on an Intel Arc card refuses a single allocation over 4 GB while serving; the
    numbers follow PyTorch's old parenthesised layout behind a message of the platform's own."""
    return [
        "INFO 08-14 03:10:55 llm_engine.py:176] Initializing an LLM engine (v0.5.4) with config: model='Qwen/Qwen2-7B-Instruct', "
        "dtype=torch.float16, max_seq_len=8192, tensor_parallel_size=2, device_config=xpu, enforce_eager=True",
        "INFO 08-14 03:12:31 xpu_executor.py:91] # GPU blocks: 6830, # CPU blocks: 2048",
        "Processed prompts:   3%|▎         | 3/100 [00:41<22:11, 13.73s/it, est. speed input: 190.38 toks/s, output: 4.21 toks/s]",
        "Traceback (most recent call last):",
        '  File "/llm/vllm/vllm/worker/xpu_model_runner.py", line 521, in execute_model',
        "    hidden_or_intermediate_states = model_executable(",
        '  File "/llm/vllm/vllm/attention/backends/torch_sdpa.py", line 131, in forward',
        "    out = torch.nn.functional.scaled_dot_product_attention(",
        "RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 6.00 GiB "
        "(GPU  0; 15.56 GiB total capacity; 9.12 GiB already allocated; 9.38 GiB reserved in total by PyTorch)",
    ]


@log("runtime_oom_v0_engine_dead_after_capture.log")
def _() -> list[str]:
    """vLLM 0.8.1 (V0 engine): head and tail of a log. Start-up was last seen capturing CUDA graphs;
    minutes later a request handler reports that the engine loop died of an OOM."""
    return [
        "INFO 03-19 10:51:40 [api_server.py:972] vLLM API server version 0.8.1",
        "INFO 03-19 10:51:52 [llm_engine.py:232] Initializing a V0 LLM engine (v0.8.1) with config: "
        "model='/models/Llama-3.3-70B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=4, "
        "enforce_eager=False, kv_cache_dtype=auto",
        "INFO 03-19 10:53:21 [executor_base.py:111] # cuda blocks: 29547, # CPU blocks: 3276",
        "(VllmWorkerProcess pid=31877) INFO 03-19 10:53:24 [model_runner.py:1442] Capturing cudagraphs for decoding. "
        "This may lead to unexpected consequences if the model is not static.",
        "[... 2,104 lines of request logs left out ...]",
        "ERROR 03-19 10:57:02 [serving_chat.py:677] Error in chat completion stream generator.",
        "ERROR 03-19 10:57:02 [serving_chat.py:677] vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not "
        "running. Inspect the stacktrace to find the original error: OutOfMemoryError('"
        + torch_oom("3.91 GiB", 0, "79.33 GiB", "2.44 GiB", "70.12 GiB", "840.00 MiB", procs=[(31871, "76.88 GiB")],
                    pools="46.00 MiB", prefix="") + "').",
    ]


@log("multimodal_profile_v0_064_encdec.log")
def _() -> list[str]:
    """vLLM 0.6.4 (V0) with an encoder-decoder vision model on two 24 GiB cards: the runner announces
    the multimodal profiling run, then a worker reports the OOM on the same line as the method."""
    wp = "(VllmWorkerProcess pid=88) "
    return [
        "INFO 11-06 02:10:11 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: "
        "model='meta-llama/Llama-3.2-11B-Vision-Instruct', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=2",
        "INFO 11-06 02:12:40 model_runner.py:1077] Loading model weights took 10.0712 GB",
        f"{wp}INFO 11-06 02:12:40 model_runner.py:1077] Loading model weights took 10.0712 GB",
        "INFO 11-06 02:12:41 enc_dec_model_runner.py:301] Starting profile run for multi-modal models.",
        f"{wp}INFO 11-06 02:12:41 enc_dec_model_runner.py:301] Starting profile run for multi-modal models.",
        f"{wp}ERROR 11-06 02:12:53 multiproc_worker_utils.py:229] Exception in worker VllmWorkerProcess while processing "
        "method determine_num_available_blocks: "
        + torch_oom("2.33 GiB", 1, "22.05 GiB", "1.02 GiB", "20.61 GiB", "126.40 MiB", procs=[(9001, "21.02 GiB")], prefix="")
        + ", Traceback (most recent call last):",
        f'{wp}ERROR 11-06 02:12:53 multiproc_worker_utils.py:229]   File "{SITE}/vllm/executor/multiproc_worker_utils.py", '
        "line 223, in _run_worker_process",
    ]


@log("weights_load_v0_other_worker_method.log")
def _() -> list[str]:
    """vLLM 0.7.3 (V0), a 70B model on four 16 GiB cards: one worker's OOM comes with only a
    framework frame; the next worker says which method they were all running."""
    err = "ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] "
    a, b_ = "(VllmWorkerProcess pid=40211) ", "(VllmWorkerProcess pid=40213) "
    return [
        "INFO 03-02 19:48:57 [llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: "
        "model='deepseek-ai/DeepSeek-R1-Distill-Llama-70B', dtype=torch.float16, max_seq_len=8192, tensor_parallel_size=4",
        f'{a}{err}  File "{SITE}/torch/utils/_device.py", line 106, in __torch_function__',
        f"{a}{err}    return func(*args, **kwargs)",
        f"{a}{err}"
        + torch_oom("112.00 MiB", 2, "14.58 GiB", "37.31 MiB", "14.39 GiB", "21.12 MiB", this="14.54 GiB"),
        f"{b_}{err}Exception in worker VllmWorkerProcess while processing method load_model.",
        f"{b_}{err}Traceback (most recent call last):",
    ]


@log("weights_load_progress_after_oom_0130.log")
def _() -> list[str]:
    """vLLM 0.13.0 (V1): the OOM is printed before the loader's progress bar is flushed at exit, so
    the bar (stopped at 2 of 37 shards) comes after it; every line is followed by a blank one."""
    ec = "(EngineCore_DP0 pid=7741) "
    lines = [
        f"{ec}" + torch_oom("80.00 MiB", 0, "139.72 GiB", "51.44 MiB", "139.27 GiB", "11.06 MiB", procs=[(7741, "139.66 GiB")]),
        "Loading safetensors checkpoint shards:   5% Completed | 2/37 [00:05<01:31,  2.61s/it]",
        f"{ec}",
        "[rank0]:[W1224 08:50:36.247 ProcessGroupNCCL.cpp:1524] Warning: WARNING: destroy_process_group() was not called "
        "before program exit, which can leak resources.",
        "(APIServer pid=7602) Traceback (most recent call last):",
        '(APIServer pid=7602)   File "/opt/conda/bin/vllm", line 7, in <module>',
    ]
    out: list[str] = []
    for ln in lines:
        out += [ln, ""]
    return out


@log("allreduce_expandable_fix_told_after.log")
def _() -> list[str]:
    """An issue comment: the setting, the crash, then the fix, which names the allocator variable
    again without expandable segments. The setting in force when it failed is the first one."""
    return [
        "Same crash here on 2x RTX 3090 with vLLM 0.22.0 (TP=2):",
        "",
        "```",
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:256 vllm serve Qwen/Qwen3-32B-AWQ "
        "--tensor-parallel-size 2",
        "...",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
        "(EngineCore pid=233) ERROR 06-20 11:02:17 [multiproc_executor.py:312] Worker proc VllmWorker-1 died unexpectedly, "
        "shutting down executor.",
        "```",
        "",
        "Starting it with `PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256` instead boots and serves normally.",
    ]


@log("speculative_command_v0_0511.log")
def _() -> list[str]:
    """A usage question: the launch command (draft model, TP 4) and the bare PyTorch message."""
    return [
        "I deploy a 32B model with a 7B draft model on 4 x A100 40GB and get OutOfMemoryError.",
        "```",
        "CUDA_VISIBLE_DEVICES=0,1,2,3 python -m vllm.entrypoints.openai.api_server --port 9000 --model Qwen2.5-32B-Instruct "
        "-tp 4 --max-model-len 2048 --speculative_model Qwen2.5-7B-Instruct --num_speculative_tokens 4 "
        "--gpu_memory_utilization 0.92 --enforce-eager",
        "```",
        "```",
        torch_oom("64.00 MiB", 0, "39.39 GiB", "41.81 MiB", "31.02 GiB", "212.30 MiB", this="36.11 GiB",
                  procs=[(52210, "1.06 GiB"), (52211, "1.06 GiB")], pools="30.00 MiB"),
        "```",
    ]


@log("banner_args_cut_1000_0191.log")
def _() -> list[str]:
    """vLLM 0.19 start-up with the ASCII banner; the argument line was cut at exactly 1000
    characters by the viewer it was copied from. Not a failure."""
    api = "(APIServer pid=88123) INFO 04-15 07:22:41 [utils.py:299] "
    args = ("(APIServer pid=88123) INFO 04-15 07:22:41 [utils.py:233] non-default args: {'model_tag': 'google/gemma-3-27b-it', "
            "'host': '0.0.0.0', 'port': 8011, 'chat_template': 'examples/tool_chat_template_gemma3_pythonic.jinja', "
            "'enable_auto_tool_choice': True, 'tool_call_parser': 'pythonic', 'model': 'google/gemma-3-27b-it', "
            "'trust_remote_code': True, 'max_model_len': 65536, 'served_model_name': ['gemma3'], 'tensor_parallel_size': 2, "
            "'limit_mm_per_prompt': {'image': 4}, 'mm_processor_kwargs': {'do_pan_and_scan': True}, 'swap_space': 0, "
            "'kv_cache_dtype': 'fp8', 'enable_prefix_caching': True, 'enable_chunked_prefill': True, "
            "'max_num_batched_tokens': 16384, 'disable_log_requests': True, 'scheduling_policy': 'priority', "
            "'allowed_origins': ['https://chat.internal.example', 'https://tools.internal.example'], "
            "'response_role': 'assistant', 'uvicorn_log_level': 'warning', 'reasoning_parser': '', "
            "'hf_overrides': {'rope_scaling': {'rope_type': 'linear', 'factor': 2.0}}, "
            "'override_generation_config': {'temperature': 1.0, 'top_p': 0.95, 'top_k': 64}, 'enable_sleep_mode': False, "
            "'compilation_config': {'level': 3, 'cudagraph_capture_sizes': [1, 2, 4, 8, 16, 32, 64]}, "
            "'gpu_memory_utilization': 0.88, 'max_num_seqs': 48}")
    assert len(args) > 1000
    return [
        f"{api}",
        f"{api}       █     █     █▄   ▄█",
        f"{api} ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.1rc1.dev301+g60995c05b",
        f"{api}  █▄█▀ █     █     █     █  model   google/gemma-3-27b-it",
        f"{api}   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
        f"{api}",
        args[:1000],
        args[1000:],
        "(APIServer pid=88123) INFO 04-15 07:24:02 [api_server.py:1911] Starting vLLM API server 0 on http://0.0.0.0:8011",
    ]


@log("no_kv_memory_v0_026_fastchat.log")
def _() -> list[str]:
    """An early vLLM (no version in the engine line) under a FastChat-style worker whose logger adds
    its own timestamp, level and stream in front of every line it relays."""
    fc = "2024-04-27 10:13:05 | ERROR | stderr | "
    return [
        "INFO 04-27 10:11:03 llm_engine.py:70] Initializing an LLM engine with config: model='/models/Qwen-14B-Chat', "
        "tokenizer='/models/Qwen-14B-Chat', tokenizer_mode=auto, revision=None, trust_remote_code=True, dtype=torch.bfloat16, "
        "max_seq_len=8192, download_dir=None, load_format=auto, tensor_parallel_size=2, quantization=None, "
        "enforce_eager=False, seed=0)",
        "INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 512",
        f"{fc}Traceback (most recent call last):",
        f'{fc}  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker.py", line 118, in init_cache_engine',
        f'{fc}    raise ValueError("No available memory for the cache blocks. "',
        f"{fc}ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.",
    ]


@log("runtime_oom_v0_worker_loop_then_engine.log")
def _() -> list[str]:
    """vLLM 0.6.4 (V0, multiprocessing): a worker's traceback through its execution loop (cut short
    in the paste), then the engine reports the OOM of a long prompt with no frames of its own."""
    wp = "(VllmWorkerProcess pid=90) ERROR 12-16 21:40:15 multiproc_worker_utils.py:229] "
    return [
        "INFO 12-16 21:31:02 api_server.py:585] vLLM API server version 0.6.4.post1",
        wp + "Exception in worker VllmWorkerProcess while processing method start_worker_execution_loop.",
        wp + "Traceback (most recent call last):",
        wp + f'  File "{SITE}/vllm/executor/multiproc_worker_utils.py", line 223, in _run_worker_process',
        wp + "    output = executor(*args, **kwargs)",
        wp + f'  File "{SITE}/vllm/worker/worker_base.py", line 85, in start_worker_execution_loop',
        wp + "    output = self.execute_model(execute_model_req=None)",
        "",
        "and with a long prompt (still within max_model_len) the engine says:",
        "INFO 12-16 21:44:09 model_runner_base.py:120] Writing input of failed execution to "
        "/tmp/err_execute_model_input_20241216-214409.pkl...",
        "ERROR 12-16 21:44:09 engine.py:135] OutOfMemoryError('Error in model execution (input dumped to "
        "/tmp/err_execute_model_input_20241216-214409.pkl): "
        + torch_oom("1.02 GiB", 0, "15.77 GiB", "201.12 MiB", "13.90 GiB", "96.44 MiB", procs=[(4412, "15.56 GiB")],
                    prefix="") + "')",
    ]


@log("lora_enabled_serving_v0_081.log")
def _() -> list[str]:
    """vLLM 0.8.1 (V0) serving adapters: LoRA is switched on by the command line only; the OOM of a
    long request comes from the base model's MLP, so no frame names LoRA."""
    err = "ERROR 03-21 14:02:51 [engine.py:160] "
    tb = traceback(
        [f("vllm/engine/multiprocessing/engine.py", 221, "run_engine_loop", "request_outputs = self.engine_step()"),
         f("vllm/engine/multiprocessing/engine.py", 247, "engine_step", "raise e"),
         f("vllm/worker/model_runner_base.py", 152, "_wrapper", "return func(*args, **kwargs)"),
         f("vllm/worker/model_runner.py", 1742, "execute_model", "hidden_or_intermediate_states = model_executable("),
         *MODULE,
         f("vllm/model_executor/models/llama.py", 287, "forward", "hidden_states = self.mlp(hidden_states)")],
        torch_oom("2.25 GiB", 0, "79.33 GiB", "1.01 GiB", "75.60 GiB", "310.00 MiB", procs=[(7190, "78.31 GiB")],
                  pools="46.00 MiB"))
    return [
        "$ VLLM_ALLOW_RUNTIME_LORA_UPDATING=true vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora --max-loras 4 "
        "--max-lora-rank 64 --max-model-len 65536",
        "INFO 03-21 13:58:40 [api_server.py:972] vLLM API server version 0.8.1",
        "INFO 03-21 13:59:51 [launcher.py:26] Available routes are:",
        "INFO:     Application startup complete.",
        "INFO 03-21 14:02:40 [metrics.py:455] Avg prompt throughput: 4210.3 tokens/s, Avg generation throughput: 21.0 "
        "tokens/s, Running: 3 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 61.2%, CPU KV cache usage: 0.0%.",
        *prefixed(err, tb),
    ]


@log("sampler_warmup_cut_issue_limit_0112.log")
def _() -> list[str]:
    """vLLM 0.11.2 pasted into an issue body that hit the site's length limit: the log stops inside
    the warm-up's own error, after the frame that raised it."""
    w = "(Worker_TP1 pid=22617) ERROR 11-02 08:14:33 [multiproc_executor.py:703] "
    tb = traceback(
        [f("vllm/v1/executor/multiproc_executor.py", 698, "worker_busy_loop", "output = func(*args, **kwargs)"),
         f("vllm/v1/worker/gpu_worker.py", 530, "compile_or_warm_up_model", "self.model_runner._dummy_sampler_run("),
         f("torch/utils/_contextlib.py", 120, "decorate_context", "return func(*args, **kwargs)"),
         f("vllm/v1/worker/gpu_model_runner.py", 3311, "_dummy_sampler_run", "raise RuntimeError(")],
        "RuntimeError: CUDA out of memory occu")
    return [
        "(APIServer pid=1) INFO 11-02 08:10:02 [api_server.py:1896] vLLM API server version 0.11.2",
        "(Worker_TP1 pid=22617) INFO 11-02 08:14:30 [gpu_model_runner.py:3890] Graph capturing finished in 19 secs, took 0.71 GiB",
        *prefixed(w, ["WorkerProc hit an exception.", *tb]),
    ]


@log("issue_body_collect_env_compose_085.log")
def _() -> list[str]:
    """A bug report pasted whole: the environment from collect_env.py (with the pip list and the
    environment variables), an nvidia-smi table, the launch command in its own code block, and the
    docker compose log folded in a <details> block."""
    c = "vllm-1  | "
    w1 = f"{c}(VllmWorker rank=1 pid=241) "
    err = "ERROR 05-10 15:54:13 [multiproc_executor.py:470] "
    smi_row = "|   {i}  NVIDIA L40S                    On  |   00000000:{bus}:00.0 Off |                    0 |"
    return [
        "### Your current environment",
        "",
        "<details>",
        "<summary>The output of <code>python collect_env.py</code></summary>",
        "",
        "```text",
        "Collecting environment information...",
        "==============================",
        "       PyTorch Info",
        "==============================",
        "PyTorch version              : 2.6.0+cu124",
        "CUDA used to build PyTorch   : 12.4",
        "Python version               : 3.12.9 (main, Feb 12 2025, 14:50:50) [GCC 11.4.0] (64-bit runtime)",
        "Python platform              : Linux-5.15.0-134-generic-x86_64-with-glibc2.35",
        "cuDNN version                : Probably one of the following: /usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0",
        "CPU(s) / model name          : 96 / Intel(R) Xeon(R) Platinum 8468 (2 sockets, 48 cores each, 2 threads per core)",
        "NUMA node0 CPU(s)            : 0-47,96-143",
        "Vulnerability Spectre v2     : Mitigation; Enhanced / Automatic IBRS; IBPB conditional; RSB filling; PBRSB-eIBRS SW",
        "Vulnerability Mmio stale data: Not affected",
        "Flags                        : fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts",
        "==============================",
        "       CUDA / GPU Info",
        "==============================",
        "GPU models and configuration :",
        "GPU 0: NVIDIA L40S",
        "GPU 1: NVIDIA L40S",
        "Nvidia driver version        : 550.127.05",
        "==============================",
        "     vLLM Info",
        "==============================",
        "vLLM Version                 : 0.8.5.post1",
        "==============================",
        "     Environment Variables",
        "==============================",
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "NCCL_CUMEM_ENABLE=0",
        "[pip3] torch==2.6.0",
        "[pip3] vllm==0.8.5.post1",
        "```",
        "",
        "</details>",
        "",
        "```",
        "+-----------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        smi_row.format(i=0, bus="4E"),
        "| N/A   33C    P8             33W /  350W |       1MiB /  46068MiB |      0%      Default |",
        smi_row.format(i=1, bus="CA"),
        "| N/A   31C    P8             32W /  350W |       1MiB /  46068MiB |      0%      Default |",
        "```",
        "",
        "### 🐛 Describe the bug",
        "",
        "```bash",
        "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 32768",
        "```",
        "<details>",
        "<summary>log</summary>",
        "",
        "```",
        f"{c}INFO 05-10 15:51:55 [api_server.py:1043] vLLM API server version 0.8.5.post1",
        f"{c}INFO 05-10 15:52:10 [core.py:58] Initializing a V1 LLM engine (v0.8.5.post1) with config: "
        "model='Qwen/Qwen3-32B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=2, enforce_eager=False",
        f"{w1}INFO 05-10 15:53:02 [gpu_model_runner.py:1329] Model loading took 30.5855 GiB and 48.203117 seconds",
        f"{c}INFO 05-10 15:53:40 [kv_cache_utils.py:634] GPU KV cache size: 65,536 tokens",
        f"{w1}INFO 05-10 15:54:11 [gpu_model_runner.py:1739] Graph capturing finished in 29 secs, took 0.72 GiB",
        f"{w1}{err}WorkerProc hit an exception.",
        *prefixed(w1 + err, traceback(
            [f("vllm/v1/worker/gpu_model_runner.py", 1548, "_dummy_sampler_run", "raise RuntimeError(")],
            "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try "
            "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.")),
        "```",
        "</details>",
        "",
        "Restarting with `--max-num-seqs 256` works.",
    ]


# --- more forms seen in real reports ------------------------------------------------------------------------


@log("weights_repack_driver_oom_cut_0200.log")
def _() -> list[str]:
    """0.20.0 under WSL2: the weights load, then repacking them into the Marlin layout fails inside
    the kernel with the driver API's wording. The paste starts in the middle of the traceback."""
    core = "(EngineCore pid=88) "
    err = core + "ERROR 06-11 09:14:52 [core.py:1136] "
    return [
        core + "INFO 06-11 09:14:49 [default_loader.py:318] Loading weights took 21.07 seconds",
        err + "EngineCore failed to start.",
        err + "Traceback (most recent call last):",
        *prefixed(err, [
            f'  File "{SITE}/vllm/model_executor/kernels/linear/mixed_precision/marlin.py", line 112, in transform_w_q',
            "    x.data = ops.gptq_marlin_repack(",
            "             ^^^^^^^^^^^^^^^^^^^^^^^",
            f'  File "{SITE}/vllm/_custom_ops.py", line 1302, in gptq_marlin_repack',
            "    return torch.ops._C.gptq_marlin_repack(",
            f'  File "{SITE}/torch/_ops.py", line 1269, in __call__',
            "    return self._op(*args, **kwargs)",
            "RuntimeError: CUDA driver error: out of memory",
        ]),
        core + "Traceback (most recent call last):",
        core + '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
    ]


@log("sleep_wakeup_cumem_oom_rl.log")
def _() -> list[str]:
    """A colocated RL trainer (Ray actors) wakes vLLM up from sleep mode after a training step; the
    allocator cannot map the weights back. Trainer output interleaves with the traceback."""
    actor = "(ActorRolloutWorker pid=51422) "
    return [
        "(main_task pid=50110) step:37 - actor/pg_loss:0.012 - actor/grad_norm:0.418 - perf/max_memory_allocated_gb:61.2",
        actor + "INFO 03-02 17:41:09 worker.py:133] Sleep mode freed 58.31 GiB memory, 4.02 GiB memory is still in use.",
        "(main_task pid=50110) Training Progress:  37%|███▋      | 37/100 [41:02<1:09:51, 66.53s/it]",
        actor + "Traceback (most recent call last):",
        actor + f'  File "{SITE}/vllm/entrypoints/llm.py", line 1262, in wake_up',
        actor + "    self.llm_engine.wake_up(tags)",
        actor + f'  File "{SITE}/vllm/worker/worker.py", line 141, in wake_up',
        actor + "    allocator.wake_up(tags=tags)",
        actor + f'  File "{SITE}/vllm/device_allocator/cumem.py", line 210, in wake_up',
        actor + "    create_and_map(handle)",
        actor + f'  File "{SITE}/vllm/device_allocator/cumem.py", line 76, in create_and_map',
        actor + "    python_create_and_map(*allocation_handle)",
        actor + "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62",
        "(main_task pid=50110) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::WorkerDict.generate()",
    ]


@log("host_ray_task_killed_v1_083.log")
def _() -> list[str]:
    """0.8.3 with the Ray executor: Ray's memory monitor kills a worker; the engine reports Ray's
    own OutOfMemoryError (host RAM), with the node's table of memory users."""
    err = "ERROR 04-09 22:05:31 [core.py:343] "
    return [
        "INFO 04-09 22:03:12 [core.py:58] Initializing a V1 LLM engine (v0.8.3) with config: model='/data/DeepSeek-V3', "
        "tensor_parallel_size=8, pipeline_parallel_size=2",
        err + "EngineCore hit an exception: Traceback (most recent call last):",
        err + f'  File "{SITE}/ray/_private/worker.py", line 2771, in get',
        err + "    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)",
        err + "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
        err + "Memory on the node (IP: 10.20.3.4, ID: 9f1c2e) where the task (actor ID: 7a61c0, name=RayWorkerWrapper.__init__, "
              "pid=20931, memory used=4.12GB) was running was 1921.77GB / 2015.50GB (0.953496), which exceeds the memory usage "
              "threshold of 0.95. Ray killed this worker (ID: 2be0d1) because it was the most recently scheduled task.",
        err + "PID  MEM(GB) COMMAND",
        err + "20930        1804.33 ray::RayWorkerWrapper.__ray_call__",
        err + "20931        4.12    ray::RayWorkerWrapper.__ray_call__",
    ]


@log("host_raylet_pressure_syslog_wrapped.log")
def _() -> list[str]:
    """An RL run under a syslog collector: colour codes written as #033[…m, the raylet's report
    wrapped at 116 columns, a tqdm bar of the trainer just before it."""
    c = "#033[2m#033[33m(raylet)#033[0m "
    report = ("[2025-05-14 08:12:40,551 E 88211 88211] (raylet) node_manager.cc:3041: 3 Workers (tasks / actors) killed "
              "due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 5c1e99a0b2, IP: 10.1.0.7) "
              "over the last time period. To see more information about the Workers killed on this node, use "
              "`ray logs raylet.out -ip 10.1.0.7`")
    return [
        "Generating rollouts:  41%|████      | 52/128 [03:11<04:39,  3.68s/it]",
        *wrap([c + report], 116),
        c,
        *wrap([c + "Refer to the documentation on how to address the out of memory issue: "
               "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html."], 116),
    ]


@log("host_oom_kill_retyped_report.log")
def _() -> list[str]:
    """A report that retypes the kernel's line without its pid, inside a fenced block of prose."""
    return [
        "Loading finishes, then the host runs out of RAM while the experts are repacked:",
        "",
        "```",
        "INFO  [default_loader.py:291] Loading weights took 198.40 seconds",
        "INFO  [int_wna16.py:377] Using MarlinExperts",
        "Out of memory: Killed process (VLLM::Worker_TP1)",
        "  total-vm:198100412kB  anon-rss:2201832kB  shmem-rss:80112344kB",
        "RuntimeError: Engine core initialization failed. Failed core proc(s): {'EngineCore': 1}",
        "```",
    ]


@log("report_split_oom_env_list_0201.log")
def _() -> list[str]:
    """An issue body: an environment list (``- vLLM: 0.20.1``), an ``LLM(...)`` call, and the OOM
    retyped over two lines in PyTorch's old parenthesised form without the word capacity."""
    return [
        "## Environment",
        "",
        "- GPU: 2x NVIDIA RTX 4090 24 GB",
        "- vLLM: 0.20.1",
        "- torch: 2.11.0+cu130",
        "",
        "## What happens",
        "",
        "```text",
        "torch.cuda.OutOfMemoryError: CUDA out of memory.",
        "Tried to allocate 22.10 GiB (GPU 1; 23.52 GiB total; 0 bytes free)",
        "```",
        "",
        "```python",
        "from vllm import LLM",
        'llm = LLM(model="Qwen/Qwen3-8B", tensor_parallel_size=1)',
        "```",
    ]


@log("workspace_locked_indented_report.log")
def _() -> list[str]:
    """A PR description quoting the workspace assertion over three indented lines."""
    return [
        "The prefill kernel asks the workspace manager for its scratch buffers only at the first real request,",
        "after `lock_workspace()` ran, so the request fails with:",
        "",
        "  AssertionError: Workspace is locked but allocation from",
        "  'mla_prefill.py:412:_prefill_scratch' requires 18.75 MB,",
        "  current size is 2.25 MB. Workspace growth is not allowed after locking.",
        "",
        "Reserving the worst case before the lock avoids it.",
    ]


@log("kv_too_small_retyped_report_0290.log")
def _() -> list[str]:
    """A CI report that retypes the V1 message over three prose lines, drops the parenthesis
    before the GiB figure and shortens a clause to '...'."""
    return [
        "The engine dies during startup on the 24 GiB runner:",
        "",
        "ValueError: To serve at least one request with the model's max seq len (4096),",
        "1.31 GiB KV cache is needed, which is larger than the available KV cache",
        "memory (1.12 GiB). ... estimated maximum model length is 3504.",
        "",
        "The outer test only sees `RuntimeError: Engine core initialization failed`.",
    ]


@log("runtime_oom_v1_reported_by_api_server_0190.log")
def _() -> list[str]:
    """0.19.0 serving: the engine core logs the OOM (its own traceback scrolled away), then the API
    server's output handler reports the engine dead."""
    api = "(APIServer pid=1) "
    return [
        "(EngineCore pid=131) ERROR 05-02 11:20:44 [core.py:1131] " + torch_oom(
            "64.00 MiB", 0, "23.56 GiB", "38.75 MiB", "22.71 GiB", "191.20 MiB", this="23.49 GiB", pools="48.00 MiB"),
        api + "ERROR 05-02 11:20:44 [async_llm.py:702] AsyncLLM output_handler failed.",
        api + "ERROR 05-02 11:20:44 [async_llm.py:702] Traceback (most recent call last):",
        api + f'ERROR 05-02 11:20:44 [async_llm.py:702]   File "{SITE}/vllm/v1/engine/async_llm.py", line 661, in output_handler',
        api + "ERROR 05-02 11:20:44 [async_llm.py:702]     outputs = await engine_core.get_output_async()",
    ]


@log("runtime_oom_v1_chained_cut_after_source.log")
def _() -> list[str]:
    """0.11.0: the OOM, the chain marker, and a traceback cut right after the source line that
    calls the engine's busy loop (the paste ends there)."""
    err = "(EngineCore_DP0 pid=5120) ERROR 11-03 02:14:09 [core.py:712] "
    return [
        err + torch_oom("1.25 GiB", 0, "79.19 GiB", "801.00 MiB", "75.02 GiB", "212.40 MiB", procs=[(402211, "78.39 GiB")]),
        err,
        err + "The above exception was the direct cause of the following exception:",
        err,
        err + "Traceback (most recent call last):",
        err + f'  File "{SITE}/vllm/v1/engine/core.py", line 703, in run_engine_core',
        err + "    engine_core.run_busy_loop()",
        err + f'  File "{SITE}/vllm/v1/engine/core',
    ]


@log("others_hold_gpu_v0_062.log")
def _() -> list[str]:
    """0.6.2 (V0, multiprocess workers): another process holds most of GPU 2 while this worker
    starts; its OOM names the other process and this one apart. The other workers go on loading."""
    w = "(VllmWorkerProcess pid={pid}) "
    err = w.format(pid=77102) + "ERROR 10-03 18:29:17 multiproc_worker_utils.py:231] "
    return [
        err + torch_oom("60.00 MiB", 2, "79.22 GiB", "2.06 MiB", "4.90 GiB", "66.39 MiB", this="8.08 GiB",
                        procs=[(77001, "71.11 GiB")]),
        err,
        "INFO 10-03 18:29:17 weight_utils.py:242] Using model weights format ['*.safetensors']",
        w.format(pid=77103) + "INFO 10-03 18:29:17 weight_utils.py:242] Using model weights format ['*.safetensors']",
        "Loading safetensors checkpoint shards:   0% Completed | 0/30 [00:00<?, ?it/s]",
    ]


@log("kv_blocks_short_v0_cut.log")
def _() -> list[str]:
    """An offline script on 0.2.7: V0 prints the GPU block count, then raises because max_model_len
    needs more tokens than they hold; the paste stops inside the traceback."""
    return [
        "$ CUDA_VISIBLE_DEVICES=0 python run_llm.py",
        "INFO 01-11 15:51:02 llm_engine.py:70] Initializing an LLM engine with config: model='/models/alpaca-2-13b', "
        "tokenizer='/models/alpaca-2-13b', tokenizer_mode=auto, trust_remote_code=False, dtype=torch.float16, "
        "max_seq_len=4096, download_dir=None, load_format=auto, tensor_parallel_size=1, quantization=None, seed=0)",
        "INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 241, # CPU blocks: 327",
        "Traceback (most recent call last):",
        '  File "run_llm.py", line 8, in <module>',
        "    llm = LLM(model='/models/alpaca-2-13b')",
        '  File "/opt/conda/lib/python3.10/site-packages/vllm/entrypoints/llm.py", line 105, in __init__',
        "    self.llm_engine = LLMEngine.from_engine_args(engine_args)",
    ]


@log("nvml_assert_mig_serving_v0_063.log")
def _() -> list[str]:
    """0.6.3 serving on a MIG partition: the allocator's NVML query fails while it reports an OOM,
    so an internal assertion is all that is printed."""
    err = "ERROR 10-29 18:38:39 async_llm_engine.py:58] "
    return [
        "INFO 10-29 18:38:37 metrics.py:351] Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 31.0 tokens/s, "
        "Running: 6 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache usage: 93.4%, CPU KV cache usage: 0.0%.",
        err + "Engine background task failed",
        err + "Traceback (most recent call last):",
        err + f'  File "{SITE}/vllm/worker/model_runner.py", line 1702, in execute_model',
        err + "    hidden_or_intermediate_states = model_executable(",
        err + f'  File "{SITE}/vllm/model_executor/layers/linear.py", line 382, in forward',
        err + "    output = self.quant_method.apply(self, input_, bias)",
        err + 'RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":838, '
              "please report a bug to PyTorch.",
    ]


# --- sleep-mode -------------------------------------------------------------------------------------


WAKE_083 = [
    f("vllm/entrypoints/llm.py", 1231, "wake_up", "self.llm_engine.wake_up(tags)"),
    f("vllm/v1/engine/llm_engine.py", 249, "wake_up", "self.engine_core.wake_up(tags)"),
    f("vllm/v1/engine/core_client.py", 222, "wake_up", "self.engine_core.wake_up(tags)"),
    f("vllm/v1/engine/core.py", 268, "wake_up", "self.model_executor.wake_up(tags)"),
    f("vllm/executor/executor_base.py", 224, "wake_up", 'self.collective_rpc("wake_up", kwargs=dict(tags=tags))'),
    f("vllm/executor/uniproc_executor.py", 56, "collective_rpc", "answer = run_method(self.driver_worker, method, args, kwargs)"),
    f("vllm/utils.py", 2347, "run_method", "return func(*args, **kwargs)"),
    f("vllm/v1/worker/gpu_worker.py", 88, "wake_up", "allocator.wake_up(tags)"),
    f("vllm/device_allocator/cumem.py", 224, "wake_up", "create_and_map(handle)"),
    f("vllm/device_allocator/cumem.py", 77, "create_and_map", "python_create_and_map(*allocation_handle)"),
]


@log("sleep_wake_kv_cumem_verl_083.log")
def _() -> list[str]:
    """A verl-style colocated GRPO run on 8 GPUs with vLLM 0.8.3 inside the training workers: the
    engine sleeps after each rollout, wakes its weights for the sync, then its KV cache, and the
    KV cache wake-up fails in the cumem allocator. Ray prefixes, the driver's progress bar and
    metrics interleave, and the driver repeats the worker's error."""
    w = "(WorkerDict pid=21877) "
    w2 = "(WorkerDict pid=21878) "
    drv = "(main_task pid=21340) "
    site = "/opt/conda/envs/rl/lib/python3.10/site-packages"
    verl = [
        ("/workspace/verl/verl/single_controller/ray/base.py", 419, "func",
         "return getattr(self.worker_dict[key], name)(*args, **kwargs)"),
        ("/workspace/verl/verl/single_controller/base/decorator.py", 404, "inner", "return func(*args, **kwargs)"),
        ("/workspace/verl/verl/workers/fsdp_workers.py", 512, "generate_sequences", "with self.rollout_sharding_manager:"),
        ("/workspace/verl/verl/workers/sharding_manager/fsdp_vllm.py", 107, "__enter__",
         'self.inference_engine.wake_up(tags=["kv_cache"])'),
    ]
    frames = verl + [(p.replace(SITE, site), ln, fn, code) for p, ln, fn, code in WAKE_083]
    tb = traceback(frames, "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62")
    return [
        f"{drv}{{'actor_rollout_ref': {{'rollout': {{'name': 'vllm', 'gpu_memory_utilization': 0.6, "
        "'tensor_model_parallel_size': 2, 'free_cache_engine': True, 'enforce_eager': False}}}}",
        f"{w}INFO 04-18 02:11:40 [__init__.py:239] Automatically detected platform cuda.",
        f"{w}INFO 04-18 02:11:58 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: "
        "model='/mnt/ckpt/Qwen2.5-32B-Instruct', speculative_config=None, tokenizer='/mnt/ckpt/Qwen2.5-32B-Instruct', "
        "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, override_neuron_config=None, "
        "tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=12288, "
        "download_dir=None, load_format=LoadFormat.DUMMY, tensor_parallel_size=2, pipeline_parallel_size=1, "
        "disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, seed=0, "
        "served_model_name=/mnt/ckpt/Qwen2.5-32B-Instruct, num_scheduler_steps=1, enable_prefix_caching=True",
        f"{w}INFO 04-18 02:12:31 [gpu_model_runner.py:1273] Model loading took 30.7134 GiB and 21.418032 seconds",
        f"{w2}INFO 04-18 02:12:31 [gpu_model_runner.py:1273] Model loading took 30.7134 GiB and 21.592301 seconds",
        f"{w}INFO 04-18 02:12:52 [kv_cache_utils.py:578] GPU KV cache size: 99,648 tokens",
        f"{w}INFO 04-18 02:12:52 [kv_cache_utils.py:581] Maximum concurrency for 12,288 tokens per request: 8.11x",
        f"{w}INFO 04-18 02:13:19 [gpu_model_runner.py:1608] Graph capturing finished in 27 secs, took 1.41 GiB",
        f"{w}INFO 04-18 02:13:19 [core.py:162] init engine (profile, create kv cache, warmup model) took 48.02 seconds",
        f"{w}INFO 04-18 02:13:22 [worker.py:133] Sleep mode freed 47.92 GiB memory, 6.83 GiB memory is still in use.",
        f"{w}INFO 04-18 02:13:22 [executor_base.py:210] It took 2.104811 seconds to fall asleep.",
        f"{drv}Training Progress:   0%|          | 0/450 [00:00<?, ?it/s]",
        f"{w}INFO 04-18 02:13:40 [executor_base.py:226] It took 0.951220 seconds to wake up tags ['weights', 'kv_cache'].",
        f"{w}INFO 04-18 02:19:07 [worker.py:133] Sleep mode freed 47.92 GiB memory, 38.57 GiB memory is still in use.",
        f"{w}INFO 04-18 02:19:07 [executor_base.py:210] It took 1.987655 seconds to fall asleep.",
        f"{drv}step:1 - actor/pg_loss:-0.004 - actor/grad_norm:0.211 - response_length/mean:1893.4 - "
        "perf/max_memory_allocated_gb:52.61 - perf/max_memory_reserved_gb:63.88",
        f"{drv}Training Progress:   0%|          | 1/450 [06:41<50:05:12, 401.63s/it]",
        f"{w}INFO 04-18 02:20:02 [executor_base.py:226] It took 0.433017 seconds to wake up tags ['weights'].",
        f"{w2}INFO 04-18 02:20:02 [executor_base.py:226] It took 0.440381 seconds to wake up tags ['weights'].",
        *prefixed(w, tb),
        *prefixed(w2, tb),
        f"{drv}Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::WorkerDict.actor_rollout_generate_sequences() "
        "(pid=21877, ip=10.8.0.12, actor_id=5b7f0e2a9c41d3e6f8a7b2c101000000, repr=<verl.single_controller.ray.base.WorkerDict "
        "object at 0x7f31c8a3e2f0>)",
        *prefixed(drv, tb[1:]),
    ]


@log("sleep_expandable_assert_trl_0102.log")
def _() -> list[str]:
    """TRL GRPO in colocate mode with sleep mode on, vLLM 0.10.2 in the training processes, and
    expandable segments exported for the trainer: both ranks stop when the cumem pool is created.
    ``[rankN]:`` prefixes, colour codes from the launcher, and the export line of the job script."""
    def tb(rank: int) -> list[str]:
        frames = [
            ("/home/rl/train_grpo.py", 88, "<module>", "trainer = GRPOTrainer("),
            f("trl/trainer/grpo_trainer.py", 716, "__init__", "self.llm = LLM("),
            f("vllm/entrypoints/llm.py", 282, "__init__", "self.llm_engine = LLMEngine.from_engine_args("),
            f("vllm/v1/engine/llm_engine.py", 160, "from_engine_args", "return cls(vllm_config=vllm_config,"),
            f("vllm/v1/engine/llm_engine.py", 111, "__init__", "self.engine_core = EngineCoreClient.make_client("),
            f("vllm/v1/engine/core_client.py", 82, "make_client", "return InprocClient(vllm_config, executor_class, log_stats)"),
            f("vllm/v1/engine/core_client.py", 245, "__init__", "self.engine_core = EngineCore(*args, **kwargs)"),
            f("vllm/v1/engine/core.py", 82, "__init__", "self.model_executor = executor_class(vllm_config)"),
            f("vllm/executor/executor_base.py", 54, "__init__", "self._init_executor()"),
            f("vllm/executor/uniproc_executor.py", 133, "_init_executor", 'self.collective_rpc("load_model")'),
            f("vllm/executor/uniproc_executor.py", 58, "collective_rpc",
              "answer = run_method(self.driver_worker, method, args, kwargs)"),
            f("vllm/utils/__init__.py", 3060, "run_method", "return func(*args, **kwargs)"),
            f("vllm/v1/worker/gpu_worker.py", 212, "load_model", 'with self._maybe_get_memory_pool_context(tag="weights"):'),
            f("vllm/v1/worker/gpu_worker.py", 140, "_maybe_get_memory_pool_context", "allocator = CuMemAllocator.get_instance()"),
            f("vllm/device_allocator/cumem.py", 142, "get_instance", "CuMemAllocator.instance = CuMemAllocator()"),
            f("vllm/device_allocator/cumem.py", 147, "__init__", 'assert "expandable_segments:True" not in conf, \\'),
        ]
        return [f"[rank{rank}]: {ln}" for ln in traceback(
            frames, "AssertionError: Expandable segments are not compatible with memory pool. Please track "
                    "https://github.com/pytorch/pytorch/issues/147851 for the latest updates.", carets=True)]
    r0, r1 = tb(0), tb(1)
    mixed = [ln for pair in zip(r0, r1, strict=True) for ln in pair]
    return [
        "+ export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "+ accelerate launch --num_processes 2 --config_file zero3.yaml train_grpo.py --use_vllm --vllm_mode colocate "
        "--vllm_enable_sleep_mode --vllm_gpu_memory_utilization 0.35",
        f"{E}[33mWARNING{E}[0m 09-21 14:02:11 [__init__.py:241] Automatically detected platform cuda.",
        "INFO 09-21 14:02:19 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-8B', 'seed': 1, "
        "'max_model_len': 6144, 'distributed_executor_backend': 'external_launcher', 'gpu_memory_utilization': 0.35, "
        "'max_num_seqs': 64, 'enable_sleep_mode': True, 'disable_log_stats': True}",
        "INFO 09-21 14:02:19 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-8B', 'seed': 0, "
        "'max_model_len': 6144, 'distributed_executor_backend': 'external_launcher', 'gpu_memory_utilization': 0.35, "
        "'max_num_seqs': 64, 'enable_sleep_mode': True, 'disable_log_stats': True}",
        "INFO 09-21 14:02:27 [core.py:76] Initializing a V1 LLM engine (v0.10.2) with config: model='Qwen/Qwen3-8B', "
        "speculative_config=None, tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=6144, "
        "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager=False, "
        "kv_cache_dtype=auto, seed=0, enable_prefix_caching=True",
        *mixed,
        "E0921 14:02:31.880000 88120 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
        "local_rank: 0 (pid: 88151) of binary: /home/rl/.venv/bin/python3",
    ]


@log("sleep_trainer_oom_asleep_openrlhf_0151.log")
def _() -> list[str]:
    """OpenRLHF with colocated DeepSpeed and vLLM 0.15.1 engines in Ray actors: level-1 sleep frees
    about the KV cache only (0.14.0-0.16.x did not put the weights into the sleep pool), so the
    trainer's backward pass runs out of memory while vLLM sleeps. Nested Ray and engine prefixes,
    raylet warnings, tqdm bars of the trainer."""
    eng = "(LLMRayActor pid=44102) (EngineCore_DP0 pid=44390) "
    actor = "(PolicyModelActor pid=43877) "
    oom = torch_oom("4.64 GiB", 0, "79.19 GiB", "2.11 GiB", "44.07 GiB", "2.38 GiB", this="47.12 GiB",
                    procs=[(44390, "29.93 GiB")], prefix="[rank0]: torch.OutOfMemoryError: ")
    frames = [
        ("/opt/openrlhf/openrlhf/trainer/ray/ppo_actor.py", 212, "training_step", "status = self.ppo_train(kl_ctl)"),
        ("/opt/openrlhf/openrlhf/trainer/ppo_trainer.py", 381, "ppo_train", "self.strategy.backward(actor_loss, self.actor, self.actor_optim)"),
        ("/opt/openrlhf/openrlhf/utils/deepspeed/deepspeed.py", 144, "backward", "model.backward(loss)"),
        f("deepspeed/runtime/engine.py", 2216, "backward", "self._do_optimizer_backward(loss, retain_graph)"),
        f("deepspeed/runtime/zero/stage3.py", 2254, "backward", "self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)"),
        f("torch/_tensor.py", 647, "backward", "torch.autograd.backward("),
        f("torch/autograd/__init__.py", 354, "backward", "_engine_run_backward("),
        f("torch/autograd/graph.py", 829, "_engine_run_backward", "return Variable._execution_engine.run_backward("),
    ]
    return [
        f"{eng}INFO 02-11 09:31:02 [core.py:97] Initializing a V1 LLM engine (v0.15.1) with config: "
        "model='/data/models/Qwen2.5-14B-Instruct', speculative_config=None, dtype=torch.bfloat16, max_seq_len=16384, "
        "tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto",
        f"{eng}INFO 02-11 09:31:40 [gpu_model_runner.py:4119] Model loading took 27.59 GiB memory and 24.880917 seconds",
        f"{eng}INFO 02-11 09:31:58 [gpu_worker.py:357] Available KV cache memory: 9.61 GiB",
        f"{eng}INFO 02-11 09:31:58 [kv_cache_utils.py:1307] GPU KV cache size: 52,480 tokens",
        f"{eng}INFO 02-11 09:32:16 [gpu_model_runner.py:5052] Graph capturing finished in 18 secs, took 1.64 GiB",
        f"{eng}INFO 02-11 09:32:16 [core.py:273] init engine (profile, create kv cache, warmup model) took 41.37 seconds",
        "(raylet) [2026-02-11 09:33:05,412 W 43211 43211] memory_monitor.cc:197: Node memory usage 81% above threshold",
        f"{actor}Episode [1/1]:   3%|▎         | 12/400 [39:10<20:46:01, 192.68s/it]",
        f"{eng}INFO 02-11 10:12:21 [cumem.py:214] CuMemAllocator: sleep freed 9.69 GiB memory in total, of which "
        "0.00 GiB is backed up in CPU and the rest 9.69 GiB is discarded directly.",
        f"{eng}INFO 02-11 10:12:21 [gpu_worker.py:128] Sleep mode freed 9.87 GiB memory, 61.20 GiB memory is still in use.",
        f"{eng}INFO 02-11 10:12:21 [abstract.py:307] It took 0.318842 seconds to fall asleep.",
        f"{actor}Train epoch [1/1]:   0%|          | 0/8 [00:00<?, ?it/s]",
        f"{actor}[rank0]: Traceback (most recent call last):",
        *prefixed(actor + "[rank0]: ", traceback(frames, oom)[1:-1]),
        actor + oom,
        f"{actor}Train epoch [1/1]:   0%|          | 0/8 [00:07<?, ?it/s]",
    ]


@log("sleep_kv_connector_expandable_0270_compose.log")
def _() -> list[str]:
    """0.27.0 prefill node of a disaggregated deployment under docker compose: NIXL as KV connector
    and expandable segments left in the image's environment; the API server refuses the pair."""
    c = "vllm-prefill-1  | "
    frames = [
        ("/usr/local/bin/vllm", 10, "<module>", "sys.exit(main())"),
        f("vllm/entrypoints/cli/main.py", 75, "main", "args.dispatch_function(args)"),
        f("vllm/entrypoints/cli/serve.py", 117, "cmd", "uvloop.run(run_server(args))"),
        f("vllm/entrypoints/openai/api_server.py", 1391, "run_server_worker", "async with build_async_engine_client("),
        f("vllm/entrypoints/openai/api_server.py", 156, "build_async_engine_client_from_engine_args",
          "vllm_config = engine_args.create_engine_config(usage_context=usage_context)"),
        f("vllm/engine/arg_utils.py", 2464, "create_engine_config", "config = VllmConfig("),
        f("vllm/config/vllm.py", 1017, "__post_init__", "self._verify_kv_transfer_compat()"),
    ]
    msg = ("ValueError: KV connector NixlConnector is incompatible with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
           "unless enable_cumem_allocator is also enabled. PyTorch's CUDA VMM allocator can remap KV cache virtual "
           "addresses to different physical pages, invalidating any pinned/registered KV memory (e.g. IB memory "
           "regions registered by NIXL or Mooncake). Either unset expandable_segments:True or enable the cumem "
           "allocator (sleep mode does this automatically and also routes KV allocations through CuMemAllocator's "
           "pool, where expandable_segments is automatically disabled).")
    return [
        c + "(APIServer pid=1) INFO 08-14 06:40:12 [api_server.py:1302] vLLM API server version 0.27.0",
        c + "(APIServer pid=1) INFO 08-14 06:40:12 [utils.py:253] non-default args: {'model_tag': "
        "'meta-llama/Llama-3.3-70B-Instruct', 'model': 'meta-llama/Llama-3.3-70B-Instruct', 'tensor_parallel_size': 4, "
        "'kv_transfer_config': KVTransferConfig(kv_connector='NixlConnector', kv_role='kv_both')}",
        *prefixed(c + "(APIServer pid=1) ", traceback(frames, msg)),
        "vllm-prefill-1 exited with code 1",
    ]


def _mixed_encoding(path: Path) -> None:
    """A log whose middle has Latin-1 bytes and a GBK-encoded Chinese comment (not UTF-8)."""
    good = LOGS["free_memory_0102.log"]()
    lines = [ln.encode("utf-8") for ln in good]
    lines.insert(1, "INFO 09-28 15:47:12 [logger.py:41] prompt: 'caf\xe9 cr\xe8me'".encode("latin-1"))
    lines.insert(2, "# 显存不足，请检查".encode("gbk"))
    path.write_bytes(b"\n".join(lines) + b"\n")


def main() -> None:
    for name, fn in LOGS.items():
        text = "\n".join(fn()) + "\n"
        if name == "allreduce_ipc_crlf_caret.log":
            (HERE / name).write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
        else:
            (HERE / name).write_text(text, encoding="utf-8")
    # Inputs for the robustness tests.
    demo = (HERE / "runtime_oom_0110_tp2.log").read_bytes()
    (HERE / "runtime_oom_0110_tp2.log.gz").write_bytes(gzip.compress(demo, mtime=0))
    _mixed_encoding(HERE / "mixed_encoding.log")
    (HERE / "healthy_startup.log").write_text("\n".join([
        "(APIServer pid=1) INFO 10-20 09:00:04 [api_server.py:1839] vLLM API server version 0.11.0",
        "(EngineCore_DP0 pid=201) INFO 10-20 09:02:40 [core.py:210] init engine (profile, create kv cache, warmup model) took 131.22 seconds",
        "(APIServer pid=1) INFO:     Application startup complete.",
        "(APIServer pid=1) WARNING 10-20 09:03:00 [protocol.py:93] If out-of-memory errors appear, lower --max-num-seqs.",
    ]) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
    print(textwrap.fill(f"wrote {len(LOGS)} logs to {HERE}", 100))
