"""Write the JSON Schemas of every command's output to ``oomwizard/schemas/<kind>.v1.json``.

The shapes shared between kinds (a leaf, a fact, a bilingual text) are written once here and
copied into each file, so every shipped schema stands alone: a consumer validates one file
without a registry. ``tests/test_schemas.py`` checks the shipped files equal this output and
validates real outputs against them. Run ``python scripts/gen_schemas.py`` after a change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "oomwizard" / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
NUM: dict[str, Any] = {"type": "number"}
BOOL: dict[str, Any] = {"type": "boolean"}
ANY: dict[str, Any] = {}  # a fact's value: any JSON value, its type given by the fact catalog


def nullable(s: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in s or "enum" in s:
        return {"anyOf": [s, {"type": "null"}]}
    return {**s, "type": [s["type"], "null"]}


def arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def obj(required: dict[str, Any], optional: dict[str, Any] | None = None, *, closed: bool = True) -> dict[str, Any]:
    """An object with these keys; ``closed`` refuses keys not named (open where data varies by host)."""
    out: dict[str, Any] = {"type": "object", "required": list(required), "properties": {**required, **(optional or {})}}
    if closed:
        out["additionalProperties"] = False
    return out


def str_map(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def enum(*values: str) -> dict[str, Any]:
    return {"enum": list(values)}


COSTS = ("none", "low", "medium", "high", "upgrade")
EVIDENCE = ("verified", "code", "documented", "untested")
FACT_KINDS = ("derived", "default", "machine", "process", "log", "answered")
NOTE_LEVELS = ("info", "warning", "problem")
CHECK_STATUS = ("pass", "fail", "unproven", "manual", "unknown")

DEFS: dict[str, dict[str, Any]] = {
    "text": obj({"en": STR, "zh": STR}),
    "line": obj({"file": STR, "line": INT, "text": STR}),
    "fact": obj({"value": ANY, "source": STR, "kind": enum(*FACT_KINDS)}, {"detail": STR, "file": STR, "line": INT}),
    "facts": str_map(ref("fact")),
    "note": obj({"code": STR, "level": enum(*NOTE_LEVELS), "en": STR, "zh": STR}),
    "value": obj({"name": STR, "value": nullable(STR), "why": nullable(ref("text"))}),
    "variant": obj({
        "applies_to": STR, "command": STR, "values": arr(ref("value")), "missing": arr(STR),
        "note": nullable(ref("text")), "assumed": nullable(STR),
    }),
    "fix": obj({
        "number": {"type": "integer", "minimum": 1}, "id": STR, "title": ref("text"), "cost": enum(*COSTS),
        "cost_note": ref("text"), "evidence": enum(*EVIDENCE), "available": BOOL, "version": nullable(STR),
        "why": nullable(ref("text")), "sources": arr(STR), "variants": {**arr(ref("variant")), "minItems": 1},
    }),
    "check": obj({
        "number": {"type": "integer", "minimum": 1}, "en": STR, "zh": STR,
        "auto": nullable({**obj({}, {"log_present": STR, "log_absent": STR, "fact": STR}), "minProperties": 1}),
    }),
    "step": obj({"question": STR, "answer": STR, "label": STR, "source": STR,
                 "how": enum("answered", "accepted", "auto", "default")}),
    "leaf_body": {
        "required": ["id", "scenarios", "title", "conclusion", "environment", "root_cause", "versions", "evidence",
                     "fixes", "checklist", "caveats", "sources", "path"],
        "properties": {
            "id": STR, "scenarios": arr(STR), "title": ref("text"), "conclusion": ref("text"),
            "environment": ref("text"),
            "root_cause": obj({"status": enum("confirmed", "probable"), "en": STR, "zh": STR}),
            "versions": STR, "evidence": enum(*EVIDENCE), "fixes": arr(ref("fix")), "checklist": arr(ref("check")),
            "caveats": arr(ref("text")), "sources": arr(STR), "path": nullable(arr(ref("step"))),
        },
    },
}
DEFS["leaf"] = {"type": "object", **DEFS["leaf_body"], "additionalProperties": False}

ENVELOPE = {
    "schema": None,  # filled per kind
    "tool": obj({"name": {"const": "oomwizard"}, "version": STR}),
}

OOM = obj(
    {"file": STR, "line": INT},
    {
        "rank": INT, "process": STR, "platform": enum("cuda", "rocm", "xpu"), "requested": INT, "gpu_index": INT,
        "total": INT, "free": INT, "this_process": INT, "other_processes": INT,
        "processes": arr({"type": "array", "prefixItems": [INT, INT], "minItems": 2, "maxItems": 2}),
        "allocated": INT, "reserved_unallocated": INT, "private_pools": INT, "allowed": INT, "hint_var": STR,
    },
)

ALLOCATOR = obj(
    {
        "var": nullable(STR), "value": nullable(STR), "fields": str_map({"type": ["boolean", "integer", "number", "string"]}),
        "certain": BOOL, "certainty": STR, "torch_reads": arr(STR), "basis": ref("text"),
        "ignored": arr(obj({"var": STR, "value": STR, "en": STR, "zh": STR})),
        "vllm_reads": obj({"var": nullable(STR), "value": nullable(STR)}), "notes": arr(ref("note")),
    },
)

PACKAGES = obj(
    {"versions": str_map(nullable(STR))},
    {
        "read": STR,        "python": STR, "path": STR, "roles": arr(STR), "python_version": nullable(STR), "venv": nullable(STR),
        "distributions": str_map(STR), "locations": str_map(STR), "files": str_map(STR),
        "torch_cuda": nullable(STR), "torch_hip": nullable(STR), "torch_version_file": STR, "error": nullable(STR),
    },
    closed=False,
)

_GPU_READ = obj(
    {
        "index": INT, "name": STR, "memory": obj({"total": INT}, {"reserved": INT, "used": INT, "free": INT, "version": STR},
                                                 closed=False),
    },
    {
        "uuid": nullable(STR), "pci_bus_id": nullable(STR), "cc": nullable(STR), "sm": nullable(STR),
        "arch": nullable(STR), "compute_mode": nullable(STR),
        "mig": nullable(obj({"enabled": BOOL}, {"pending": BOOL, "devices": arr({"type": "object"})}, closed=False)),
        "processes": arr(obj({"pid": INT}, {"used_bytes": nullable(INT)}, closed=False)),
        "nvlinks_active": nullable(INT),
    },
    closed=False,
)
# A GPU NVML could not open (lost, no permission) has its index and why, in English and Chinese.
_GPU_ERROR = obj({"index": INT, "error": STR}, {"error_zh": STR}, closed=False)
GPU: dict[str, Any] = {"anyOf": [_GPU_READ, _GPU_ERROR]}

SERVER = obj(
    {"pid": INT, "argv": arr(STR)},
    {"allocator": ALLOCATOR, "env": str_map(STR), "settings": {"type": "object"}, "args": {"type": "object"},
     "children": arr(obj({"pid": INT}, closed=False)), "command": STR,
     # why the environment or --config could not be read: English, and the same in Chinese
     "env_error": nullable(STR), "env_error_zh": STR,
     "config_file": obj({"path": STR}, {"error": nullable(STR), "error_zh": STR, "args": nullable({"type": "object"})},
                        closed=False)},
    closed=False,
)

BODIES: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    # kind: (title, properties, required)
    "diagnose": (
        "`oomwizard diagnose --format json`: what the logs show and, when a failure matched, the fix",
        {
            "matches": arr(obj({"scenario": STR, "score": {"type": "number", "minimum": 0, "maximum": 1},
                                "evidence": arr(ref("line")), "reasons": arr(ref("text"))})),
            "facts": ref("facts"), "inputs": arr(STR), "warnings": arr(STR), "oom_messages": arr(OOM),
            "confidence": {"type": "number", "minimum": 0, "maximum": 1}, "missing": arr(STR),
            "leaf": nullable(ref("leaf")),
        },
        [],
    ),
    "show": ("`oomwizard show ID --format json`: one leaf", {}, []),
    "verify": (
        "`oomwizard verify ID --format json`: the leaf's checklist ticked against a new log",
        {
            "leaf": STR, "ready": BOOL, "ready_at": nullable(ref("line")), "proven": BOOL, "failed": BOOL,
            "inputs": arr(STR),
            "checks": arr(obj({
                "number": {"type": "integer", "minimum": 1}, "status": enum(*CHECK_STATUS), "en": STR, "zh": STR,
                "evidence": nullable(ref("line")), "reason": nullable(STR), "detail": nullable(STR),
            })),
        },
        [],
    ),
    "export": (
        "`oomwizard export --format json`: the whole knowledge base",
        {
            "start": STR,
            "scenarios": arr(ref("scenario")),
            "questions": arr(obj(
                {"id": STR, "fact": STR, "kind": enum("choice", "version"), "text": ref("text"),
                 "auto": arr(obj({"if": STR, "answer": STR}))},
                {"unknown": nullable(STR), "next": arr(ref("route")),
                 "choices": arr(obj({"id": STR, "label": ref("text"), "next": arr(ref("route"))}))},
            )),
            "leaves": arr(ref("leaf")),
        },
        [],
    ),
    "scenarios": (
        "`oomwizard scenarios --format json`: the scenario ids and their leaves",
        {"scenarios": arr(ref("scenario"))},
        [],
    ),
    "lint": (
        "`oomwizard lint --format json`: problems of the knowledge base",
        {"ok": BOOL, "problems": arr(obj({"file": STR, "line": nullable(INT), "message": STR,
                                          "severity": enum("error", "warning")}))},
        [],
    ),
    "detect": (
        "`oomwizard detect --format json`: this machine, as `--machine FILE` reads it back",
        {
            "detected_at": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"},
            "nvml": obj({"available": BOOL},
                        {"reason": nullable(STR), "reason_zh": nullable(STR), "code": STR, "driver_version": STR,
                         "cuda_driver_version": nullable(STR), "library_version": nullable(STR),
                         "memory_info": STR, "elapsed_s": NUM}, closed=False),
            "gpus": arr(GPU),
            "topology": arr(obj({"a": INT, "b": INT, "link": STR}, {"nvlink": BOOL, "pcie": nullable(STR)}, closed=False)),
            "visible": nullable(obj({"var": STR, "value": nullable(STR), "source": STR, "indices": arr(INT)},
                                    {"mig": {"type": "array"}, "notes": {"type": "array"}}, closed=False)),
            "packages": PACKAGES,
            "interpreters": arr(PACKAGES),
            "env": str_map(STR),
            "allocator": ALLOCATOR,
            "processes": obj({"servers": arr(SERVER), "leftovers": arr(obj({"pid": INT}, closed=False)),
                              "scanned": INT}, closed=False),
            "host": obj(
                {},
                {
                    "mem_total": nullable(INT), "mem_available": nullable(INT), "swap_total": nullable(INT),
                    "cgroup_mem_limit": nullable(INT), "cgroup_mem_usage": nullable(INT), "shm_total": nullable(INT),
                    "cpus": nullable(INT), "cpus_usable": nullable(INT), "kernel": nullable(STR), "os": nullable(STR),
                    "container": obj({"in_container": BOOL}, {"runtime": nullable(STR), "evidence": arr(STR)},
                                     closed=False),
                },
                closed=False,
            ),
            "notes": arr(ref("note")),
            "timings_ms": str_map(NUM),
            "facts": ref("facts"),
        },
        ["detected_at", "nvml", "gpus", "topology", "visible", "packages", "interpreters", "env", "allocator",
         "processes", "host", "notes", "facts"],
    ),
}

EXTRA_DEFS = {
    "scenario": obj({"id": STR, "title": ref("text"), "summary": ref("text"), "main_leaf": nullable(STR),
                     "leaves": arr(STR)}),
    "route": obj({"if": nullable(STR), "goto": STR}),
}

CLOSED = {"diagnose", "show", "verify", "export", "scenarios", "lint"}
"""Kinds whose top level names every key; ``detect`` stays open (hosts report more or less)."""


def _used(node: Any, defs: dict[str, Any], seen: set[str]) -> None:
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/$defs/"):
            name = r.rsplit("/", 1)[1]
            if name not in seen:
                seen.add(name)
                _used(defs[name], defs, seen)
        for v in node.values():
            _used(v, defs, seen)
    elif isinstance(node, list):
        for v in node:
            _used(v, defs, seen)


def build() -> dict[str, dict[str, Any]]:
    all_defs = {**DEFS, **EXTRA_DEFS}
    out: dict[str, dict[str, Any]] = {}
    for kind, (title, props, required) in BODIES.items():
        head = {**ENVELOPE, "schema": {"const": f"oomwizard/{kind}/v1"}}
        if kind == "show":
            props, required = all_defs["leaf_body"]["properties"], all_defs["leaf_body"]["required"]
        schema: dict[str, Any] = {
            "$schema": DRAFT,
            "$id": f"urn:oomwizard:schema:{kind}:v1",
            "title": title,
            "type": "object",
            "required": ["schema", "tool", *(required or list(props))],
            "properties": {**head, **props},
        }
        if kind in CLOSED:
            schema["additionalProperties"] = False
        seen: set[str] = set()
        _used(schema, all_defs, seen)
        if seen:
            schema["$defs"] = {name: all_defs[name] for name in sorted(seen)}
        out[kind] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    for kind, schema in build().items():
        (OUT / f"{kind}.v1.json").write_text(render(schema), encoding="utf-8")
        print(f"wrote {OUT / f'{kind}.v1.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
