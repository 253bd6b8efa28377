"""Text from logs, file names, process arguments and ``--set`` is untrusted: no escape sequence,
control character or invisible format character from it may reach the terminal raw.

A log can carry colour codes (harmless) but also sequences that move the cursor, retitle the
window, write the clipboard (OSC 52) or hide text, C1 controls that some terminals honour in
UTF-8, and bidi overrides that make a command read differently from what it runs. Every output
boundary passes its text through :func:`printable`, which drops escape sequences and shows every
other control or invisible character as a visible escape (``^[``, ``\\x9b``, ``\\u202e``). JSON
output goes through :func:`json_dumps`, which escapes the same characters as ``\\uXXXX``.
"""

from __future__ import annotations

import json
import re
from typing import Any

# CSI; OSC, DCS, SOS, PM and APC strings that end on this line (BEL or ST); two-byte escapes; a
# lone ESC; the 8-bit forms. A string with no terminator loses only its introducer: its body then
# shows as plain text instead of swallowing the rest of the line.
ESCAPE_RE = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]                               # CSI ... final
  | \x1b[\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)     # OSC/DCS/SOS/PM/APC ... BEL or ST
  | \x1b[ -/]*[0-~]                                       # other escapes (ESC ( B, ESC 7, ESC c)
  | \x1b                                                  # a lone ESC
  | \x9b[0-?]*[ -/]*[@-~]                                 # 8-bit CSI
  | [\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)  # 8-bit strings
    """,
    re.VERBOSE,
)
# Invisible format characters (Unicode category Cf), the bidi controls among them, and the line
# and paragraph separators.
INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_CONTROL_RE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{INVISIBLE}]")
_JSON_RAW_RE = re.compile(f"[\\x7f-\\x9f{INVISIBLE}]")


def strip_escapes(text: str) -> str:
    return ESCAPE_RE.sub("", text)


def _show(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c < 0x20:
        return "^" + chr(c + 64)
    if c == 0x7F:
        return "^?"
    if c <= 0x9F:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


def printable(text: str) -> str:
    """``text`` without escape sequences; other control and invisible characters made visible."""
    return _CONTROL_RE.sub(_show, strip_escapes(text).replace("\r\n", "\n").replace("\r", "\n"))


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c <= 0xFFFF:
        return f"\\u{c:04x}"
    c -= 0x10000
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def json_dumps(data: Any, indent: int | None = 2) -> str:
    """JSON that keeps readable text (CJK stays as is) but escapes DEL, C1 and invisible characters.

    ``json.dumps`` escapes C0 itself; with ``ensure_ascii=False`` it would emit the rest raw. Those
    characters can only sit inside JSON strings, where ``\\uXXXX`` means the same.
    """
    return _JSON_RAW_RE.sub(_json_escape, json.dumps(data, ensure_ascii=False, indent=indent))
