"""``install.sh``: installs a kit into a venv on a machine without network, in POSIX sh.

It checks ``SHA256SUMS`` first (a copy cut short on a USB stick fails there, not half-way through
pip), refuses an interpreter the kit holds no wheels for with the versions it does hold, and runs
pip with no index and no configuration of the machine's (``PIP_CONFIG_FILE=/dev/null`` and
``--isolated``: a site ``pip.conf`` or ``PIP_CONSTRAINT`` must not change what is installed).
Every message comes in English, then Chinese.
"""

from __future__ import annotations

from .targets import Target

TEMPLATE = r"""#!/bin/sh
# oomwizard @VERSION@ offline support kit: installs from this folder alone, with no network.
#   sh install.sh [VENV]          default VENV: ${XDG_DATA_HOME:-$HOME/.local/share}/oomwizard/venv
#   PYTHON=python3.11 sh install.sh /opt/oomwizard
set -eu

VERSION='@VERSION@'
KIT=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
VENV=${1:-${XDG_DATA_HOME:-$HOME/.local/share}/oomwizard/venv}
PYTHON=${PYTHON:-python3}

say() { printf 'install.sh: %s\n' "$@" >&2; }
die() { say "$@"; exit 1; }

cd "$KIT"

# 1. Every file as it was when the kit was built.
if command -v sha256sum >/dev/null 2>&1; then
    if ! out=$(sha256sum -c SHA256SUMS 2>&1); then
        printf '%s\n' "$out" | grep -v ': OK$' >&2 || true
        die "the kit is damaged or incomplete (SHA256SUMS does not match); copy the whole folder again" \
            "工具包已损坏或不完整（与 SHA256SUMS 不符）；请重新复制整个文件夹"
    fi
elif command -v "$PYTHON" >/dev/null 2>&1; then
    "$PYTHON" - <<'PY' || die "the kit is damaged or incomplete (SHA256SUMS does not match); copy the whole folder again" \
                              "工具包已损坏或不完整（与 SHA256SUMS 不符）；请重新复制整个文件夹"
import hashlib, sys
bad = 0
for line in open("SHA256SUMS", encoding="utf-8"):
    digest, name = line.rstrip("\n").split("  ", 1)
    try:
        with open(name, "rb") as f:
            ok = hashlib.sha256(f.read()).hexdigest() == digest
    except OSError:
        ok = False
    if not ok:
        print(name + ": FAILED", file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
fi
say "checksums: OK" "校验和：正确"

# 2. An interpreter this kit has wheels for.
command -v "$PYTHON" >/dev/null 2>&1 || die "no '$PYTHON' on this machine; name one with PYTHON=/path/to/python3.X" \
                                            "本机没有 '$PYTHON'；请用 PYTHON=/path/to/python3.X 指定解释器"
set -- $("$PYTHON" -c 'import os, platform, sys
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (ValueError, OSError):
    libc = ""
glibc = libc.split(".")[-1] if libc.startswith("glibc 2.") else "0"
print("%d.%d" % sys.version_info[:2], platform.machine(), glibc, sys.implementation.name)')
PYV=$1 ARCH=$2 GLIBC=$3 IMPL=$4
if [ "$IMPL" != cpython ] || ! awk -v v="$PYV" -v a="$ARCH" -v g="$GLIBC" \
        '!/^#/ && $1 == v && $2 == a && $3 + 0 <= g + 0 { found = 1 } END { exit !found }' TARGETS; then
    say "this kit has no wheels for $IMPL $PYV on $ARCH (glibc 2.$GLIBC). It holds:" \
        "本工具包没有适用于 $IMPL $PYV（$ARCH，glibc 2.$GLIBC）的 wheel。它包含："
    awk '!/^#/ { print "  Python " $1 " on " $4 }' TARGETS >&2
    die "run it with another interpreter (PYTHON=python3.X sh install.sh), or build a kit for this one on a connected machine: oomwizard kit DIR --python $PYV --platform manylinux_2_${GLIBC}_$ARCH" \
        "请换一个解释器运行（PYTHON=python3.X sh install.sh），或在联网的机器上为它构建工具包：oomwizard kit DIR --python $PYV --platform manylinux_2_${GLIBC}_$ARCH"
fi

# 3. The venv.
if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    die "$VENV exists and is not a virtual environment; give another folder: sh install.sh /path/to/venv" \
        "$VENV 已存在且不是虚拟环境；请换一个文件夹：sh install.sh /path/to/venv"
fi
"$PYTHON" -m venv "$VENV" || die "cannot create a virtual environment in $VENV (on Debian/Ubuntu install python$PYV-venv)" \
                                 "无法在 $VENV 创建虚拟环境（Debian/Ubuntu 上请安装 python$PYV-venv）"

# 4. oomwizard and its dependencies from the kit alone, compiled to byte-code.
PIP_CONFIG_FILE=/dev/null "$VENV/bin/python" -m pip --isolated install --disable-pip-version-check --no-index \
    --find-links "$KIT/wheels" --compile --no-warn-script-location --quiet "oomwizard==$VERSION" \
    || die "pip could not install oomwizard from $KIT/wheels (see above)" "pip 无法从 $KIT/wheels 安装 oomwizard（见上文）"

# 5. It runs.
"$VENV/bin/oomwizard" --version
say "installed: $VENV/bin/oomwizard   (add it to PATH: export PATH=\"$VENV/bin:\$PATH\")" \
    "已安装：$VENV/bin/oomwizard   （加入 PATH：export PATH=\"$VENV/bin:\$PATH\"）"
"""


def install_sh(version: str) -> str:
    return TEMPLATE.replace("@VERSION@", version)


def targets_file(version: str, targets: list[Target]) -> str:
    """The kit's ``TARGETS``, read by ``install.sh``: Python, machine, oldest glibc minor, platform tag."""
    lines = [f"# oomwizard {version} support kit: python arch glibc-minor platform"]
    lines += [f"{t.python} {t.arch} {t.glibc} {t.platform}" for t in targets]
    return "\n".join(lines) + "\n"
