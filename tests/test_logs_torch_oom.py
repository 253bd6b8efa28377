"""The PyTorch OOM message parser, over every wording it meets."""

from __future__ import annotations

import pytest

from oomwizard.logs.torch_oom import parse_torch_oom, size_bytes

GIB = 1 << 30
MIB = 1 << 20

# Real PyTorch 2.11 messages read on an H200 (shared fixtures oom_default.json / oom_expandable.json).
H200_FILL = (
    "CUDA out of memory. Tried to allocate 1024.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 293.12 MiB "
    "is free. Including non-PyTorch memory, this process has 139.51 GiB memory in use. Of the allocated memory 139.00 GiB "
    "is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
    "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
    "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
)
H200_HUGE = (
    "CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 139.29 GiB is "
    "free. Including non-PyTorch memory, this process has 518.00 MiB memory in use. Of the allocated memory 0 bytes is "
    "allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
)
H200_EXPANDABLE_FILL = H200_FILL.replace("293.12 MiB", "289.12 MiB").replace("and 0 bytes is reserved", "and 4.00 MiB is reserved")


def test_sizes() -> None:
    assert size_bytes("0", "bytes") == 0
    assert size_bytes("512", "bytes") == 512
    assert size_bytes("1.50", "KiB") == 1536
    assert size_bytes("1024.00", "MiB") == GIB
    assert size_bytes("139.80", "GiB") == round(139.80 * GIB)
    assert size_bytes("2", "GB") == 2 * GIB  # old messages say GB and mean GiB


def test_h200_fixture_new_wording() -> None:
    oom = parse_torch_oom(H200_FILL)
    assert oom is not None
    assert oom.platform == "cuda"
    assert oom.requested == GIB
    assert oom.gpu_index == 0
    assert oom.total == round(139.80 * GIB)
    assert oom.free == round(293.12 * MIB)
    assert oom.this_process == round(139.51 * GIB)
    assert oom.other_processes == 0
    assert oom.allocated == 139 * GIB
    assert oom.reserved_unallocated == 0
    assert oom.private_pools is None
    assert oom.hint_var == "PYTORCH_CUDA_ALLOC_CONF"
    assert not oom.fragmented


def test_h200_fixture_request_larger_than_the_gpu() -> None:
    oom = parse_torch_oom(H200_HUGE)
    assert oom is not None
    assert oom.requested == 200 * GIB > oom.total  # type: ignore[operator]
    assert oom.this_process == 518 * MIB
    assert oom.allocated == 0


def test_h200_fixture_expandable() -> None:
    oom = parse_torch_oom(H200_EXPANDABLE_FILL)
    assert oom is not None
    assert oom.reserved_unallocated == 4 * MIB
    assert oom.free == round(289.12 * MIB)


def test_old_wording_process_and_private_pools() -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 1 has a total capacity of 23.57 GiB "
        "of which 605.88 MiB is free. Process 133288 has 22.97 GiB memory in use. Of the allocated memory 20.21 GiB is "
        "allocated by PyTorch, with 128.00 MiB allocated in private pools (e.g., CUDA Graphs), and 185.98 MiB is reserved "
        "by PyTorch but unallocated."
    )
    oom = parse_torch_oom(text)
    assert oom is not None
    assert oom.gpu_index == 1
    assert oom.processes == [(133288, round(22.97 * GIB))]
    assert oom.this_process == round(22.97 * GIB)  # the only user is this process, seen under the host's pid
    assert oom.other_processes == 0
    assert oom.private_pools == 128 * MIB
    assert oom.reserved_unallocated == round(185.98 * MIB)


def test_other_processes_beside_this_one() -> None:
    text = (
        "CUDA out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total capacity of 39.56 GiB of which 60.81 MiB is "
        "free. Process 3179876 has 1.62 GiB memory in use. Process 3179877 has 1.62 GiB memory in use. Including "
        "non-PyTorch memory, this process has 34.61 GiB memory in use. Process 3179875 has 1.62 GiB memory in use. Of "
        "the allocated memory 28.75 GiB is allocated by PyTorch, and 384.74 MiB is reserved by PyTorch but unallocated."
    )
    oom = parse_torch_oom(text)
    assert oom is not None
    assert oom.this_process == round(34.61 * GIB)
    assert oom.other_processes == 3 * round(1.62 * GIB)
    assert len(oom.processes) == 3


def test_torch_210_hint_and_fragmentation() -> None:
    text = (
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.75 GiB is "
        "free. Including non-PyTorch memory, this process has 77.42 GiB memory in use. Of the allocated memory 68.02 GiB "
        "is allocated by PyTorch, and 6.21 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory "
        "is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
    )
    oom = parse_torch_oom(text)
    assert oom is not None and oom.fragmented
    assert oom.hint_var == "PYTORCH_ALLOC_CONF"


def test_pre_2_0_parenthesised_wording() -> None:
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB "
            "already allocated; 3.44 MiB free; 14.84 GiB reserved in total by PyTorch)")
    oom = parse_torch_oom(text)
    assert oom is not None
    assert oom.requested == 20 * MIB
    assert oom.total == round(15.78 * GIB)
    assert oom.allocated == round(14.56 * GIB)
    assert oom.free == round(3.44 * MIB)
    assert oom.reserved_unallocated == round(14.84 * GIB) - round(14.56 * GIB)


def test_rocm_and_intel_wordings() -> None:
    hip = parse_torch_oom("HIP out of memory. Tried to allocate 192.00 GiB. GPU 0 has a total capacity of 191.98 GiB of "
                          "which 188.61 GiB is free.")
    assert hip is not None and hip.platform == "rocm" and hip.requested == 192 * GIB
    xpu = parse_torch_oom("XPU out of memory. Tried to allocate 2.00 GiB (GPU 0; 64.00 GiB total capacity; 60.50 GiB "
                          "already allocated; 61.00 GiB reserved in total by PyTorch)")
    assert xpu is not None and xpu.platform == "xpu"
    assert xpu.total == 64 * GIB and xpu.reserved_unallocated == round(0.5 * GIB)


def test_wrapped_message_lost_its_spaces() -> None:
    """A terminal copy may drop the space at a wrap point."""
    oom = parse_torch_oom("CUDA out of memory. Tried to allocate 1.00GiB. GPU 0 has a total capacity of 23.57 GiB of"
                          "which 100.00 MiB is free.")
    assert oom is not None and oom.requested == GIB and oom.free == 100 * MIB
    # the space lost right after a unit: "GiBof", "MiBis"
    oom = parse_torch_oom("HIP out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity of 63.98 GiB"
                          "of which 2.75 GiBis free. Of the allocated memory 50.25 GiB is allocated by PyTorch, and"
                          " 12.00 MiB is reserved by PyTorch but unallocated.")
    assert oom is not None and oom.platform == "rocm"
    assert (oom.total, oom.free) == (round(63.98 * GIB), round(2.75 * GIB))
    assert oom.allocated == round(50.25 * GIB) and oom.reserved_unallocated == 12 * MIB


def test_preemptive_rejection_wording() -> None:
    oom = parse_torch_oom("CUDA out of memory. Allocation was preemptively rejected because it would exceed "
                          "per_process_memory_fraction limit. Requested size: 4.00 GiB")
    assert oom is not None and oom.requested == 4 * GIB


@pytest.mark.parametrize("text", ["", "INFO all good", "If you are running out of memory, consider decreasing it"])
def test_not_an_oom(text: str) -> None:
    assert parse_torch_oom(text) is None


def test_facts_use_catalog_names() -> None:
    from oomwizard.facts.catalog import CATALOG

    oom = parse_torch_oom(H200_FILL)
    assert oom is not None
    facts = oom.facts()
    assert set(facts) <= set(CATALOG)
    assert facts["oom_requested_bytes"] == GIB


def test_fragmented_verdict_is_a_fact_the_tree_can_route_on() -> None:
    """One definition of "fragmented": the log reader's, handed to the tree as oom_fragmented."""
    from oomwizard.logs.signatures import FRAGMENTATION_MIN

    text = (
        "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
        "1.02 GiB is free. Including non-PyTorch memory, this process has 78.16 GiB memory in use. Of the "
        "allocated memory 72.90 GiB is allocated by PyTorch, and 4.61 GiB is reserved by PyTorch but "
        "unallocated."
    )
    oom = parse_torch_oom(text)
    assert oom is not None and oom.facts()["oom_fragmented"] is True
    small = text.replace("4.61 GiB is reserved", "100.00 MiB is reserved")
    oom = parse_torch_oom(small)
    assert oom is not None and oom.facts()["oom_fragmented"] is False
    assert FRAGMENTATION_MIN > 100 << 20
