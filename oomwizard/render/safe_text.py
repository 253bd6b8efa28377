"""Text from logs is untrusted: escape sequences in it must never reach the terminal raw.

A log can carry colour codes (harmless) but also sequences that move the cursor, retitle the
window, write the clipboard (OSC 52) or hide text. Everything the program shows from a log goes
through :func:`printable`, which drops escape sequences and makes other control characters
visible.
"""

from __future__ import annotations

import re

# CSI, OSC (terminated by BEL or ST), DCS/SOS/PM/APC strings, two-byte escapes, 8-bit CSI/OSC.
ESCAPE_RE = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]            # CSI ... final
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)? # OSC ... BEL or ST
  | \x1b[PX^_][^\x1b]*(?:\x1b\\)?      # DCS, SOS, PM, APC
  | \x1b[@-Z\\-_]                      # other 2-byte sequences
  | \x1b                               # a lone ESC
  | \x9b[0-?]*[ -/]*[@-~]              # 8-bit CSI
  | \x9d[^\x07\x9c]*(?:\x07|\x9c)?     # 8-bit OSC
    """,
    re.VERBOSE,
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_escapes(text: str) -> str:
    return ESCAPE_RE.sub("", text)


def printable(text: str) -> str:
    """``text`` without escape sequences; other control characters shown as ``^X`` / ``\\xNN``."""

    def show(m: re.Match[str]) -> str:
        c = ord(m.group(0))
        if c < 0x20:
            return "^" + chr(c + 64)
        if c == 0x7F:
            return "^?"
        return f"\\x{c:02x}"

    return _CONTROL_RE.sub(show, strip_escapes(text).replace("\r\n", "\n").replace("\r", "\n"))
