"""Keys the operator remaps: ``OOMWIZARD_KEYMAP="wizard.facts=ctrl+f;leaf.copy=y"``.

Every binding of the wizard has an id (``<screen>.<action>``, ``wizard.*`` for those of every
screen); Textual's keymap (``App.set_keymap``) replaces the keys of the ids it names, and the
footer, the key map (``?``) and the command palette show the new keys. A terminal that swallows a
key, or a keyboard layout without one, is why this exists. An entry that is not ``id=keys`` is
skipped; an id that names no binding changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

VARIABLE = "OOMWIZARD_KEYMAP"


def parse_keymap(text: str) -> dict[str, str]:
    """``id=keys`` entries separated by ``;`` (keys as Textual writes them, several joined by ``,``)."""
    out: dict[str, str] = {}
    for entry in text.split(";"):
        ident, sep, keys = entry.partition("=")
        ident, keys = ident.strip(), keys.strip()
        if sep and ident and keys and all(k.strip() for k in keys.split(",")):
            out[ident] = ",".join(k.strip() for k in keys.split(","))
    return out


def keymap_from(environ: Mapping[str, str]) -> dict[str, str]:
    return parse_keymap(environ.get(VARIABLE, ""))
