"""Chinese paragraphs wrapped over several lines must not render with spaces between characters."""

from __future__ import annotations

from oomwizard.kb.articles import join_cjk_lines
from oomwizard.kb.loader import get_kb


def test_joins_only_between_chinese_characters() -> None:
    text = "显存不够时\n先降低并发。\nThen English\nwraps 中文\n继续"
    assert join_cjk_lines(text) == "显存不够时先降低并发。\nThen English\nwraps 中文继续"


def test_code_blocks_and_lists_are_left_alone() -> None:
    text = "说明\n```bash\n# 中文注释\n# 第二行\n```\n- 第一项\n- 第二项\n"
    assert join_cjk_lines(text) == text


def test_loaded_chinese_articles_have_no_breaks_between_characters() -> None:
    kb = get_kb()
    for (kind, ident, lang), art in kb.articles.items():
        if lang != "zh":
            continue
        prose = art.body.split("```")[::2]
        for chunk in prose:
            assert join_cjk_lines(chunk) == chunk, f"{kind}/{ident}"
