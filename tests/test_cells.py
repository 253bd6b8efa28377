"""Wrapping by terminal cells: Chinese breaks between characters and never past the width."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len as rich_cell_len

from oomwizard.kb.loader import get_kb
from oomwizard.text.cells import cell_len, fill, ljust, shorten, wrap

ZH = "引擎已加载权重、确定了 KV cache 大小并捕获了 CUDA graph；服务启动前的最后一步（sampler 预热）放不下。"


def test_cell_len_agrees_with_rich_on_every_text_of_the_knowledge_base() -> None:
    kb = get_kb()
    texts = [leaf.conclusion(lang) for leaf in kb.leaves.values() for lang in ("en", "zh")]
    texts += [c.text(lang) for leaf in kb.leaves.values() for c in leaf.checks for lang in ("en", "zh")]
    assert any(cell_len(t) > len(t) for t in texts)  # the Chinese is really measured wider
    for t in texts:
        assert cell_len(t) == rich_cell_len(t), t


def test_chinese_wraps_between_characters_within_the_width() -> None:
    lines = wrap(ZH, 30, "  ", "    ")
    assert len(lines) > 2
    assert all(cell_len(line) <= 30 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == ZH.replace(" ", "")
    for line in lines[1:]:
        assert line.strip()[0] not in "，。、；：）"  # no line starts with a closing mark
    for line in lines:
        assert line.rstrip()[-1] not in "（《"


def test_english_words_and_long_urls_are_kept_whole() -> None:
    text = "see https://github.com/vllm-project/vllm/pull/30515 for the estimate of CUDA graph memory"
    lines = wrap(text, 20)
    assert "https://github.com/vllm-project/vllm/pull/30515" in lines
    assert " ".join(lines) == text


def test_a_list_mark_stays_with_a_unit_too_long_for_its_line() -> None:
    url = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"
    assert wrap(f"- {url}  (vLLM docs, conserving memory)", 40, "  ", "    ") == [f"  - {url}", "    (vLLM docs, conserving memory)"]
    assert wrap(f"12. {url}", 30)[0] == f"12. {url}"
    assert wrap(f"word {url}", 30) == ["word", url]  # a word is not a mark: the long unit gets its own line


def test_shorten_and_ljust_count_cells() -> None:
    assert shorten("（“Capturing CUDA graphs”）时显存不足", 12) == "（“Capturin…"  # （ takes 2 cells
    assert cell_len(shorten(ZH, 21)) <= 21 and shorten(ZH, 21).endswith("…")
    assert shorten("short", 10) == "short"
    assert cell_len(ljust("显存", 8)) == 8 and ljust("abc", 2) == "abc"


words = st.lists(st.one_of(st.text(alphabet="abcdefgh", min_size=1, max_size=12),
                           st.text(alphabet="显存不足，。（）", min_size=1, max_size=8)), max_size=40)


@given(words, st.integers(min_value=10, max_value=80))
def test_no_line_is_wider_than_the_width_unless_one_word_is(parts: list[str], width: int) -> None:
    text = " ".join(parts)
    for line in wrap(text, width, "  ", "  "):
        assert cell_len(line) <= width or " " not in line.strip()
    joined = "".join(fill(text, width, "  ", "  ").split())
    assert joined == "".join(text.split())
