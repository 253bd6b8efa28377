"""Version numbers as vLLM and PyTorch print them, and the ranges the knowledge base uses."""

from __future__ import annotations

import pytest

from oomwizard.versions import Version, VersionError, VersionSpec, spec_contains


@pytest.mark.parametrize(
    ("text", "release", "prerelease", "local"),
    [
        ("0.11.0", (0, 11, 0), False, None),
        ("v0.8", (0, 8, 0), False, None),
        ("1", (1, 0, 0), False, None),
        ("0.11.1rc1", (0, 11, 1), True, None),
        ("0.11.0a1", (0, 11, 0), True, None),
        ("0.11.1.dev42+g1234abc.cu128", (0, 11, 1), True, "g1234abc.cu128"),
        ("0.10.2rc2.dev3", (0, 10, 2), True, None),
        ("0.6.6.post1", (0, 6, 6), False, None),
        ("2.5.1+cu124", (2, 5, 1), False, "cu124"),
        ("  0.9.2 ", (0, 9, 2), False, None),
    ],
)
def test_parse(text: str, release: tuple[int, int, int], prerelease: bool, local: str | None) -> None:
    v = Version.parse(text)
    assert (v.release, v.prerelease, v.local) == (release, prerelease, local)
    assert v.base == ".".join(map(str, release))
    assert v.minor == f"{release[0]}.{release[1]}"


@pytest.mark.parametrize("text", ["", "abc", "0.11.x", "latest", "0..1", "None"])
def test_not_a_version(text: str) -> None:
    with pytest.raises(VersionError):
        Version.parse(text)
    assert Version.try_parse(text) is None


def test_order_and_equality_use_the_release_only() -> None:
    assert Version.parse("0.11.1rc1") == Version.parse("0.11.1")
    assert hash(Version.parse("0.11.1.post1")) == hash(Version.parse("0.11.1"))
    assert Version.parse("0.9.2") < Version.parse("0.10.0") < Version.parse("0.10.2")
    assert max(Version.parse(v) for v in ["0.8.5", "0.11.0", "0.10.2"]).base == "0.11.0"
    assert Version.parse("0.11.0") != "0.11.0"
    assert str(Version.parse("0.11.1rc1")) == "0.11.1rc1"
    assert Version.parse(Version.parse("0.8")) == Version.parse("0.8.0")


def test_comparing_with_a_non_version_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        _ = Version.parse("0.1") < 5  # type: ignore[operator]


@pytest.mark.parametrize(
    ("spec", "inside", "outside"),
    [
        (">=0.8,<0.11", ["0.8.0", "0.10.2", "0.10.2rc1"], ["0.7.3", "0.11.0", "0.11.0rc1"]),
        (">=0.8, <0.11", ["0.9.0"], ["0.11.1"]),
        ("*", ["0.1", "99.0"], []),
        ("", ["0.6.6"], []),
        ("any", ["0.6.6"], []),
        ("0.11.0", ["0.11.0", "0.11.0.post1"], ["0.11.1"]),
        ("==0.11.*", ["0.11.0", "0.11.2"], ["0.12.0", "0.1.1"]),
        ("!=0.11.*", ["0.10.2", "0.12.0"], ["0.11.1"]),
        ("==0.*", ["0.33.0"], ["1.0.0"]),
        (">0.11,<=0.12", ["0.11.1", "0.12.0"], ["0.11.0", "0.12.1"]),
        ("!=0.11.0", ["0.11.1"], ["0.11.0"]),
        ("~=0.11.1", ["0.11.1", "0.11.9"], ["0.11.0", "0.12.0"]),
        ("~=1.2", ["1.2.0", "1.9.0"], ["1.1.9", "2.0.0"]),
    ],
)
def test_ranges(spec: str, inside: list[str], outside: list[str]) -> None:
    s = VersionSpec.parse(spec)
    for v in inside:
        assert s.contains(v), (spec, v)
        assert v in s
        assert spec_contains(spec, v)
    for v in outside:
        assert not s.contains(v), (spec, v)


@pytest.mark.parametrize("spec", ["abc", ">=", ">=0.8,", "=>0.8", ">=0.11.*", "~=1", ">=0.8;<0.9"])
def test_bad_ranges(spec: str) -> None:
    with pytest.raises(VersionError):
        VersionSpec.parse(spec)


def test_any_range_and_text() -> None:
    assert VersionSpec.parse(None).is_any and VersionSpec.parse("*").is_any
    s = VersionSpec.parse(">=0.8,<0.11")
    assert not s.is_any and str(s) == ">=0.8,<0.11"
    assert VersionSpec.parse(s) is s
    assert [str(c) for c in s.clauses] == [">=0.8", "<0.11"]
