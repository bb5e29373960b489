"""A whole day in the back office, in real Chromium, on both backends and at both widths (issue 14): on
SQLite at a phone's width, on PostgreSQL at a desktop's.

``pidkit serve --demo`` runs as a process on an SQLite file and on a fresh PostgreSQL schema; the demo
user signs in (after a wrong password is refused), mints three ARKs, mints three reserved ids and
deletes one (then not found: the office's 404), edits one ARK's target and metadata, withdraws another,
finds it, imports a CSV with one bad line (refused, the line named), then the fixed file, then a JSON
Lines file too long to import at once (the background import's progress page, then its outcome),
exports the shoulder as CSV, tombstones the third ARK (its confirmation page), is refused the
administration (the office's 403) and sees a page that does not exist (404), creates an API key and
mints with it over the REST API, and signs out.  Refused along the way: a form whose CSRF token was
changed (nothing changes), and a session that expired (back to the sign-in page).  Every page passes
axe-core (no serious or critical violation), fits the screen
and raises no Content-Security-Policy violation; a screenshot of every page at both widths is saved
under ``$PIDKIT_SCREENSHOTS`` (default ``build/screenshots/``, not in git).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_browser import ARGS, CHROMIUM, VIEWPORTS, _need_browser
from test_office_browser import SIGNIN, _axe, _shots_folder

from _schema import held
from pidkit import noid
from pidkit.web.officeimport import INLINE_LINES
from test_demo import demo_server, free_port

SECRET = re.compile(r"^pk_\S+$")


def _expire_sessions(db: str) -> int:
    """Make every session of the store expired (as the clock would); return how many there were."""
    past = "2000-01-01T00:00:00.000000Z"
    if db.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(db.removeprefix("sqlite:///"))) as conn, conn:
            return conn.execute("UPDATE sessions SET expires = ?", (past,)).rowcount
    import psycopg

    with psycopg.connect(db, autocommit=True) as pg:
        return pg.execute("UPDATE sessions SET expires = %s", (past,)).rowcount


def _writes_held(db: str) -> contextlib.AbstractContextManager[None]:
    """Hold the store's write lock for NAAN 99999 from this process (SQLite: the database's write lock;
    PostgreSQL: the advisory lock the store takes per NAAN, by its own statement), so that an import
    started meanwhile waits (reads go on); released, nothing written, when the block ends."""
    from pidkit.store.postgres import _LOCK_NAAN, NAAN_LOCK, STAMP_LOCK

    return held(db, _LOCK_NAAN.replace("?", "%s"), (NAAN_LOCK, "99999", STAMP_LOCK))


@pytest.fixture
def store_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        new_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_url()
    return f"sqlite:///{tmp_path / 'day.db'}"


#: Each backend once and each width once (the pages are the same on both backends; what the backends
#: do differently is tested without a browser): two whole days, not four.
DAYS = [("sqlite", "phone"), pytest.param("postgres", "desktop", marks=pytest.mark.postgres)]


@pytest.mark.parametrize(("store_db", "viewport"), DAYS, indirect=["store_db"])
def test_a_whole_day(store_db: str, viewport: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _need_browser()
    from playwright.sync_api import FilePayload, expect, sync_playwright

    backend = "postgres" if store_db.startswith("postgresql") else "sqlite"
    shots = _shots_folder(f"day-{backend}-{viewport}")
    size = VIEWPORTS[viewport]
    taken: list[Path] = []
    server = demo_server(tmp_path / "data", free_port(), db=store_db)
    with server as (base, _, output), sync_playwright() as pw:
        signin = SIGNIN.search(output)
        assert signin is not None, output
        user, password = signin[2], signin[3]
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            context = browser.new_context(viewport=size, accept_downloads=True)  # type: ignore[arg-type]
            page = context.new_page()
            problems: list[str] = []
            page.on("console", lambda m: problems.append(m.text) if "Security Policy" in m.text else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.route("https://example.org/**", lambda route: route.abort())  # targets are never fetched

            def check(step: str) -> None:
                page.wait_for_load_state()  # a click that navigates returns before the new page has loaded
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= size["width"], (step, width)
                shot = shots / f"{len(taken):02d}-{step}.png"
                page.screenshot(path=str(shot), full_page=True)
                taken.append(shot)
                _axe(page, step)

            def sign_in(secret: str) -> None:
                page.get_by_label("User name").fill(user)
                page.get_by_label("Password").fill(secret)
                page.get_by_role("button", name="Sign in").click()

            # morning: a typo in the password, then in
            page.goto(base + "office")
            assert "/office/signin" in page.url
            check("signin")
            sign_in(password + "x")
            expect(page.get_by_role("alert")).to_be_visible()
            check("signin-refused")
            sign_in(password)
            page.wait_for_url("**/office")
            check("dashboard")

            # three new ARKs
            arks: list[str] = []
            for n in range(3):
                page.get_by_role("link", name="Create").click()
                if n == 0:
                    check("create")
                form = page.locator("form[action='/office/mint']")
                form.get_by_label("Target URL").fill(f"https://example.org/day/{n}")
                form.get_by_label("What (title)").fill(f"Letter {n}")
                form.get_by_role("button", name="Mint").click()
                page.wait_for_url("**/office/id?ark=*")
                arks.append(page.locator("h1").inner_text())
            assert len(set(arks)) == 3 and all(a.startswith("ark:99999/fk4") for a in arks)
            check("ark")

            # three ids reserved for later; one of them is not needed after all: deleted, then not found
            page.get_by_role("link", name="Create").click()
            form = page.locator("form[action='/office/reserve']")
            form.get_by_label("How many").fill("3")
            form.get_by_role("button", name="Mint reserved ids").click()
            expect(page.get_by_role("heading", name="Reserved ids")).to_be_visible()
            reserved = page.locator("main ul a.mono").all_inner_texts()
            assert len(reserved) == 3 and all(a.startswith("ark:99999/fk4") for a in reserved), reserved
            check("reserved")
            page.get_by_role("link", name=reserved[0]).click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_text("reserved", exact=True).first).to_be_visible()
            page.get_by_role("button", name="Delete this reserved id").click()
            expect(page.get_by_role("heading", name="Deleted")).to_be_visible()
            expect(page.get_by_text("never minted again")).to_be_visible()
            check("deleted")
            gone = page.goto(base + "office/id?ark=" + reserved[0])
            assert gone is not None and gone.status == 404
            expect(page.get_by_role("heading", name="Not found")).to_be_visible()
            check("not-found")

            # the first moves and gets a better title
            page.goto(base + "office/id?ark=" + arks[0])
            page.get_by_role("link", name="Edit").click()
            check("edit")
            page.get_by_label("Target URL").fill("https://example.org/day/0/moved")
            page.get_by_label("What (title)").fill("Letter 0, from Ada to Charles")
            page.get_by_role("button", name="Preview the changes").click()
            check("edit-preview")
            page.get_by_role("button", name="Apply these changes").click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_role("link", name="https://example.org/day/0/moved")).to_be_visible()
            expect(page.get_by_role("cell", name="Letter 0, from Ada to Charles", exact=True)).to_be_visible()

            # a form whose CSRF token was tampered with changes nothing
            page.get_by_role("link", name="Edit").click()
            page.get_by_label("Target URL").fill("https://example.org/day/0/hijacked")
            page.evaluate("document.querySelectorAll('input[name=csrf]').forEach(i => i.value = 'forged')")
            page.get_by_role("button", name="Preview the changes").click()
            expect(page.get_by_text("security token").first).to_be_visible()
            check("csrf-refused")
            page.goto(base + "office/id?ark=" + arks[0])
            expect(page.get_by_role("link", name="https://example.org/day/0/moved")).to_be_visible()

            # the second is withdrawn, then found
            page.goto(base + "office/id?ark=" + arks[1])
            page.get_by_label("Reason for withdrawing").fill("the letter went back to the family")
            page.get_by_role("button", name="Withdraw").click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_text("withdrawn", exact=True).first).to_be_visible()
            check("withdrawn")
            page.get_by_role("link", name="Find").click()
            page.get_by_label("ARK or its beginning").fill(arks[1])
            page.get_by_label("Status").select_option("unavailable")
            page.get_by_role("button", name="Find").click()
            page.wait_for_url("**/office/find?*")
            expect(page.get_by_role("link", name=arks[1])).to_be_visible()
            assert page.get_by_role("link", name=arks[2]).count() == 0
            check("find")

            # a spreadsheet: one bad line refused and named, then the fixed file imported
            # (named by hand under the demo's fk4.reedeedk minter: with the check character it wants)
            good = [f"ark:99999/fk4day{backend[0]}{viewport[0]}{i}" for i in range(2)]
            good = [ark + noid.check_char(ark.removeprefix("ark:")) for ark in good]

            def sheet(bad: bool) -> FilePayload:
                out = io.StringIO()
                w = csv.writer(out)
                w.writerow(["text", "target", "erc.what"])
                w.writerow([good[0], "https://example.org/sheet/0", "Sheet row 0"])
                target = "javascript:alert(1)" if bad else "https://example.org/sheet/1"
                w.writerow([good[1], target, "Row 1"])
                return FilePayload(name="day.csv", mimeType="text/csv", buffer=out.getvalue().encode())

            page.get_by_role("link", name="Import").click()
            check("import")
            page.get_by_label("Format").select_option("csv")
            page.get_by_label("File").set_input_files(files=[sheet(bad=True)])
            page.get_by_role("button", name="Check the file").click()
            expect(page.get_by_role("rowheader", name="line 3")).to_be_visible()  # the bad row, by its line
            check("import-refused")
            page.goto(base + "office/id?ark=" + good[0])
            assert page.get_by_role("heading", name=good[0]).count() == 0  # nothing of it was written
            page.goto(base + "office/import")
            page.get_by_label("Format").select_option("csv")
            page.get_by_label("File").set_input_files(files=[sheet(bad=False)])
            page.get_by_role("button", name="Check the file").click()
            expect(page.get_by_role("heading", name="Import: preview")).to_be_visible()
            check("import-preview")
            page.get_by_role("button", name="Import these bindings").click()
            expect(page.get_by_role("heading", name="Imported")).to_be_visible()
            check("imported")
            page.goto(base + "office/id?ark=" + good[1])
            expect(page.get_by_role("link", name="https://example.org/sheet/1")).to_be_visible()

            # a long file is imported in the background, its progress followed on a page that office.js
            # updates in place (no timed reload); the store's write lock is held meanwhile so that the
            # page is seen while it runs
            many = [f"ark:99999/fk4bg{backend[0]}{viewport[0]}{i:04d}" for i in range(INLINE_LINES + 1)]
            many = [ark + noid.check_char(ark.removeprefix("ark:")) for ark in many]
            lines = "".join(json.dumps({"text": a, "target": f"https://example.org/bg/{i}"}) + "\n"
                            for i, a in enumerate(many))  # fmt: skip
            page.goto(base + "office/import")
            page.get_by_label("Format").select_option("jsonl")
            long = FilePayload(name="long.jsonl", mimeType="application/x-ndjson", buffer=lines.encode())
            page.get_by_label("File").set_input_files(files=[long])
            page.get_by_role("button", name="Check the file").click()
            expect(page.get_by_role("heading", name="Import: preview")).to_be_visible()
            parked: list[Any] = []  # the page's reads of itself wait while it is checked (not its first load)
            progress = "**/office/import/progress?*"
            page.route(progress, lambda r: r.continue_() if r.request.redirected_from else parked.append(r))
            with _writes_held(store_db):
                page.get_by_role("button", name="Import these bindings").click()
                page.wait_for_url(progress)
                expect(page.get_by_role("heading", name="Importing")).to_be_visible()
                expect(page.get_by_role("progressbar", name="Lines imported")).to_be_visible()
                expect(page.get_by_role("link", name="Check again")).to_be_visible()
                check("import-progress")
            page.unroute(progress)
            for r in parked:
                r.continue_()
            page.get_by_role("heading", name="Imported", exact=True).wait_for(timeout=120_000)
            n = INLINE_LINES + 1
            expect(page.get_by_text(f"{n} bindings imported ({n} new, 0 updated)")).to_be_visible()
            check("import-done")
            page.goto(base + "office/id?ark=" + many[-1])
            expect(page.get_by_role("link", name=f"https://example.org/bg/{INLINE_LINES}")).to_be_visible()

            # the shoulder, exported as CSV
            page.get_by_role("link", name="Export").click()
            check("export")
            form = page.locator("form[action='/office/export/download']")
            form.get_by_label("What to export").select_option("99999/fk4")
            form.get_by_label("Format").select_option("csv")
            with page.expect_download() as got:
                form.get_by_role("button", name="Download").click()
            exported = Path(got.value.path()).read_text(encoding="utf-8")
            keys = {row["key"] for row in csv.DictReader(io.StringIO(exported))}
            assert {*arks, *good} <= keys

            # the third is tombstoned, after the confirmation step
            page.goto(base + "office/id?ark=" + arks[2])
            page.get_by_role("link", name="Tombstone…").click()
            page.wait_for_url("**/office/tombstone?ark=*")
            check("tombstone")
            page.get_by_label("Reason", exact=True).fill("a duplicate of another letter")
            page.get_by_label(f"I understand that {arks[2]} is withdrawn for good").check()
            page.get_by_role("button", name="Tombstone", exact=True).click()
            page.wait_for_url("**/office/id?ark=*")
            expect(page.get_by_text("tombstoned", exact=True).first).to_be_visible()
            expect(page.get_by_text("a duplicate of another letter").first).to_be_visible()
            check("tombstoned")

            # not for this user: the administration (403), and a page the office does not have (404)
            refused = page.goto(base + "office/admin")
            assert refused is not None and refused.status == 403
            expect(page.get_by_role("heading", name="Administrators only")).to_be_visible()
            check("forbidden")
            missing = page.goto(base + "office/no-such-page")
            assert missing is not None and missing.status == 404
            check("no-such-page")
            page.go_back()  # to the back office, its navigation

            # an API key for the nightly job, used at once
            page.get_by_role("link", name="API keys").click()
            check("keys")
            page.get_by_label("Label").fill("nightly job")
            page.get_by_role("button", name="Create key").click()
            secret = page.locator(".secret").inner_text().strip()
            assert SECRET.match(secret), secret
            check("key-created")
            minted = httpx.post(base + "api/v1/mint", json={"naan": "99999", "shoulder": "fk4"},
                                headers={"Authorization": f"Bearer {secret}"}, timeout=10)  # fmt: skip
            assert minted.status_code == 201, minted.text
            by_key = minted.json()["arks"][0]
            bound = httpx.put(base + "api/v1/bindings", json={"ark": by_key, "target": "https://example.org/job"},
                              headers={"Authorization": f"Bearer {secret}"}, timeout=10)  # fmt: skip
            assert bound.status_code == 201, bound.text
            page.goto(base + "office/id?ark=" + by_key)
            assert page.locator("h1").inner_text() == by_key
            expect(page.get_by_role("link", name="https://example.org/job")).to_be_visible()
            check("minted-by-key")

            # the session runs out: back to the sign-in page, then in again and out for the day
            assert _expire_sessions(store_db) >= 1
            page.goto(base + "office")
            assert "/office/signin" in page.url
            check("session-expired")
            sign_in(password)
            page.wait_for_url("**/office")
            page.get_by_role("button", name="Sign out", exact=True).click()
            page.wait_for_url("**/office/signin")
            page.goto(base + "office/keys")
            assert "/office/signin" in page.url
            assert not problems, problems
        finally:
            browser.close()
    assert len(taken) == 28 and all(s.stat().st_size > 0 for s in taken)
    print(f"screenshots: {shots}")
