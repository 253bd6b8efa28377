"""Which interpreters and machines a kit is for, and what pip must be told to fetch for them.

A target is a CPython minor version and a Linux platform tag (vLLM runs on Linux; the tool's
compiled dependencies ship manylinux wheels for x86_64 and aarch64). pip is given every tag the
target accepts, as its own tag logic would compute on that machine: ``manylinux_2_28`` also runs
``manylinux_2_27`` … ``manylinux_2_17`` (= ``manylinux2014``) and older wheels.

pip evaluates environment markers (``; python_version < "3.11"``, ``; platform_machine ==
"aarch64"``) against the interpreter running it, not against ``--python-version``/``--platform``;
:func:`marker_environment` is the target's own marker environment, which :mod:`.pip` hands to pip.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from dataclasses import dataclass

from ..i18n import TextError, msg

PYTHONS = ("3.10", "3.11", "3.12", "3.13")
"""The CPython versions the tool supports (``requires-python`` and the classifiers)."""

ARCHES = ("x86_64", "aarch64")
GLIBC_MIN, GLIBC_MAX = 17, 40
"""manylinux_2_17 (CentOS 7, = manylinux2014) is the oldest the dependencies ship for."""

_MANYLINUX = re.compile(r"^manylinux_2_(\d+)_([a-z0-9_]+)$")
_LEGACY = {"manylinux2014": 17}


class TargetError(TextError, ValueError):
    """A Python version or platform no kit can be built for; the message lists what is accepted."""


@dataclass(frozen=True)
class Target:
    python: str
    """``"3.11"``"""
    glibc: int
    """The glibc minor version of the oldest machine the kit must run on (28 for manylinux_2_28)."""
    arch: str

    @property
    def platform(self) -> str:
        return f"manylinux_2_{self.glibc}_{self.arch}"

    @property
    def abi(self) -> str:
        return "cp" + self.python.replace(".", "")

    @property
    def label(self) -> str:
        return f"Python {self.python}, {self.platform}"

    def platform_tags(self) -> list[str]:
        """Every platform tag a wheel may carry to run on this target, newest first."""
        tags = [f"manylinux_2_{m}_{self.arch}" for m in range(self.glibc, 4, -1)]
        if self.glibc >= 17:
            tags.append(f"manylinux2014_{self.arch}")
        if self.arch == "x86_64":
            tags += [t for m, t in ((12, "manylinux2010_x86_64"), (5, "manylinux1_x86_64")) if self.glibc >= m]
        return tags

    def pip_args(self) -> list[str]:
        """The options that make ``pip download``/``pip install --target`` pick this target's wheels."""
        out = ["--only-binary=:all:", "--implementation", "cp", "--python-version", self.python]
        for tag in self.platform_tags():
            out += ["--platform", tag]
        for abi in (self.abi, "abi3", "none"):
            out += ["--abi", abi]
        return out

    def marker_environment(self) -> dict[str, str]:
        """PEP 508 marker values on the target. The patch release is unknown: this interpreter's
        when it is the same minor version, else ``.0``."""
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        full = ".".join(map(str, sys.version_info[:3])) if here == self.python else f"{self.python}.0"
        return {
            "implementation_name": "cpython",
            "implementation_version": full,
            "os_name": "posix",
            "platform_machine": self.arch,
            "platform_python_implementation": "CPython",
            "platform_system": "Linux",
            "python_full_version": full,
            "python_version": self.python,
            "sys_platform": "linux",
        }


def parse_python(text: str) -> str:
    m = re.fullmatch(r"(?:cp|py)?(3)\.?(\d{1,2})", text.strip())
    version = f"{m.group(1)}.{m.group(2)}" if m else text
    if version not in PYTHONS:
        choices = ", ".join(PYTHONS)
        raise TargetError(msg("kit.targets.bad_python").format(text=text, choices=choices))
    return version


def parse_platform(text: str) -> tuple[int, str]:
    """``manylinux_2_28_x86_64`` (or ``manylinux2014_aarch64``) -> (28, "aarch64")."""
    tag = text.strip().lower().replace("-", "_").replace(".", "_")
    legacy = tag.split("_", 1)
    if legacy[0] in _LEGACY and len(legacy) == 2:
        tag = f"manylinux_2_{_LEGACY[legacy[0]]}_{legacy[1]}"
    m = _MANYLINUX.match(tag)
    if not m or m.group(2) not in ARCHES or not GLIBC_MIN <= int(m.group(1)) <= GLIBC_MAX:
        arches = ", ".join(ARCHES)
        raise TargetError(msg("kit.targets.bad_platform").format(text=text, GLIBC_MIN=GLIBC_MIN, GLIBC_MAX=GLIBC_MAX, arches=arches))
    return int(m.group(1)), m.group(2)


def this_python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def this_platform() -> str:
    """This machine as a manylinux tag: its architecture and its glibc (``os.confstr``)."""
    plat = sysconfig.get_platform()  # linux-x86_64
    if not plat.startswith("linux-"):
        raise TargetError(msg("kit.targets.not_linux").format(plat=plat))
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        libc = ""
    m = re.fullmatch(r"glibc (\d+)\.(\d+)", libc)
    if not m:
        raise TargetError(msg("kit.targets.no_glibc"))
    return f"manylinux_2_{min(int(m.group(2)), GLIBC_MAX)}_{plat.split('-', 1)[1]}"


def targets(pythons: list[str] | None, platforms: list[str] | None) -> list[Target]:
    """Every chosen Python on every chosen platform (defaults: this interpreter, this machine)."""
    pys = list(dict.fromkeys(parse_python(p) for p in (pythons or [this_python()])))
    plats = list(dict.fromkeys(parse_platform(p) for p in (platforms or [this_platform()])))
    return [Target(py, glibc, arch) for py in pys for glibc, arch in plats]
