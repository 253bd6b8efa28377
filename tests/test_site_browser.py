"""The offline site in a real headless browser: from ``file://`` and from a static web server.

Needs a Chromium from the distribution (``apt-get install chromium``; or set OOMWIZARD_BROWSER to
a Chromium/Chrome binary) and the Playwright package (``pip install playwright``; its own browser
download is not used). Without either, every test here is skipped and says which is missing.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from oomwizard.kb.loader import get_kb
from oomwizard.onboard.data import fill_placeholders, get_onboarding
from oomwizard.report.export import export


def _browser() -> str | None:
    env = os.environ.get("OOMWIZARD_BROWSER")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = _browser()
try:
    import playwright.sync_api as _pw  # noqa: F401

    PLAYWRIGHT = True
except ImportError:
    PLAYWRIGHT = False

pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="no headless Chromium: apt-get install chromium (or set OOMWIZARD_BROWSER)"),
    pytest.mark.skipif(not PLAYWRIGHT, reason="Playwright is not installed: pip install playwright"),
    pytest.mark.xdist_group("site-browser"),  # one worker builds the site and starts Chromium, not each
]

ONBOARD_PAGES = ("browse.html", "memory.html", "glossary.html", "tour/1-log.html", "index.html",
                 "leaves/sampler-warmup.html", "questions/symptom.html")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert export(get_kb(), "html", out, None, force=True) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        yield b
        b.close()


class Page:
    """A page with every console error and uncaught exception recorded."""

    def __init__(self, browser: object, url: str) -> None:
        self.errors: list[str] = []
        self.page = browser.new_page()  # type: ignore[attr-defined]
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url}"))
        self.page.goto(url)
        self.page.wait_for_load_state("load")

    def search(self, text: str) -> list[str]:
        self.page.fill("#browse-filter", text)
        return self.page.eval_on_selector_all(
            "#scenario-list li.scenario:not([hidden])", "els => els.map(e => e.id)")

    def close(self) -> None:
        self.page.close()


@pytest.mark.parametrize("lang", ("en", "zh"))
def test_pages_load_from_file_without_console_errors(site: Path, browser: object, lang: str) -> None:
    for name in ONBOARD_PAGES:
        page = Page(browser, (site / lang / name).as_uri())
        assert page.page.title(), name
        assert page.errors == [], (name, page.errors)
        page.close()


def test_pasting_each_error_message_finds_its_scenario(site: Path, browser: object) -> None:
    page = Page(browser, (site / "en" / "browse.html").as_uri())
    total = len(page.search(""))
    assert total == len(get_kb().scenarios)
    checked = 0
    for info in get_onboarding().scenarios.values():
        for m in info.messages:
            if m.kind != "error":
                continue
            shown = page.search("(EngineCore pid=123) ERROR 12-01 10:00:00 [core.py:1] " + fill_placeholders(m.text, "7"))
            assert page.page.get_attribute("#scenario-list", "data-how") == "diagnosis", m.text
            assert info.id in shown[:2], (info.id, shown)
            checked += 1
    assert checked >= 12
    assert page.errors == []


def test_word_search_and_gpu_generation(site: Path, browser: object) -> None:
    page = Page(browser, (site / "zh" / "browse.html").as_uri())
    assert page.search("--max-lora-rank") == ["lora"]
    hopper = page.search("hopper")
    assert hopper and len(hopper) < len(get_kb().scenarios)
    assert page.search("nothing-matches-this") == []
    assert "0" in page.page.inner_text("#browse-count")
    assert page.search("") and page.page.get_attribute("#scenario-list", "data-how") == "all"


def test_links_of_the_onboarding_pages_resolve(site: Path, browser: object) -> None:
    checked = 0
    for lang in ("en", "zh"):
        for name in ONBOARD_PAGES:
            page = Page(browser, (site / lang / name).as_uri())
            hrefs = page.page.eval_on_selector_all("a[href]", "els => els.map(e => new URL(e.getAttribute('href'), document.baseURI).href)")
            page.close()
            for href in hrefs:
                url = urlparse(href)
                if url.scheme == "https":
                    continue
                assert url.scheme == "file", href
                target = Path(unquote(url.path))
                assert target.is_file(), f"{lang}/{name}: {href}"
                if url.fragment:
                    html = target.read_text(encoding="utf-8")
                    assert re.search(rf'id="{re.escape(url.fragment)}"', html), f"{lang}/{name}: {href}"
                checked += 1
    assert checked > 200


def test_language_switch_and_copy_button(site: Path, browser: object) -> None:
    page = Page(browser, (site / "en" / "leaves" / "sampler-warmup.html").as_uri())
    page.page.click("a[hreflang='zh-CN']")
    page.page.wait_for_load_state("load")
    assert page.page.url.endswith("/zh/leaves/sampler-warmup.html")
    button = page.page.locator("pre.cmd .copy-button").first
    assert button.inner_text() == "复制"
    # The label changes when the clipboard promise settles and changes back 1.5 s later,
    # so a loaded machine can miss it by reading once: record every label it shows.
    button.evaluate("b => { window.labels = []; new MutationObserver(() => window.labels.push(b.textContent))"
                    ".observe(b, {childList: true, characterData: true, subtree: true}); }")
    button.click()
    page.page.wait_for_function("window.labels.length > 0", timeout=10_000)
    assert page.page.evaluate("window.labels")[0] == "已复制"
    assert page.errors == []


def test_svg_pictures_are_inline(site: Path) -> None:
    html = (site / "en" / "memory.html").read_text(encoding="utf-8")
    assert html.count("<svg") == 2 and "<img" not in html
    for sid in get_kb().scenarios:
        assert f'browse.html#{sid}"' in html, sid  # every scenario points at its step


def test_site_works_from_a_static_server(site: Path, browser: object) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        page = Page(browser, f"{base}/en/browse.html")
        shown = page.search("ValueError: max_num_seqs (512) exceeds available Mamba cache blocks (130)")
        assert shown[:1] == ["mamba-cache-blocks"]
        page.page.goto(f"{base}/zh/memory.html")
        assert page.page.locator("svg.budget rect.part-kv").count() == 1
        assert page.errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_every_rule_of_the_index_compiles_in_the_browser(site: Path, browser: object) -> None:
    from oomwizard.logs.signatures import SIGNATURES

    page = Page(browser, (site / "en" / "browse.html").as_uri())
    total, bad = page.page.evaluate(
        "() => { const s = window.OOMWIZARD_INDEX.signatures; const bad = [];"
        " for (const x of s) { try { new RegExp(x.src, 'i') } catch (e) { bad.push(x.src) } } return [s.length, bad]; }")
    assert bad == []
    assert total >= len([s for s in SIGNATURES if s.scenario in get_kb().scenarios])
