"""``oomwizard kit DIR``: everything an air-gapped machine needs to install and read oomwizard.

Kits are built on a connected machine and carried over. The folder is assembled in a private
temporary folder (in ``DIR``, or beside it when it does not exist yet) and moved in only when
complete, so a failed build (no index, no wheel for a target) leaves ``DIR`` as it was; a rebuild
replaces an earlier kit's files and nothing else.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .. import __version__
from ..exitcodes import Exit
from ..i18n import LANGS, Text, msg
from ..kb.model import KnowledgeBase
from . import files, install_sh
from .pip import PipResult, download
from .pyz import build_pyz
from .selfwheel import WheelError, make_wheel
from .targets import Target, TargetError, targets

MARKER = ".oomwizard-kit"
ENTRIES = ("wheels", "docs", "install.sh", "TARGETS", "README.md", "oomwizard.pyz", files.SUMS, MARKER)
"""What a kit consists of: a rebuild replaces these and leaves anything else in ``DIR`` alone."""

MSG: dict[str, Text] = {
    "not_folder": msg("kit.build.not_folder"),
    "not_empty": msg("kit.build.not_empty"),
    "no_pip": msg("kit.build.no_pip"),
    "wheel_failed": msg("kit.build.wheel_failed"),
    "wheel": msg("kit.build.wheel"),
    "download": msg("kit.build.download"),
    "no_index": msg("kit.build.no_index"),
    "no_wheels": msg("kit.build.no_wheels"),
    "pyz": msg("kit.build.pyz"),
    "pyz_first": msg("kit.build.pyz_first"),
    "pyz_failed": msg("kit.build.pyz_failed"),
    "cannot_write": msg("kit.build.cannot_write"),
    "done": msg("kit.build.done"),
}


def _say(lang: str, key: str, **fields: object) -> None:
    print(f"oomwizard: {MSG[key](lang).format(**fields)}", file=sys.stderr)


def _pip_said(result: PipResult, lang: str) -> None:
    for line in result.tail(lang=lang).splitlines():
        print(f"  {line}", file=sys.stderr)


def build_kit(out: str | Path, pythons: list[str] | None, platforms: list[str] | None, *, pyz: bool = False,
              force: bool = False, lang: str = "en", kb_loader: Callable[[], KnowledgeBase] | None = None) -> int:
    """Write the kit; returns the exit code. Messages go to stderr in ``lang``."""
    try:
        chosen = targets(pythons, platforms)
    except TargetError as e:
        print(f"oomwizard: {e.text(lang)}", file=sys.stderr)
        return Exit.USAGE
    if importlib.util.find_spec("pip") is None:
        _say(lang, "no_pip", python=sys.executable)
        return Exit.ERROR
    dest = Path(out)
    if dest.exists() and not dest.is_dir():
        _say(lang, "not_folder", dir=dest)
        return Exit.USAGE
    # A staging folder a killed build left behind does not make DIR someone else's.
    if not force and dest.is_dir() and not (dest / MARKER).exists() and any(
            not p.name.startswith(".oomwizard-kit-") for p in dest.iterdir()):
        _say(lang, "not_empty", dir=dest)
        return Exit.ERROR
    try:
        # Staged on the same file system, so the last step is renames; inside DIR when it exists
        # (a USB stick's mount point may be the only place one can write).
        where = dest if dest.is_dir() else dest.parent
        where.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".oomwizard-kit-", dir=where))
    except OSError as e:
        _say(lang, "cannot_write", dir=dest, error=e)
        return Exit.ERROR
    try:
        code = _assemble(stage, chosen, pyz, lang, kb_loader)
        if code == Exit.OK:
            _move_in(stage, dest)
            wheels = len(list((dest / "wheels").glob("*.whl")))
            _say(lang, "done", dir=dest, wheels=wheels, targets="; ".join(t.label for t in chosen))
        return code
    except OSError as e:
        _say(lang, "cannot_write", dir=dest, error=e)
        return Exit.ERROR
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _assemble(stage: Path, chosen: list[Target], pyz: bool, lang: str, kb_loader: Callable[[], KnowledgeBase] | None) -> int:
    wheels = stage / "wheels"
    try:
        wheel, how = make_wheel(wheels)
    except WheelError as e:
        _say(lang, "wheel_failed", error=e.text(lang))
        return Exit.ERROR
    _say(lang, "wheel", how=how(lang))
    for target in chosen:
        _say(lang, "download", target=target.label)
        result = download(str(wheel), target, str(wheels))
        if result.returncode != 0:
            _say(lang, "no_index" if result.unreachable else "no_wheels", target=target.label)
            _pip_said(result, lang)
            return Exit.NO_INDEX if result.unreachable else Exit.ERROR
    from ..kb.loader import get_kb
    from ..report.html.site import write_html

    write_html((kb_loader or get_kb)(), stage / "docs", LANGS)
    pyz_name = None
    if pyz:
        if len(chosen) > 1:
            _say(lang, "pyz_first", target=chosen[0].label)
        _say(lang, "pyz", target=chosen[0].label)
        work = stage / ".pyz-work"
        failed = build_pyz(stage / "oomwizard.pyz", chosen[0], wheels, __version__, work)
        shutil.rmtree(work, ignore_errors=True)
        if failed is not None:
            _say(lang, "pyz_failed")
            _pip_said(failed, lang)
            return Exit.ERROR
        pyz_name = "oomwizard.pyz"
    names = sorted(p.name for p in wheels.glob("*.whl"))
    (stage / "TARGETS").write_text(install_sh.targets_file(__version__, chosen), encoding="utf-8")
    script = stage / "install.sh"
    script.write_text(install_sh.install_sh(__version__), encoding="utf-8")
    script.chmod(0o755)
    (stage / "README.md").write_text(files.readme(__version__, chosen, how, names, pyz_name), encoding="utf-8")
    (stage / MARKER).write_text("files written by `oomwizard kit`; a new kit replaces them\n", encoding="utf-8")
    (stage / files.SUMS).write_text(files.sha256sums(stage), encoding="utf-8")
    return Exit.OK


def _move_in(stage: Path, dest: Path) -> None:
    """Replace the kit's entries in ``dest`` (creating it) with the staged ones."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ENTRIES:
        old = dest / name
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        elif old.exists() or old.is_symlink():
            old.unlink()
    for name in ENTRIES:
        if (stage / name).exists():
            (stage / name).rename(dest / name)
