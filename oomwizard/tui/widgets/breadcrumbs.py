"""The path so far, newest last, trimmed from the left to fit: the latest answers matter most."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

SEP = " › "


class Breadcrumbs(Widget):
    DEFAULT_CSS = """
    Breadcrumbs {
        height: 1;
        width: 1fr;
        color: $text-muted;
    }
    """

    def __init__(self, crumbs: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.crumbs = list(crumbs or [])

    def set_crumbs(self, crumbs: list[str]) -> None:
        self.crumbs = list(crumbs)
        self.refresh()

    def render(self) -> Content:
        width = max(10, self.content_region.width or self.size.width or 80)
        items = [_shorten(c, max(12, width // 2)) for c in self.crumbs]
        dropped = False
        while len(items) > 1 and _cells(SEP.join(items)) + (len(SEP) + 1 if dropped else 0) > width:
            items.pop(0)
            dropped = True
        text = SEP.join(items)
        if dropped:
            text = "…" + SEP + text
        return Content(_shorten(text, width))


def _cells(text: str) -> int:
    return Content(text).cell_length


def _shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells with an ellipsis (CJK-aware)."""
    if _cells(text) <= width:
        return text
    out = ""
    for ch in text:
        if _cells(out + ch) > width - 1:
            break
        out += ch
    return out + "…"
