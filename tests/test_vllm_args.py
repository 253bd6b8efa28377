"""vLLM's command line, one reader for a running server's argv and a command quoted in a log:
each spelling, and ``-O`` as each release's ``FlexibleArgumentParser`` rewrites it."""

from __future__ import annotations

import pytest

from oomwizard.facts.processes import engine_settings, parse_engine_args
from oomwizard.facts.vllm_args import SHORT_FLAGS, SWITCHES, canonical_key, o_style, parse_argv, release_flags
from oomwizard.kb.releases import load_releases
from oomwizard.logs.args import command_args


@pytest.mark.parametrize(
    ("tokens", "want"),
    [
        (["--max-num-seqs", "8"], {"max_num_seqs": "8"}),
        (["--max-num-seqs=8"], {"max_num_seqs": "8"}),
        (["--max_num_seqs", "8"], {"max_num_seqs": "8"}),
        (["--max_num_seqs=8"], {"max_num_seqs": "8"}),
        (["--enforce-eager"], {"enforce_eager": True}),
        (["--enforce-eager", "False"], {"enforce_eager": False}),
        (["--no-enable-prefix-caching"], {"enable_prefix_caching": False}),
        (["--no-enable-prefix-caching", "False"], {"enable_prefix_caching": True}),
        (["--enable-prefix-caching", "--no-enable-prefix-caching"], {"enable_prefix_caching": False}),
        (["--speculative-config", '{"method": "ngram"}'], {"speculative_config": '{"method": "ngram"}'}),
        (["--speculative-config.method", "ngram"], {"speculative_config.method": "ngram"}),
        (["--max-model-len", "-1"], {"max_model_len": "-1"}),
        (["-tp", "2", "-pp", "2", "-dp", "2", "-q", "fp8"],
         {"tensor_parallel_size": "2", "pipeline_parallel_size": "2", "data_parallel_size": "2", "quantization": "fp8"}),
        (["-tp=4"], {"tensor_parallel_size": "4"}),
        (["-cc.cudagraph_mode=FULL"], {"compilation_config.cudagraph_mode": "FULL"}),
        (["-ep"], {"enable_expert_parallel": True}),
    ],
)
def test_each_spelling(tokens: list[str], want: dict[str, object]) -> None:
    assert parse_argv(["m", *tokens]).args == want
    assert parse_argv(["m", *tokens]).positionals == ["m"]


def test_a_switch_never_takes_the_model_and_double_dash_ends_options() -> None:
    p = parse_argv(["--enforce-eager", "Qwen/Qwen3-8B", "--port", "8000", "--", "--not-an-option"])
    assert p.args == {"enforce_eager": True, "port": "8000"}
    assert p.positionals == ["Qwen/Qwen3-8B", "--not-an-option"]


@pytest.mark.parametrize(
    ("version", "tokens", "want"),
    [
        # up to 0.9.1: -O is --compilation-config; argparse attaches the value (vllm/utils.py@0.9.1).
        ("0.8.5", ["-O3"], {"compilation_config": "3"}),
        ("0.8.5", ["-O", "3"], {"compilation_config": "3"}),
        ("0.9.0", ["-O", '{"level": 3}'], {"compilation_config": '{"level": 3}'}),
        # 0.9.2-0.11.0: -O<n> is -O.level=<n> (vllm/utils/__init__.py@0.10.2).
        ("0.9.2", ["-O3"], {"compilation_config.level": "3"}),
        ("0.10.2", ["-O=3"], {"compilation_config.level": "3"}),
        ("0.11.0", ["-O", "3"], {"compilation_config.level": "3"}),
        ("0.10.2", ["-O.cudagraph_mode=PIECEWISE"], {"compilation_config.cudagraph_mode": "PIECEWISE"}),
        ("0.10.2", ["-O", '{"cudagraph_mode": "FULL"}'], {"compilation_config": '{"cudagraph_mode": "FULL"}'}),
        # 0.11.1-0.11.x: -O.mode (vllm/utils/argparse_utils.py@0.11.1).
        ("0.11.1", ["-O3"], {"compilation_config.mode": "3"}),
        ("0.11.2", ["-O", "2"], {"compilation_config.mode": "2"}),
        ("0.11.1", ["-O.cudagraph_mode", "FULL"], {"compilation_config.cudagraph_mode": "FULL"}),
        # 0.12.x: --optimization-level, -O.<key> still a compilation-config key (argparse_utils.py@0.12.0).
        ("0.12.0", ["-O3"], {"optimization_level": "3"}),
        ("0.12.0", ["-O", "0"], {"optimization_level": "0"}),
        ("0.12.0", ["-O.cudagraph_mode=FULL"], {"compilation_config.cudagraph_mode": "FULL"}),
        # 0.13.0+: every -O<x> is --optimization-level <x> (argparse_utils.py@0.13.0).
        ("0.13.0", ["-O2"], {"optimization_level": "2"}),
        ("0.33.0", ["-O=1"], {"optimization_level": "1"}),
        ("0.13.0", ["-O.cudagraph_mode=FULL"], {"optimization_level": ".cudagraph_mode=FULL"}),
        # release unknown: both readings are possible, so the value stays under O.
        (None, ["-O3"], {"O": "3"}),
        (None, ["-O", "3"], {"O": "3"}),
    ],
)
def test_dash_o_per_release(version: str | None, tokens: list[str], want: dict[str, str]) -> None:
    p = parse_argv(["m", *tokens], version)
    assert p.args == want and p.positionals == ["m"]


def test_the_o_ranges_follow_the_releases_flags() -> None:
    """-O is registered as --compilation-config's alias exactly where the rewrite does not target
    --optimization-level (vllm_releases.json, read from each release's parser)."""
    for rel in load_releases():
        style = o_style(rel.version)
        assert ("-O" in rel.flags) == (style in ("compilation", "level", "mode")), rel.version
        assert ("--optimization-level" in rel.flags) == style.startswith("optimization"), rel.version


def test_short_aliases_are_read_only_where_the_release_has_them() -> None:
    assert canonical_key("-sc", "0.19.0") == "speculative_config"
    assert canonical_key("-sc", "0.18.0") == "sc"
    assert canonical_key("-cc", "0.11.1") == "cc"
    assert canonical_key("-cc.cudagraph_mode", "0.12.0") == "compilation_config.cudagraph_mode"
    assert canonical_key("-ep", "0.13.0") == "ep" and canonical_key("-ep", "0.14.0") == "enable_expert_parallel"
    assert canonical_key("-dp", "0.8.2") == "dp" and canonical_key("-dp", "0.8.3") == "data_parallel_size"


def test_every_name_the_reader_knows_is_a_vllm_flag() -> None:
    every = set().union(*(r.flags for r in load_releases()))
    for short, key in SHORT_FLAGS.items():
        assert short in every and "--" + key.replace("_", "-") in every, short
    for key in SWITCHES:
        assert "--" + key.replace("_", "-") in every, key
    flags = release_flags("0.12.5")
    assert flags is not None and "--optimization-level" in flags and "-O" not in flags


def test_a_server_and_a_logged_command_read_alike() -> None:
    line = ("vllm serve Qwen/Qwen3-8B -tp 2 --max_model_len=8192 --enforce-eager --no-enable-prefix-caching "
            "-sc.method ngram -sc.num_speculative_tokens=4 -O3")
    tokens = line.split()[2:]
    args, pos = parse_engine_args(tokens, "0.19.0")
    s = engine_settings(args, pos, "vllm serve")
    assert s == {"model": "Qwen/Qwen3-8B", "tp": 2, "max_model_len": 8192, "enforce_eager": True,
                 "prefix_caching": False, "speculative_method": "ngram", "num_speculative_tokens": 4}
    assert args["optimization_level"] == "3"
    logged = command_args(line, "0.19.0")
    assert logged["model_tag"] == "Qwen/Qwen3-8B"
    assert (logged["tensor_parallel_size"], logged["max_model_len"]) == (2, 8192)
    assert logged["enforce_eager"] is True and logged["enable_prefix_caching"] is False
    assert logged["speculative_config"] == {"method": "ngram", "num_speculative_tokens": 4}
    assert logged["optimization_level"] == 3
    assert command_args(line, "0.10.2")["compilation_config"] == {"level": 3}


def test_a_logged_api_server_command_keeps_its_model_flag() -> None:
    got = command_args("CUDA_VISIBLE_DEVICES=0 python -m vllm.entrypoints.openai.api_server --model m "
                       "--trust-remote-code --gpu-memory-utilization 0.85")
    assert got == {"model": "m", "trust_remote_code": True, "gpu_memory_utilization": 0.85}


def test_the_command_rewriter_knows_the_same_switches() -> None:
    """A switch the reader knows takes no value in the rewriter either: removing it keeps the model."""
    from oomwizard.advice.commands import ServeCommand

    cmd = ServeCommand.parse("vllm serve --fully-sharded-loras Qwen/Qwen3-8B --max-loras 4")
    cmd.remove("--fully-sharded-loras")
    assert cmd.text() == "vllm serve Qwen/Qwen3-8B --max-loras 4"
    cmd = ServeCommand.parse("vllm serve m --no-enable-prefix-caching --max-num-seqs 8")
    cmd.set("--enable-prefix-caching", None)
    assert cmd.text() == "vllm serve m --max-num-seqs 8 --enable-prefix-caching"
