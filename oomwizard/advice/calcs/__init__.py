"""Calculations for command templates, one module per subject of the knowledge base.

- ``kv``: a context length whose KV cache fits, the KV cache size vLLM suggests
- ``utilization``: ``--gpu-memory-utilization`` that fits the free memory or feeds the KV cache
- ``concurrency``: fewer sequences or tokens per step while serving, a step whose logits fit
- ``weights``: tensor-parallel size and CPU offload for weights that do not fit one GPU
- ``host``: V0 swap space, KV offloading, unified-memory machines
- ``startup``: the profiling pass's token budget, multimodal limits, pipeline stages
- ``graphs``: CUDA graph memory; ``capture``: fewer graphs; ``spec_decode``: speculative decoding
- ``sampler``: the sampler warm-up; ``mamba``: hybrid models' cache blocks; ``sleep``: sleep mode;
  ``alloc``: allocator options
- ``readings``: what several subjects read alike (the failing run's settings, the start-up cap)

A result is built with :func:`oomwizard.advice.numbers.explain` (value, arithmetic in English and
Chinese, the facts it read). Titles and sentences are catalogue keys ``calc.<subject>.…`` in
``content/{en,zh}/strings.yaml``, formatted by :func:`oomwizard.advice.numbers.said`: one whole
sentence per key, with a placeholder for every number, so a translator reads what the operator
reads (lint reports Chinese written here). Leaves name calculations, never modules, so a
calculation may move between modules freely.
Each module registers its functions with :func:`oomwizard.advice.numbers.calc` when imported;
:mod:`oomwizard.advice.numbers` imports this package so every name is known before any template
is filled or linted.
"""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
