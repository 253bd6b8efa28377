"""Running vLLM servers from a fake /proc: recognition, engine arguments, children, environment."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_proc import add_process, make_proc

from oomwizard.facts import processes
from oomwizard.facts.processes import (
    canonical_key,
    display_command,
    engine_settings,
    find_servers,
    human_int,
    interpreter_of,
    parse_engine_args,
    server_entrypoint,
)

SPEC = json.dumps({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B", "num_speculative_tokens": 3})


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["/opt/venv/bin/python3", "/opt/venv/bin/vllm", "serve", "m"], ("vllm serve", 3)),
        (["vllm", "serve", "m", "--port", "8000"], ("vllm serve", 2)),
        (["python3", "-u", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], ("python -m vllm.entrypoints.openai.api_server", 4)),
        (["python", "-X", "dev", "-m", "vllm.entrypoints.cli.main", "serve", "m"], ("python -m vllm.entrypoints.cli.main", 6)),
        (["/usr/bin/python3", "/src/vllm/vllm/entrypoints/openai/api_server.py", "--model", "m"], ("python vllm/entrypoints/openai/api_server.py", 2)),
        (["python", "-m", "vllm.entrypoints.cli.main", "bench", "latency"], None),
        (["vllm", "bench", "serve"], None),
        (["uv", "run", "vllm", "serve", "m"], None),  # the launcher, not the server
        (["VLLM::EngineCore"], None),
        (["python3", "train.py", "vllm", "serve"], None),
        ([], None),
    ],
)
def test_server_entrypoint(argv, want):
    assert server_entrypoint(argv) == want


@pytest.mark.parametrize(
    ("flag", "key"),
    [
        ("--max-num-seqs", "max_num_seqs"),
        ("--max_num_seqs", "max_num_seqs"),
        ("-tp", "tensor_parallel_size"),
        ("-cc.cudagraph_mode", "compilation_config.cudagraph_mode"),
        ("--compilation-config.cudagraph_mode", "compilation_config.cudagraph_mode"),
        ("-O", "O"),
    ],
)
def test_canonical_key(flag, key):
    assert canonical_key(flag) == key


def test_parse_engine_args_all_spellings():
    tokens = [
        "meta-llama/Llama-3.3-70B-Instruct",
        "-tp",
        "8",
        "--max_model_len=32k",
        "--gpu-memory-utilization",
        "0.95",
        "--enforce-eager",
        "--enable-prefix-caching",
        "False",
        "--max-num-seqs",
        "256",
        "--max-num-batched-tokens",
        "16K",
        "--kv-cache-dtype",
        "fp8",
        "-O3",
        "--speculative-config",
        SPEC,
        "--compilation-config.cudagraph_mode",
        "PIECEWISE",
        "--max-num-seqs=128",  # a later repetition wins, as in argparse
    ]
    args, pos = parse_engine_args(tokens)
    assert pos == ["meta-llama/Llama-3.3-70B-Instruct"]
    assert args["tensor_parallel_size"] == "8"
    assert args["max_model_len"] == "32k"
    assert args["enforce_eager"] is True
    assert args["enable_prefix_caching"] is False
    assert args["max_num_seqs"] == "128"
    assert args["O"] == "3"
    s = engine_settings(args, pos, "vllm serve")
    assert s == {
        "model": "meta-llama/Llama-3.3-70B-Instruct",
        "tp": 8,
        "max_model_len": 32000,
        "max_num_seqs": 128,
        "max_num_batched_tokens": 16384,
        "gpu_memory_utilization": 0.95,
        "kv_cache_dtype": "fp8",
        "enforce_eager": True,
        "prefix_caching": False,
        "speculative_method": "eagle3",
        "num_speculative_tokens": 3,
        "cudagraph_mode": "PIECEWISE",
    }


def test_switch_before_positional_model_keeps_the_model():
    args, pos = parse_engine_args(["--enforce-eager", "Qwen/Qwen3-8B", "--trust-remote-code", "--port", "8000"])
    assert pos == ["Qwen/Qwen3-8B"] and args["trust_remote_code"] is True and args["port"] == "8000"


def test_negative_number_is_a_value():
    args, _ = parse_engine_args(["m", "--max-model-len", "-1", "--seed", "0"])
    assert args["max_model_len"] == "-1"
    assert "max_model_len" not in engine_settings(args, ["m"], "vllm serve")  # -1 means "fit to memory"


def test_api_server_model_flag_and_old_speculative_flags():
    args, pos = parse_engine_args(["--model", "/models/llama", "--speculative-model", "[ngram]", "--num-speculative-tokens", "5", "--swap-space", "16", "-pp", "2"])
    s = engine_settings(args, pos, "python -m vllm.entrypoints.openai.api_server")
    assert s["model"] == "/models/llama"
    assert (s["speculative_method"], s["num_speculative_tokens"]) == ("ngram", 5)
    assert s["swap_space_gb"] == 16.0 and s["pp"] == 2


@pytest.mark.parametrize(
    ("tokens", "fact", "value"),
    [
        (["--no-enable-prefix-caching"], "prefix_caching", False),
        (["--disable-prefix-caching"], "prefix_caching", False),
        (["--enable-chunked-prefill", "True"], "chunked_prefill", True),
        (["--disable-custom-all-reduce"], "custom_all_reduce_disabled", True),
        (["--enable-custom-all-reduce"], "custom_all_reduce_disabled", False),
        (["-ep"], "ep", True),
        (["--enable-expert-parallel", "--disable-expert-parallel"], "ep", False),
        (["--no-enforce-eager"], "enforce_eager", False),
        (["--enable-lora", "--max-loras", "4", "--max-lora-rank", "64"], "lora_enabled", True),
        (["--enable-sleep-mode"], "sleep_mode", True),
        (["-sc.method", "ngram", "-sc.num_speculative_tokens=4"], "speculative_method", "ngram"),
        (["-cc.cudagraph_mode=FULL_DECODE_ONLY"], "cudagraph_mode", "FULL_DECODE_ONLY"),
        (["--compilation-config", '{"cudagraph_mode": "NONE"}'], "cudagraph_mode", "NONE"),
        (["--device-memory-utilization", "0.8"], "gpu_memory_utilization", 0.8),
        (["--cpu-offload-gb", "10"], "cpu_offload_gb", 10.0),
        (["-q", "fp8"], "quantization", "fp8"),
        (["-dp", "2"], "dp", 2),
        (["--kv-cache-memory-bytes", "2G"], "kv_cache_memory_bytes", 2 * 1024**3),
    ],
)
def test_engine_settings(tokens, fact, value):
    args, pos = parse_engine_args(["m", *tokens])
    assert engine_settings(args, pos, "vllm serve")[fact] == value


@pytest.mark.parametrize(
    ("raw", "want"),
    [("32768", 32768), ("32k", 32000), ("32K", 32768), ("1.5k", 1500), ("1m", 1_000_000), ("1M", 1024**2), ("1.5K", None), ("auto", None), (True, None), (7, 7)],
)
def test_human_int(raw, want):
    assert human_int(raw) == want


# --- a fake machine's processes -----------------------------------------------------------------

SERVER_ARGV = [
    "/opt/venv/bin/python3",
    "/opt/venv/bin/vllm",
    "serve",
    "meta-llama/Llama-3.3-70B-Instruct",
    "--tensor-parallel-size",
    "8",
    "--gpu-memory-utilization",
    "0.95",
    "--api-key",
    "sk-abcdefghijklmnopqrstuvwx",
]


def busy_proc(root: Path) -> Path:
    return make_proc(
        root,
        [
            {"pid": 100, "argv": ["bash"], "comm": "bash"},
            {"pid": 4242, "argv": SERVER_ARGV, "ppid": 100, "environ": {"PATH": "/usr/bin", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}},
            {"pid": 4243, "argv": SERVER_ARGV, "ppid": 4242},  # a forked API-server copy
            {"pid": 4250, "argv": ["VLLM::EngineCore"], "ppid": 4242},
            *({"pid": 4260 + i, "argv": [f"VLLM::Worker_TP{i}"], "ppid": 4250} for i in range(2)),
            {"pid": 4270, "argv": ["/opt/venv/bin/python3", "-c", "from multiprocessing.resource_tracker import main;main(9)"], "ppid": 4242},
            {"pid": 5000, "argv": ["VLLM::Worker_TP3"], "ppid": 1},  # survived a crashed server
            {"pid": 6000, "argv": ["uv", "run", "vllm", "serve", "Qwen/Qwen3-8B"], "ppid": 100},
            {"pid": 6001, "argv": ["/home/u/.venv/bin/python", "/home/u/.venv/bin/vllm", "serve", "Qwen/Qwen3-8B"], "ppid": 6000, "environ": {}},
        ],
    )


def test_find_servers_groups_children_and_leftovers(tmp_path):
    out = find_servers(busy_proc(tmp_path / "proc"))
    assert [s["pid"] for s in out["servers"]] == [4242, 6001]
    s = out["servers"][0]
    assert s["entrypoint"] == "vllm serve"
    roles = {c["pid"]: c["role"] for c in s["children"]}
    assert roles == {4243: "forked copy of the server", 4250: "engine core", 4260: "GPU worker", 4261: "GPU worker", 4270: "multiprocessing helper"}
    assert out["leftovers"] == [{"pid": 5000, "title": "VLLM::Worker_TP3", "role": "GPU worker", "ppid": 1}]
    assert s["settings"] == {"model": "meta-llama/Llama-3.3-70B-Instruct", "tp": 8, "gpu_memory_utilization": 0.95}


def test_secrets_never_leave(tmp_path):
    s = find_servers(busy_proc(tmp_path / "proc"))["servers"][0]
    blob = json.dumps(s)
    assert "sk-abcdefghijklmnopqrstuvwx" not in blob
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in blob
    assert "--api-key '<redacted>'" in s["command"]
    assert s["env"]["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert "HF_TOKEN" not in s["env"]  # not a variable we collect at all


def test_command_as_typed(tmp_path):
    s = find_servers(busy_proc(tmp_path / "proc"))["servers"][0]
    # /opt/venv/bin/vllm is not on this PATH: keep the full path, drop the interpreter
    assert s["command"].startswith("/opt/venv/bin/vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 8")
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "vllm").write_text("#!/bin/sh\n")
    (bin_dir / "vllm").chmod(0o755)
    argv = [str(bin_dir / "python3"), str(bin_dir / "vllm"), "serve", "m", "--served-model-name", "my model"]
    assert display_command(argv, str(bin_dir)) == "vllm serve m --served-model-name 'my model'"


def test_interpreter_of(tmp_path):
    root = busy_proc(tmp_path / "proc")
    assert interpreter_of(SERVER_ARGV, {}, root, 4242) == ("/opt/venv/bin/python3", "process 4242 command line")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    script = venv / "bin" / "vllm"
    script.write_text(f"#!{venv}/bin/python3.12\n")
    script.chmod(0o755)
    assert interpreter_of(["vllm", "serve", "m"], {"PATH": str(venv / "bin")}, root, 1) == (f"{venv}/bin/python3.12", f"first line of {script}")
    (venv / "bin" / "python").write_text("")
    assert interpreter_of(["./serve.sh"], {"VIRTUAL_ENV": str(venv)}, root, 1)[0] == f"{venv}/bin/python"
    add_process(root, 777, ["weird"], exe="/usr/bin/python3.12")
    path, how = interpreter_of(["weird"], None, root, 777)
    assert path == "/usr/bin/python3.12" and "resolved binary" in how


def test_environment_not_readable(tmp_path, monkeypatch):
    root = busy_proc(tmp_path / "proc")
    real = processes._read_bytes

    def deny(path):
        if path.name == "environ" and path.parent.name == "4242":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(processes, "_read_bytes", deny)
    s = find_servers(root)["servers"][0]
    assert s["env"] is None
    assert "another user" in s["env_error"]


def test_config_file_is_read_and_cli_wins(tmp_path):
    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "serve.yaml").write_text("max-model-len: 8192\ngpu_memory_utilization: 0.8\nenforce-eager: true\napi-key: sk-abcdefghijklmnopqrstuvwx\n")
    root = make_proc(tmp_path / "proc", [{"pid": 10, "argv": ["vllm", "serve", "m", "--config", "serve.yaml", "--gpu-memory-utilization", "0.9"], "cwd": cwd}])
    s = find_servers(root)["servers"][0]
    assert s["config_file"]["error"] is None
    assert s["settings"]["max_model_len"] == 8192
    assert s["settings"]["gpu_memory_utilization"] == 0.9
    assert s["settings"]["enforce_eager"] is True
    assert s["settings_from_config"] == ["enforce_eager", "max_model_len"]
    assert s["config_file"]["args"]["api_key"] == "<redacted>"
    assert "sk-abcdefghijklmnopqrstuvwx" not in json.dumps(s)


def test_config_file_missing_is_reported(tmp_path):
    root = make_proc(tmp_path / "proc", [{"pid": 10, "argv": ["vllm", "serve", "m", "--config", "/nope.yaml"]}])
    s = find_servers(root)["servers"][0]
    assert "cannot read /nope.yaml" in s["config_file"]["error"]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda f: os.mkfifo(f), "is not a regular file"),
        (lambda f: f.symlink_to("/dev/zero"), "is not a regular file"),
        (lambda f: f.write_text("a: 1\n" + "#" * (1024**2)), "is larger than 1 MiB"),
        (lambda f: f.write_text("a: &x [1, 2]\nb: [*x, *x]\nmax-model-len: 8192\n"), "uses YAML aliases"),
    ],
)
def test_a_config_file_that_could_stall_detection_is_not_read(tmp_path, make, words):
    cfg = tmp_path / "serve.yaml"
    make(cfg)
    root = make_proc(tmp_path / "proc", [{"pid": 10, "argv": ["vllm", "serve", "m", "--config", str(cfg)]}])
    s = find_servers(root)["servers"][0]
    assert words in s["config_file"]["error"] and s["config_file"]["args"] is None
    assert "max_model_len" not in s["settings"]


def test_quiet_machine(tmp_path):
    out = find_servers(make_proc(tmp_path / "proc", [{"pid": 50, "argv": ["sshd"]}]))
    assert out == {"servers": [], "leftovers": [], "scanned": 2}


def test_unreadable_proc_root(tmp_path):
    assert find_servers(tmp_path / "missing")["servers"] == []
