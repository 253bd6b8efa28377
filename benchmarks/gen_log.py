"""Write a large, realistic vLLM serving log with an out-of-memory error near its end.

The log starts like a real `vllm serve` (0.11, tensor parallel 2), then serves for a long time:
access log lines, request admissions, throughput reports every few seconds, the odd warning. A
few MiB before the end a request runs out of memory in ``execute_model`` on rank 1, the engine
dies, and the API server reports it. Deterministic for a given size and seed.

    python benchmarks/gen_log.py --size 1G --output /tmp/vllm-1g.log
"""

from __future__ import annotations

import argparse
import random
import sys

SITE = "/usr/local/lib/python3.12/dist-packages"


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("b").rstrip("i")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


def startup() -> list[str]:
    api = "(APIServer pid=1) "
    ec = "(EngineCore_DP0 pid=288) "
    w = ["(Worker_TP0 pid=412) ", "(Worker_TP1 pid=413) "]
    out = [
        "INFO 06-02 08:00:01 [__init__.py:216] Automatically detected platform cuda.",
        f"{api}INFO 06-02 08:00:05 [api_server.py:1839] vLLM API server version 0.11.0",
        f"{api}INFO 06-02 08:00:05 [utils.py:233] non-default args: {{'model_tag': 'Qwen/Qwen2.5-72B-Instruct', "
        "'model': 'Qwen/Qwen2.5-72B-Instruct', 'tensor_parallel_size': 2, 'max_model_len': 32768, "
        "'gpu_memory_utilization': 0.92, 'max_num_seqs': 256}",
        f"{api}INFO 06-02 08:00:12 [model.py:547] Resolved architecture: Qwen2ForCausalLM",
        f"{api}INFO 06-02 08:00:12 [model.py:1510] Using max model len 32768",
        f"{ec}INFO 06-02 08:00:20 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='Qwen/Qwen2.5-72B-Instruct', speculative_config=None, dtype=torch.bfloat16, max_seq_len=32768, "
        "tensor_parallel_size=2, pipeline_parallel_size=1, data_parallel_size=1, disable_custom_all_reduce=False, "
        "quantization=None, enforce_eager=False, kv_cache_dtype=auto, enable_prefix_caching=True, "
        "chunked_prefill_enabled=True, compilation_config={\"level\":3,\"cudagraph_mode\":[2,1]}",
    ]
    for i, p in enumerate(w):
        out.append(f"{p}INFO 06-02 08:00:31 [parallel_state.py:1208] rank {i} in world size 2 is assigned as "
                   f"DP rank 0, PP rank 0, TP rank {i}, EP rank 0")
    for p in w:
        out.append(f"{p}INFO 06-02 08:00:32 [gpu_model_runner.py:2602] Starting to load model Qwen/Qwen2.5-72B-Instruct...")
    for p in w:
        out.append(f"{p}INFO 06-02 08:01:40 [gpu_model_runner.py:2653] Model loading took 67.7700 GiB and 67.9 seconds")
    for p in w:
        out.append(f"{p}INFO 06-02 08:02:21 [gpu_worker.py:298] Available KV cache memory: 54.61 GiB")
    out += [
        f"{ec}INFO 06-02 08:02:22 [kv_cache_utils.py:1087] GPU KV cache size: 357,872 tokens",
        f"{ec}INFO 06-02 08:02:22 [kv_cache_utils.py:1091] Maximum concurrency for 32,768 tokens per request: 10.92x",
    ]
    for p in w:
        out.append(f"{p}INFO 06-02 08:02:58 [gpu_model_runner.py:3480] Graph capturing finished in 36 secs, took 1.21 GiB")
    out += [
        f"{ec}INFO 06-02 08:02:59 [core.py:210] init engine (profile, create kv cache, warmup model) took 158.77 seconds",
        f"{api}INFO 06-02 08:03:01 [api_server.py:1634] Supported_tasks: ['generate']",
        f"{api}INFO 06-02 08:03:01 [api_server.py:1912] Starting vLLM API server 0 on http://0.0.0.0:8000",
        f"{api}INFO:     Started server process [1]",
        f"{api}INFO:     Waiting for application startup.",
        f"{api}INFO:     Application startup complete.",
    ]
    return out


def serving_pool(rng: random.Random, n: int = 20000) -> list[str]:
    api = "(APIServer pid=1) "
    prompts = ["Summarize the following report in three sentences.", "Translate the paragraph below into French.",
               "Write a SQL query that lists the ten largest customers by revenue.",
               "Explain the difference between a process and a thread.", "Draft a polite reply to this email."]
    out = []
    for i in range(n):
        t = f"06-02 {8 + (i // 3600) % 12:02d}:{(i // 60) % 60:02d}:{i % 60:02d}"
        rid = f"chatcmpl-{rng.getrandbits(64):016x}"
        k = rng.random()
        if k < 0.35:
            out.append(f'{api}INFO:     10.4.{rng.randint(0, 255)}.{rng.randint(1, 254)}:{rng.randint(30000, 65000)} - '
                       f'"POST /v1/chat/completions HTTP/1.1" 200 OK')
        elif k < 0.65:
            out.append(f"{api}INFO {t} [async_llm.py:352] Added request {rid}.")
        elif k < 0.85:
            out.append(f"{api}INFO {t} [logger.py:41] Received request {rid}: prompt: '{rng.choice(prompts)}', "
                       f"params: SamplingParams(n=1, temperature={rng.choice([0.0, 0.6, 0.7, 1.0])}, top_p=0.95, "
                       f"max_tokens={rng.choice([256, 512, 1024, 2048])}), lora_request: None.")
        elif k < 0.995:
            out.append(f"{api}INFO {t} [loggers.py:123] Engine 000: Avg prompt throughput: {rng.uniform(0, 9000):.1f} "
                       f"tokens/s, Avg generation throughput: {rng.uniform(100, 4000):.1f} tokens/s, Running: "
                       f"{rng.randint(0, 256)} reqs, Waiting: {rng.randint(0, 40)} reqs, GPU KV cache usage: "
                       f"{rng.uniform(0, 99):.1f}%, Prefix cache hit rate: {rng.uniform(0, 80):.1f}%")
        else:
            out.append(f"{api}WARNING {t} [protocol.py:93] The following fields were present in the request but "
                       "ignored: {'stream_options_extra'}")
    return out


def failure() -> list[str]:
    w1 = "(Worker_TP1 pid=413) ERROR 06-02 19:41:07 [multiproc_executor.py:671] "
    ec = "(EngineCore_DP0 pid=288) ERROR 06-02 19:41:07 [core.py:710] "
    api = "(APIServer pid=1) ERROR 06-02 19:41:07 [async_llm.py:480] "
    frames = [
        (f"{SITE}/vllm/v1/executor/multiproc_executor.py", 666, "worker_busy_loop", "output = func(*args, **kwargs)"),
        (f"{SITE}/vllm/v1/worker/gpu_worker.py", 447, "execute_model", "output = self.model_runner.execute_model("),
        (f"{SITE}/vllm/v1/worker/gpu_model_runner.py", 2365, "execute_model", "model_output = self.model("),
        (f"{SITE}/vllm/model_executor/models/qwen2.py", 482, "forward", "hidden_states = self.model(input_ids, positions,"),
        (f"{SITE}/vllm/model_executor/layers/activation.py", 84, "forward_native", "return F.silu(x[..., :d]) * x[..., d:]"),
    ]
    out = [f"{w1}WorkerProc hit an exception.", f"{w1}Traceback (most recent call last):"]
    for path, ln, fn, code in frames:
        out += [f'{w1}  File "{path}", line {ln}, in {fn}', f"{w1}    {code}"]
    out.append(
        f"{w1}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 1 has a total capacity of "
        "79.19 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. "
        "Of the allocated memory 74.02 GiB is allocated by PyTorch, with 1.21 GiB allocated in private pools (e.g., CUDA "
        "Graphs), and 2.61 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )
    out += [f"{ec}EngineCore encountered a fatal error.", f"{ec}Traceback (most recent call last):",
            f'{ec}  File "{SITE}/vllm/v1/engine/core.py", line 701, in run_engine_core',
            f"{ec}    engine_core.run_busy_loop()",
            f"{ec}RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 1.75 GiB.', "
            "please check the stack trace above for the root cause",
            f"{api}AsyncLLM output_handler failed.",
            f"{api}vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) "
            "for the root cause."]
    return out


def write(path: str, size: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    pool = serving_pool(rng)
    tail_at = max(0, size - (2 << 20))  # the failure lands about 2 MiB before the end
    written = 0
    failed = False
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        head = "\n".join(startup()) + "\n"
        fh.write(head)
        written += len(head)
        while written < size:
            text = "\n".join(rng.choices(pool, k=2000)) + "\n"
            if not failed and written + len(text) >= tail_at:
                text += "\n".join(failure()) + "\n"
                failed = True
            fh.write(text)
            written += len(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1G", help="approximate size, e.g. 1G, 200M (default 1G)")
    p.add_argument("--output", required=True)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    write(args.output, _size(args.size), args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
