"""``install.sh``: installs a kit into a venv on a machine without network, in POSIX sh.

It checks ``SHA256SUMS`` first (a copy cut short on a USB stick fails there, not half-way through
pip), refuses an interpreter the kit holds no wheels for with the versions it does hold, and runs
pip with no index and no configuration of the machine's (``PIP_CONFIG_FILE=/dev/null`` and
``--isolated``: a site ``pip.conf`` or ``PIP_CONSTRAINT`` must not change what is installed).
Every message comes in English, then Chinese.
"""

from __future__ import annotations

import re

from ..i18n import ui
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
        die "@en:kit.install.damaged@" \
            "@zh:kit.install.damaged@"
    fi
elif command -v "$PYTHON" >/dev/null 2>&1; then
    "$PYTHON" - <<'PY' || die "@en:kit.install.damaged@" \
                              "@zh:kit.install.damaged@"
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
say "@en:kit.install.checksums_ok@" "@zh:kit.install.checksums_ok@"

# 2. An interpreter this kit has wheels for.
command -v "$PYTHON" >/dev/null 2>&1 || die "@en:kit.install.no_python@" \
                                            "@zh:kit.install.no_python@"
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
    say "@en:kit.install.no_wheels@" \
        "@zh:kit.install.no_wheels@"
    awk '!/^#/ { print "  Python " $1 " on " $4 }' TARGETS >&2
    die "@en:kit.install.other_python@" \
        "@zh:kit.install.other_python@"
fi

# 3. The venv.
if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
    die "@en:kit.install.not_a_venv@" \
        "@zh:kit.install.not_a_venv@"
fi
"$PYTHON" -m venv "$VENV" || die "@en:kit.install.no_venv@" \
                                 "@zh:kit.install.no_venv@"

# 4. oomwizard and its dependencies from the kit alone, compiled to byte-code.
PIP_CONFIG_FILE=/dev/null "$VENV/bin/python" -m pip --isolated install --disable-pip-version-check --no-index \
    --find-links "$KIT/wheels" --compile --no-warn-script-location --quiet "oomwizard==$VERSION" \
    || die "@en:kit.install.pip_failed@" "@zh:kit.install.pip_failed@"

# 5. It runs.
"$VENV/bin/oomwizard" --version
say "@en:kit.install.installed@" \
    "@zh:kit.install.installed@"
"""


_MESSAGE = re.compile(r"@(en|zh):([a-z0-9_.-]+)@")


def install_sh(version: str) -> str:
    """The script with its messages from the catalogue (``"@en:KEY@" "@zh:KEY@"`` in the template)."""
    return _MESSAGE.sub(lambda m: ui(m.group(2), m.group(1)), TEMPLATE).replace("@VERSION@", version)


def targets_file(version: str, targets: list[Target]) -> str:
    """The kit's ``TARGETS``, read by ``install.sh``: Python, machine, oldest glibc minor, platform tag."""
    lines = [f"# oomwizard {version} support kit: python arch glibc-minor platform"]
    lines += [f"{t.python} {t.arch} {t.glibc} {t.platform}" for t in targets]
    return "\n".join(lines) + "\n"
