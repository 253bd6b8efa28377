"""Snapshot entry: the wizard with fixed inputs (fixture knowledge base, stand-in log and H200 machine).

Everything that could differ between runs is pinned: the machine is a fixed fact set, the
diagnosis is a fixed result named after ``vllm-serve.log`` beside this file, no clock is shown and
cursors do not blink when headless.
"""

from __future__ import annotations

from pathlib import Path

from .stand_ins import StandIns, make_app, no_gpu_machine

LOG = str(Path(__file__).resolve().parent / "vllm-serve.log")
NEXT_START = str(Path(__file__).resolve().parent / "next-start.log")
"""The log of a restart that failed again (max_num_seqs 512), for checking the fix."""


def build(*, with_log: bool = True, lang: str = "en", gpu: bool = True):  # type: ignore[no-untyped-def]
    si = StandIns(machine=None if gpu else no_gpu_machine())
    return make_app(logs=[LOG] if with_log else [], lang=lang, stand_ins=si)
