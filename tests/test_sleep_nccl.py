"""Sleep mode can release NCCL's buffers from 0.30.0 (--enable-nccl-comm-suspend, gpu_worker.py@0.30.0)."""

from __future__ import annotations

from kbkit import facts, script


def test_nccl_suspend_is_offered_from_0_30():
    ok, cmd = script("sleep-mode", "suspend-nccl-in-sleep", facts(vllm_version="0.30.0", sleep_mode=True))
    assert ok and "--enable-nccl-comm-suspend" in cmd
    ok, _ = script("sleep-mode", "suspend-nccl-in-sleep", facts(vllm_version="0.29.0", sleep_mode=True))
    assert not ok
