"""The back office in a real browser (Debian's /usr/bin/chromium driven by Playwright), against the demo
server as a process: sign in → mint → edit (with its preview) → withdraw → sign out, at 390 px and at a
desktop width.  Every page: no Content-Security-Policy violation (the policy is enforced), nothing wider
than the screen, and axe-core (vendored, ``AXE.md``) finds no serious or critical accessibility problem.
Signing in and minting work with the keyboard alone, every element reached showing where the focus is.
Screenshots of every step are saved under ``$PIDKIT_SCREENSHOTS`` (default ``build/screenshots/``, not in
git), each test's in a folder of its own: ``office-*``, ``admin-*`` and ``keyboard-*`` beside the whole
day's ``day-*`` (``test_office_day.py``)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_browser import ARGS, CHROMIUM, VIEWPORTS, _need_browser

from pidkit import noid
from pidkit.store import open_store
from test_demo import demo_server, free_port

AXE = Path(__file__).resolve().parent / "axe.min.js"
#: Where the browser tests save their screenshots (one folder per test and width).
SHOTS = Path(os.environ.get("PIDKIT_SCREENSHOTS") or AXE.parents[2] / "build" / "screenshots")
SIGNIN = re.compile(r"demo back office: (\S+)  user (\S+)  password (\S+)  \(shown once\)")


ADMIN, ADMIN_PASSWORD = "e2e-admin", "an administrator's long password"


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    data = tmp_path_factory.mktemp("office-e2e")
    with demo_server(data, free_port()) as (base, _, output):
        found = SIGNIN.search(output)
        assert found is not None, output
        with open_store(f"sqlite:///{data / 'pidkit-demo.db'}") as store:  # beside the running server
            store.add_user(ADMIN, ADMIN_PASSWORD, naan="99999", admin=True)
        yield base, found[2], found[3]


def _axe(page: Any, where: str) -> None:
    """Run axe-core on the page: no serious or critical violation."""
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result
           if v["impact"] in ("serious", "critical")]  # fmt: skip
    assert not bad, (where, bad)


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_a_day_in_the_back_office(office: tuple[str, str, str], viewport: str) -> None:
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    base, user, password = office
    size = VIEWPORTS[viewport]
    folder = _shots_folder(f"office-{viewport}")
    shots: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport=size)  # type: ignore[arg-type]
            violations: list[str] = []
            page.on("console", lambda m: violations.append(m.text) if "Security Policy" in m.text else None)
            page.route("https://example.org/**", lambda route: route.abort())  # targets are never fetched

            def check(step: str) -> None:
                page.wait_for_load_state()  # a click that navigates returns before the new page has loaded
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= size["width"], (step, width)
                shot = folder / f"{len(shots):02d}-{step}.png"
                page.screenshot(path=str(shot), full_page=True)
                shots.append(shot)
                _axe(page, step)

            page.goto(base + "office")  # not signed in: to the sign-in page
            assert "/office/signin" in page.url
            check("signin")
            page.get_by_label("User name").fill(user)
            page.get_by_label("Password").fill("not the password")
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("alert")).to_be_visible()  # refused, said so
            page.get_by_label("User name").fill(user)
            page.get_by_label("Password").fill(password)
            page.get_by_label("Password").press("Enter")
            page.wait_for_url("**/office")
            expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
            check("dashboard")

            page.get_by_role("link", name="Create").click()
            check("create")
            form = page.locator("form[action='/office/mint']")
            form.get_by_label("Target URL").fill(f"https://example.org/e2e/{viewport}")
            form.get_by_label("What (title)").fill(f"Made in a browser ({viewport})")
            form.get_by_label("Other metadata").fill("dc.type: Text")
            form.get_by_role("button", name="Mint").click()
            page.wait_for_url("**/office/id?ark=*")
            ark = page.locator("h1").inner_text()
            assert ark.startswith("ark:99999/fk4")
            shown = page.get_by_role("cell", name=f"Made in a browser ({viewport})", exact=True)
            expect(shown).to_be_visible()
            expect(page.get_by_text("by user:demo").first).to_be_visible()
            check("ark")

            page.get_by_role("link", name="Edit").click()
            page.get_by_label("Target URL").fill(f"https://example.org/e2e/{viewport}/moved")
            page.get_by_role("button", name="Preview the changes").click()
            expect(page.get_by_role("heading", name="These fields change")).to_be_visible()
            check("edit-preview")
            page.get_by_role("button", name="Apply these changes").click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_role("link", name=f"https://example.org/e2e/{viewport}/moved")).to_be_visible()

            page.get_by_label("Reason for withdrawing").fill("moved to another catalogue")
            page.get_by_role("button", name="Withdraw").click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_text("withdrawn", exact=True).first).to_be_visible()
            expect(page.get_by_text("moved to another catalogue").first).to_be_visible()
            check("withdrawn")

            page.get_by_role("link", name="Find").click()
            page.get_by_label("ARK or its beginning").fill(ark)
            page.get_by_label("Status").select_option("unavailable")
            page.get_by_role("button", name="Find").click()
            page.wait_for_url("**/office/find?*")
            expect(page.get_by_role("link", name=ark)).to_be_visible()
            check("find")

            page.get_by_role("link", name="API keys").click()
            check("keys")
            page.get_by_role("button", name="Sign out", exact=True).click()
            page.wait_for_url("**/office/signin")
            page.goto(base + "office")
            assert "/office/signin" in page.url  # the session is gone
            assert not violations, violations
        finally:
            browser.close()
    assert len(shots) == 8 and all(s.stat().st_size > 0 for s in shots)
    print(f"screenshots: {folder}")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_admin_import_export_copy_and_api_docs(office: tuple[str, str, str], viewport: str) -> None:
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    base = office[0]
    size = VIEWPORTS[viewport]
    folder = _shots_folder(f"admin-{viewport}")
    shots: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            context = browser.new_context(viewport=size)  # type: ignore[arg-type]
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base.rstrip("/"))
            page = context.new_page()
            violations: list[str] = []
            page.on("console", lambda m: violations.append(m.text) if "Security Policy" in m.text else None)
            page.on("pageerror", lambda e: violations.append(str(e)))
            page.route("https://example.org/**", lambda route: route.abort())

            def check(step: str) -> None:
                page.wait_for_load_state()  # a click that navigates returns before the new page has loaded
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= size["width"], (step, width)
                shot = folder / f"{len(shots):02d}-{step}.png"
                page.screenshot(path=str(shot), full_page=True)
                shots.append(shot)
                _axe(page, step)

            page.goto(base + "office/signin")
            page.get_by_label("User name").fill(ADMIN)
            page.get_by_label("Password").fill(ADMIN_PASSWORD)
            page.get_by_label("Password").press("Enter")
            page.wait_for_url("**/office")

            page.get_by_role("link", name="Admin").click()
            check("admin")
            page.get_by_role("link", name="NAANs and shoulders").click()
            check("admin-naans")
            shoulder = f"w{len(viewport)}"
            form = page.locator("form[action='/office/admin/shoulders']")
            form.get_by_label("Shoulder").fill(shoulder)
            form.get_by_role("button", name="Add the shoulder").click()
            page.wait_for_url("**/office/admin/naans")
            page.goto(base + "office/admin/minters")
            check("admin-minters")
            form = page.locator("form[action='/office/admin/minters']")
            form.get_by_label("Minter name").fill(f"m-{viewport}")
            form.get_by_label("Shoulder", exact=True).fill(f"m{len(viewport)}")
            form.get_by_role("button", name="Create the minter").click()
            page.wait_for_url("**/office/admin/minters")
            expect(page.get_by_role("rowheader", name=f"m-{viewport}")).to_be_visible()
            page.goto(base + "office/admin/users")
            check("admin-users")
            page.get_by_role("link", name=ADMIN).click()
            check("admin-user")
            page.goto(base + "office/admin/keys")
            check("admin-keys")

            page.get_by_role("link", name="Import").click()
            check("import")
            ark = f"ark:99999/fk4e2e{viewport}"
            ark += noid.check_char(ark.removeprefix("ark:"))  # the demo's fk4 minter has a k template
            line = json.dumps({"text": ark, "target": f"https://example.org/{viewport}"})

            def upload(content: str) -> None:
                from playwright.sync_api import FilePayload

                one = FilePayload(name="one.jsonl", mimeType="application/x-ndjson", buffer=content.encode())
                page.get_by_label("File").set_input_files(files=[one])

            upload(line + "\n{bad\n")
            page.get_by_role("button", name="Check the file").click()
            expect(page.get_by_role("rowheader", name="line 2")).to_be_visible()  # the bad line, named
            check("import-problems")
            upload(line + "\n")
            page.get_by_role("button", name="Check the file").click()
            expect(page.get_by_role("heading", name="Import: preview")).to_be_visible()
            check("import-preview")
            page.get_by_role("button", name="Import these bindings").click()
            expect(page.get_by_role("heading", name="Imported")).to_be_visible()

            page.get_by_role("link", name="Export").click()
            check("export")

            page.goto(base + "office/id?ark=" + ark)
            copy = page.get_by_role("button", name="Copy ARK")  # added by /static/office.js
            expect(copy).to_be_visible()
            copy.click()
            status = page.locator("section .hint[role=status]")
            page.wait_for_function("() => document.querySelector('section .hint[role=status]').textContent")
            assert "ARK" in status.inner_text()
            check("ark-copy")

            page.goto(base + "api/docs")
            expect(page.get_by_role("heading", name="pidkit API")).to_be_visible()
            check("api-docs")
            assert not violations, violations
        finally:
            browser.close()
    assert len(shots) == 12 and all(s.stat().st_size > 0 for s in shots)
    print(f"screenshots: {folder}")


def _shots_folder(name: str) -> Path:
    """A test's screenshot folder under :data:`SHOTS`, emptied (a run's screenshots are that run's)."""
    folder = SHOTS / name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    return folder


#: What the focused element is, and how its focus shows (outline or box shadow), as computed.
_FOCUSED = """() => {
  const e = document.activeElement, s = getComputedStyle(e);
  const label = e.labels && e.labels.length ? e.labels[0].textContent : "";
  return {tag: e.tagName.toLowerCase(), type: e.type || "", id: e.id, name: label || e.textContent.trim(),
          outline: s.outlineStyle, width: parseFloat(s.outlineWidth) || 0, shadow: s.boxShadow};
}"""


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_keyboard_only_sign_in_and_mint(office: tuple[str, str, str], viewport: str) -> None:
    """Sign in and mint an ARK with the keyboard alone (Tab, typing, Enter); every element the focus
    reaches on the way shows it (an outline of some width, or a box shadow)."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    base, user, password = office
    size = VIEWPORTS[viewport]
    folder = _shots_folder(f"keyboard-{viewport}")
    shots: list[Path] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport=size)  # type: ignore[arg-type]
            page.route("https://example.org/**", lambda route: route.abort())
            visited: list[str] = []

            def tab_to(name: str, tag: str) -> None:
                """Tab until the focus is on the ``tag`` element named ``name`` (its label or text),
                checking the focus shows on each element reached."""
                for _ in range(40):
                    page.keyboard.press("Tab")
                    now = page.evaluate(_FOCUSED)
                    where = f"{now['tag']}#{now['id']} {now['name']!r}"
                    visible = (now["outline"] != "none" and now["width"] > 0) or now["shadow"] != "none"
                    assert visible, (page.url, where, now)
                    visited.append(where)
                    if now["tag"] == tag and now["name"] == name:
                        return
                raise AssertionError(f"no {tag} {name!r} reached with Tab on {page.url}: {visited[-40:]}")

            def shot(step: str) -> None:
                path = folder / f"{len(shots):02d}-{step}.png"
                page.screenshot(path=str(path), full_page=True)  # the focus ring, as seen
                shots.append(path)

            page.goto(base + "office/signin")
            tab_to("User name", "input")
            page.keyboard.type(user)
            shot("signin-name-focused")
            tab_to("Password", "input")
            page.keyboard.type(password)
            page.keyboard.press("Enter")
            page.wait_for_url("**/office")
            tab_to("Create", "a")
            shot("dashboard-link-focused")
            page.keyboard.press("Enter")
            page.wait_for_url("**/office/create")
            tab_to("Minter", "select")  # the first minter is chosen already: the demo's fk4 one
            tab_to("Target URL", "input")
            page.keyboard.type(f"https://example.org/keyboard/{viewport}")
            tab_to("What (title)", "input")
            page.keyboard.type(f"Typed, not clicked ({viewport})")
            tab_to("Mint", "button")
            shot("create-button-focused")
            page.keyboard.press("Enter")
            page.wait_for_url("**/office/id?ark=*")
            assert page.locator("h1").inner_text().startswith("ark:99999/fk4")
            shown = page.get_by_role("cell", name=f"Typed, not clicked ({viewport})", exact=True)
            expect(shown).to_be_visible()
            expect(page.get_by_role("link", name=f"https://example.org/keyboard/{viewport}")).to_be_visible()
            shot("minted")
        finally:
            browser.close()
    kinds = {v.split("#")[0] for v in visited}
    assert {"a", "input", "select", "button", "textarea"} <= kinds, visited  # each kind showed its focus
    assert len(shots) == 4 and all(s.stat().st_size > 0 for s in shots)
