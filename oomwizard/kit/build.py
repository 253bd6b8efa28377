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
from ..i18n import LANGS, Text
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
    "not_folder": Text("{dir} exists and is not a folder", "{dir} 已存在且不是文件夹"),
    "not_empty": Text("{dir} is not empty and holds no earlier kit; pass --force to write into it anyway",
                      "{dir} 不为空且不是之前生成的工具包；如仍要写入，请加 --force"),
    "no_pip": Text("kits are fetched by pip, and this Python ({python}) has none; install it "
                   "(`{python} -m ensurepip`) or run oomwizard from an environment with pip",
                   "工具包由 pip 获取，而此 Python（{python}）没有 pip；请安装它（`{python} -m ensurepip`），"
                   "或在装有 pip 的环境中运行 oomwizard"),
    "wheel_failed": Text("cannot make the oomwizard wheel: {error}", "无法生成 oomwizard 的 wheel：{error}"),
    "wheel": Text("the oomwizard wheel: {how}", "oomwizard 的 wheel：{how}"),
    "download": Text("fetching the wheels for {target} …", "正在获取 {target} 的 wheel …"),
    "no_index": Text(
        "pip cannot reach a package index, so the wheels cannot be fetched: kits are built on a connected "
        "machine (or one that reaches a mirror: PIP_INDEX_URL) and carried to the offline one. pip said:",
        "pip 无法连接软件包索引，因此无法获取 wheel：工具包要在联网的机器上（或能访问镜像的机器上：PIP_INDEX_URL）构建，"
        "再把文件夹带到离线机器上。pip 的输出：",
    ),
    "no_wheels": Text(
        "pip found no complete set of wheels for {target} (a dependency may ship none for it). pip said:",
        "pip 找不到 {target} 所需的全部 wheel（可能某个依赖没有为它发布 wheel）。pip 的输出：",
    ),
    "pyz": Text("writing oomwizard.pyz for {target} …", "正在为 {target} 写入 oomwizard.pyz …"),
    "pyz_first": Text("oomwizard.pyz is for one interpreter: the first target, {target}",
                      "oomwizard.pyz 只适用于一个解释器：第一个目标 {target}"),
    "pyz_failed": Text("pip could not lay out the files for oomwizard.pyz. pip said:",
                       "pip 无法为 oomwizard.pyz 准备文件。pip 的输出："),
    "cannot_write": Text("cannot write {dir}: {error}", "无法写入 {dir}：{error}"),
    "done": Text(
        "wrote the kit to {dir}: {wheels} wheels for {targets}, the knowledge base in docs/, install.sh. "
        "Carry the whole folder; on the offline machine run: sh {dir}/install.sh",
        "工具包已写入 {dir}：{targets} 的 {wheels} 个 wheel、docs/ 中的知识库、install.sh。"
        "请复制整个文件夹；在离线机器上运行：sh {dir}/install.sh",
    ),
}


def _say(lang: str, key: str, **fields: object) -> None:
    print(f"oomwizard: {MSG[key](lang).format(**fields)}", file=sys.stderr)


def _pip_said(result: PipResult) -> None:
    for line in result.tail().splitlines():
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
        _say(lang, "wheel_failed", error=e)
        return Exit.ERROR
    _say(lang, "wheel", how=how(lang))
    for target in chosen:
        _say(lang, "download", target=target.label)
        result = download(str(wheel), target, str(wheels))
        if result.returncode != 0:
            _say(lang, "no_index" if result.unreachable else "no_wheels", target=target.label)
            _pip_said(result)
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
            _pip_said(failed)
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
