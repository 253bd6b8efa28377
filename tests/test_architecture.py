"""The core never pulls in a UI toolkit, and the product never imports torch or vLLM.

``diagnose``, ``show``, ``lint`` and ``export`` must start instantly and run where Textual cannot
(no terminal, a CI job, a support kit); torch takes seconds to import and vLLM may not be installed
in the tool's environment at all. Checked in fresh interpreters, since ``sys.modules`` in the test
process is shared with every other test.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "oomwizard"
FORBIDDEN_IN_CORE = ("textual", "questionary", "torch", "vllm")
FORBIDDEN_EVERYWHERE = ("torch", "vllm")
FIXTURE_KB = Path(__file__).parent / "kb_broken" / "base"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_core(name: str) -> bool:
    frontends = ("oomwizard.plain", "oomwizard.plain_prompts", "oomwizard.plain_menus", "oomwizard.__main__")
    return not (name.startswith("oomwizard.tui") or name in frontends)


PRODUCT = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
CORE = [_module_name(p) for p in PRODUCT if _is_core(_module_name(p))]


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **env}
    full_env.pop("OOMWIZARD_KB", None)
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, cwd=REPO, timeout=120)


def test_core_modules_import_no_ui_toolkit_torch_or_vllm() -> None:
    code = f"""
import importlib, json, sys
forbidden = {FORBIDDEN_IN_CORE!r}
blame = {{}}
for name in {CORE!r}:
    importlib.import_module(name)
    for mod in forbidden:
        if mod in sys.modules and mod not in blame:
            blame[mod] = name
print(json.dumps(blame))
"""
    out = _python(code)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {}, f"imported by a core module (first one to do so): {out.stdout}"
    assert len(CORE) > 20  # the walk found the package


def _modules_after(args: list[str]) -> tuple[int, list[str], str]:
    code = f"""
import json, sys
from oomwizard.cli import main
try:
    rc = main({args!r})
except SystemExit as e:
    rc = e.code
sys.stdout.flush()
print("\\n" + json.dumps([rc, sorted(m for m in {FORBIDDEN_IN_CORE!r} if m in sys.modules)]))
"""
    out = _python(code, OOMWIZARD_KB=str(FIXTURE_KB))
    rc, mods = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, mods, out.stderr


def test_version_and_show_do_not_start_a_ui() -> None:
    for args in (["--version"], ["show", "alpha-oom"], ["show", "beta-oom", "--format", "json"], ["lint"], ["export", "--format", "json"], ["scenarios"]):
        rc, mods, err = _modules_after(args)
        assert rc == 0, (args, err)
        assert mods == [], f"oomwizard {' '.join(args)} imported {mods}"


def _imports(path: Path) -> set[str]:
    """Top-level package of every absolute import in a file, wherever in the file it stands."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_no_lazy_imports_of_forbidden_packages_either() -> None:
    """Import-time checks miss an import inside a function; read the source too."""
    problems = []
    for path in PRODUCT:
        name = _module_name(path)
        banned = FORBIDDEN_IN_CORE if _is_core(name) else FORBIDDEN_EVERYWHERE
        bad = _imports(path) & set(banned)
        if bad:
            problems.append(f"{path.relative_to(REPO)}: imports {', '.join(sorted(bad))}")
    assert not problems, "\n".join(problems)


def test_no_python_311_only_syntax_or_modules() -> None:
    """The product supports Python 3.10: no tomllib, no except*, no typing names added in 3.11."""
    too_new = {"tomllib", "wsgiref.types"}
    typing_311 = {"Self", "LiteralString", "Never", "assert_never", "reveal_type", "TypeVarTuple", "Unpack", "Required", "NotRequired"}
    problems = []
    for path in PRODUCT:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path), feature_version=(3, 10))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name in too_new for a in node.names):
                problems.append(f"{path}: imports a 3.11+ module")
            if isinstance(node, ast.ImportFrom) and node.module in ("typing",) and {a.name for a in node.names} & typing_311:
                problems.append(f"{path}: typing names from 3.11+")
            if isinstance(node, ast.ImportFrom) and node.module in too_new:
                problems.append(f"{path}: imports a 3.11+ module")
    assert not problems, "\n".join(problems)
