"""Runs pip as a program (it has no import API) with a target machine's environment markers.

``pip download --python-version 3.10 --platform manylinux_2_28_aarch64`` picks wheels by those
tags, but evaluates a dependency's markers (``; python_version < "3.11"``, ``; platform_machine
== "x86_64"``) against the interpreter running pip, so a kit built on Python 3.11 for 3.10 would
lack the back-ports 3.10 needs. The child pip gets the target's marker values first; resolving,
choosing and downloading are pip's own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..i18n import Text, msg
from .targets import Target

SHIM = """
import sys, json
from pip._vendor.packaging import markers
_target = json.loads(sys.argv[1])
_host = markers.default_environment
def default_environment():
    env = _host()
    env.update(_target)
    return env
markers.default_environment = default_environment
from pip._internal.cli.main import main
sys.exit(main(sys.argv[2:]))
"""

_NETWORK = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|No route to host|Network is unreachable|ConnectTimeoutError|ProxyError|"
    r"Connection refused|ReadTimeoutError|SSLError|CERTIFICATE_VERIFY_FAILED|Could not fetch URL"
)


@dataclass(frozen=True)
class PipResult:
    returncode: int
    output: str
    log: str = ""
    """pip's ``--log``: at debug level, where pip notes an index it could not fetch."""
    failure: Text | None = None
    """Why pip could not be started at all (then there is no output of pip's to show)."""

    @property
    def unreachable(self) -> bool:
        """pip failed and could not reach an index (rather than: the index has no such wheel)."""
        return self.returncode != 0 and bool(_NETWORK.search(self.output) or _NETWORK.search(self.log))

    def tail(self, lines: int = 12, lang: str = "en") -> str:
        if self.failure is not None:
            return self.failure(lang)
        keep = [ln for ln in self.output.splitlines() if ln.strip() and "is ignored: it is neither" not in ln]
        return "\n".join(keep[-lines:])


def run_pip(args: list[str], target: Target | None = None, python: str | None = None,
            env: dict[str, str] | None = None) -> PipResult:
    """``python -m pip ARGS`` (with the target's markers when given); never raises on pip's failure."""
    py = python or sys.executable
    env_json = json.dumps(target.marker_environment() if target else {})
    with tempfile.TemporaryDirectory(prefix="oomwizard-pip-") as tmp:
        log = Path(tmp) / "pip.log"
        cmd = [py, "-c", SHIM, env_json, *args, "--log", str(log)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL,
                                  env=None if env is None else {**os.environ, **env})
        except OSError as e:
            return PipResult(127, "", failure=msg("kit.build.cannot_run_pip").format(python=py, error=e))
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return PipResult(proc.returncode, proc.stdout + proc.stderr, text[-200_000:])


def download(requirement: str, target: Target, dest: str) -> PipResult:
    """Every wheel ``requirement`` needs on ``target``, into ``dest`` (pip's resolver and cache)."""
    return run_pip(["download", "--disable-pip-version-check", "--progress-bar", "off", *target.pip_args(),
                    "--dest", dest, requirement], target)


def install_target(requirement: str, target: Target, dest: str, find_links: str) -> PipResult:
    """Lay ``requirement`` and its dependencies out as a ``site-packages`` folder for ``target``,
    from the kit's own wheels only."""
    return run_pip(["install", "--disable-pip-version-check", "--isolated", "--no-index", "--find-links", find_links,
                    "--no-compile", "--no-warn-script-location", *target.pip_args(), "--target", dest, requirement],
                   target, env={"PIP_CONFIG_FILE": os.devnull})  # this machine's pip.conf has no say here
