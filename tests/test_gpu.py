"""NVML reading against a fake nvidia-ml-py shaped like the real H200 readings, and its failures."""

from __future__ import annotations

import sys
from pathlib import Path

import pynvml
import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "machine"))

from fake_nvml import (
    H200_RESERVED,
    H200_TOTAL,
    FakeNVML,
    h200_probe,
    h200_spec,
    hgx_spec,
    mig_spec,
    mixed_spec,
    pcie_spec,
    variant,
)
from fake_proc import make_proc

from oomwizard.facts.gpu import arch_for_cc, link_summary, read_nvml
from oomwizard.facts.visible import map_visible


@pytest.mark.parametrize(
    ("cc", "arch", "sm"),
    [
        ((7, 0), "volta", "sm_70"),
        ((7, 2), "volta", "sm_72"),
        ((7, 5), "turing", "sm_75"),
        ((8, 0), "ampere", "sm_80"),
        ((8, 6), "ampere", "sm_86"),
        ((8, 7), "ampere", "sm_87"),
        ((8, 9), "ada", "sm_89"),
        ((9, 0), "hopper", "sm_90"),
        ((10, 0), "blackwell_sm100", "sm_100"),
        ((10, 3), "blackwell_sm100", "sm_103"),
        ((11, 0), "blackwell_sm110", "sm_110"),
        ((12, 0), "blackwell_sm120", "sm_120"),
        ((12, 1), "blackwell_sm120", "sm_121"),
        ((6, 1), "other", "sm_61"),
    ],
)
def test_arch_for_cc(cc, arch, sm):
    assert arch_for_cc(*cc) == (arch, sm)


def test_real_h200_reading(tmp_path):
    probe = h200_probe()["nvml"]
    nv = FakeNVML(h200_spec())
    out = read_nvml(nv, make_proc(tmp_path / "proc"))
    assert out["nvml"]["available"] is True
    assert out["nvml"]["driver_version"] == probe["driver"] == "580.159.04"
    assert out["nvml"]["cuda_driver_version"] == "13.0"
    assert out["nvml"]["memory_info"] == "v2"
    (g,) = out["gpus"]
    assert g["name"] == "NVIDIA H200"
    assert g["uuid"] == "GPU-dd5b092d-bede-02a4-a788-770ae5c5a5b3"
    assert g["pci_bus_id"] == "00000000:00:06.0"
    assert (g["cc"], g["sm"], g["arch"]) == ("9.0", "sm_90", "hopper")
    # v2 keeps the ~615 MiB driver reservation out of "used" (v1 would say 615 MiB used on an idle GPU)
    assert g["memory"] == {"total": H200_TOTAL, "reserved": H200_RESERVED, "used": 0, "free": 150109880320, "version": "v2"}
    assert g["mig"] == {"enabled": False, "pending": False, "devices": []}
    assert g["compute_mode"] == "default"
    assert g["processes"] == []
    assert g["nvlinks_active"] is None  # NotSupported on link 0, as the probe saw
    assert "errors" not in g
    assert out["topology"] == []
    assert nv.inits == 1 and nv.shutdowns == 1


def test_v1_fallback_when_v2_missing(tmp_path):
    spec = h200_spec()
    spec["devices"][0]["mem_v2"] = None
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    mem = out["gpus"][0]["memory"]
    assert mem["version"] == "v1" and mem["used"] == 644939776 and mem["reserved"] is None
    assert out["nvml"]["memory_info"] == "v1"


def test_eight_gpus_nvlink_and_numa(tmp_path):
    out = read_nvml(FakeNVML(hgx_spec(8)), make_proc(tmp_path / "proc"))
    assert [g["index"] for g in out["gpus"]] == list(range(8))
    assert all(g["nvlinks_active"] == 18 for g in out["gpus"])
    assert len(out["topology"]) == 28
    pair = {(p["a"], p["b"]): p for p in out["topology"]}
    assert pair[(0, 1)] == {"a": 0, "b": 1, "link": "NV18", "nvlink": True, "pcie": "NODE"}
    assert pair[(0, 7)]["pcie"] == "SYS"
    assert link_summary(out["topology"], list(range(8))) == "nvlink"
    assert link_summary(out["topology"], [3]) == "single"


def test_pcie_pair(tmp_path):
    out = read_nvml(FakeNVML(pcie_spec()), make_proc(tmp_path / "proc"))
    (p,) = out["topology"]
    assert p["nvlink"] is False and p["link"] == "PXB"
    assert out["gpus"][0]["arch"] == "ada"
    assert link_summary(out["topology"], [0, 1]) == "pcie"


def test_mig_devices(tmp_path):
    out = read_nvml(FakeNVML(mig_spec()), make_proc(tmp_path / "proc"))
    mig = out["gpus"][0]["mig"]
    assert mig["enabled"] is True
    assert [m["uuid"] for m in mig["devices"]] == ["MIG-11111111-2222-3333-4444-555555555555", "MIG-66666666-7777-8888-9999-000000000000"]
    assert mig["devices"][0]["memory"]["total"] == 40 * 1024**3


def test_processes_named_from_proc_and_hidden_ones(tmp_path):
    spec = h200_spec()
    spec["devices"][0]["procs"] = [(4242, 10 * 1024**3), (777, 2 * 1024**3), (9999, None), (4250, 1024**3)]
    spec["process_names"] = {"777": "python3"}
    proc = make_proc(
        tmp_path / "proc",
        [
            {"pid": 4242, "argv": ["python3", "-c", "hold", "--api-key", "sk-abcdefghijklmnopqrstuvwx"], "comm": "python3"},
            {"pid": 4250, "argv": ["VLLM::EngineCore"], "comm": "python3"},
        ],
    )
    g = read_nvml(FakeNVML(spec), proc)["gpus"][0]
    by_pid = {p["pid"]: p for p in g["processes"]}
    assert by_pid[4250]["name"] == "VLLM::EngineCore"  # vLLM's title, as nvidia-smi shows it
    assert by_pid[4242] == {"pid": 4242, "used_bytes": 10 * 1024**3, "type": "compute", "name": "python3", "cmdline": "python3 -c hold --api-key <redacted>", "visible": True}
    # not in our /proc (another container): NVML's own name, flagged invisible
    assert by_pid[777]["name"] == "python3" and by_pid[777]["visible"] is False
    assert by_pid[9999]["used_bytes"] is None and by_pid[9999]["name"] is None
    assert [p["pid"] for p in g["processes"]][:2] == [4242, 777]  # biggest first


def test_process_list_mismatch_falls_back_to_v2(tmp_path):
    spec = h200_spec()
    spec["devices"][0]["procs"] = [(4242, 1024**3)]
    spec["devices"][0]["fail"] = {"nvmlDeviceGetComputeRunningProcesses": "mismatch"}
    g = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))["gpus"][0]
    assert g["processes"][0]["used_bytes"] == 1024**3
    assert "errors" not in g


# --- failure modes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "code", "words"),
    [
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "no_driver", "libnvidia-ml.so.1"),
        ("oserror", "no_driver", "no NVIDIA driver"),
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver_not_loaded", "kernel driver is not loaded"),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "driver_mismatch", "without a reboot"),
        ("mismatch", "library_mismatch", "do not match"),
        (pynvml.NVML_ERROR_NO_PERMISSION, "no_permission", "/dev/nvidia"),
        (pynvml.NVML_ERROR_UNKNOWN, "nvml_error", "Unknown Error"),
    ],
)
def test_init_failures_become_reasons(tmp_path, failure, code, words):
    spec = variant(h200_spec(), fail={"nvmlInit": failure})
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert out["nvml"]["available"] is False
    assert out["nvml"]["code"] == code
    assert words in out["nvml"]["reason"]
    assert out["nvml"]["reason_zh"]
    assert out["gpus"] == []


def test_mismatch_error_is_not_an_nvml_error():
    # the reason it must be caught on its own
    assert not issubclass(pynvml.NVMLLibraryMismatchError, pynvml.NVMLError)


def test_count_failure_after_init(tmp_path):
    spec = variant(h200_spec(), fail={"nvmlDeviceGetCount": pynvml.NVML_ERROR_NO_PERMISSION})
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert out["nvml"]["available"] is False
    assert "could not count" in out["nvml"]["reason"]
    assert out["nvml"]["driver_version"] == "580.159.04"


def test_one_gpu_lost_others_reported(tmp_path):
    spec = hgx_spec(4)
    spec["devices"][2]["handle_error"] = pynvml.NVML_ERROR_GPU_IS_LOST
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert out["nvml"]["available"] is True
    lost = out["gpus"][2]
    assert "GPU is lost" in lost["error"] and "memory" not in lost
    assert "GPU 已丢失" in lost["error_zh"]
    assert [g["name"] for g in out["gpus"] if g["index"] != 2] == ["NVIDIA H200"] * 3
    assert {(p["a"], p["b"]) for p in out["topology"]} == {(0, 1), (0, 3), (1, 3)}


def test_gpu_lost_in_the_middle_of_reading(tmp_path):
    spec = hgx_spec(2)
    spec["devices"][1]["fail"] = {"nvmlDeviceGetMemoryInfo": pynvml.NVML_ERROR_GPU_IS_LOST}
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert "GPU is lost" in out["gpus"][1]["error"]
    assert out["gpus"][0]["memory"]["total"] == H200_TOTAL


def test_a_gpu_that_could_not_be_opened_is_reported_in_chinese_and_fits_the_schema(tmp_path):
    import json

    import jsonschema

    from oomwizard.envelope import schema_text
    from oomwizard.report.machine import _one_gpu

    spec = hgx_spec(2)
    spec["devices"][0]["handle_error"] = pynvml.NVML_ERROR_NO_PERMISSION
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert out["gpus"][0] == {"index": 0, "error": "no permission to open this GPU", "error_zh": "没有打开这块 GPU 的权限"}
    gpus = json.loads(schema_text("detect"))["properties"]["gpus"]
    jsonschema.validate(out["gpus"], gpus)
    assert "没有打开这块 GPU 的权限" in _one_gpu(out["gpus"][0], "zh")[0]
    assert "no permission to open this GPU" in _one_gpu(out["gpus"][0], "en")[0]


def test_unknown_error_on_one_device(tmp_path):
    spec = hgx_spec(2)
    spec["devices"][0]["handle_error"] = pynvml.NVML_ERROR_UNKNOWN
    out = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))
    assert "Xid" in out["gpus"][0]["error"]
    assert out["gpus"][1]["arch"] == "hopper"


def test_not_supported_fields_are_skipped_other_errors_recorded(tmp_path):
    spec = h200_spec()
    spec["devices"][0]["mig"] = None  # NotSupported on a consumer card
    spec["devices"][0]["fail"] = {"nvmlDeviceGetComputeMode": pynvml.NVML_ERROR_NO_PERMISSION}
    g = read_nvml(FakeNVML(spec), make_proc(tmp_path / "proc"))["gpus"][0]
    assert g["mig"] is None
    assert g["compute_mode"] is None
    assert g["errors"] == {"compute_mode": "Insufficient Permissions"}
    assert g["memory"]["version"] == "v2"


def test_missing_pynvml_module(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    out = read_nvml(None, make_proc(tmp_path / "proc"))
    assert out["nvml"]["code"] == "no_pynvml"
    assert "nvidia-ml-py" in out["nvml"]["reason"]


# --- CUDA_VISIBLE_DEVICES -----------------------------------------------------------------------


def _gpus(spec):
    out = []
    for i, d in enumerate(spec["devices"]):
        g = {"index": i, "name": d["name"], "uuid": d["uuid"]}
        if d.get("mig_devices"):
            g["mig"] = {"enabled": True, "devices": [{"uuid": m["uuid"]} for m in d["mig_devices"]]}
        out.append(g)
    return out


@pytest.mark.parametrize(
    ("value", "indices", "note_code"),
    [
        (None, [0, 1, 2, 3, 4, 5, 6, 7], None),
        ("0,1", [0, 1], None),
        ("3, 1", [3, 1], None),
        ("GPU-00000005", [5], None),
        ("GPU-00000002-bede-02a4-a788-770ae5c5a5b3,0", [2, 0], None),
        ("GPU-0000000", [], "cvd_invalid"),  # ambiguous prefix matches no single GPU
        ("0,9,1", [0], "cvd_invalid"),  # CUDA stops at the first bad entry
        ("-1", [], "cvd_invalid"),
        ("", [], "cvd_empty"),
        ("1,1", [1], "cvd_duplicate"),
        ("nvidia0", [], "cvd_invalid"),
    ],
)
def test_map_visible(value, indices, note_code):
    vis = map_visible(value, _gpus(hgx_spec(8)))
    assert vis["indices"] == indices
    codes = [n["code"] for n in vis["notes"]]
    assert codes == ([note_code] if note_code else [])


def test_map_visible_mig_ids():
    gpus = _gpus(mig_spec())
    vis = map_visible("MIG-66666666-7777-8888-9999-000000000000", gpus)
    assert vis["indices"] == [0] and vis["mig"] == ["MIG-66666666-7777-8888-9999-000000000000"]
    legacy = map_visible("MIG-GPU-00000000-bede-02a4-a788-770ae5c5a5b3/1/0", gpus)
    assert legacy["indices"] == [0] and legacy["mig"]


def test_map_visible_mixed_models_warns_about_order():
    gpus = _gpus(mixed_spec())
    assert [n["code"] for n in map_visible(None, gpus)["notes"]] == ["cuda_order"]
    assert map_visible(None, gpus, "PCI_BUS_ID")["notes"] == []


def test_nvidia_ml_py_answers_have_the_shapes_detection_reads() -> None:
    # The memory structs of the installed nvidia-ml-py (v1 and v2) satisfy the typed view, and a
    # stray answer (an unsupported field's None, a bool) is not taken for a number.
    from oomwizard.facts.nvml import MemoryInfo, as_int, as_int_pair

    v1 = pynvml.c_nvmlMemory_t()
    v1.total, v1.free, v1.used = 100, 40, 60
    assert isinstance(v1, MemoryInfo) and (v1.total, v1.used, v1.free) == (100, 60, 40)
    assert isinstance(pynvml.c_nvmlMemory_v2_t(), MemoryInfo)
    assert not isinstance(object(), MemoryInfo)
    assert as_int(7) == 7 and as_int(True) is None and as_int(None) is None
    assert as_int_pair([9, 0]) == (9, 0) and as_int_pair((1,)) is None and as_int_pair(None) is None
