from oomwizard.text.units import GIB, KIB, MIB, gib, human_bytes, mib


def test_sizes_are_written_as_vllm_and_pytorch_write_them():
    assert gib(int(14.99 * GIB)) == "14.99 GiB"
    assert gib(3 * GIB, 1) == "3.0 GiB"
    assert gib(3 * GIB, unit=False) == "3.00"
    assert gib(None) == "?" and mib(None) == "?"
    assert mib(512 * MIB) == "512 MiB"


def test_human_bytes_picks_the_largest_unit_that_keeps_the_number_at_least_one():
    assert human_bytes(900) == "900 B"
    assert human_bytes(KIB) == "1.00 KiB"
    assert human_bytes(12 * MIB) == "12.00 MiB"
    assert human_bytes(int(1.5 * GIB)) == "1.50 GiB"
    assert human_bytes(-2 * GIB) == "-2.00 GiB"


def test_mib_groups_thousands_for_progress_lines_and_can_drop_the_unit():
    assert mib(12_288 * MIB, grouped=True) == "12,288 MiB"
    assert mib(12_288 * MIB) == "12288 MiB"
    assert mib(1536 * KIB, 2) == "1.50 MiB"
    assert mib(12_288 * MIB, unit=False, grouped=True) == "12,288"
    assert mib(None, grouped=True) == "?"
