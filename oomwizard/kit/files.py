"""The kit's own files besides the wheels: ``SHA256SUMS`` and the README (English, then Chinese)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..i18n import Text
from .targets import Target

SUMS = "SHA256SUMS"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256sums(root: Path) -> str:
    """Every file under ``root`` but the list itself, as ``sha256sum -c`` reads it (``HEX  name``,
    sorted, names relative to ``root``). Names ``sha256sum`` would escape are refused, not mangled."""
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        if name == SUMS:
            continue
        if any(c in name for c in "\\\n\r") or name.startswith("-"):
            raise ValueError(f"a kit file name sha256sum cannot list: {name!r}")
        lines.append(f"{sha256_file(path)}  {name}")
    return "\n".join(lines) + "\n"


def readme(version: str, targets: list[Target], wheel_origin: Text, wheels: list[str], pyz: str | None) -> str:
    pythons = ", ".join(dict.fromkeys(t.python for t in targets))
    table = "\n".join(f"| {t.python} | {t.platform} |" for t in targets)
    pyz_en = pyz_zh = ""
    if pyz:
        pyz_en = (f"\n## One file instead\n\n`{pyz}` is the whole tool in one file for the first target above; "
                  f"run it with that Python: `python{targets[0].python} {pyz} diagnose vllm.log`. The first run "
                  "unpacks it once to `${XDG_CACHE_HOME:-~/.cache}/oomwizard/pyz/`.\n")
        pyz_zh = (f"\n## 单文件版本\n\n`{pyz}` 是上表第一个目标的单文件版本，用该 Python 运行："
                  f"`python{targets[0].python} {pyz} diagnose vllm.log`。首次运行时会解压一次到 "
                  "`${XDG_CACHE_HOME:-~/.cache}/oomwizard/pyz/`。\n")
    return f"""# oomwizard {version} — offline support kit

This folder installs oomwizard on a machine with no network: it diagnoses a vLLM
"CUDA out of memory" and prints the commands that fix it.

Targets (Python {pythons}):

| Python | platform (oldest glibc it runs on) |
| --- | --- |
{table}

## Carry it

Copy the whole folder (`tar czf oomwizard-kit.tar.gz {{this folder}}`, then scp or a USB stick).
Nothing else is needed on the other side but one of the Pythons above with its `venv` module.

## Install

```sh
sh install.sh                      # into ~/.local/share/oomwizard/venv
sh install.sh /opt/oomwizard       # or into a folder of your choice
PYTHON=python3.11 sh install.sh    # with a given interpreter
```

`install.sh` checks `SHA256SUMS` (by hand: `sha256sum -c SHA256SUMS`), creates the venv, installs
from `wheels/` only (`pip install --no-index`), compiles the byte-code and runs `oomwizard --version`.

## Use

```sh
~/.local/share/oomwizard/venv/bin/oomwizard diagnose vllm.log
~/.local/share/oomwizard/venv/bin/oomwizard            # the interactive wizard
```

The knowledge base, as web pages for a browser: `docs/index.html`.
{pyz_en}
## Contents

- `wheels/`: {len(wheels)} wheels; the oomwizard wheel was {wheel_origin.en}.
- `docs/`: the knowledge base (`oomwizard export --format html`).
- `install.sh`, `TARGETS`, `SHA256SUMS`, this README.

---

# oomwizard {version} — 离线支持工具包

此文件夹用于在没有网络的机器上安装 oomwizard：它诊断 vLLM 的 "CUDA out of memory"，并给出修复命令。

目标（Python {pythons}）：

| Python | 平台（可运行的最旧 glibc） |
| --- | --- |
{table}

## 携带

复制整个文件夹（`tar czf oomwizard-kit.tar.gz {{此文件夹}}`，再用 scp 或 U 盘）。
目标机器上只需要上表中的某个 Python 及其 `venv` 模块。

## 安装

```sh
sh install.sh                      # 安装到 ~/.local/share/oomwizard/venv
sh install.sh /opt/oomwizard       # 或安装到指定文件夹
PYTHON=python3.11 sh install.sh    # 指定解释器
```

`install.sh` 会校验 `SHA256SUMS`（手动校验：`sha256sum -c SHA256SUMS`），创建虚拟环境，只从 `wheels/`
安装（`pip install --no-index`），编译字节码，并运行 `oomwizard --version`。

## 使用

```sh
~/.local/share/oomwizard/venv/bin/oomwizard diagnose vllm.log
~/.local/share/oomwizard/venv/bin/oomwizard            # 交互式向导
```

知识库的网页版（用浏览器打开）：`docs/index.html`。
{pyz_zh}
## 内容

- `wheels/`：{len(wheels)} 个 wheel；oomwizard 的 wheel {wheel_origin.zh}。
- `docs/`：知识库（`oomwizard export --format html`）。
- `install.sh`、`TARGETS`、`SHA256SUMS` 和本说明。
"""

