"""End to end in a real headless browser (Debian's /usr/bin/chromium driven by Playwright): the demo
server as a process, the resolver box and the inspector used with the keyboard, the ``?info`` page, on a
phone-sized and a desktop viewport, with screenshots saved in ``test-artifacts/``.

Chromium missing: the test fails under CI (``CI=true``) and is skipped elsewhere (``make test`` installs
it where it can: ``make browser``).  Never ``playwright install``: it downloads a browser."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_demo import demo_server, free_port

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 860}}


def _need_browser() -> None:
    missing = None
    if not CHROMIUM.exists():
        missing = f"{CHROMIUM} is missing (apt-get install -y chromium, or `make browser` as root)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "Playwright for Python is missing (pip install playwright; never `playwright install`)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run under CI: {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    with demo_server(tmp_path_factory.mktemp("e2e"), free_port()) as (base, roles, _):
        yield base, roles


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_pages_in_a_browser(server: tuple[str, dict[str, str]], viewport: str) -> None:
    _need_browser()
    from playwright.sync_api import Route, expect, sync_playwright

    base, roles = server
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORTS[viewport])  # type: ignore[arg-type]

            def offline(route: Route) -> None:  # the demo targets are never fetched from the network
                route.abort()

            page.route("https://example.org/**", offline)
            page.goto(base)
            assert page.title() == "ARK resolver · pidkit"
            # The page fits the viewport: nothing wider than the screen.
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= VIEWPORTS[viewport]["width"]
            page.screenshot(path=str(ARTIFACTS / f"home-{viewport}.png"), full_page=True)

            # Keyboard only: Tab reaches the resolver box first among the fields; type an ARK and press Enter.
            page.keyboard.press("Tab")
            for _ in range(10):
                if page.evaluate("document.activeElement.id") == "f-ark":
                    break
                page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.id") == "f-ark"
            page.keyboard.type("ark:/99999/" + roles["public"].split("/")[-1][:3] + "-"
                               + roles["public"].split("/")[-1][3:])
            with page.expect_response(lambda r: "/ark:" in r.url) as answer:
                page.keyboard.press("Enter")
            assert answer.value.status == 302
            assert answer.value.headers["location"] == "https://example.org/demo/rhythm"

            # The inspector, by label (in a fresh tab: the first one is still failing to reach example.org).
            page.close()
            page = browser.new_page(viewport=VIEWPORTS[viewport])  # type: ignore[arg-type]
            page.goto(base)
            page.get_by_label("Inspect any identifier").fill("AYvP5WgA-_-_ASNFZ4mr")
            page.get_by_label("Inspect any identifier").press("Enter")
            page.wait_for_url("**/inspect?id=*")
            expect(page.get_by_role("heading", name="xarkid (best reading) valid")).to_be_visible()
            expect(page.get_by_text("2023-11-14T22:13:20.000Z").first).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / f"inspect-{viewport}.png"), full_page=True)

            # The ?info page (HTML for a browser) and the tombstone page.
            page.goto(base + roles["public"] + "?info")
            shown = page.get_by_role("heading", name="A Study of Rhythm in Bach's Orgelbüchlein")
            expect(shown).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / f"info-{viewport}.png"), full_page=True)
            response = page.goto(base + roles["tombstoned"])
            assert response is not None and response.status == 410
            expect(page.get_by_text("withdrawn for good")).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / f"tombstone-{viewport}.png"), full_page=True)
        finally:
            browser.close()
