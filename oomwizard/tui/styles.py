"""Each screen's stylesheet, added to the app's when a screen that names it is first shown.

``app.tcss`` holds what every screen shares and the welcome screen; the other screens name a file
beside their modules (``WizardNode.STYLES``). Textual's own per-screen CSS (``Screen.CSS_PATH``)
parses every stylesheet of the app again each time one is added; here the file is added as a
source the way Textual adds a widget's default CSS, so only the new rules are parsed, once, when
the screen's widgets are first styled. The rules keep the priority they had in one file: they are
the app's (not default) rules, global in scope, and no two files style the same widget.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.css.stylesheet import Stylesheet

SCREENS = Path(__file__).resolve().parent / "screens"


def add_screen_styles(stylesheet: Stylesheet, screen: Any) -> bool:
    """Add the stylesheet ``screen`` names, unless it is there already; True if it was added."""
    name = getattr(screen, "STYLES", "")
    if not name:
        return False
    path = str(SCREENS / name)
    if stylesheet.has_source(path):
        return False
    # The source Stylesheet.read would make; add_source also drops the selector map built before.
    stylesheet.add_source((SCREENS / name).read_text(encoding="utf-8"), read_from=(path, ""), is_default_css=False)
    return True
