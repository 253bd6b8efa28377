"""Where a model and a GPU come from: a local directory or config.json, the bundled tables, NVML.

The bundled tables are data (``oomwizard/data/plan_models.json``, ``plan_gpus.json``); a bundled
model is a config.json like any other and goes through the same reader.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..i18n import both
from ..text.units import MIB
from .arch import ModelDesc, describe
from .errors import PlanError
from .weights import file_weight_bytes

DATA = Path(__file__).resolve().parent.parent / "data"
MAX_CONFIG = 4 * MIB


@lru_cache(maxsize=1)
def bundled_models() -> dict[str, dict[str, Any]]:
    return json.loads((DATA / "plan_models.json").read_text("utf-8"))["models"]


@lru_cache(maxsize=1)
def bundled_gpus() -> list[dict[str, Any]]:
    return json.loads((DATA / "plan_gpus.json").read_text("utf-8"))["gpus"]


def _read_config(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_CONFIG:
            raise PlanError(*both("plan.sources.too_large", path=path))
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise PlanError(*both("plan.sources.unreadable", path=path, e=e)) from None
    if not isinstance(data, dict):
        raise PlanError(*both("plan.sources.not_an_object", path=path))
    return data


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "", name.lower())


def find_bundled(name: str) -> str | None:
    table = bundled_models()
    if name in table:
        return name
    key = _norm(name.rsplit("/", 1)[-1])
    hits = [k for k in table if _norm(k.rsplit("/", 1)[-1]) == key]
    return hits[0] if len(hits) == 1 else None


def load_model(spec: str) -> ModelDesc:
    """``spec``: a model directory, a config.json path, or a bundled model name."""
    path = Path(spec).expanduser()
    if path.is_dir():
        cfg_path = path / "config.json"
        if not cfg_path.is_file():
            raise PlanError(*both("plan.sources.no_config", path=path))
        desc = describe(_read_config(cfg_path), path.name, f"{cfg_path}")
        files = file_weight_bytes(path)
        if files:
            desc.weight_file_bytes, desc.weight_file_source = files
        return desc
    if path.is_file():
        desc = describe(_read_config(path), path.parent.name or path.name, str(path))
        files = file_weight_bytes(path.parent)
        if files:
            desc.weight_file_bytes, desc.weight_file_source = files
        return desc
    key = find_bundled(spec)
    if key is None:
        close = [k for k in bundled_models() if _norm(spec.rsplit("/", 1)[-1])[:6] in _norm(k)][:5]
        hint = f" Close bundled names: {', '.join(close)}." if close else ""
        raise PlanError(*both("plan.sources.unknown_model", spec=spec, hint=hint))
    return describe(bundled_models()[key], key, "bundled table (oomwizard/data/plan_models.json)")


def gpu_from_table(name: str) -> dict[str, Any]:
    want = _norm(name.replace("NVIDIA", "").replace("GeForce", ""))
    best = None
    for g in bundled_gpus():
        for alias in [g["name"], *g["aliases"]]:
            a = _norm(alias.replace("NVIDIA", "").replace("GeForce", ""))
            if a == want:
                return g
            if best is None and a and want.startswith(a) and len(a) >= 3:
                best = g
    if best is None:
        names = ", ".join(g["name"] for g in bundled_gpus())
        raise PlanError(*both("plan.sources.unknown_gpu", name=name, names=names))
    return best


def detect_gpu() -> tuple[str, int, int, int | None] | None:
    """``(name, total bytes, count, free bytes)`` of the first GPU NVML sees, or ``None``."""
    from ..facts.gpu import read_nvml

    info = read_nvml()
    gpus = [g for g in info.get("gpus", []) if g.get("name")]
    if not gpus:
        return None
    g = gpus[0]
    mem = g.get("memory") or {}
    total, free = mem.get("total"), mem.get("free")
    if not isinstance(total, int) or total <= 0:
        return None
    return str(g["name"]), total, len(gpus), free if isinstance(free, int) else None
