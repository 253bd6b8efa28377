"""PyTorch's own figures read for what they rule out: a failure while the driver had far more free
than the request was not short of capacity (PyTorch asks the driver for a new segment before it
gives up), and in a container the process that is this one is the one whose use covers what
PyTorch allocated, not the largest."""

from __future__ import annotations

from oomwizard.logs.diagnose import diagnose_text
from oomwizard.logs.signatures import CONFIDENT
from oomwizard.logs.torch_oom import parse_torch_oom

PLENTY = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 7 has a total capacity of "
          "79.11 GiB of which 66.43 GiB is free. Including non-PyTorch memory, this process has 0 bytes memory in "
          "use. Of the allocated memory 8.51 GiB is allocated by PyTorch, and 856.16 MiB is reserved by PyTorch but "
          "unallocated.")


def _ranked(text: str) -> list[tuple[str, float]]:
    return [(m.scenario, m.score) for m in diagnose_text(text).matches]


def test_plenty_free_is_neither_fragmentation_nor_a_confident_claim() -> None:
    oom = parse_torch_oom(PLENTY)
    assert oom is not None and oom.free_covers and not oom.fragmented
    ranked = _ranked(PLENTY)
    assert ranked[0][0] == "sleep-mode" and ranked[0][1] < CONFIDENT, ranked
    assert "fragmentation" not in dict(ranked)


def test_with_little_free_the_same_figures_are_fragmentation() -> None:
    tight = PLENTY.replace("66.43 GiB is free", "12.00 MiB is free")
    oom = parse_torch_oom(tight)
    assert oom is not None and not oom.free_covers and oom.fragmented
    assert _ranked(tight)[0][0] == "fragmentation"


def test_sleep_mode_off_in_the_log_is_not_offered() -> None:
    args = "INFO 03-02 10:00:00 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-8B', 'enable_sleep_mode': False}\n"
    assert "sleep-mode" not in dict(_ranked(args + PLENTY))


def test_a_per_process_cap_is_a_real_limit() -> None:
    capped = PLENTY.replace("Including non-PyTorch", "10.00 GiB allowed; Including non-PyTorch")
    oom = parse_torch_oom(capped)
    assert oom is not None and oom.allowed and not oom.free_covers


def test_in_a_container_this_process_is_the_one_whose_use_covers_pytorchs() -> None:
    text = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity "
            "of 79.11 GiB of which 391.12 MiB is free. Process 247516 has 50.52 GiB memory in use. Process 477367 has "
            "28.19 GiB memory in use. Of the allocated memory 27.48 GiB is allocated by PyTorch, and 120.00 MiB is "
            "reserved by PyTorch but unallocated.")
    oom = parse_torch_oom(text)
    assert oom is not None and abs(oom.this_process - 28.19 * 2**30) < 2**20 and abs(oom.other_processes - 50.52 * 2**30) < 2**20
    ranked = _ranked("llm = LLM(model='stabilityai/StableBeluga2', tensor_parallel_size=2)\n" + text)
    assert ranked[0][0] == "insufficient-free-memory-at-startup", ranked
    # with no allocation figure, the largest user is taken for this process, as before
    bare = parse_torch_oom(text.split(" Of the allocated")[0])
    assert bare is not None and abs(bare.this_process - 50.52 * 2**30) < 2**20


def test_a_small_reserve_beside_a_full_gpu_is_a_sign_not_the_cause() -> None:
    small = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 192.00 MiB. GPU 3 has a total capacity "
             "of 15.77 GiB of which 57.12 MiB is free. Including non-PyTorch memory, this process has 15.70 GiB memory "
             "in use. Of the allocated memory 13.93 GiB is allocated by PyTorch, and 637.72 MiB is reserved by PyTorch "
             "but unallocated.")
    ranked = _ranked(small)
    assert dict(ranked)["fragmentation"] < CONFIDENT, ranked
    # the same reserve on a small card is 5 % of it and more: the cause
    card = small.replace("15.77 GiB of which", "8.00 GiB of which")
    assert _ranked(card)[0] == ("fragmentation", 0.82)


def test_other_processes_holding_most_of_the_gpu_come_before_fragmentation() -> None:
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of "
            "22.05 GiB of which 113.62 MiB is free. Process 198 has 13.57 GiB memory in use. Including non-PyTorch "
            "memory, this process has 7.79 GiB memory in use. Of the allocated memory 6.79 GiB is allocated by "
            "PyTorch, and 1.78 GiB is reserved by PyTorch but unallocated.")
    ranked = _ranked(text)
    assert ranked[0][0] == "insufficient-free-memory-at-startup" and ("fragmentation", 0.82) in ranked, ranked
