"""Two real H200s joined by NVLink: the saved detection agrees with nvidia-smi's topology and list."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from oomwizard.facts.machine import MachineReport

HERE = Path(__file__).parent / "fixtures" / "machine" / "h200x2"
MIB = 1024**2


def load(name: str) -> MachineReport:
    return MachineReport.from_json(json.loads((HERE / name).read_text()))


def smi_links() -> dict[tuple[int, int], str]:
    """``(a, b) -> NV18 / PHB / …`` from the `nvidia-smi topo -m` matrix."""
    rows = {}
    for line in (HERE / "topo.txt").read_text().splitlines():
        m = re.match(r"^GPU(\d+)\t(.*)$", line)
        if m:
            rows[int(m.group(1))] = [c.strip() for c in m.group(2).split("\t")]
    return {(a, b): cells[b] for a, cells in rows.items() for b in rows if b != a}


def test_gpus_match_nvidia_smi_query() -> None:
    r = load("detect.json")
    with (HERE / "query.csv").open() as fh:
        rows = list(csv.DictReader(fh, skipinitialspace=True))
    assert len(r.data["gpus"]) == len(rows) == 2
    for g, row in zip(r.data["gpus"], rows, strict=True):
        assert g["index"] == int(row["index"])
        assert g["name"] == row["name"]
        assert g["pci_bus_id"] == row["pci.bus_id"]
        assert g["cc"] == row["compute_cap"]
        assert round(g["memory"]["total"] / MIB) == int(row["memory.total [MiB]"].split()[0])
        assert round(g["memory"]["free"] / MIB) == int(row["memory.free [MiB]"].split()[0])


def test_the_nvlink_between_the_two_matches_topo() -> None:
    r = load("detect.json")
    links = smi_links()
    for t in r.data["topology"]:
        assert t["link"] == links[(t["a"], t["b"])] == "NV18"
        assert t["nvlink"] is True
    assert r.facts.value("gpu_link") == "nvlink"
    assert r.facts.value("gpu_count") == 2


def test_cuda_visible_devices_maps_to_the_pci_order_index() -> None:
    r = load("detect-cvd1.json")
    assert r.data["visible"]["value"] == "1"
    assert r.data["visible"]["indices"] == [1]
    assert r.facts.value("gpu_count") == 1
