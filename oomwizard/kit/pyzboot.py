"""Start-up of ``oomwizard.pyz`` (copied into the archive as ``__main__.py``; standard library only).

The tool's dependencies hold compiled extensions (hyperscan, google-re2, NumPy, PyYAML), which
cannot be imported from inside a zip. The archive carries them as one inner ``payload.zip``; the
first run unpacks it to ``$XDG_CACHE_HOME/oomwizard/pyz/<sha256 of the payload>`` (default
``~/.cache``), later runs find it there with one ``stat``. The payload's sha256 is checked, then
it is unpacked into a private temporary folder that is renamed into place when complete, so a run
killed half-way leaves nothing that looks finished, and two runs starting at once both end up
using whichever rename won.
"""

from __future__ import annotations

import os
import sys

# hashlib, io, shutil, tempfile and zipfile are imported only when unpacking: a warm start needs os and sys.

PAYLOAD_HASH = "@HASH@"
PYTHON = "@PYTHON@"
PLATFORM = "@PLATFORM@"
VERSION = "@VERSION@"
MARK = ".oomwizard-pyz-complete"
ERROR = 1
"""``oomwizard.exitcodes.Exit.ERROR`` (the package cannot be imported before it is unpacked)."""

WRONG_PYTHON = ("@en:kit.pyz.wrong_python@", "@zh:kit.pyz.wrong_python@")
CANNOT_UNPACK = ("@en:kit.pyz.cannot_unpack@", "@zh:kit.pyz.cannot_unpack@")
NOT_PRIVATE = ("@en:kit.pyz.not_private@", "@zh:kit.pyz.not_private@")
ROOT_NOT_PRIVATE = ("@en:kit.pyz.root_not_private@", "@zh:kit.pyz.root_not_private@")
DAMAGED = ("@en:kit.pyz.damaged@", "@zh:kit.pyz.damaged@")
CANNOT_MOVE = ("@en:kit.pyz.cannot_move@", "@zh:kit.pyz.cannot_move@")
"""Messages in English and Chinese: the catalogue cannot be read before the package is unpacked, so
building the archive writes its strings in here (``pyz.bootstrap_source``); they are formatted here."""


class BootError(RuntimeError):
    """Why the payload cannot be used, in English (``str()``) and Chinese (``zh``): the boot code
    runs before the package and its catalogue are unpacked, so it carries both itself."""

    def __init__(self, message: tuple[str, str], **fields: object) -> None:
        super().__init__(message[0].format(**fields))
        self.zh = message[1].format(**fields)


def cache_root(environ: dict[str, str] | None = None) -> str:
    """``$XDG_CACHE_HOME/oomwizard/pyz``; a relative or empty XDG_CACHE_HOME is ignored, as the
    XDG base directory specification says."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "oomwizard", "pyz")


def _private(path: str) -> bool:
    """A real folder of ours that nobody else can write to (else it could be swapped for other code)."""
    import stat

    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def unpack(archive: str, root: str, digest: str) -> str:
    """The folder holding the unpacked payload, unpacking it first when no earlier run did."""
    final = os.path.join(root, digest)
    if os.path.isfile(os.path.join(final, MARK)):
        if not _private(final):
            raise BootError(NOT_PRIVATE, path=final)
        return final
    import hashlib
    import io
    import shutil
    import tempfile
    import zipfile

    os.makedirs(root, mode=0o700, exist_ok=True)
    if not _private(root):
        raise BootError(ROOT_NOT_PRIVATE, path=root)
    tmp = tempfile.mkdtemp(prefix=f".{digest[:16]}-", dir=root)
    try:
        try:
            with zipfile.ZipFile(archive) as outer:
                data = outer.read("payload.zip")
            if hashlib.sha256(data).hexdigest() != digest:  # the folder's name must say what it holds
                raise zipfile.BadZipFile("its contents do not match their sha256")
            with zipfile.ZipFile(io.BytesIO(data)) as inner:
                inner.extractall(os.path.join(tmp, "site"))
        except (zipfile.BadZipFile, KeyError) as e:
            raise BootError(DAMAGED, error=e) from None
        with open(os.path.join(tmp, MARK), "w", encoding="ascii") as f:
            f.write(digest + "\n")
        for attempt in (1, 2):
            try:
                os.rename(tmp, final)
                return final
            except OSError:
                if os.path.isfile(os.path.join(final, MARK)):
                    break  # another run finished first: use its copy
                if attempt == 1 and os.path.isdir(final):
                    shutil.rmtree(final, ignore_errors=True)  # left incomplete by hand; replace it
        if not os.path.isfile(os.path.join(final, MARK)):
            raise BootError(CANNOT_MOVE, path=final)
        return final
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def _fail(message: tuple[str, str], zh_fields: dict[str, object] | None = None, **fields: object) -> int:
    """Print ``message`` in both languages; ``zh_fields`` replace fields that have words of their own in Chinese."""
    en, zh = message[0].format(**fields), message[1].format(**{**fields, **(zh_fields or {})})
    sys.stderr.write(f"oomwizard: {en}\noomwizard: {zh}\n")
    return ERROR


def main() -> int:
    archive = os.path.dirname(os.path.abspath(__file__))
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if here != PYTHON or sys.implementation.name != "cpython":
        return _fail(WRONG_PYTHON, None, python=PYTHON, platform=PLATFORM, impl=sys.implementation.name, here=here)
    try:
        folder = unpack(archive, cache_root(), PAYLOAD_HASH)
    except (OSError, BootError) as e:
        return _fail(CANNOT_UNPACK, {"error": getattr(e, "zh", e)}, archive=archive, cache=cache_root(), error=e)
    site = os.path.join(folder, "site")
    sys.path[:] = [site] + [p for p in sys.path if os.path.abspath(p) != archive]
    from oomwizard.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
