"""Which GPUs vLLM will use: ``CUDA_VISIBLE_DEVICES`` applied to NVML's list the way CUDA applies it.

NVML numbers GPUs in PCI order and ignores ``CUDA_VISIBLE_DEVICES``; :func:`map_visible` turns
that variable (indices, UUIDs, MIG ids) into the NVML GPUs vLLM will actually use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..i18n import both
from .notes import note


def map_visible(value: str | None, gpus: Sequence[dict[str, Any]], device_order: str | None = None, source: str = "environment") -> dict[str, Any]:
    """Apply ``CUDA_VISIBLE_DEVICES`` the way CUDA does: indices, ``GPU-`` UUID prefixes, ``MIG-``
    ids; the list stops at the first entry CUDA cannot match. Indices follow NVML's PCI order,
    which is CUDA's too when ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` or the GPUs are all alike."""
    notes: list[dict[str, str]] = []
    all_idx = [g["index"] for g in gpus]
    out: dict[str, Any] = {"var": "CUDA_VISIBLE_DEVICES", "value": value, "source": source, "indices": [], "mig": [], "notes": notes}
    names = {g.get("name") for g in gpus if g.get("name")}
    if len(names) > 1 and (device_order or "").upper() != "PCI_BUS_ID":
        notes.append(
            note(
                "cuda_order",
                *both("facts.gpu.cuda_order"),
                "warning",
            )
        )
    if value is None:
        out["indices"] = all_idx
        return out
    tokens = [t.strip() for t in value.split(",")]
    if value.strip() == "":
        notes.append(note("cvd_empty", *both("facts.gpu.cvd_empty"), "warning"))
        return out
    by_uuid = {str(g.get("uuid") or "").lower(): g["index"] for g in gpus if g.get("uuid")}
    mig_by_uuid: dict[str, int] = {}
    for g in gpus:
        for m in (g.get("mig") or {}).get("devices") or []:
            if m.get("uuid"):
                mig_by_uuid[str(m["uuid"]).lower()] = g["index"]
    for pos, tok in enumerate(tokens):
        hit = _match_token(tok, len(gpus), by_uuid, mig_by_uuid)
        if hit is None:
            rest = ",".join(tokens[pos:])
            notes.append(
                note(
                    "cvd_invalid",
                    *both("facts.gpu.cvd_invalid", tok=tok, rest=rest),
                    "warning",
                )
            )
            break
        index, mig = hit
        if mig:
            out["mig"].append(mig)
        if index in out["indices"] and not mig:
            notes.append(note("cvd_duplicate", *both("facts.gpu.cvd_duplicate", index=index), "warning"))
            continue
        if index not in out["indices"]:
            out["indices"].append(index)
    return out


def _match_token(tok: str, count: int, by_uuid: dict[str, int], mig_by_uuid: dict[str, int]) -> tuple[int, str | None] | None:
    low = tok.lower()
    if tok.isdigit():
        i = int(tok)
        return (i, None) if i < count else None
    if low.startswith("mig-"):
        if low in mig_by_uuid:
            return mig_by_uuid[low], tok
        if low.startswith("mig-gpu-"):  # legacy MIG-GPU-<uuid>/<gi>/<ci>
            parent = low[4:].split("/", 1)[0]
            if parent in by_uuid:
                return by_uuid[parent], tok
        return None
    if low.startswith("gpu-"):
        hits = [i for u, i in by_uuid.items() if u.startswith(low)]
        return (hits[0], None) if len(hits) == 1 else None
    return None
