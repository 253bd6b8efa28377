"""A log that stops inside a traceback, before its exception (a paste cut short): the frames still
say which phase was running. That is evidence, ranked below any confident claim, and the
diagnosis says which lines would settle it."""

from __future__ import annotations

from pathlib import Path

from kbkit import walk_to

from oomwizard.logs.diagnose import diagnose_paths, diagnose_text
from oomwizard.logs.signatures import CONFIDENT

SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
EC = "(EngineCore_DP0 pid=290) ERROR 10-20 09:02:11 [core.py:708] "
START = [
    "(APIServer pid=1) INFO 10-20 09:01:02 [api_server.py:1839] vLLM API server version 0.11.0",
    "(EngineCore_DP0 pid=290) INFO 10-20 09:01:30 [gpu_model_runner.py:2602] Starting to load model m...",
]
HEAD = [f"{EC}EngineCore failed to start.", f"{EC}Traceback (most recent call last):",
        f'{EC}  File "{SITE}/v1/engine/core.py", line 699, in run_engine_core',
        f"{EC}    engine_core = EngineCoreProc(*args, **kwargs)"]
PROFILE = [f'{EC}  File "{SITE}/v1/engine/core.py", line 199, in _initialize_kv_caches',
           f"{EC}    self.model_executor.determine_available_memory())",
           f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 263, in determine_available_memory',
           f"{EC}    self.model_runner.profile_run()",
           f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 3001, in profile_run']
CAPTURE = [f'{EC}  File "{SITE}/v1/worker/gpu_worker.py", line 340, in compile_or_warm_up_model',
           f"{EC}    self.model_runner.capture_model()",
           f'{EC}  File "{SITE}/v1/worker/gpu_model_runner.py", line 3400, in capture_model']


def _log(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "cut.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_a_cut_traceback_through_profiling_points_at_it_without_claiming(tmp_path: Path) -> None:
    diag = diagnose_paths([str(_log(tmp_path, [*START, *HEAD, *PROFILE]))])
    top = diag.matches[0]
    assert top.scenario == "profile-run-oom"
    assert top.score < CONFIDENT
    assert top.evidence[0].line == 4  # the traceback's first line
    assert diag.facts.value("failure_phase") == "profile_run"
    assert diag.facts.get("diagnosis") is None  # no confident claim, so the wizard asks
    assert len(diag.missing) == 1 and "before its exception" in diag.missing[0].en
    data = diag.to_json()
    assert data["confidence"] == top.score and data["missing"] == [m.en for m in diag.missing]


def test_a_cut_traceback_through_capture_ranks_the_capture(tmp_path: Path) -> None:
    diag = diagnose_paths([str(_log(tmp_path, [*START, *HEAD, *CAPTURE]))])
    assert diag.matches[0].scenario.startswith(("cudagraph", "mrv2"))
    assert diag.matches[0].score < CONFIDENT
    assert diag.facts.value("failure_phase") == "graph_capture"


def test_a_traceback_that_ends_with_its_exception_is_not_called_cut(tmp_path: Path) -> None:
    done = [*START, *HEAD, *PROFILE, f"{EC}    raise ValueError('unrelated')", f"{EC}ValueError: unrelated"]
    diag = diagnose_paths([str(_log(tmp_path, done))])
    assert not diag.matches and not diag.missing


def test_a_run_with_its_own_failure_gains_nothing_from_a_cut_traceback(tmp_path: Path) -> None:
    oom = (f"{EC}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
           "of 79.19 GiB of which 1.00 GiB is free.")
    other = "(Worker_TP1 pid=413) ERROR 10-20 09:02:11 [multiproc_executor.py:671] Traceback (most recent call last):"
    lines = [*START, *HEAD, *PROFILE, oom, other]
    diag = diagnose_paths([str(_log(tmp_path, lines))])
    assert diag.matches[0].scenario == "profile-run-oom" and diag.matches[0].score >= CONFIDENT
    assert not diag.missing


def test_frames_that_name_no_phase_are_placed_only_by_the_start_up_marks(tmp_path: Path) -> None:
    """The engine had started loading the model and its traceback names no phase: that mark places
    it, below a cut traceback whose frames name one; without a mark nothing does."""
    diag = diagnose_paths([str(_log(tmp_path, [*START, *HEAD]))])
    assert [m.scenario for m in diag.matches[:1]] == ["weights-load-oom"]
    assert diag.matches[0].score < 0.35 < CONFIDENT and diag.missing
    assert not diagnose_paths([str(_log(tmp_path, [START[0], *HEAD]))]).matches


def test_an_excerpt_that_starts_and_stops_inside_a_traceback_still_names_its_phase(tmp_path: Path) -> None:
    """No header (the paste starts mid-traceback) and no exception (it stops before the end): the
    frames of model construction say the weights were loading."""
    lines = [f'{EC}  File "{SITE}/model_executor/model_loader/base_loader.py", line 45, in load_model',
             f"{EC}    model = initialize_model(vllm_config=vllm_config,",
             f'{EC}  File "{SITE}/model_executor/models/llama.py", line 560, in __init__',
             f"{EC}    self.model = self._init_model(vllm_config=vllm_config,"]
    diag = diagnose_paths([str(_log(tmp_path, lines))])
    assert diag.matches[0].scenario == "weights-load-oom" and diag.matches[0].score < CONFIDENT
    assert diag.matches[0].evidence[0].line == 1 and diag.missing


def test_a_cut_at_initialize_kv_caches_points_at_profiling_unless_allocation_began(tmp_path: Path) -> None:
    v0 = ["INFO 03-12 19:41:13 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: model='m'",
          "Traceback (most recent call last):",
          f'  File "{SITE}/engine/llm_engine.py", line 276, in __init__',
          "    self._initialize_kv_caches()",
          f'  File "{SITE}/engine/llm_engine.py", line 421, in _initialize_kv_caches',
          "    self.model_executor.determine_num_avai"]
    assert diagnose_paths([str(_log(tmp_path, v0))]).matches[0].scenario == "profile-run-oom"
    allocating = [*v0[:-1], "    self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)",
                  f'  File "{SITE}/executor/executor_base.py", line 122, in initialize_cache']
    top = diagnose_paths([str(_log(tmp_path, allocating))]).matches[0]
    assert top.scenario in ("insufficient-free-memory-at-startup", "no-kv-cache-memory")  # allocation, not profiling


KV_CHECK = [f'{EC}  File "{SITE}/v1/engine/core.py", line 199, in _initialize_kv_caches',
            f"{EC}    kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs,",
            f'{EC}  File "{SITE}/v1/core/kv_cache_utils.py", line 1243, in get_kv_cache_configs',
            f"{EC}    check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker,"]
KV_LINE = "(EngineCore_DP0 pid=290) INFO 10-20 09:02:10 [gpu_worker.py:298] Available KV cache memory: {} GiB"


def test_a_cut_inside_the_kv_cache_size_check_is_one_of_its_two_messages() -> None:
    d = diagnose_text("\n".join([*START, KV_LINE.format("2.13"), *HEAD, *KV_CHECK]) + "\n", "vllm.log")
    assert [m.scenario for m in d.matches[:2]] == ["kv-cache-too-small", "no-kv-cache-memory"]
    assert all(m.score < CONFIDENT for m in d.matches)
    assert "check_enough_kv_cache_memory" in d.matches[0].reasons[0].en
    # nothing left for the KV cache: the check's other message (a negative figure is a claim of its own)
    d = diagnose_text("\n".join([*START, KV_LINE.format("0.00"), *HEAD, *KV_CHECK]) + "\n", "vllm.log")
    assert [m.scenario for m in d.matches] == ["no-kv-cache-memory"] and d.matches[0].score < CONFIDENT
    assert "0.0 GiB left for it" in d.matches[0].reasons[0].en


def test_a_cut_at_the_call_of_the_size_check_is_one_of_its_two_messages_and_the_walk_follows() -> None:
    """V1 0.9 cut on the source line calling get_kv_cache_config (its frame never came), and V0 cut
    inside raise_if_cache_size_invalid whose name the paste truncated, the logger having stripped
    the source line's indentation: both are inside the KV cache size check."""
    v1 = [f'{EC}  File "{SITE}/v1/engine/core.py", line 141, in _initialize_kv_caches',
          f"{EC}    kv_cache_configs = [",
          f'{EC}  File "{SITE}/v1/engine/core.py", line 142, in <listcomp>',
          f"{EC}    get_kv_cache_config(vllm_config, kv_cache_spec_one_worker,"]
    w = "ERROR 04-28 15:55:45 worker_base.py:157] "
    v0 = ["INFO 04-28 15:50:01 llm_engine.py:98] Initializing an LLM engine (v0.4.1) with config: model='m'",
          f"{w}Error executing method initialize_cache. This might cause deadlock in distributed execution.",
          f"{w}Traceback (most recent call last):",
          f'{w}  File "{SITE}/worker/worker.py", line 171, in initialize_cache',
          f"{w}raise_if_cache_size_invalid(num_gpu_blocks,",
          f'{w}  File "{SITE}/worker/worker.py", line 335, in raise']
    for lines in ([*START, *HEAD, *v1], v0):
        d = diagnose_text("\n".join(lines) + "\n", "vllm.log")
        assert [m.scenario for m in d.matches[:2]] == ["kv-cache-too-small", "no-kv-cache-memory"], d.matches
        assert all(m.score < CONFIDENT for m in d.matches) and d.missing
        assert d.facts.value("leading_scenario") == "kv-cache-too-small"
        assert walk_to(d.facts).leaf.id == "kv-cache-too-small"  # not "free memory shrank"
    # nothing left for the KV cache: the check's other message, and the walk goes there
    d = diagnose_text("\n".join([*START, KV_LINE.format("0.00"), *HEAD, *v1]) + "\n", "vllm.log")
    assert d.matches[0].scenario == "no-kv-cache-memory" and walk_to(d.facts).leaf.id == "no-kv-cache-memory"


def test_a_cut_inside_initialize_from_config_is_past_profiling_and_the_size_check() -> None:
    frames = [f'{EC}  File "{SITE}/v1/engine/core.py", line 212, in _initialize_kv_caches',
              f"{EC}    self.model_executor.initialize_from_config(kv_cache_configs)"]
    d = diagnose_text("\n".join([*START, *HEAD, *frames]) + "\n", "vllm.log")
    ids = [m.scenario for m in d.matches]
    assert ids[:3] == ["insufficient-free-memory-at-startup", "cudagraph-capture", "sampler-warmup"], ids
    assert "profile-run-oom" not in ids and "no-kv-cache-memory" not in ids
    assert all(m.score < CONFIDENT for m in d.matches)
    # the walk the wizard starts from this log suggests the same step, not "no memory left"
    assert walk_to(d.facts).leaf.id == "insufficient-free-memory-at-startup"


_WORKER = "(VllmWorker rank=1 pid=106) ERROR 04-29 01:10:12 [multiproc_executor.py:470] "
_SITE = "/usr/local/lib/python3.12/dist-packages/vllm"
_FORWARD = "".join(f'{_WORKER}  File "{_SITE}/{path}", line 10, in {func}\n{_WORKER}    return entry.runnable(*args)\n'
                   for path, func in (("compilation/backends.py", "__call__"),
                                      ("model_executor/layers/fused_moe/fused_moe.py", "fused_experts_impl")))
_START = "INFO 04-29 00:57:50 [api_server.py:1043] vLLM API server version 0.8.5\n"


def test_a_cut_traceback_through_the_models_forward_at_start_up_is_its_first_forward() -> None:
    # Only the middle of a worker's traceback: the model's layers, no phase, no exception, and no
    # step of start-up shown done. The model ran, so its weights were in: the profiling run.
    d = diagnose_text(_START + _FORWARD)
    assert [(m.scenario, m.score) for m in d.matches][:1] == [("profile-run-oom", 0.3)]
    assert "forward pass" in d.matches[0].reasons[0].en and d.missing


def test_a_cut_in_the_transformers_backends_parameter_allocation_is_the_weights_not_a_forward() -> None:
    # The Transformers backend gives its meta-device parameters GPU memory in the model's
    # constructor (meta_to_empty @0.8.5, init_parameters @0.9.2+): the model file's frames there
    # are the weights being placed, not the model's forward.
    for func, call in (("meta_to_empty", "module.to_empty(device=self.device_config.device)"),
                       ("init_parameters", "self.init_parameters(child)")):
        frames = "".join(f'{_WORKER}  File "{_SITE}/model_executor/models/transformers.py", line 305, in {func}\n{_WORKER}    {call}\n'
                         for _ in range(2))
        frames += f'{_WORKER}  File "/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", line 903, in _apply\n'
        d = diagnose_text(_START + frames)
        assert d.matches[0].scenario == "weights-load-oom" and d.matches[0].score < CONFIDENT, func
        assert "loading the weights" in d.matches[0].reasons[0].en and d.missing


def test_the_same_frames_after_a_later_mark_or_while_serving_are_placed_by_the_marks() -> None:
    serving = _START + "INFO 04-29 01:00:00 [loggers.py:111] Engine 000: Avg prompt throughput: 1.0 tokens/s\n"
    assert not diagnose_text(serving + _FORWARD).matches  # a serving error the excerpt does not show
    sized = _START + "INFO 04-29 00:59:30 [kv_cache_utils.py:634] GPU KV cache size: 171,056 tokens\n"
    assert diagnose_text(sized + _FORWARD).matches[0].scenario != "profile-run-oom"
    # frames of another program's model are not vLLM's forward
    other = _FORWARD.replace(_SITE, "/opt/conda/lib/python3.10/site-packages/transformers")
    assert not diagnose_text(_START + other).matches


def test_v0s_warm_up_model_is_graph_capture() -> None:
    # vLLM 0.2's worker.warm_up_model() only captures the graphs (then sets the seed).
    site = "/usr/local/lib/python3.10/dist-packages"
    log = ("Traceback (most recent call last):\n"
           f'  File "{site}/vllm/engine/ray_utils.py", line 30, in execute_method\n'
           "    return executor(*args, **kwargs)\n"
           f'  File "{site}/vllm/worker/worker.py", line 125, in warm_up_model\n'
           "    self.model_runner.capture_model(self.gpu_cache)\n"
           f'  File "{site}/torch/utils/_contextlib.py", line 115, in decorate_context\n')
    assert [(m.scenario, m.score) for m in diagnose_text(log).matches][:1] == [("cudagraph-capture", 0.35)]


def test_a_cut_inside_the_engines_construction_ranks_the_steps_it_runs() -> None:
    """A traceback through LLM() and LLMEngine.from_engine_args cut before its exception, with no
    start-up line in view: the construction runs every step, so each is a candidate in turn, none
    confident and none taken as the failure's phase; the marks, when the excerpt has them, decide."""
    frames = ["Traceback (most recent call last):",
              '  File "/work/run.py", line 20, in <module>',
              "    llm = LLM(model=path, tensor_parallel_size=2)",
              f'  File "{SITE}/entrypoints/llm.py", line 105, in __init__',
              "    self.llm_engine = LLMEngine.from_engine_args(engine_args)"]
    d = diagnose_text("\n".join(frames) + "\n", "run.log")
    ids = [m.scenario for m in d.matches]
    assert ids[:3] == ["weights-load-oom", "profile-run-oom", "no-kv-cache-memory"], ids
    assert all(m.score < CONFIDENT for m in d.matches) and d.missing
    assert "engine's construction (__init__)" in d.matches[0].reasons[0].en
    assert d.facts.get("failure_phase") is None
    loaded = ["INFO 01-02 10:00:00 model_runner.py:1071] Loading model weights took 14.99 GB", *frames]
    assert diagnose_text("\n".join(loaded) + "\n", "run.log").matches[0].scenario != "weights-load-oom"
    # the same shape in another program's constructor says nothing
    other = [*frames[:3], '  File "/opt/app/engine/llm_engine.py", line 12, in __init__', "    self.x = build()"]
    assert diagnose_text("\n".join(other) + "\n", "run.log").matches == []
