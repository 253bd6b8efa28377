"""Reading a saved machine report (``--machine FILE``) within limits.

A report written by ``oomwizard detect --format json`` is a few KiB of shallow JSON. Anything else
named here is refused with one line saying why, before it can cost much: a device or a named pipe
(``/dev/zero`` would be read until memory runs out, a pipe with no writer blocks for ever), a file
far larger than any report, JSON nested deeper than the decoder can follow.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from .. import safejson
from .machine import MachineReport

MAX_REPORT_BYTES = 16 * 1024 * 1024
"""A report of a host with hundreds of GPUs and servers stays far below this."""


class SavedReportError(ValueError):
    """The file cannot be used as a machine report; the message names it and says why."""


def _read(path: str) -> bytes:
    where = f"cannot read machine description {path}"
    try:
        # O_NONBLOCK: opening a named pipe must not wait for a writer; regular files ignore it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise SavedReportError(f"{where}: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SavedReportError(f"{where}: it is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise SavedReportError(
                f"{where}: it is not a regular file (a device or a pipe); save the report to a file with "
                "`oomwizard detect --format json > machine.json`"
            )
        if st.st_size > MAX_REPORT_BYTES:
            raise SavedReportError(
                f"{where}: it is {st.st_size / 2**20:,.0f} MiB, far larger than a saved report "
                f"(at most {MAX_REPORT_BYTES // 2**20} MiB)"
            )
        try:
            data = fh.read(MAX_REPORT_BYTES + 1)
        except OSError as e:
            raise SavedReportError(f"{where}: {e.strerror or e}") from None
    if len(data) > MAX_REPORT_BYTES:  # it grew while being read
        raise SavedReportError(f"{where}: it is larger than a saved report (at most {MAX_REPORT_BYTES // 2**20} MiB)")
    return data


def load_report(path: str) -> MachineReport:
    """The report saved in ``path``; raises :class:`SavedReportError` with a one-line reason."""
    raw = _read(path)
    try:
        data: Any = safejson.loads(raw.decode("utf-8"))
    except ValueError as e:  # UnicodeDecodeError is a ValueError too
        raise SavedReportError(f"cannot read machine description {path}: {e}") from None
    if not isinstance(data, dict):
        raise SavedReportError(f"{path}: not a saved `oomwizard detect --format json` report")
    try:
        return MachineReport.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise SavedReportError(f"{path}: not a saved `oomwizard detect --format json` report ({e})") from None
