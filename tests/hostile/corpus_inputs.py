"""The hostile inputs, generated into one folder: damaged and strange logs, saved machine reports
with every kind of wrong value, knowledge bases broken one way each, and a fake ``/proc`` whose
servers carry secrets, escapes and an interpreter that records whether anything ran it.

Everything is made from the demo log and the demo machine report, so the expected outcome of a
case follows from how its input was made (the demo holds a sampler-warmup OOM).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

from fake_proc import make_proc
from plant import EVIL_NAME, OSC0, PAYLOAD, fake_proc, hostile_log, hostile_proc, minimal_log, secrets_log

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEMO_LOG = ROOT / "oomwizard" / "demo" / "vllm-serve.log"
DEMO_MACHINE = ROOT / "oomwizard" / "demo" / "machine.json"
BASE_KB = ROOT / "tests" / "kb_broken" / "base"
MIB = 1 << 20

# name -> (bytes, holds the demo's OOM so that it can be found)
Content = dict[str, tuple[bytes, bool]]


def _nested_jsonl(kind: str, depth: int) -> bytes:
    if kind == "array":
        return ('{"log": "x", "a": ' + "[" * depth + "]" * depth + "}\n").encode()
    if kind == "log":
        return ('{"log": ' * depth + '"x"' + "}" * depth + "\n").encode()
    return ('{"log": "x", "a": ' + '{"a": ' * depth + "1" + "}" * depth + "}\n").encode()


def content_inputs(big: bool = False) -> Content:
    """The inputs of the content table; ``big`` adds the 100 MiB ones."""
    rnd = random.Random(7)
    demo = DEMO_LOG.read_bytes()
    demo_text = demo.decode()
    gz = gzip.compress(demo)
    oom_at = demo.index(b"CUDA out of memory")
    out: Content = {
        "rand_1k": (rnd.randbytes(1024), False),
        "rand_1m": (rnd.randbytes(MIB), False),
        "rand_10m": (rnd.randbytes(10 * MIB), False),
        "rand_then_demo": (rnd.randbytes(MIB) + b"\n" + demo, True),
        "nul_only_1m": (b"\0" * MIB, False),
        "demo_nul_every_37": (b"".join(demo[i:i + 37] + b"\0" for i in range(0, len(demo), 37)), True),
        "demo_nulprefix": (b"\0" * 4096 + demo, True),
        "line_2m": (b"x" * (2 * MIB), False),
        "line_2m_then_demo": (b"x" * (2 * MIB) + b"\n" + demo, True),
        "demo_then_line_2m": (demo + b"x" * (2 * MIB), True),
        "badutf8_in_oom": (demo[:oom_at + 4] + b"\xff\xfe\xc3" + demo[oom_at + 4:], True),
        "badutf8_fffe_start": (b"\xff\xfe" + demo, False),
        "utf16le_bom": (demo_text.encode("utf-16"), True),
        "utf16be_bom": (b"\xfe\xff" + demo_text.encode("utf-16-be"), True),
        "utf16le_nobom": (demo_text.encode("utf-16-le"), True),  # called binary; its ASCII still read
        "utf8_bom": (b"\xef\xbb\xbf" + demo, True),
        "valid.gz": (gz, True),
        "trunc50.gz": (gz[: len(gz) // 2], False),
        "trunc95.gz": (gzip.compress(demo + demo[:200], 9)[: -40], True),
        "corrupt.gz": (bytes(b ^ 0x5A if 40 <= i < 80 else b for i, b in enumerate(gz)), False),
        "gzheader_only.gz": (gz[:10], False),
        "gz_magic_only.gz": (b"\x1f\x8b", False),
        "gz_then_garbage.gz": (gz + rnd.randbytes(5000), True),
        "empty": (b"", False),
        "newline_only": (b"\n" * 1000, False),
        "docker.jsonl": ("".join(json.dumps({"log": ln + "\n", "stream": "stderr", "time": "2025-10-14T09:12:07Z"}) + "\n"
                                 for ln in demo_text.splitlines()).encode(), True),
        "config_nested_10000": ((
            "INFO 10-14 09:12:27 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
            "compilation_config=" + '{"a": ' * 10000 + "1" + "}" * 10000 + ", seed=0\n").encode() + demo, True),
    }
    for kind in ("array", "object"):
        for depth in (500, 1500, 5000, 15000):
            out[f"jsonl_{kind}_{depth}"] = (_nested_jsonl(kind, depth) + demo, True)
    out["jsonl_log_in_log_3000"] = (_nested_jsonl("log", 3000) + demo, True)
    if big:
        out["rand_100m"] = (rnd.randbytes(100 * MIB), False)
        out["line_100m"] = (b"y" * (100 * MIB), False)
        out["line_100m_then_demo"] = (b"y" * (100 * MIB) + b"\n" + demo, True)
    return out


def gzip_bomb(path: Path, member: bytes, count: int, tail: bytes = b"") -> Path:
    """``count`` gzip members of ``member`` (then ``tail``), as ``cat a.gz b.gz`` makes them."""
    one = gzip.compress(member, 1)
    with path.open("wb") as f:
        for _ in range(count):
            f.write(one)
        if tail:
            f.write(gzip.compress(tail))
    return path


# --- saved machine reports ----------------------------------------------------------------------


def _machine_variants() -> dict[str, Any]:
    ok = json.loads(DEMO_MACHINE.read_text())

    def with_gpu(**changes: Any) -> dict[str, Any]:
        d = json.loads(json.dumps(ok))
        for g in d.get("gpus") or []:
            mem = g.setdefault("memory", {})
            for k, v in changes.items():
                if k.startswith("mem_"):
                    mem[k[4:]] = v
                else:
                    g[k] = v
        return d

    def with_top(**changes: Any) -> dict[str, Any]:
        d = json.loads(json.dumps(ok))
        d.update(changes)
        return d

    return {
        "ok.json": ok, "array.json": [ok], "null.json": None, "number.json": 5, "string.json": "x", "no_keys.json": {},
        "gpus_null.json": with_top(gpus=None), "gpus_string.json": with_top(gpus="lots"), "gpus_ints.json": with_top(gpus=[1, 2]),
        "gpu_count_1000.json": with_top(gpus=(ok.get("gpus") or [{}]) * 1000),
        "gpu_index_neg.json": with_gpu(index=-3),
        "mem_negative.json": with_gpu(mem_total=-150754820096), "mem_zero.json": with_gpu(mem_total=0),
        "mem_huge_int.json": with_gpu(mem_total=10**30), "mem_float_huge.json": with_gpu(mem_total=1e300),
        "mem_float_frac.json": with_gpu(mem_total=1.5), "mem_string.json": with_gpu(mem_total="80GB"),
        "mem_bool.json": with_gpu(mem_total=True), "mem_list.json": with_gpu(mem_total=[1, 2]),
        "env_list.json": with_top(env=["A=1"]), "env_nonstr.json": with_top(env={"PYTORCH_CUDA_ALLOC_CONF": 5}),
        "escape_name.json": with_gpu(name="H200" + PAYLOAD),
        "facts_injected.json": with_top(facts={"gpu_mem_total_bytes": {"value": 1}}),
        "packages_list.json": with_top(packages=["vllm"]),
        "processes_bad.json": with_top(processes={"servers": "x", "leftovers": 5}),
        "schema_future.json": with_top(schema="oomwizard/machine/v99"), "schema_str.json": with_top(schema=5),
        "vllm_version_bad.json": with_top(packages={**(ok.get("packages") or {}), "versions": {"vllm": "banana" + PAYLOAD}}),
        "vllm_version_huge.json": with_top(packages={**(ok.get("packages") or {}), "versions": {"vllm": "9" * 5000}}),
    }


def machine_inputs(d: Path) -> dict[str, Path]:
    """name -> path; the raw ones are bytes no JSON writer makes."""
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, data in _machine_variants().items():
        (d / name).write_text(json.dumps(data))
        out[name] = d / name
    ok = (d / "ok.json").read_text()
    raw = {
        "badutf8.json": ok.encode()[:200] + b"\xff" + ok.encode()[200:],
        "binary.json": random.Random(3).randbytes(2048),
        "deep_nested.json": b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        "deep_nested_inside.json": ok.encode()[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "empty.json": b"",
        "mem_4400digits.json": ok.replace('"total": ', '"total": ' + "9" * 4400 + ", \"was\": ", 1).encode(),
        "mem_inf.json": ok.replace('"total": ', '"total": Infinity, "was": ', 1).encode(),
        "trailing_comma.json": ok.encode()[:-1] + b",}",
        "truncated.json": ok.encode()[: len(ok) // 2],
        "utf16.json": ok.encode("utf-16"),
        "spaces_20m.json": b" " * (20 * MIB),
        "log_as_machine.log": DEMO_LOG.read_bytes(),
        "gz_machine.json.gz": gzip.compress(ok.encode()),
    }
    for name, data in raw.items():
        (d / name).write_bytes(data)
        out[name] = d / name
    os.mkfifo(d / "fifo_nowriter.json")
    out["fifo_nowriter.json"] = d / "fifo_nowriter.json"
    (d / "folder").mkdir()
    out["folder"] = d / "folder"
    return out


# --- broken knowledge bases ---------------------------------------------------------------------

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def _damage(root: Path, name: str) -> None:
    leaf = root / "decision_trees" / "leaves" / "alpha-oom.yaml"
    tree = root / "decision_trees" / "tree.yaml"
    text = leaf.read_text(encoding="utf-8")
    if name == "unclosed_quote":
        leaf.write_text(text.replace(":", ': "', 1), encoding="utf-8")
    elif name == "tab":
        leaf.write_text("\t" + text, encoding="utf-8")
    elif name == "alias_bomb":
        leaf.write_text(text + "x_bomb:\n" + "".join("  " + ln + "\n" for ln in ALIAS_BOMB.splitlines()), encoding="utf-8")
    elif name == "deep_list":
        leaf.write_text(text + "x_deep: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    elif name == "python_tag":
        leaf.write_text("!!python/object/apply:os.system ['touch /tmp/oomwizard-kb-ran']\n" + text, encoding="utf-8")
    elif name == "binary_leaf":
        leaf.write_bytes(b"\xff\xfe\x00" + random.Random(5).randbytes(500))
    elif name == "empty_leaf":
        leaf.write_text("", encoding="utf-8")
    elif name == "cycle":
        tree.write_text(tree.read_text(encoding="utf-8").replace("next: alpha-oom", "next: symptom", 1), encoding="utf-8")
    elif name == "no_tree":
        tree.unlink()
    elif name == "escape_title":
        leaf.write_text(text.replace("en: ", "en: \x1b]0;KBPWNED\x07\x1b[2J", 1), encoding="utf-8")
    elif name == "bad_indent_tree":
        tree.write_text(tree.read_text(encoding="utf-8").replace("  vllm_version:", " vllm_version:", 1), encoding="utf-8")
    elif name == "fixes_a_string":
        leaf.write_text(text.replace("fixes:\n", "fixes: lower it\nx_old_fixes:\n", 1), encoding="utf-8")
    elif name == "title_en_number":
        leaf.write_text(text.replace("  en: The alpha path does not fit", "  en: 12345", 1), encoding="utf-8")
    elif name == "unknown_scenario":
        leaf.write_text(text.replace("scenarios: [alpha-oom]", "scenarios: [no-such-scenario]", 1), encoding="utf-8")
    elif name == "missing_zh":
        leaf.write_text(text.replace("  zh: alpha 路径放不下\n", "", 1), encoding="utf-8")
    elif name == "route_to_missing":
        tree.write_text(tree.read_text(encoding="utf-8").replace("next: beta-oom", "next: no_such_node", 1), encoding="utf-8")
    elif name == "bad_condition":
        tree.write_text(tree.read_text(encoding="utf-8").replace('diagnosis == "alpha-oom"', 'diagnosis == [ and', 1), encoding="utf-8")
    elif name == "unknown_fact":
        tree.write_text(tree.read_text(encoding="utf-8").replace('diagnosis == "alpha-oom"', 'no_such_fact == "x"', 1), encoding="utf-8")
    elif name == "bad_version_range":
        leaf.write_text(text.replace('versions: ">=0.8"', 'versions: ">=banana"', 1), encoding="utf-8")
    elif name == "duplicate_key":
        leaf.write_text(text.replace("scenarios: [alpha-oom]", "scenarios: [alpha-oom]\nid: alpha-oom", 1), encoding="utf-8")
    elif name == "unknown_field":
        leaf.write_text(text + "bogus_field: 1\n", encoding="utf-8")
    elif name == "leaf_deleted":
        leaf.unlink()
    elif name == "string_10m":
        leaf.write_text(text + "x_pad: " + "p" * (10 * MIB) + "\n", encoding="utf-8")
    else:
        raise ValueError(name)


KB_DAMAGE = ("unclosed_quote", "tab", "alias_bomb", "deep_list", "python_tag", "binary_leaf", "empty_leaf", "cycle",
             "no_tree", "escape_title", "string_10m", "bad_indent_tree", "fixes_a_string", "title_en_number",
             "unknown_scenario", "missing_zh", "route_to_missing", "bad_condition", "unknown_fact", "bad_version_range",
             "duplicate_key", "unknown_field", "leaf_deleted")


def broken_kbs(d: Path) -> dict[str, Path]:
    out = {}
    for name in KB_DAMAGE:
        root = d / name
        shutil.copytree(BASE_KB, root)
        _damage(root, name)
        out[name] = root
    return out


# --- processes ----------------------------------------------------------------------------------


def exec_trap(d: Path) -> tuple[Path, Path]:
    """A fake ``/proc`` with servers whose interpreter, ``vllm`` script and PATH all lead to a
    program that creates ``marker`` when run; returns (proc root, marker)."""
    marker = d / "a-program-ran"
    bindir = d / "evilbin"
    bindir.mkdir(parents=True)
    trap = bindir / "python3"
    trap.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 0\n")
    trap.chmod(0o755)
    script = bindir / "vllm"
    script.write_text(f"#!{trap}\n")
    script.chmod(0o755)
    env = {"PATH": str(bindir), "VIRTUAL_ENV": str(d)}
    root = make_proc(d / "proc", [
        {"pid": 4100, "argv": [str(trap), "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], "environ": env},
        {"pid": 4200, "argv": ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], "environ": env},
        {"pid": 4300, "argv": [str(script), "serve", "m"], "environ": env},
        {"pid": 4400, "argv": ["vllm", "serve", "m"], "environ": env},
    ])
    return root, marker


def planted(d: Path) -> dict[str, Path]:
    """The log and process inputs of the escape and secret cases."""
    d.mkdir(parents=True, exist_ok=True)
    empty = d / ("empty" + OSC0 + ".log")
    empty.write_bytes(b"")
    return {
        "hostile_log": hostile_log(d / EVIL_NAME),
        "hostile_proc": hostile_proc(d / "hp"),
        "secrets_log": secrets_log(d / "secrets.log"),
        "secrets_proc": fake_proc(d / "sp"),
        "minimal_log": minimal_log(d),
        "empty_evil": empty,
    }
