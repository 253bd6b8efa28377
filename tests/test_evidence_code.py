"""Evidence level 'code': a claim read in released source, shown in both languages with a link to the file at its tag."""

from __future__ import annotations

from oomwizard.kb.coderef import parse_code_ref
from oomwizard.kb.loader import get_kb
from oomwizard.report.html.site import _source_link
from oomwizard.report.leaf import leaf_markdown, leaf_text


def test_a_reference_names_the_file_at_the_release_tag() -> None:
    ref = parse_code_ref("vllm/v1/worker/gpu_model_runner.py@0.8.0")
    assert ref is not None and ref.url == "https://github.com/vllm-project/vllm/blob/v0.8.0/vllm/v1/worker/gpu_model_runner.py"
    torch = parse_code_ref("torch/include/c10/cuda/CUDAAllocatorConfig.h@2.10.0")
    assert torch is not None and torch.url == "https://github.com/pytorch/pytorch/blob/v2.10.0/c10/cuda/CUDAAllocatorConfig.h"
    assert parse_code_ref("gpu_worker.py@0.8.0") is None and parse_code_ref("vllm/x.py@v0.8") is None


def test_renderers_label_the_level_in_both_languages_and_link_the_source() -> None:
    leaf = get_kb().leaves["sampler-warmup"]
    fix = next(f for f in leaf.fixes if f.id == "lower-max-num-seqs")
    assert fix.evidence == "code"
    en, zh = leaf_text(leaf, None, lang="en"), leaf_text(leaf, None, lang="zh")
    assert "checked in source" in en and "已核对源码" in zh
    md = leaf_markdown(leaf, lang="en")
    assert "[`vllm/v1/worker/gpu_model_runner.py@0.8.0`](https://github.com/vllm-project/vllm/blob/v0.8.0/vllm/v1/worker/gpu_model_runner.py)" in md
    html = _source_link("vllm/v1/worker/gpu_model_runner.py@0.8.0")
    assert 'href="https://github.com/vllm-project/vllm/blob/v0.8.0/' in html and "<code>" in html


def test_every_code_reference_in_the_knowledge_base_is_well_formed() -> None:
    kb = get_kb()
    refs = [s.url for leaf in kb.leaves.values() for s in leaf.sources if "@" in s.url and "://" not in s.url]
    refs += [s for leaf in kb.leaves.values() for f in leaf.fixes for s in f.sources if "@" in s and "://" not in s]
    assert len(refs) >= 30
    assert all(parse_code_ref(r) for r in refs)
