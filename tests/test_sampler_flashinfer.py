"""The sampler warm-up's arithmetic reads which top-k/top-p path the log says vLLM took.

The demo log (0.11.0) says ``Using FlashInfer for top-p & top-k sampling.``: FlashInfer's kernels
do not sort, so the 38 B-per-element sort model is an upper bound there, and the explanation must
say so rather than describe a sort the log rules out.
"""

from __future__ import annotations

from oomwizard.advice.calcs.sampler import flashinfer_samples, warmup_peak_bytes
from oomwizard.facts.model import Fact, FactSet
from oomwizard.frontend.options import DEMO_LOG
from oomwizard.logs.diagnose import diagnose_text

LINE = "(EngineCore_DP0 pid=1) INFO 10-14 09:12:29 [topk_topp_sampler.py:58] Using FlashInfer for top-p & top-k sampling."
NATIVE = ("(EngineCore_DP0 pid=1) WARNING 10-14 09:12:29 [topk_topp_sampler.py:70] FlashInfer is not available. "
          "Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, "
          "please install FlashInfer.")


def test_the_demo_log_says_flashinfer_samples_and_the_peak_says_upper_bound() -> None:
    diag = diagnose_text(DEMO_LOG.read_text(encoding="utf-8"), DEMO_LOG.name)
    fact = diag.facts.get("sampler_flashinfer")
    assert fact is not None and fact.value is True and fact.line == 11
    facts = diag.facts.copy()
    facts.add(Fact("vocab_size", 128256, "config", kind="log"))
    peak = warmup_peak_bytes(facts, 1024)
    assert peak is not None
    assert "upper bound" in peak[1].en and "FlashInfer" in peak[1].en and "vllm-serve.log:11" in peak[1].en
    assert "FlashInfer" in peak[1].zh


def test_the_pytorch_fallback_is_read_as_not_flashinfer() -> None:
    diag = diagnose_text(NATIVE + "\n", "vllm.log")
    assert diag.facts.value("sampler_flashinfer") is False
    assert not flashinfer_samples(diag.facts)
    facts = FactSet.of([Fact("vllm_version", "0.11.0", "log"), Fact("vocab_size", 128256, "config"),
                        Fact("sampler_flashinfer", False, "log")])
    peak = warmup_peak_bytes(facts, 1024)
    assert peak is not None and "upper bound" not in peak[1].en


def test_one_line_is_enough() -> None:
    assert diagnose_text(LINE + "\n", "vllm.log").facts.value("sampler_flashinfer") is True
