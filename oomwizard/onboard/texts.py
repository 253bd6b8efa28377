"""The onboarding screens' and pages' own words: catalogue keys ``onboard.…`` and ``tui.welcome.…``."""

from __future__ import annotations

from ..i18n import ui


def t(key: str, lang: str, **fmt: object) -> str:
    return ui(key, lang, **fmt)
