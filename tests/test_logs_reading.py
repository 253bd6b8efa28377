"""Reading: wrappers peeled, wrapped lines joined, arguments parsed, and every way of reading a
log (whole, around triggers, around a few anchors) telling the same story."""

from __future__ import annotations

from pathlib import Path

import pytest
from logkit import LOGS

from oomwizard.logs.args import (
    find_command,
    parse_dict_repr,
    parse_engine_config,
    parse_namespace,
    parse_non_default_args,
    serve_command,
)
from oomwizard.logs.clean import clean
from oomwizard.logs.collect import scanner
from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.logs.lines import Joiner
from oomwizard.logs.reader import GAP, ReadStats, read_lines, text_source
from oomwizard.logs.scan import ENGINES

MSG = "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests."


@pytest.mark.parametrize(
    ("raw", "proc", "rank"),
    [
        (f"(VllmWorker rank=2 pid=123) ERROR 03-16 06:12:38 [multiproc_executor.py:375] {MSG}", "VllmWorker pid=123", 2),
        (f"(EngineCore_DP0 pid=270) ERROR 11-19 12:16:36 [core.py:842] {MSG}", "EngineCore_DP0 pid=270", None),
        (f"(EngineCore pid=91) ERROR 03-20 11:40:05 [core.py:1011] {MSG}", "EngineCore pid=91", None),
        (f"(Worker_PP1_TP3 pid=88) ERROR 01-02 10:00:00 [multiproc_executor.py:1] {MSG}", "Worker_PP1_TP3 pid=88", 3),
        (f"(RayWorkerWrapper pid=10858, ip=200.18.66.58) ERROR 03-27 10:29:13 [worker_base.py:620] {MSG}",
         "RayWorkerWrapper pid=10858", None),
        (f"(APIServer pid=1) ERROR 10-20 09:07:13 [async_llm.py:480] {MSG}", "APIServer pid=1", None),
        (f"(MapWorker(MapBatches(vLLMEngineStageUDF)) pid=41459, ip=10.0.107.216) (EngineCore_DP0 pid=35943) ERROR "
         f"11-13 00:46:39 [core.py:77] {MSG}", "EngineCore_DP0 pid=35943", None),
        (f"[rank0]: {MSG}", "rank0", 0),
        (f"INFO 05-16 11:10:22 [core.py:1161] {MSG}", "", None),
        (f"ERROR 12-27 09:14:41 engine.py:366] {MSG}", "", None),
        (f"(APIServer pid=1) INFO [vllm.py:1087] {MSG}", "APIServer pid=1", None),
        (f"2025-01-01T00:00:00.000000000Z stdout F (EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] {MSG}",
         "EngineCore_DP0 pid=1", None),
        (f"2025-01-01T00:00:00.123Z {MSG}", "", None),
        (f"Jan 01 00:00:00 gpu-07 vllm[123]: {MSG}", "", None),
        (f"INFO 2025-11-19T20:16:36.096674521Z [resource.labels.containerName: vllm] (EngineCore_DP0 pid=270) ERROR "
         f"11-19 12:16:36 [core.py:842] {MSG}", "EngineCore_DP0 pid=270", None),
        (f"[2025-03-10T15:07:20Z] ERROR 03-10 08:07:20 [core.py:302] {MSG}", "", None),
        (f"vllm-1  | ERROR 02-08 10:04:28 multiproc_worker_utils.py:124] {MSG}", "", None),
        (f"[pod/vllm-0/vllm] {MSG}", "", None),
        (f"\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0;0m ERROR 01-01 00:00:00 [core.py:1] {MSG}", "EngineCore_DP0 pid=7", None),
        (f"^[[36m(VllmWorker rank=1 pid=3321)^[[0m {MSG}", "VllmWorker pid=3321", 1),
        (f"ESC[36m(RayWorkerWrapper pid=22817, ip=10.0.3.14)ESC[0m {MSG}", "RayWorkerWrapper pid=22817", None),
        (f"[36m(RayWorkerWrapper pid=5, ip=10.0.0.1)[0m {MSG}", "RayWorkerWrapper pid=5", None),
        (f"> {MSG}", "", None),
        (f'{{"log": "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] {MSG}\\n", "stream": "stderr"}}',
         "EngineCore_DP0 pid=1", None),
        (f'{{"message": "{MSG}", "level": "error"}}', "", None),
        (f"(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] {MSG} [repeated 7x across cluster]",
         "EngineCore_DP0 pid=1", None),
    ],
)
def test_wrappers_and_prefixes_are_peeled(raw: str, proc: str, rank: int | None) -> None:
    (c,) = clean(raw)
    assert c.text == MSG
    assert c.proc == proc
    assert c.rank == rank
    assert c.fresh
    assert "\x1b" not in c.shown and "^[[" not in c.shown


def test_progress_bar_keeps_its_last_state() -> None:
    (c,) = clean("Capturing CUDA graphs:   0%|          | 0/67\rCapturing CUDA graphs: 100%|##########| 67/67")
    assert c.text.startswith("Capturing CUDA graphs: 100%")
    (c,) = clean("Loading safetensors checkpoint shards:  50% Completed | 1/2^MLoading safetensors checkpoint shards: "
                 "100% Completed | 2/2")
    assert "100%" in c.text and "50%" not in c.text


def test_half_stripped_colour_does_not_eat_brackets() -> None:
    (c,) = clean("(Worker_TP1 pid=413) ERROR 06-02 19:41:07 [multiproc_executor.py:671] boom")
    assert "[multiproc_executor.py:671]" in c.shown


def test_json_record_with_a_whole_traceback() -> None:
    rec = '{"message": "Traceback (most recent call last):\\n  File \\"/x/vllm/v1/worker/gpu_model_runner.py\\", line 1, in _dummy_sampler_run\\nRuntimeError: boom"}'
    out = clean(rec)
    assert [c.text for c in out] == [
        "Traceback (most recent call last):",
        '  File "/x/vllm/v1/worker/gpu_model_runner.py", line 1, in _dummy_sampler_run',
        "RuntimeError: boom",
    ]


def test_joiner_rejoins_a_terminal_wrap_with_line_numbers() -> None:
    full = ("(EngineCore_DP0 pid=213) ERROR 10-14 09:14:46 [core.py:708] RuntimeError: CUDA out of memory occurred when "
            "warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` "
            "when initializing the engine.")
    pieces = [full[i:i + 80] for i in range(0, len(full), 80)]
    j = Joiner()
    out = []
    for n, piece in enumerate(["INFO 10-14 09:14:40 [core.py:1] before", *pieces, "INFO 10-14 09:14:47 [core.py:1] after"], 10):
        out.extend(j.feed(n, piece))
    out.extend(j.flush())
    assert [lg.line for lg in out] == [10, 11, 11 + len(pieces)]
    joined = out[1]
    assert "warming up sampler with 1024 dummy requests" in joined.text
    offset = joined.text.index("gpu_memory_utilization")
    assert joined.line_at(offset) == 11 + (len("(EngineCore_DP0 pid=213) ") + offset) // 80 or joined.line_at(offset) > 11


def test_joiner_does_not_join_separate_lines() -> None:
    j = Joiner()
    out = []
    lines = ["x" * 100 + " a line that is long but whole", "Traceback (most recent call last):",
             '  File "/a.py", line 1, in f', "    return g()", "ValueError: short"]
    for n, ln in enumerate(lines, 1):
        out.extend(j.feed(n, ln))
    out.extend(j.flush())
    assert len(out) == len(lines)


def _joined(lines: list[str]) -> list[str]:
    j = Joiner()
    out = []
    for n, ln in enumerate(lines, 1):
        out.extend(j.feed(n, ln))
    out.extend(j.flush())
    return [lg.text for lg in out]


def test_an_exception_broken_at_a_word_is_one_message_again() -> None:
    lines = ["ValueError: Free memory on device cuda:0 (7.52/23.64 GiB) on startup",
             "is less than desired GPU memory utilization (0.9, 21.28 GiB). Decrease GPU memory utilization"]
    assert _joined(lines) == [" ".join(lines)]
    d = diagnose_text("\n".join(lines) + "\n", "vllm.log")
    assert d.matches and d.matches[0].scenario == "insufficient-free-memory-at-startup"
    assert d.facts.value("startup_free_gib") == 7.52
    assert [e.line for e in d.matches[0].evidence] == [1]


@pytest.mark.parametrize("lines", [
    ["ValueError: Free memory on device cuda:0 (7.52/23.64 GiB) on startup.", "is a sentence of its own"],
    ["INFO 10-14 09:14:40 [core.py:1] loading the model", "weights from disk"],
    ["RuntimeError: CUDA error: out of memory", "CUDA kernel errors might be asynchronously reported"],
    ["ValueError: Free memory on device cuda:0 (7.52/23.64 GiB) on startup", "  File \"/a.py\", line 1, in f"],
    ["RuntimeError: CUDA error: out of memory", "terminate called after throwing an instance of 'c10::Error'"],
    ["ValueError: bad value 3", "", "next thing happened"],
], ids=["closed-sentence", "not-an-exception", "capital-next", "a-frame-next", "cpp-abort-next", "blank-between"])
def test_other_short_lines_stay_apart(lines: list[str]) -> None:
    assert len(_joined(lines)) == len([ln for ln in lines if ln])


def test_non_default_args_and_serve_command() -> None:
    text = ("{'model_tag': 'Qwen/Qwen3-8B', 'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768, "
            "'compilation_config': CompilationConfig(level=3, mode=[1, 2]), 'enable_prefix_caching': False, "
            "'speculative_config': {'method': 'eagle', 'num_speculative_tokens': 3}, 'api_key': ['sk-0123456789abcdefghij']}")
    args = parse_dict_repr(text)
    assert args["max_model_len"] == 32768
    assert args["compilation_config"].startswith("CompilationConfig(")
    cmd = serve_command(args)
    assert cmd is not None
    assert cmd.startswith("vllm serve Qwen/Qwen3-8B --max-model-len 32768 --no-enable-prefix-caching")
    assert "--speculative-config '{\"method\":\"eagle\",\"num_speculative_tokens\":3}'" in cmd
    assert "CompilationConfig" not in cmd
    assert "sk-0123456789abcdefghij" not in cmd and "<redacted>" in cmd


def test_namespace_is_parsed_without_eval() -> None:
    line = ("args: Namespace(host=None, port=8000, model='m', max_model_len=16384, tensor_parallel_size=2, "
            "enforce_eager=False, enable_chunked_prefill=False, rope_scaling=__import__('os').system('echo pwned'))")
    ns = parse_namespace(line)
    assert ns is not None
    assert ns["rope_scaling"] == "__import__('os').system('echo pwned')"  # kept as text, never run
    cmd = serve_command(ns, namespace=True, version="0.6.6")
    assert cmd == "vllm serve m --tensor-parallel-size 2 --max-model-len 16384"


def test_a_line_cut_inside_its_arguments_keeps_only_the_items_it_shows_whole() -> None:
    """A paste or a preview that stops mid-line: the last item may stop inside its value, and a
    path or a number cut short would read as another value (a model that does not exist)."""
    assert parse_namespace("args: Namespace(subparser='serve', tensor_parallel_size=4, model_tag='/data/models/Intern") == {
        "subparser": "serve", "tensor_parallel_size": 4}
    assert parse_namespace("args: Namespace(max_model_len=40") == {}  # 40 may be 40960 cut short
    assert parse_non_default_args("non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 40") == {"model": "Qwen/Qwen3-8B"}
    assert parse_non_default_args("non-default args: {'model': 'Qwen/Qwen3-8B', 'max_model_len': 4096}") == {
        "model": "Qwen/Qwen3-8B", "max_model_len": 4096}
    # the engine's config is not bracketed: a value cut inside its quotes is left out
    cut = parse_engine_config("Initializing a V1 LLM engine (v0.8.3) with config: model='/home/u/DeepSeek-V2-Lit")
    assert cut == ("V1", "0.8.3", {})


def test_engine_config_line() -> None:
    parsed = parse_engine_config(
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', speculative_config=None, dtype=torch.bfloat16, "
        "max_seq_len=32768, quantization=fp8, compilation_config={\"level\":3,\"cudagraph_mode\":[2,1]}")
    assert parsed is not None
    engine, version, cfg = parsed
    assert (engine, version) == ("V1", "0.11.0")
    assert cfg["dtype"] == "torch.bfloat16" and cfg["max_seq_len"] == 32768
    assert cfg["compilation_config"]["cudagraph_mode"] == [2, 1]


def test_command_lines_in_the_log() -> None:
    assert find_command("$ vllm serve m --tp 2 --hf-token hf_abcdefghijklmnopqrstuvwx") == "vllm serve m --tp 2 --hf-token '<redacted>'"
    assert find_command("+ python3 -m vllm.entrypoints.openai.api_server --model m") == \
        "python3 -m vllm.entrypoints.openai.api_server --model m"
    assert find_command("INFO vllm serving requests") is None


def _read(text: str, **limits: int) -> list[tuple[int, str]]:
    stats = ReadStats("t")
    return list(read_lines(text_source(text, "t"), stats, scanner(), **limits))


def test_scanned_windows_keep_original_line_numbers() -> None:
    lines = [f"INFO 01-01 00:00:00 [loggers.py:1] boring line {i}" for i in range(1, 5001)]
    lines[2999] = "Traceback (most recent call last):"
    lines[3000] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."
    text = "\n".join(lines) + "\n"
    got = _read(text, all_lines_limit=0)
    assert got and got[0] != GAP
    numbered = dict(x for x in got if x != GAP)
    assert numbered[3000] == "Traceback (most recent call last):"
    assert numbered[3001].startswith("torch.OutOfMemoryError")
    assert len(numbered) < 2000  # most of the log was skipped
    for n, t in numbered.items():
        assert t == lines[n - 1]


def _engine_available(name: str) -> bool:
    try:
        __import__({"hyperscan": "hyperscan", "re2": "re2", "re": "re"}[name])
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("engine", ENGINES)
def test_searching_agrees_with_reading_every_line_on_every_log(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read whole, or searched for the triggers by each pattern engine: the same diagnosis, facts
    and line numbers on every synthetic log, those whose failure prints no traceback included."""
    if not _engine_available(engine):
        pytest.skip(f"{engine} is not installed")
    monkeypatch.setenv("OOMWIZARD_SCANNER", engine)
    assert scanner().name == engine
    for path in sorted(LOGS.glob("*.log")):
        whole = diagnose_paths([str(path)])
        searched = diagnose_paths([str(path)], all_lines_limit=0)
        assert [(m.scenario, m.score) for m in searched.matches] == [(m.scenario, m.score) for m in whole.matches], (
            path.name, engine)
        assert {f.name: (f.value, f.line) for f in searched.facts} == {f.name: (f.value, f.line) for f in whole.facts}


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("(APIServer pid=1) INFO 10-14 09:12:07 [api_server.py:1839] vLLM API server version 0.11.0", "0.11.0"),
        ("INFO 02-10 17:12:31 llm_engine.py:234] Initializing a V0 LLM engine (v0.6.4.post2.dev395+g02222a02.d20241217) "
         "with config: model='m'", "0.6.4.post2.dev395+g02222a02.d20241217"),
        ("INFO 12-27 09:14:09 llm_engine.py:234] Initializing an LLM engine (v0.6.6) with config: model='m'", "0.6.6"),
        ("vLLM Version                 : 0.10.1.1", "0.10.1.1"),
        ("[pip3] vllm==0.9.2", "0.9.2"),
        ("vllm                              0.8.5.post1", "0.8.5.post1"),
        ("docker run --gpus all vllm/vllm-openai:v0.10.2 --model m", "0.10.2"),
    ],
)
def test_version_forms(line: str, version: str) -> None:
    from oomwizard.logs.diagnose import diagnose_text

    assert str(diagnose_text(line + "\n").facts.value("vllm_version")) == version


def test_intel_device_sets_the_platform() -> None:
    from oomwizard.logs.diagnose import diagnose_text

    d = diagnose_text("ValueError: Free memory on device xpu:0 (20.10/64.00 GiB) on startup is less than desired GPU "
                      "memory utilization (0.9, 57.60 GiB). Decrease GPU memory utilization.\n")
    assert d.matches[0].scenario == "insufficient-free-memory-at-startup"
    assert d.facts.value("error_platform") == "xpu"
    assert d.facts.value("startup_total_gib") == 64.0


def test_flattened_traceback_on_one_line() -> None:
    from oomwizard.logs.diagnose import diagnose_text

    text = ('Traceback (most recent call last): File "/x/vllm/v1/worker/gpu_worker.py", line 1, in compile_or_warm_up_model '
            'self.model_runner.capture_model() File "/x/vllm/v1/worker/gpu_model_runner.py", line 2, in capture_model '
            'self._dummy_run(n) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a '
            'total capacity of 23.57 GiB of which 3.00 MiB is free.\n')
    d = diagnose_text(text)
    assert d.matches[0].scenario == "cudagraph-capture"
    assert d.facts.value("failure_phase") == "graph_capture"


def _facts_and_lines(d) -> tuple[dict[str, object], list[tuple[str, int]]]:  # type: ignore[no-untyped-def]
    return ({f.name: (f.value, f.line) for f in d.facts},
            [(m.scenario, e.line) for m in d.matches for e in m.evidence])


def test_line_numbers_stay_exact_across_blocks_and_a_line_longer_than_a_block(tmp_path: Path) -> None:
    """Newlines are counted between windows and across blocks: the numbers searching gives are
    the ones reading every line gives, also after a line longer than a block was cut, and a hit
    in the middle of that line is still read."""
    import sys as _sys

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    _sys.path.insert(0, str(bench))
    try:
        import gen_log
    finally:
        _sys.path.remove(str(bench))
    p = tmp_path / "big.log"
    gen_log.write(str(p), 6 << 20)
    with open(p, "ab") as fh:  # a line longer than a block, then the failure again after it
        fh.write(b"x" * (5 << 20) + b" Traceback (most recent call last): " + b"y" * (5 << 20) + b"\n")
        fh.write(b"tail line\n" + (LOGS / "kv_too_small_v1_0102.log").read_bytes())
    whole = _facts_and_lines(diagnose_paths([str(p)], all_lines_limit=1 << 40))
    searched = _facts_and_lines(diagnose_paths([str(p)], all_lines_limit=0))
    assert whole == searched
    with open(p, "rb") as fh:
        total = sum(1 for _ in fh)
    assert max(line for _, line in searched[1]) > total - 200  # the failure appended after the long line
