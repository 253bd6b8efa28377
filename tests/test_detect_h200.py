"""Replay what ``oomwizard detect`` saw on a real H200 (tests/fixtures/machine/h200/) and check it
against ``nvidia-smi -q`` taken at the same moment on the same machine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from oomwizard.facts.machine import MachineReport
from oomwizard.report.machine import machine_text

H200 = Path(__file__).parent / "fixtures" / "machine" / "h200"
MIB = 1024**2


def load(name: str) -> MachineReport:
    return MachineReport.from_json(json.loads((H200 / name).read_text()))


def smi(name: str) -> dict[str, str]:
    """The few ``nvidia-smi -q`` lines we compare, flattened (``FB Memory Usage/Used`` …)."""
    out: dict[str, str] = {}
    section = ""
    for line in (H200 / name).read_text().splitlines():
        m = re.match(r"^(\s*)(\S[^:]*?)\s*:\s*(.*)$", line)
        if m and m.group(3):
            key = m.group(2).strip()
            out.setdefault(f"{section}/{key}" if m.group(1) else key, m.group(3).strip())
            out.setdefault(key, m.group(3).strip())
        elif line.strip() and not line.strip().startswith("="):
            section = line.strip()
    return out


def mib(text: str) -> int:
    return int(text.split()[0])


def compute_apps(name: str) -> dict[int, int]:
    """``pid -> MiB`` from the ``--query-compute-apps`` table appended to the busy reading."""
    text = (H200 / name).read_text().split("== nvidia-smi --query-compute-apps", 1)[1]
    out = {}
    for line in text.strip().splitlines()[1:]:
        pid, used, _ = (c.strip() for c in line.split(",", 2))
        out[int(pid)] = int(used.split()[0])
    return out


@pytest.mark.parametrize(("report", "reading"), [("idle.json", "nvidia-smi-q-idle.txt"), ("busy.json", "nvidia-smi-q-busy.txt")])
def test_agrees_with_nvidia_smi(report, reading):
    r, q = load(report), smi(reading)
    f = {x.name: x.value for x in r.facts}
    g = r.data["gpus"][0]
    assert f["driver_version"] == q["Driver Version"] == "580.159.04"
    assert f["cuda_driver_version"] == q["CUDA Version"] == "13.0"
    assert f["gpu_name"] == q["Product Name"] == "NVIDIA H200"
    assert g["pci_bus_id"] == q["Bus Id"] == "00000000:00:06.0"
    assert g["uuid"] == q["GPU UUID"]
    assert f["gpu_arch"] == q["Product Architecture"].lower() == "hopper"
    assert f["gpu_cc"] == "9.0"
    assert f["mig_enabled"] is (q["MIG Mode/Current"] != "Disabled")
    mem = g["memory"]
    assert mem["version"] == "v2"
    assert mem["total"] == mib(q["FB Memory Usage/Total"]) * MIB == f["gpu_mem_total_bytes"]
    # nvidia-smi rounds to MiB; the bytes agree within one
    assert abs(mem["reserved"] / MIB - mib(q["FB Memory Usage/Reserved"])) < 1
    assert abs(mem["used"] / MIB - mib(q["FB Memory Usage/Used"])) < 1
    assert abs(mem["free"] / MIB - mib(q["FB Memory Usage/Free"])) < 1
    assert f["gpu_mem_free_bytes"] == mem["free"]


def test_idle_h200():
    r = load("idle.json")
    f = {x.name: x.value for x in r.facts}
    assert r.data["gpus"][0]["memory"]["used"] == 0 and f["gpu_mem_used_by_others_bytes"] == 0
    assert r.data["gpus"][0]["processes"] == []
    assert str(f["torch_version"]) == "2.11.0" and f["torch_cuda"] == "13.0"
    assert "vllm_version" not in f  # that image has no vLLM
    assert f["gpu_link"] == "single" and f["gpu_count"] == 1
    assert r.data["nvml"]["library_version"] == "13.580.159.04"


def test_busy_h200_processes_match_nvidia_smi():
    r = load("busy.json")
    procs = {p["pid"]: p for p in r.data["gpus"][0]["processes"]}
    assert {pid: round(p["used_bytes"] / MIB) for pid, p in procs.items()} == compute_apps("nvidia-smi-q-busy.txt")
    engine = next(p for p in procs.values() if (p.get("owner") or {}).get("role") == "engine core")
    leftover = next(p for p in procs.values() if (p.get("owner") or {}).get("leftover"))
    tenant = next(p for p in procs.values() if not p.get("owner"))
    assert engine["used_bytes"] > 10 * 1024**3 and leftover["used_bytes"] > 1024**3
    # "used by others" = everything but the running server: the tenant and the leftover worker
    f = {x.name: x.value for x in r.facts}
    assert f["gpu_mem_used_by_others_bytes"] == r.data["gpus"][0]["memory"]["used"] - engine["used_bytes"]
    # NVML's "used" is the processes' memory plus a few MiB it attributes to none (20 MiB here)
    assert 0 <= f["gpu_mem_used_by_others_bytes"] - (tenant["used_bytes"] + leftover["used_bytes"]) < 64 * MIB
    assert "leftover_holds_memory" in [n["code"] for n in r.data["notes"]]


def test_busy_h200_server():
    r = load("busy.json")
    f = {x.name: x for x in r.facts}
    (server,) = r.data["processes"]["servers"]
    assert server["interpreter"]["path"] == "/tmp/vllmenv/bin/python3"
    assert r.data["packages"]["python"] == "/tmp/vllmenv/bin/python3"
    assert str(f["vllm_version"].value) == "0.20.0"
    assert str(f["torch_version"].value) == "2.11.0"  # through the venv's .pth line, without -S hooks
    assert f["serve_command"].kind == "process"
    assert f["serve_command"].value.startswith("/tmp/vllmenv/bin/vllm serve meta-llama/Llama-3.3-70B-Instruct")
    assert (f["tp"].value, f["max_model_len"].value, f["max_num_seqs"].value) == (1, 32000, 256)
    assert (f["kv_cache_dtype"].value, f["enforce_eager"].value, f["speculative_method"].value) == ("fp8", True, "ngram")
    # both allocator variables set in the server, opposite values: torch 2.11 takes the CUDA one
    assert f["alloc_conf_var"].value == "PYTORCH_CUDA_ALLOC_CONF"
    assert f["expandable_segments"].value is True and f["expandable_segments"].kind == "process"
    assert f["env_vllm_use_v2_model_runner"].value == "1"
    # the shell's own allocator setting (max_split_size_mb:512) stays in the report, not in the facts
    assert "max_split_size_mb" not in f
    assert server["children"][0]["role"] == "engine core"


def test_no_secret_reached_the_report():
    for name in ("busy.json", "busy.txt", "idle.json", "log.txt"):
        text = (H200 / name).read_text()
        assert "sk-test1234567890" not in text and "hf_abcdefghijklmnopqrstuvwxyz" not in text, name


def test_replayed_text_renders_in_both_languages():
    r = load("busy.json")
    assert "process 437 (vllm serve)" in machine_text(r, "en")
    assert "进程 437（vllm serve）" in machine_text(r, "zh")
