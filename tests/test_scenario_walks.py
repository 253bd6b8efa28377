"""Log to leaf, end to end: every synthetic scenario log walks the real tree to the right advice.

The log reader ranks scenarios; the tree then refines with what else is known (model runner,
vocabulary size, engine), so a few logs end in a more specific leaf of a neighbouring scenario.
"""

from __future__ import annotations

import pytest
from logkit import LOGS
from test_logs_scenarios import CASES

from oomwizard.engine import Done, walk
from oomwizard.frontend.options import DEMO_LOG
from oomwizard.kb.loader import get_kb
from oomwizard.logs.diagnose import diagnose_paths

REFINED = {
    # Gemma 3's 262,144-token vocabulary: the tree sends the sampler warm-up to the sort leaf.
    "sampler_warmup_k8s_cri.log": "sampler-sort-large-vocab",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_walks_to_a_leaf_of_its_scenario(name: str) -> None:
    kb = get_kb()
    diag = diagnose_paths([str(LOGS / name)])
    done = walk(kb, diag.facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done)
    expected = REFINED.get(name, CASES[name][0])
    assert expected in done.leaf.scenarios, f"{name}: reached {done.leaf.id} ({done.leaf.scenarios})"
    # The first question was answered from the log, not by default.
    assert done.path[0].how == "auto", done.path[0]


def test_demo_walks_to_the_sampler_fix_with_numbers() -> None:
    kb = get_kb()
    diag = diagnose_paths([str(DEMO_LOG)])
    done = walk(kb, diag.facts, {}, auto_accept=True, use_unknown=True)
    assert isinstance(done, Done) and done.leaf.id == "sampler-warmup"
    from oomwizard.report.leaf import leaf_text

    text = leaf_text(done.leaf, done.facts, done.path)
    # the profile already sampled the 1024 rows: give back utilization first, then halve the sequences
    assert "--gpu-memory-utilization 0.93" in text and "--max-num-seqs 512" in text
    assert text.index("--gpu-memory-utilization 0.93") < text.index("--max-num-seqs 512")
    assert "vllm serve meta-llama/Llama-3.3-70B-Instruct" in text
