"""The one error the planner raises: an input it cannot plan for, with what to provide instead."""

from __future__ import annotations


class PlanError(ValueError):
    """A model, GPU or setting the planner cannot turn into vLLM's numbers without guessing.

    ``en``/``zh`` are the message; it always names what to pass or which file to provide.
    """

    def __init__(self, en: str, zh: str | None = None) -> None:
        super().__init__(en)
        self.en = en
        self.zh = zh or en

    def text(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else self.en
