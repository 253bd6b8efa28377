"""Property-based tests for the loaders of files that others wrote: the knowledge base (YAML trees
and leaves, which ``OOMWIZARD_KB`` can point anywhere), a saved machine report (``--machine``) and
another environment's ``pyvenv.cfg``, ``METADATA`` and ``torch/version.py``.

Whatever the content, each gives a result or its documented error, never another exception; a
knowledge-base problem names its file, and the line wherever the file could be parsed; a machine
report that loads yields no impossible value.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from oomwizard.facts import metadata_probe as mp
from oomwizard.facts.envfiles import read_env
from oomwizard.facts.saved import MAX_BYTES, ReportError, load_report
from oomwizard.kb.loader import load_kb
from oomwizard.kb.yamlsrc import load_yaml

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT / "tests" / "kb_fixture"
DEMO_MACHINE = json.loads((ROOT / "oomwizard" / "demo" / "machine.json").read_text())
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["", "en", "zh", "sampler-warmup", "<script>", "\x1b]0;t\x07"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                      max_leaves=20)


@contextmanager
def kb_copy() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "kb"
        shutil.copytree(KB, root)
        yield root


def _kb_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "decision_trees").rglob("*.yaml"))


def _problems_are_located(root: Path, damaged: Path) -> None:
    _, problems = load_kb(root, strict=False)
    rel = str(damaged.relative_to(root))
    for p in problems:
        assert p.file, p
    mine = [p for p in problems if p.file == rel]
    assert all(p.line for p in mine if not p.message.startswith("cannot read")), mine


@SETTINGS
@given(st.data(), values)
def test_a_value_replaced_anywhere_in_a_kb_file_is_a_located_problem_or_fine(data: st.DataObject, value: object) -> None:
    """One value of a real tree or leaf file replaced by any YAML value."""
    with kb_copy() as root:
        target = data.draw(st.sampled_from(_kb_files(root)))
        doc = yaml.safe_load(target.read_text(encoding="utf-8"))
        path: list[object] = []
        node = doc
        while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
            key = data.draw(st.sampled_from(sorted(node, key=str) if isinstance(node, dict) else range(len(node))))
            path.append(key)
            node = node[key]  # type: ignore[index]
        if not path:
            doc = value
        else:
            parent = doc
            for k in path[:-1]:
                parent = parent[k]  # type: ignore[index]
            parent[path[-1]] = value  # type: ignore[index]
        target.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
        _problems_are_located(root, target)


@SETTINGS
@given(st.data())
def test_lines_deleted_or_repeated_in_a_kb_file_are_located_problems_or_fine(data: st.DataObject) -> None:
    with kb_copy() as root:
        target = data.draw(st.sampled_from(_kb_files(root)))
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        assume(lines)
        i = data.draw(st.integers(0, len(lines) - 1))
        n = data.draw(st.integers(1, 5))
        if data.draw(st.booleans()):
            del lines[i : i + n]
        else:
            lines[i:i] = lines[i : i + n]
        target.write_text("".join(lines), encoding="utf-8")
        _problems_are_located(root, target)


yaml_text = st.lists(st.one_of(st.sampled_from(["\n", "  ", "- ", ": ", "&a ", "*a ", "!!python/object:os.system ",
                                                "{", "}", "[", "]", "'", '"', "#", "|", ">", "---\n", "\t", "?",
                                                "id: x\n", "en: ", "zh: ", "\x00", "\ufeff", "\x1b[2J"]),
                               st.text(max_size=6)), max_size=80).map("".join)


@SETTINGS
@given(yaml_text)
def test_the_yaml_reader_gives_a_value_or_a_located_problem(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "x.yaml"
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        problems: list = []
        load_yaml(f, "x.yaml", problems)
        for p in problems:
            assert p.file == "x.yaml"
            assert p.line or p.message.startswith(("YAML syntax", "cannot read")), p


# --- --machine -------------------------------------------------------------------------------------


def _load(data: bytes) -> object:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "machine.json"
        f.write_bytes(data)
        try:
            return load_report(str(f))
        except ReportError as e:
            assert str(f) in str(e)
            return e


def _sizes_are_possible(report: object) -> None:
    if isinstance(report, ReportError):
        return
    for fact in report.facts:  # type: ignore[attr-defined]
        if fact.name.endswith("_bytes") and isinstance(fact.value, (int, float)):
            assert 0 <= fact.value <= MAX_BYTES, fact


@SETTINGS
@given(st.data(), values)
def test_a_saved_report_with_any_field_replaced_loads_or_names_its_problem(data: st.DataObject, value: object) -> None:
    doc = json.loads(json.dumps(DEMO_MACHINE))
    node = doc
    path: list[object] = []
    while isinstance(node, (dict, list)) and node:
        key = data.draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
        path.append(key)
        if not data.draw(st.booleans()):
            break
        node = node[key]
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if path:
        parent[path[-1]] = value
    try:
        raw = json.dumps(doc, allow_nan=True).encode()
    except (ValueError, RecursionError):
        return
    _sizes_are_possible(_load(raw))


@SETTINGS
@given(st.one_of(st.binary(max_size=300), values.map(lambda v: json.dumps(v).encode()),
                 st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_any_bytes_as_a_saved_report_load_or_name_their_problem(raw: bytes) -> None:
    _sizes_are_possible(_load(raw))


def test_a_deeply_nested_saved_report_is_a_problem() -> None:
    assert isinstance(_load(b"[" * 100_000 + b"]" * 100_000), ReportError)


# --- another environment's files -----------------------------------------------------------------

file_text = st.one_of(
    st.binary(max_size=400),
    st.lists(st.one_of(st.sampled_from(["Version: ", "Name: vllm\n", "\n", "version = ", "home = ", "=", "\x00",
                                        "__version__ = '", "'", "cuda: Optional[str] = ", "\r\n", "\x1b]0;x\x07"]),
                       st.text(max_size=10)), max_size=40).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass")),
)


@SETTINGS
@given(cfg=file_text, metadata=file_text, torch_version=file_text)
def test_an_environment_is_read_from_any_files_without_raising(cfg: bytes, metadata: bytes, torch_version: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        venv = Path(d) / "venv"
        site = venv / "lib" / f"python{XY}" / "site-packages"
        (site / "vllm-0.11.0.dist-info").mkdir(parents=True)
        (site / "vllm-0.11.0.dist-info" / "METADATA").write_bytes(metadata)
        (site / "torch").mkdir()
        (site / "torch" / "version.py").write_bytes(torch_version)
        (venv / "pyvenv.cfg").write_bytes(cfg)
        (venv / "bin").mkdir()
        python = venv / "bin" / "python"
        python.write_text("#!/bin/sh\nexit 1\n")
        assert isinstance(mp.read_cfg(str(venv / "pyvenv.cfg")), dict)
        data, why = read_env(str(python), ["vllm", "torch"])
        assert (data is None) != (why is None)
        if data is None:
            return
        for found in data["packages"].values():
            assert isinstance(found["version"], str)
        header = metadata.split(b"\n\n")[0].decode("utf-8", "replace").splitlines()
        first = next((ln for ln in header if ln.startswith("Version:")), None)
        if first is not None and "vllm" in data["packages"] and data["packages"]["vllm"]["file"].endswith("METADATA"):
            assert data["packages"]["vllm"]["version"] == first.split(":", 1)[1].strip()
