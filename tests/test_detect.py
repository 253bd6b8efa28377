"""The whole report: detection over fake NVML, /proc and venvs; replay; the CLI; the demo machine."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_nvml import GIB, H200_TOTAL, FakeNVML, h200_spec, hgx_spec, mig_spec, mixed_spec
from fake_proc import make_proc
from fake_site import make_venv, vllm_site

from oomwizard.facts.machine import MachineReport, detect_machine, facts_from_data
from oomwizard.frontend.options import DEMO_MACHINE
from oomwizard.report.machine import machine_text

REPO = Path(__file__).resolve().parent.parent


def vllm_venv(tmp_path: Path) -> Path:
    py, site = make_venv(tmp_path / "vllm-venv")
    vllm_site(site)
    return py


def busy_machine(tmp_path: Path) -> tuple[Path, FakeNVML, Path]:
    """8 H200s; a vLLM server (TP 8, its own venv) whose engine holds memory on every GPU, plus a
    worker left over from an earlier crash still holding 30 GiB on GPU 7."""
    py = vllm_venv(tmp_path)
    spec = hgx_spec(8, used_gib=0)
    for i, d in enumerate(spec["devices"]):
        held = 120 * GIB
        d["procs"] = [(4250, held)]
        extra = 30 * GIB if i == 7 else 0
        if extra:
            d["procs"].append((5000, extra))
        used = held + extra
        d["mem_v2"].update(used=used, free=H200_TOTAL - 644939776 - used)
    server_argv = [str(py), str(py.parent / "vllm"), "serve", "meta-llama/Llama-3.3-70B-Instruct", "-tp", "8", "--max-model-len", "32768", "--gpu-memory-utilization", "0.95", "--api-key", "sk-abcdefghijklmnopqrstuvwx"]
    server_env = {"PATH": "/usr/bin", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7", "VLLM_USE_DEEP_GEMM": "0"}
    proc = make_proc(
        tmp_path / "proc",
        [
            {"pid": 4242, "argv": server_argv, "environ": server_env},
            {"pid": 4250, "argv": ["VLLM::EngineCore"], "ppid": 4242},
            {"pid": 5000, "argv": ["VLLM::Worker_TP7"], "ppid": 1},
        ],
    )
    return proc, FakeNVML(spec), py


def detect(tmp_path: Path, nvml: FakeNVML, proc: Path | None = None, env: dict[str, str] | None = None, **kw) -> MachineReport:
    return detect_machine(environ=env or {"PATH": "/usr/bin"}, proc_root=proc or make_proc(tmp_path / "proc"), sys_root=tmp_path, nvml=nvml, **kw)


def facts(report: MachineReport) -> dict[str, object]:
    return {f.name: f.value for f in report.facts}


def test_busy_hgx_machine(tmp_path):
    proc, nv, py = busy_machine(tmp_path)
    r = detect(tmp_path, nv, proc, {"PATH": "/usr/bin", "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:512"})
    f = facts(r)
    assert f["gpu_count"] == 8 and f["gpu_link"] == "nvlink" and f["gpu_arch"] == "hopper"
    assert f["gpu_mem_total_bytes"] == H200_TOTAL
    # the running server's own 120 GiB is not "someone else's"; the leftover's 30 GiB is
    assert f["gpu_mem_used_by_others_bytes"] == 30 * GIB
    # versions from the server's venv, found from its command line
    assert str(f["vllm_version"]) == "0.11.0" and f["torch_cuda"] == "12.8"
    # read from the venv's files, each version with the file it came from; nothing was started
    site = py.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert r.facts.get("vllm_version").source == f"{site}/vllm-0.11.0.dist-info/METADATA (environment of {py})"
    assert r.facts.get("torch_cuda").source == f"{site}/torch/version.py (environment of {py})"
    assert r.facts.get("python_version").source == f"version in {py.parent.parent}/pyvenv.cfg"
    assert r.data["packages"]["read"] == "files"
    assert r.data["packages"]["roles"] == ["runs vLLM (process 4242)"]
    # the command line, secrets redacted, becomes facts of kind "process"
    cmd = r.facts.get("serve_command")
    assert cmd.kind == "process" and cmd.source == "process 4242 command line"
    assert "sk-abcdefghijklmnopqrstuvwx" not in cmd.value and "--api-key '<redacted>'" in cmd.value
    assert (f["tp"], f["max_model_len"], f["gpu_memory_utilization"]) == (8, 32768, 0.95)
    # the server's environment is what its torch uses: nothing from this shell's is mixed in
    es = r.facts.get("expandable_segments")
    assert es.value is True and es.kind == "process" and "process 4242 environment" in es.source
    assert "max_split_size_mb" not in f
    assert r.data["allocator"]["fields"] == {"max_split_size_mb": 512}  # still shown in the report
    assert f["env_vllm_use_deep_gemm"] == "0"
    codes = [n["code"] for n in r.data["notes"]]
    assert "leftover_holds_memory" in codes
    assert (f["vllm_leftover_processes"], f["vllm_leftover_gpu_bytes"]) == (1, 30 * GIB)
    owners = {p["pid"]: p.get("owner") for p in r.data["gpus"][7]["processes"]}
    assert owners == {4250: {"server": 4242, "role": "engine core"}, 5000: {"leftover": True, "role": "GPU worker"}}
    assert "sk-abcdefghijklmnopqrstuvwx" not in json.dumps(r.to_json())


def test_replay_gives_the_same_facts(tmp_path):
    proc, nv, _ = busy_machine(tmp_path)
    r = detect(tmp_path, nv, proc)
    saved = json.loads(json.dumps(r.to_json()))
    again = MachineReport.from_json(saved)
    assert again.facts.to_json() == r.facts.to_json()
    assert "facts" not in again.data
    assert machine_text(again, "en") == machine_text(r, "en")


def test_single_h200_like_the_fixture(tmp_path):
    r = detect(tmp_path, FakeNVML(h200_spec()))
    f = facts(r)
    assert f["gpu_name"] == "NVIDIA H200" and f["gpu_count"] == 1 and f["gpu_link"] == "single"
    assert (f["gpu_cc"], f["gpu_sm"]) == ("9.0", "sm_90")
    assert f["gpu_mem_free_bytes"] == 150109880320
    assert f["gpu_mem_used_by_others_bytes"] == 0  # v2: the driver's reservation is not "used"
    assert (f["driver_version"], f["cuda_driver_version"]) == ("580.159.04", "13.0")
    assert f["mig_enabled"] is False and f["gpu_mixed_sizes"] is False
    assert (f["vllm_leftover_processes"], f["vllm_leftover_gpu_bytes"]) == (0, 0)
    assert r.data["nvml"]["available"] is True and r.data["nvml"]["reason"] is None


def test_python_flag_reads_that_venv(tmp_path):
    py = vllm_venv(tmp_path)
    r = detect(tmp_path, FakeNVML(h200_spec()), python=str(py.parent.parent))
    assert r.data["packages"]["python"] == str(py)
    assert r.data["packages"]["roles"] == ["--python"]
    assert [i["roles"] for i in r.data["interpreters"]] == [["--python"], ["runs oomwizard"]]
    assert str(facts(r)["torch_version"]) == "2.8.0+cu128"


def test_python_flag_missing_is_a_note_not_a_crash(tmp_path):
    r = detect(tmp_path, FakeNVML(h200_spec()), python=str(tmp_path / "nope" / "python"))
    assert r.data["interpreters"][0]["error"].endswith("does not exist")
    assert "python_missing" in [n["code"] for n in r.data["notes"]]
    assert r.data["packages"]["roles"] == ["runs oomwizard"]


def test_vllm_on_path_is_found(tmp_path):
    py = vllm_venv(tmp_path)
    script = py.parent / "vllm"
    script.write_text(f"#!{py}\nimport sys\n")
    script.chmod(0o755)
    r = detect(tmp_path, FakeNVML(h200_spec()), env={"PATH": f"{py.parent}:/usr/bin"})
    assert r.data["packages"]["roles"] == [f"runs `vllm` on PATH ({script})"]
    assert str(facts(r)["vllm_version"]) == "0.11.0"


def test_cuda_visible_devices_limits_the_facts(tmp_path):
    r = detect(tmp_path, FakeNVML(mixed_spec()), env={"CUDA_VISIBLE_DEVICES": "1"})
    f = facts(r)
    assert f["gpu_count"] == 1 and f["gpu_name"] == "NVIDIA A100-PCIE-40GB"
    assert f["gpu_mixed_sizes"] is False and f["gpu_arch"] == "ampere"
    both = facts(detect(tmp_path, FakeNVML(mixed_spec()), env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}))
    assert both["gpu_mixed_sizes"] is True
    assert both["gpu_mem_total_bytes"] == 42949672960  # the smaller one limits vLLM
    assert both["gpu_name"] == "NVIDIA H100 80GB HBM3 + NVIDIA A100-PCIE-40GB"
    assert both["gpu_link"] == "pcie"


def test_empty_cuda_visible_devices_means_no_gpu(tmp_path):
    f = facts(detect(tmp_path, FakeNVML(hgx_spec(2)), env={"CUDA_VISIBLE_DEVICES": ""}))
    assert f["gpu_count"] == 0 and "gpu_name" not in f


def test_mig_slice_memory(tmp_path):
    env = {"CUDA_VISIBLE_DEVICES": "MIG-66666666-7777-8888-9999-000000000000"}
    f = facts(detect(tmp_path, FakeNVML(mig_spec()), env=env))
    assert f["mig_enabled"] is True
    assert f["gpu_mem_total_bytes"] == 40 * GIB
    assert f["gpu_count"] == 1


def test_container_hides_other_processes(tmp_path):
    spec = h200_spec()
    used = 20 * GIB
    spec["devices"][0]["mem_v2"].update(used=used, free=H200_TOTAL - 644939776 - used)
    (tmp_path / ".dockerenv").write_text("")
    r = detect(tmp_path, FakeNVML(spec))
    codes = [n["code"] for n in r.data["notes"]]
    assert "hidden_processes" in codes and "container_processes" in codes
    assert facts(r)["in_container"] is True
    assert facts(r)["gpu_mem_used_by_others_bytes"] == used


def test_no_nvml_no_gpu_facts(tmp_path):
    spec = h200_spec()
    spec["fail"] = {"nvmlInit": "oserror"}
    r = detect(tmp_path, FakeNVML(spec))
    f = facts(r)
    assert not any(k.startswith("gpu_") for k in f)
    assert r.data["gpus"] == [] and r.data["visible"] is None
    assert r.data["nvml"]["available"] is False and "libnvidia-ml" in r.data["nvml"]["reason"]


def test_detection_is_thread_safe(tmp_path):
    proc, _, _ = busy_machine(tmp_path)
    nv = FakeNVML(hgx_spec(8), call_delay_s=0.0002)
    results: list[dict] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(detect(tmp_path, nv, proc).facts.to_json())
        except BaseException as e:  # noqa: BLE001 - every failure of a thread is reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4 and all(r == results[0] for r in results)
    assert nv.max_active == 1 and nv.inits == nv.shutdowns == 4


def test_text_report(tmp_path):
    proc, nv, _ = busy_machine(tmp_path)
    r = detect(tmp_path, nv, proc)
    en = machine_text(r, "en")
    assert "NVIDIA H200  sm_90 (hopper, cc 9.0)" in en
    assert "vLLM would use: 0, 1, 2, 3, 4, 5, 6, 7 (CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7, process 4242 environment)" in en
    assert "torch uses PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in en
    assert "process 4242 (vllm serve)" in en
    assert "5000  VLLM::Worker_TP7  (GPU worker)" in en
    zh = machine_text(r, "zh")
    assert "运行中的 vLLM 服务" in zh and "进程 4242（vllm serve）" in zh


def test_text_report_neutralises_escape_sequences(tmp_path):
    proc = make_proc(tmp_path / "proc", [{"pid": 10, "argv": ["vllm", "serve", "m", "--served-model-name", "\x1b]52;c;ZXZpbA==\x07x"]}])
    text = machine_text(detect(tmp_path, FakeNVML(h200_spec()), proc), "en")
    assert "\x1b" not in text and "\x07" not in text


# --- the bundled demo machine -------------------------------------------------------------------


def test_demo_machine_replays_the_story():
    data = json.loads(DEMO_MACHINE.read_text())
    r = MachineReport.from_json(data)
    f = facts(r)
    assert f["gpu_name"] == "NVIDIA H200" and f["gpu_count"] == 1
    assert f["gpu_mem_total_bytes"] == 150754820096  # the real H200's NVML total
    assert f["gpu_mem_free_bytes"] == 150109880320 and f["gpu_mem_used_by_others_bytes"] == 0
    assert (f["driver_version"], f["cuda_driver_version"], f["gpu_cc"]) == ("580.159.04", "13.0", "9.0")
    assert str(f["vllm_version"]) == "0.11.0"
    assert str(f["torch_version"]) == "2.8.0+cu128" and f["torch_cuda"] == "12.8"
    assert f["expandable_segments"] is False and "alloc_conf" not in f
    assert "serve_command" not in f  # nothing running after the crash
    assert f["platform"] == "cuda"
    assert r.data["processes"]["servers"] == []
    assert all(not g["processes"] for g in r.data["gpus"])
    assert facts_from_data(data).to_json() == r.facts.to_json()
    assert "Traceback" not in machine_text(r, "zh")


# --- the command line on this machine -----------------------------------------------------------


@pytest.mark.skipif(bool(ctypes.util.find_library("nvidia-ml")), reason="an NVIDIA driver is installed here")
def test_cli_detect_json_without_gpu():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "oomwizard", "detect", "--format", "json"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["nvml"]["available"] is False
    assert data["nvml"]["reason"] and "Traceback" not in proc.stderr
    assert data["gpus"] == []
    assert {"packages", "env", "facts"} <= set(data)
    replay = MachineReport.from_json(data)
    assert replay.facts.to_json() == data["facts"]


@pytest.mark.parametrize(
    "data",
    [
        {"gpus": [{}], "nvml": {"available": True}},
        {"gpus": [{"index": 0, "memory": {"total": 1}}], "nvml": {"available": True}, "visible": {"indices": [0]}},
        {"processes": {"servers": [{}]}},
        {"gpus": "x", "nvml": {"available": True}, "processes": [], "host": 3, "notes": "x", "interpreters": 5, "allocator": "x"},
    ],
)
def test_a_mangled_saved_report_replays_without_a_traceback(data):
    r = MachineReport.from_json(data)
    assert "report_malformed" in [n["code"] for n in r.data["notes"]]
    assert "could not be read" in machine_text(r, "en")


def test_not_a_report_at_all():
    with pytest.raises(ValueError, match="not a saved"):
        MachineReport.from_json(["a", "list"])  # type: ignore[arg-type]
