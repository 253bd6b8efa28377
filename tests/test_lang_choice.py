"""Which language the program speaks: ``--lang``, else ``$OOMWIZARD_LANG``, else the locale, else
English; one function decides it for every frontend."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oomwizard.i18n import detect_lang


@pytest.mark.parametrize(("explicit", "env", "want"), [
    (None, {}, "en"),
    (None, {"LANG": "zh_CN.UTF-8"}, "zh"),
    (None, {"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # the first locale variable set wins
    (None, {"OOMWIZARD_LANG": "zh", "LANG": "en_US.UTF-8"}, "zh"),
    (None, {"OOMWIZARD_LANG": "zh_TW.UTF-8"}, "zh"),
    (None, {"OOMWIZARD_LANG": "EN", "LC_ALL": "zh_CN.UTF-8"}, "en"),
    (None, {"OOMWIZARD_LANG": "klingon", "LANG": "zh_CN.UTF-8"}, "zh"),  # passed over: the locale decides
    (None, {"OOMWIZARD_LANG": "zhx"}, "en"),
    ("en", {"OOMWIZARD_LANG": "zh", "LANG": "zh_CN.UTF-8"}, "en"),  # --lang wins over both
])
def test_the_order_of_the_sources(explicit: str | None, env: dict[str, str], want: str) -> None:
    assert detect_lang(explicit, env) == want


def test_an_unsupported_lang_option_is_an_error() -> None:
    with pytest.raises(ValueError, match="unsupported language 'fr'"):
        detect_lang("fr", {})


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "oomwizard", *args], capture_output=True, text=True,
                          env={**base, **env}, timeout=120)


def test_help_and_errors_follow_oomwizard_lang() -> None:
    zh = _run(["diagnose", "--help"], {"OOMWIZARD_LANG": "zh", "LANG": "en_US.UTF-8"})
    en = _run(["diagnose", "--help"], {"LANG": "en_US.UTF-8"})
    assert zh.returncode == en.returncode == 0
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh.stdout) and zh.stdout != en.stdout
    missing = _run(["diagnose", "/nonexistent/vllm.log"], {"OOMWIZARD_LANG": "zh"})
    assert missing.returncode == 4 and "无法读取" in missing.stderr, missing.stderr
