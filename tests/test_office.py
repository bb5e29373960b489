"""The back office through the app (issue 14), on SQLite and PostgreSQL: sign-in and sign-out, wrong
password, rate limit, expired and revoked sessions, CSRF, every page and every form's change with its
history row naming the user; security — scope between NAANs and shoulders, escaping, no change on GET."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _webutil import SCRIPT, Seeded
from pidkit.errors import StoreError
from pidkit.store import Erc, Principal, Store
from pidkit.store.accounts import MAX_FAILURES_PER_USER
from pidkit.web import Settings, create_app
from pidkit.web.sessions import cookie_value

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded

PASSWORD = "correct horse battery"
OTHER = "12346"  # NAAN B


@pytest.fixture
def office(seeded: Seeded) -> Iterator[tuple[TestClient, Store]]:
    """The app over the seeded store with users (:func:`office_app`)."""
    yield from office_app(seeded)


def office_app(seeded: Seeded) -> Iterator[tuple[TestClient, Store]]:
    """The app over the seeded store with users: ann (NAAN 99999), carl (99999, shoulder b5 only), bob
    (NAAN 12346, with its own reserved and public ids), root (administrator)."""
    store = seeded.store
    store.add_naan(OTHER, "NAAN B", shoulders=["x5"])
    store.create_minter("m-x5", naan=OTHER, template="x5.sdd", seed=1)
    store.bind(f"ark:{OTHER}/x5secret", None, status="reserved", erc=Erc(what="B's unpublished"))
    store.bind(f"ark:{OTHER}/x5pub", "https://example.org/b", erc=Erc(what="B's public"))
    store.add_user("ann", PASSWORD, naan="99999")
    store.add_user("carl", PASSWORD, naan="99999", shoulder="b5")
    store.add_user("bob", PASSWORD, naan=OTHER)
    store.add_user("root", PASSWORD, naan="99999", admin=True)
    with TestClient(create_app(store, settings=Settings(max_body=65536)), follow_redirects=False) as c:
        yield c, store


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html
    return found[1]


def sign_in(client: TestClient, name: str, password: str = PASSWORD) -> str:
    """Sign in through the form; return the session's CSRF token."""
    page = client.get("/office/signin")
    r = client.post("/office/signin", data={"csrf": _csrf(page.text), "name": name, "password": password,
                                            "next": "/office"})  # fmt: skip
    assert r.status_code == 303, r.text
    return _csrf(client.get("/office").text)


def test_sign_in_cookie_and_sign_out(office: tuple[TestClient, Store]) -> None:
    client, store = office
    r = client.get("/office")
    assert r.status_code == 303 and r.headers["location"] == "/office/signin?next=%2Foffice"
    page = client.get("/office/signin")
    r = client.post("/office/signin", data={"csrf": _csrf(page.text), "name": "ann", "password": PASSWORD,
                                            "next": "/office/create"})  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/office/create"
    cookie = next(h for h in r.headers.get_list("set-cookie") if h.startswith("pidkit_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/office" in cookie
    assert "Secure" not in cookie  # plain http in the test client, and no setting
    value = cookie.split(";")[0].split("=", 1)[1]
    token = value.rsplit(".", 1)[0]
    assert value == cookie_value(store.cookie_key(), token)  # the token, signed
    dash = client.get("/office")
    assert dash.status_code == 200 and "ann" in dash.text and "99999" in dash.text
    csp = dash.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self';" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "http" not in csp  # this site's own script file only
    assert dash.headers["x-frame-options"] == "DENY"
    assert re.findall(r"<script[^>]*>", dash.text) == ['<script src="/static/office.js" defer>']
    r = client.post("/office/signout", data={"csrf": _csrf(dash.text)})
    assert r.status_code == 303 and r.headers["location"] == "/office/signin"
    assert client.get("/office").status_code == 303
    assert store.session(token) is None  # revoked on the server, not only forgotten by the browser
    client.cookies.set("pidkit_session", value, path="/office")
    assert client.get("/office").status_code == 303


def test_secure_cookie_when_the_setting_says_so(seeded: Seeded) -> None:
    seeded.store.add_user("ann", PASSWORD, naan="99999")
    # behind an HTTPS proxy the app may see http: the setting marks the cookies Secure all the same
    app = create_app(seeded.store, settings=Settings(secure_cookies=True))
    with TestClient(app, follow_redirects=False) as client:
        assert "Secure" in client.get("/office/signin").headers["set-cookie"]
    # without the setting, a request over HTTPS gets Secure cookies, and signs in with them
    https = TestClient(create_app(seeded.store), follow_redirects=False, base_url="https://testserver")
    with https as client:
        page = client.get("/office/signin")
        assert "Secure" in page.headers["set-cookie"]
        form = {"csrf": _csrf(page.text), "name": "ann", "password": PASSWORD}
        r = client.post("/office/signin", data=form)
        assert r.status_code == 303 and "Secure" in r.headers["set-cookie"]
        assert client.get("/office").status_code == 200


def test_next_never_leaves_the_back_office(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    page = client.get("/office/signin")
    r = client.post("/office/signin", data={"csrf": _csrf(page.text), "name": "ann", "password": PASSWORD,
                                            "next": "//evil.example/office"})  # fmt: skip
    assert r.headers["location"] == "/office"


def test_wrong_password_then_rate_limit(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    for _ in range(MAX_FAILURES_PER_USER):
        page = client.get("/office/signin")
        form = {"csrf": _csrf(page.text), "name": "ann", "password": "nope nope"}
        r = client.post("/office/signin", data=form)
        assert r.status_code == 401 and "wrong user name or password" in r.text
        assert "pidkit_session" not in r.headers.get("set-cookie", "")
    page = client.get("/office/signin")
    r = client.post("/office/signin", data={"csrf": _csrf(page.text), "name": "ann", "password": PASSWORD})
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0 and "too many" in r.text
    # the limit is the account's: another user from another address still signs in
    assert sign_in(client, "carl")


def test_sign_in_form_needs_its_csrf_cookie(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    token = _csrf(client.get("/office/signin").text)
    client.cookies.clear()
    r = client.post("/office/signin", data={"csrf": token, "name": "ann", "password": PASSWORD})
    assert r.status_code == 403 and "pidkit_session" not in r.headers.get("set-cookie", "")


def test_expired_session_is_refused(office: tuple[TestClient, Store]) -> None:
    client, store = office
    _, _, token = store.sign_in("ann", PASSWORD, address="t", lifetime=_dt.timedelta(seconds=-1))
    client.cookies.set("pidkit_session", cookie_value(store.cookie_key(), token), path="/office")
    assert client.get("/office").status_code == 303


def test_a_cookie_must_carry_its_signature(office: tuple[TestClient, Store]) -> None:
    client, store = office
    _, _, token = store.sign_in("ann", PASSWORD, address="t")
    for value in (token, f"{token}.forged", cookie_value(b"another key", token)):
        client.cookies.set("pidkit_session", value, path="/office")
        assert client.get("/office").status_code == 303, value
    client.cookies.set("pidkit_session", cookie_value(store.cookie_key(), token), path="/office")
    assert client.get("/office").status_code == 200


def test_sign_out_everywhere(office: tuple[TestClient, Store]) -> None:
    client, store = office
    _, _, elsewhere = store.sign_in("ann", PASSWORD, address="t")
    csrf = sign_in(client, "ann")
    r = client.post("/office/signout-everywhere", data={"csrf": csrf})
    assert r.status_code == 303
    assert store.session(elsewhere) is None
    assert client.get("/office").status_code == 303


def test_csrf_failure_changes_nothing(office: tuple[TestClient, Store]) -> None:
    client, store = office
    sign_in(client, "ann")
    for data in ({"ark": "ark:99999/fk4x1", "reason": "x"},
                 {"ark": "ark:99999/fk4x1", "reason": "x", "csrf": "bad"}):
        r = client.post("/office/withdraw", data=data)
        assert r.status_code == 403 and "nothing was changed" in r.text
    b = store.get_binding("ark:99999/fk4x1")
    assert b is not None and b.status == "public"
    r = client.post("/office/withdraw", content=b'{"ark": "ark:99999/fk4x1"}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 415


def test_every_page_answers(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    sign_in(client, "ann")
    for path in ["/office", "/office/id?ark=ark:99999/fk4x1", "/office/id?ark=ark:/99999/fk4-x1",
                 "/office/create", "/office/edit?ark=ark:99999/fk4x1",
                 "/office/tombstone?ark=ark:99999/fk4x1",
                 "/office/keys", "/office/id?ark=ark:99999/fk4gone", "/office/id?ark=ark:99999/fk4res",
                 "/office/import", "/office/export"]:
        r = client.get(path)
        assert r.status_code == 200, path
        assert re.findall(r"<script[^>]*>", r.text) == ['<script src="/static/office.js" defer>'], path
        assert "content-security-policy" in r.headers, path
        _labels_on_every_field(r.text, path)
    page = client.get("/office/id?ark=ark:99999/fk4x1").text
    assert '<a href="https://example.org/x1" rel="noopener noreferrer">' in page
    assert "/ark:99999/fk4x1?info" in page and 'href="/ark:99999/fk4x1"' in page
    shown = r'<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d\d \w{3} \d{4}, \d\d:\d\d UTC</time>'
    assert re.search(shown, page)
    assert "Austin" in page and "1952" in page
    dash = client.get("/office").text
    assert "m-fk4" in dash and "Ids left" in dash


def _labels_on_every_field(html: str, where: str) -> None:
    ids = re.findall(r'<(?:input(?![^>]*type="hidden")|select|textarea)[^>]*\sid="([^"]+)"', html)
    fields = re.findall(r'<(?:input(?![^>]*type="hidden")|select|textarea)\b', html)
    assert len(ids) == len(fields), where
    for fid in ids:
        assert f'<label for="{fid}">' in html, (where, fid)
    assert len(ids) == len(set(ids)), where


def _history_by(store: Store, ark: str) -> list[tuple[str, str]]:
    return [(h.operation, h.principal) for h in store.history("ark", ark)]


def test_mint_edit_withdraw_reinstate_tombstone(office: tuple[TestClient, Store]) -> None:
    client, store = office
    csrf = sign_in(client, "ann")
    r = client.post("/office/mint", data={"csrf": csrf, "minter": "m-fk4", "target": "https://example.org/m",
                                          "what": "Minted", "extra": "dc.title: A title", "status": "public"})
    assert r.status_code == 303
    ark = r.headers["location"].split("ark=")[1].replace("%3A", ":").replace("%2F", "/")
    b = store.get_binding(ark)
    assert b is not None and b.erc.what == "Minted" and b.extra_dict == {"dc.title": "A title"}
    assert _history_by(store, ark) == [("create", "user:ann")]
    # edit: a preview first (nothing changes), then apply
    data = {"csrf": csrf, "ark": ark, "target": "https://example.org/m2", "who": "", "what": "Minted",
            "when": "2024", "where": "", "extra": ""}
    r = client.post("/office/edit", data=data)
    assert r.status_code == 200 and "These fields change" in r.text and "https://example.org/m2" in r.text
    assert "other metadata: dc.title" in r.text
    assert store.get_binding(ark) == b
    data["base"] = _base(r.text)  # the version of the record previewed, as the confirm form carries it
    r = client.post("/office/edit", data={**data, "confirm": "yes"})
    assert r.status_code == 303
    b = store.get_binding(ark)
    assert b is not None and b.target == "https://example.org/m2" and b.erc.when == "2024" and b.extra == ()
    assert b.erc.what == "Minted"
    assert client.post("/office/edit", data={**data, "confirm": "yes"}).text.count("Nothing changes") == 1
    r = client.post("/office/withdraw", data={"csrf": csrf, "ark": ark, "reason": "moved"})
    assert r.status_code == 303
    b = store.get_binding(ark)
    assert b is not None and b.status == "unavailable" and b.reason == "moved"
    assert client.post("/office/reinstate", data={"csrf": csrf, "ark": ark}).status_code == 303
    b = store.get_binding(ark)
    assert b is not None and b.status == "public"
    r = client.post("/office/tombstone", data={"csrf": csrf, "ark": ark, "reason": "gone"})
    assert r.status_code == 409 and store.get_binding(ark).status == "public"  # type: ignore[union-attr]
    r = client.post("/office/tombstone", data={"csrf": csrf, "ark": ark, "reason": "gone", "confirm": "yes"})
    assert r.status_code == 303
    b = store.get_binding(ark)
    assert b is not None and b.status == "tombstoned" and b.tombstone_reason == "gone"
    assert _history_by(store, ark) == [("create", "user:ann"), ("update", "user:ann"), ("status", "user:ann"),
                                       ("status", "user:ann"), ("tombstone", "user:ann")]
    page = client.get(f"/office/id?ark={ark}").text
    assert "by user:ann" in page and "https://example.org/m2" in page and "moved" in page


def _base(html: str) -> str:
    """The version of the record a page's edit form was made from (its hidden ``base``)."""
    found: set[str] = set(re.findall(r'name="base" value="([0-9a-f]+)"', html))
    assert len(found) == 1, found
    return found.pop()


def _rows(html: str) -> str:
    """The rows of a preview's table."""
    return html.split("<tbody>")[1].split("</tbody>")[0]


def test_an_edit_confirmed_after_another_change_never_writes_over_it(
    office: tuple[TestClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann previews a new target; Bob then changes the title and adds an element; Ann's confirmation is
    not applied (it would have put the title back and removed the element, which her preview never
    showed): the preview is shown again against the record as it is now.  The same when the change lands
    between the confirmation's read and its write (the store decides, under the id's lock)."""
    client, store = office
    csrf = sign_in(client, "ann")
    ark = "ark:99999/b5edit"
    store.bind(ark, "https://example.org/t0", erc={"what": "Title 0"})
    page = client.get(f"/office/edit?ark={ark}").text
    data = {"csrf": csrf, "ark": ark, "target": "https://example.org/t1", "who": "", "what": "Title 0",
            "when": "", "where": "", "extra": "", "base": _base(page)}
    preview = client.post("/office/edit", data=data)
    assert "These fields change" in preview.text and "Title" not in _rows(preview.text)
    store.bind(ark, erc={"what": "Title 1"}, extra={"dc.type": "Image"}, principal=Principal.user("bob"))
    r = client.post("/office/edit", data={**data, "base": _base(preview.text), "confirm": "yes"})
    assert r.status_code == 200 and "changed by someone else since you opened it" in r.text
    rows = _rows(r.text)
    assert "Title 1" in rows and "other metadata: dc.type" in rows  # what the confirmation would undo
    b = store.get_binding(ark)
    assert b is not None and (b.target, b.erc.what, b.extra_dict) == (
        "https://example.org/t0", "Title 1", {"dc.type": "Image"})
    # the change lands after the confirmation read the record, before it wrote
    data = {**data, "what": "Title 1", "extra": "dc.type: Image", "base": _base(r.text), "confirm": "yes"}
    change = store.change

    def meanwhile(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(store, "change", change)
        store.bind(ark, erc={"who": "Bob"}, principal=Principal.user("bob"))
        return change(*args, **kwargs)

    monkeypatch.setattr(store, "change", meanwhile)
    r = client.post("/office/edit", data=data)
    assert r.status_code == 200 and "changed by someone else since you opened it" in r.text
    b = store.get_binding(ark)
    assert b is not None and (b.target, b.erc.who) == ("https://example.org/t0", "Bob")
    r = client.post("/office/edit", data={**data, "who": "Bob", "base": _base(r.text)})  # confirmed again
    assert r.status_code == 303
    b = store.get_binding(ark)
    assert b is not None and (b.target, b.erc.who, b.erc.what, b.extra_dict) == (
        "https://example.org/t1", "Bob", "Title 1", {"dc.type": "Image"})
    assert _history_by(store, ark)[1:] == [("update", "user:bob")] * 2 + [("update", "user:ann")]


def test_a_refused_mint_uses_no_id(office: tuple[TestClient, Store]) -> None:
    """The binding is checked before an id is minted: a refused one (an extra element name reserved for
    EZID, a public ARK without a target, a NUL in its ERC) leaves the minter's counter where it was."""
    client, store = office
    csrf = sign_in(client, "ann")

    def counter() -> int:
        return next(m.counter for m in store.list_minters() if m.name == "m-fk4")

    before = counter()
    for data in ({"target": "https://example.org/m", "extra": "_x: 1"}, {"target": ""},
                 {"target": "https://example.org/m", "who": "a\x00b"}):  # refused only as it is written
        r = client.post("/office/mint", data={"csrf": csrf, "minter": "m-fk4", "status": "public", **data})
        assert r.status_code == 400, r.text
    assert counter() == before
    r = client.post("/office/mint", data={"csrf": csrf, "minter": "m-fk4", "status": "public",
                                          "target": "https://example.org/m"})  # fmt: skip
    assert r.status_code == 303 and counter() == before + 1


def test_a_second_tombstone_says_its_reason_was_not_recorded(
    office: tuple[TestClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tombstone is for good and keeps its first reason: a second one (another user, the form sent
    twice, or one that lands between this request's read and its write) is answered 409 saying so,
    never "done"."""
    client, store = office
    csrf = sign_in(client, "ann")
    for ark in ("ark:99999/b5tomb1", "ark:99999/b5tomb2"):
        store.bind(ark, "https://example.org/t")
    data = {"csrf": csrf, "ark": "ark:99999/b5tomb1", "confirm": "yes"}
    assert client.post("/office/tombstone", data={**data, "reason": "first"}).status_code == 303
    r = client.post("/office/tombstone", data={**data, "reason": "second"})
    assert r.status_code == 409 and "already tombstoned (reason: first)" in r.text
    tombstone = store.tombstone

    def meanwhile(ark: str, reason: str, **kwargs: Any) -> Any:
        tombstone(ark, "theirs", principal=Principal.user("carl"))
        return tombstone(ark, reason, **kwargs)

    monkeypatch.setattr(store, "tombstone", meanwhile)
    r = client.post("/office/tombstone", data={**data, "ark": "ark:99999/b5tomb2", "reason": "mine"})
    assert r.status_code == 409 and "already tombstoned (reason: theirs)" in r.text
    assert [store.get_binding(a).tombstone_reason for a in ("ark:99999/b5tomb1", "ark:99999/b5tomb2")] == [  # type: ignore[union-attr]
        "first", "theirs"]


def test_two_binds_of_one_new_ark_at_once_create_it_once(
    office: tuple[TestClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second of two "bind a given ARK" of one new ARK (two users, a form sent twice) is refused as
    already bound, even when it looked before the first one wrote: it never changes the first's binding."""
    client, store = office
    csrf = sign_in(client, "ann")
    ark = "ark:99999/b5twice"
    get_binding = store.get_binding

    def before_the_other(key: str) -> Any:  # this request looks, then the other one binds
        found = get_binding(key)
        store.bind(ark, "https://example.org/first", principal=Principal.user("carl"))
        return found

    monkeypatch.setattr(store, "get_binding", before_the_other)
    r = client.post("/office/bind", data={"csrf": csrf, "ark": ark, "target": "https://example.org/second"})
    assert r.status_code == 400 and "already bound" in r.text
    monkeypatch.undo()
    b = store.get_binding(ark)
    assert b is not None and b.target == "https://example.org/first"
    assert _history_by(store, ark) == [("create", "user:carl")]


def test_bind_reserve_and_delete(office: tuple[TestClient, Store]) -> None:
    client, store = office
    csrf = sign_in(client, "ann")
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:/99999/b5-new", "target": "", "who": "W",
                                          "status": "reserved"})  # fmt: skip
    assert r.status_code == 303
    b = store.get_binding("ark:99999/b5new")
    assert b is not None and b.status == "reserved" and b.erc.who == "W"
    assert _history_by(store, "ark:99999/b5new") == [("create", "user:ann")]
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/b5new", "target": "https://e.org/"})
    assert r.status_code == 400 and "already bound" in r.text
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/b5x", "status": "public"})
    assert r.status_code == 400 and "needs a target" in r.text
    r = client.post("/office/reserve", data={"csrf": csrf, "minter": "m-fk4", "count": "3"})
    assert r.status_code == 303 and r.headers["location"].startswith("/office/reserved?ark=")
    minted, listed = store.minted_count("m-fk4"), r.headers["location"]
    for _ in range(2):  # the page of the ids, reloaded: it mints nothing more
        r = client.get(listed)
        assert r.status_code == 200 and "3 ids minted by a reserve form" in r.text
    assert store.minted_count("m-fk4") == minted
    reserved = re.findall(r'class="mono" href="[^"]+">(ark:99999/fk4[^<]+)</a>', r.text)
    assert len(reserved) == 3
    assert all(store.get_binding(a).status == "reserved" for a in reserved)  # type: ignore[union-attr]
    assert all(_history_by(store, a) == [("create", "user:ann")] for a in reserved)
    assert store.history("minter", "m-fk4")[-1].principal == "user:ann"  # the mint itself
    too_many = {"csrf": csrf, "minter": "m-fk4", "count": "101"}
    assert client.post("/office/reserve", data=too_many).status_code == 400
    r = client.post("/office/delete", data={"csrf": csrf, "ark": reserved[0]})
    assert r.status_code == 200 and "stays held" in r.text
    assert store.get_binding(reserved[0]) is None
    assert store.history("ark", reserved[0])[-1].principal == "user:ann"
    r = client.post("/office/delete", data={"csrf": csrf, "ark": "ark:99999/fk4x1"})
    assert r.status_code == 409 and store.get_binding("ark:99999/fk4x1") is not None


def test_own_api_keys(office: tuple[TestClient, Store]) -> None:
    client, store = office
    csrf = sign_in(client, "ann")
    r = client.post("/office/keys", data={"csrf": csrf, "label": "nightly", "naan": "99999", "shoulder": ""})
    assert r.status_code == 200
    secret = re.search(r'<p class="secret mono">(pk_[^<]+)</p>', r.text)
    assert secret is not None
    key = store.verify_api_key(secret[1])
    assert key is not None and key.owner == "ann" and key.naan == "99999"
    assert store.history("api_key", key.key_id)[0].principal == "user:ann"
    again = client.get("/office/keys").text
    assert key.key_id in again and secret[1] not in again  # shown once
    r = client.post("/office/keys", data={"csrf": csrf, "label": "x", "naan": OTHER})
    assert r.status_code == 403 and "outside your scope" in r.text
    # another user neither sees nor revokes it
    other = TestClient(client.app, follow_redirects=False)
    other_csrf = sign_in(other, "bob")
    assert key.key_id not in other.get("/office/keys").text
    revoke = {"csrf": other_csrf, "key_id": key.key_id}
    assert other.post("/office/keys/revoke", data=revoke).status_code == 404
    assert store.verify_api_key(secret[1]) is not None
    assert client.post("/office/keys/revoke", data={"csrf": csrf, "key_id": key.key_id}).status_code == 200
    assert store.verify_api_key(secret[1]) is None
    # a shoulder-scoped user's key never reaches past the shoulder
    carl = TestClient(client.app, follow_redirects=False)
    carl_csrf = sign_in(carl, "carl")
    r = carl.post("/office/keys", data={"csrf": carl_csrf, "label": "x", "naan": "99999", "shoulder": ""})
    assert r.status_code == 403


def _forms(html: str) -> dict[str, dict[str, str]]:
    """The hidden fields of each form of a page, by its action."""
    found: dict[str, dict[str, str]] = {}
    for action, inner in re.findall(r'<form method="post" action="([^"]+)">(.*?)</form>', html, re.S):
        found[action] = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', inner))
    return found


def test_a_minting_form_sent_twice_mints_once(office: tuple[TestClient, Store]) -> None:
    """The mint and reserve forms carry a one-time token: the same form sent again (a double click, a
    retried request) is answered with the first one's page, and mints nothing more; a new rendering of
    the form is a new token."""
    client, store = office
    sign_in(client, "ann")
    page = client.get("/office/create").text
    forms, again = _forms(page), _forms(client.get("/office/create").text)
    assert forms["/office/mint"]["once"] != forms["/office/reserve"]["once"]
    assert forms["/office/mint"]["once"] != again["/office/mint"]["once"]
    count = store.minted_count("m-fk4")
    mint = {**forms["/office/mint"], "minter": "m-fk4", "target": "https://example.org/once"}
    first, second = client.post("/office/mint", data=mint), client.post("/office/mint", data=mint)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"]
    assert store.minted_count("m-fk4") == count + 1
    reserve = {**forms["/office/reserve"], "minter": "m-fk4", "count": "4"}
    first, second = client.post("/office/reserve", data=reserve), client.post("/office/reserve", data=reserve)
    assert first.status_code == second.status_code == 303
    assert first.headers["location"] == second.headers["location"]
    assert store.minted_count("m-fk4") == count + 5
    # a new rendering of the form mints again
    fresh = {**again["/office/mint"], "minter": "m-fk4", "target": "https://example.org/twice"}
    assert client.post("/office/mint", data=fresh).status_code == 303
    assert store.minted_count("m-fk4") == count + 6


def test_a_minting_form_refused_can_be_sent_again_and_one_at_work_is_not_done_twice(
    office: tuple[TestClient, Store],
) -> None:
    client, store = office
    sign_in(client, "ann")
    form = _forms(client.get("/office/create").text)["/office/mint"]
    count = store.minted_count("m-fk4")
    bad = {**form, "minter": "m-fk4", "target": "ftp://not-http/"}
    assert client.post("/office/mint", data=bad).status_code == 400  # refused: nothing done, token let go
    good = {**form, "minter": "m-fk4", "target": "https://example.org/fixed"}
    assert client.post("/office/mint", data=good).status_code == 303
    assert store.minted_count("m-fk4") == count + 1
    # a form whose first sending is still at work (claimed, nothing recorded yet)
    pending = _forms(client.get("/office/create").text)["/office/reserve"]
    assert store.claim_form("ann", pending["once"]) is None
    r = client.post("/office/reserve", data={**pending, "minter": "m-fk4", "count": "2"})
    assert r.status_code == 409 and "sent already" in r.text
    assert store.minted_count("m-fk4") == count + 1
    damaged = {**form, "once": "x", "minter": "m-fk4", "target": "https://example.org/x"}
    r = client.post("/office/mint", data=damaged)
    assert r.status_code == 400 and "damaged" in r.text
    assert store.minted_count("m-fk4") == count + 1
    # another user's claim of the same token is another claim
    assert store.claim_form("bob", pending["once"]) is None


def test_a_minting_form_refused_after_it_minted_is_not_done_again(
    office: tuple[TestClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bind refused after the ids were minted (another writer first, say): the ids are used up, the
    answer says so, and the same form sent again mints nothing more (409); a count the form cannot read
    is refused before anything is minted, and the form corrected is a new try."""
    client, store = office
    sign_in(client, "ann")
    forms = _forms(client.get("/office/create").text)
    count = store.minted_count("m-fk4")
    bind, calls = store.bind, []

    def third_refused(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 3:
            raise StoreError("bound meanwhile by another writer")
        return bind(*args, **kwargs)

    monkeypatch.setattr(store, "bind", third_refused)
    reserve = {**forms["/office/reserve"], "minter": "m-fk4", "count": "5"}
    r = client.post("/office/reserve", data=reserve)
    assert r.status_code == 400 and "5 ids were minted, 2 bound reserved" in r.text
    assert client.post("/office/reserve", data=reserve).status_code == 409
    assert store.minted_count("m-fk4") == count + 5
    monkeypatch.setattr(store, "bind", bind)
    change = store.change
    monkeypatch.setattr(store, "change", lambda *a, **k: (_ for _ in ()).throw(StoreError("refused")))
    mint = {**forms["/office/mint"], "minter": "m-fk4", "target": "https://example.org/spent"}
    r = client.post("/office/mint", data=mint)
    assert r.status_code == 400 and "was minted but not bound" in r.text
    monkeypatch.setattr(store, "change", change)
    assert client.post("/office/mint", data=mint).status_code == 409
    assert store.minted_count("m-fk4") == count + 6
    # a count that is digits but not ASCII ones: refused before minting, a 400 and not a 500
    again = _forms(client.get("/office/create").text)["/office/reserve"]
    odd = {**again, "minter": "m-fk4", "count": "\u00b2"}
    assert client.post("/office/reserve", data=odd).status_code == 400
    assert client.post("/office/reserve", data={**odd, "count": "2"}).status_code == 303  # let go: a new try
    assert store.minted_count("m-fk4") == count + 8


def test_a_minting_form_that_fails_keeps_its_token(
    office: tuple[TestClient, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error the form did not expect (the store gone mid-way): whether an id was minted is not known, so
    the token stays claimed and the same form sent again says it was sent, rather than mint again."""
    client, store = office
    sign_in(client, "ann")
    form = _forms(client.get("/office/create").text)["/office/reserve"]
    mint = store.mint
    monkeypatch.setattr(store, "mint", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("connection lost")))
    with pytest.raises(RuntimeError, match="connection lost"):
        client.post("/office/reserve", data={**form, "minter": "m-fk4", "count": "2"})
    monkeypatch.setattr(store, "mint", mint)
    r = client.post("/office/reserve", data={**form, "minter": "m-fk4", "count": "2"})
    assert r.status_code == 409 and "sent already" in r.text


def test_a_form_token_lives_as_long_as_a_session(seeded: Seeded, monkeypatch: pytest.MonkeyPatch) -> None:
    """A form can be sent as long as its session lives: with sessions of 48 hours, its token is kept that
    long (and never less than a day)."""
    store = seeded.store
    store.add_user("ann", PASSWORD, naan="99999")
    kept: list[_dt.timedelta] = []
    claim = store.claim_form

    def spy(name: str, token: str, *, keep: _dt.timedelta) -> str | None:
        kept.append(keep)
        return claim(name, token, keep=keep)

    monkeypatch.setattr(store, "claim_form", spy)
    for hours, expected in ((48, _dt.timedelta(hours=48)), (8, _dt.timedelta(days=1))):
        app = create_app(store, settings=Settings(max_body=65536, session_hours=hours))
        with TestClient(app, follow_redirects=False) as client:
            sign_in(client, "ann")
            form = _forms(client.get("/office/create").text)["/office/mint"]
            data = {**form, "minter": "m-fk4", "target": "https://example.org/kept"}
            assert client.post("/office/mint", data=data).status_code == 303
        assert kept[-1] == expected


def test_naan_b_is_invisible_and_untouchable_for_naan_a(office: tuple[TestClient, Store]) -> None:
    client, store = office
    csrf = sign_in(client, "ann")
    before = {a: store.get_binding(a) for a in (f"ark:{OTHER}/x5secret", f"ark:{OTHER}/x5pub")}
    history = {a: store.history("ark", a) for a in before}
    listed = client.get("/office/reserved", params=[("ark", a) for a in before])  # ids named in the URL
    assert listed.status_code == 200 and "0 ids minted by a reserve form" in listed.text
    assert OTHER not in listed.text
    too_many = client.get("/office/reserved", params=[("ark", "ark:99999/fk4x")] * 101)
    assert too_many.status_code == 400
    anonymous = TestClient(client.app, follow_redirects=False).get("/office/reserved?ark=ark:99999/fk4x")
    assert anonymous.status_code == 303 and "/office/signin" in anonymous.headers["location"]
    for ark in before:
        r = client.get(f"/office/id?ark={ark}")
        assert r.status_code == 404 and "unpublished" not in r.text and "B&#x27;s" not in r.text
        for path in ("/office/edit", "/office/tombstone"):
            assert client.get(f"{path}?ark={ark}").status_code == 404
        for path, extra in [("/office/withdraw", {"reason": "x"}), ("/office/reinstate", {}),
                            ("/office/delete", {}), ("/office/tombstone", {"reason": "x", "confirm": "yes"}),
                            ("/office/edit", {"target": "https://evil.example/", "confirm": "yes"})]:
            r = client.post(path, data={"csrf": csrf, "ark": ark, **extra})
            assert r.status_code == 404, (path, ark)
    r = client.post("/office/bind", data={"csrf": csrf, "ark": f"ark:{OTHER}/x5new", "target": "https://e.org/"})
    assert r.status_code == 403 and store.get_binding(f"ark:{OTHER}/x5new") is None
    r = client.post("/office/mint", data={"csrf": csrf, "minter": "m-x5", "target": "https://e.org/"})
    assert r.status_code == 403 and store.minted_count("m-x5") == 0
    r = client.post("/office/reserve", data={"csrf": csrf, "minter": "m-x5", "count": "2"})
    assert r.status_code == 403 and store.minted_count("m-x5") == 0
    dash = client.get("/office").text
    assert OTHER not in dash and "m-x5" not in dash and "m-x5" not in client.get("/office/create").text
    assert {a: store.get_binding(a) for a in before} == before
    assert {a: store.history("ark", a) for a in before} == history
    # bob sees his own; the administrator sees both
    bob = TestClient(client.app, follow_redirects=False)
    sign_in(bob, "bob")
    assert bob.get(f"/office/id?ark=ark:{OTHER}/x5secret").status_code == 200
    assert bob.get("/office/id?ark=ark:99999/fk4res").status_code == 404
    root = TestClient(client.app, follow_redirects=False)
    sign_in(root, "root")
    assert root.get(f"/office/id?ark=ark:{OTHER}/x5secret").status_code == 200
    assert OTHER in root.get("/office").text


def test_shoulder_scope(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    csrf = sign_in(client, "carl")
    assert client.get("/office/id?ark=ark:99999/fk4res").status_code == 404
    assert client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/fk4new", "target": "https://e.org/"}
                       ).status_code == 403
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/b5new", "target": "https://e.org/"})
    assert r.status_code == 303
    assert "m-fk4" not in client.get("/office/create").text


def test_no_page_reflects_input_unescaped(office: tuple[TestClient, Store]) -> None:
    client, store = office
    csrf = sign_in(client, "ann")
    hostile = {"target": f"https://example.org/?q={SCRIPT}", "who": SCRIPT, "what": f'"><img src=x>{SCRIPT}',
               "when": SCRIPT, "where": SCRIPT, "extra": f"dc.title: {SCRIPT}"}
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/b5evil", **hostile,
                                          "target": f"https://example.org/ {SCRIPT}"})  # fmt: skip
    assert r.status_code == 400  # the target is refused (no whitespace in a URL), and the form comes back
    assert SCRIPT not in r.text and "<img src=x>" not in r.text
    r = client.post("/office/bind", data={"csrf": csrf, "ark": "ark:99999/b5evil", **hostile})
    assert r.status_code == 303
    pages = [client.get("/office/id?ark=ark:99999/b5evil"), client.get("/office/edit?ark=ark:99999/b5evil"),
             client.get("/office"), client.get(f"/office/id?ark={SCRIPT}"),
             client.get(f"/office/edit?ark={SCRIPT}"), client.get(f"/office/tombstone?ark={SCRIPT}"),
             client.post("/office/edit", data={"csrf": csrf, "ark": "ark:99999/b5evil", **hostile,
                                                "who": "x" + SCRIPT}),
             client.post("/office/keys", data={"csrf": csrf, "label": SCRIPT, "naan": "99999"}),
             client.post("/office/keys", data={"csrf": csrf, "label": SCRIPT, "naan": SCRIPT}),
             client.post("/office/bind", data={"csrf": csrf, "ark": SCRIPT}),
             client.post("/office/withdraw", data={"csrf": csrf, "ark": SCRIPT}),
             client.get(f"/office/signin?next={SCRIPT}")]
    anonymous = TestClient(client.app, follow_redirects=False)
    signin = anonymous.get("/office/signin")
    pages.append(anonymous.post("/office/signin", data={"csrf": _csrf(signin.text), "name": SCRIPT,
                                                        "password": SCRIPT, "next": SCRIPT}))  # fmt: skip
    assert pages[-1].status_code == 401
    for r in pages:
        assert SCRIPT not in r.text and "<img src=x>" not in r.text, r.url
    assert "&lt;script&gt;" in pages[0].text
    b = store.get_binding("ark:99999/b5evil")
    assert b is not None and b.erc.who == SCRIPT and b.target == hostile["target"]  # escaped when shown


def test_no_state_change_on_get(office: tuple[TestClient, Store]) -> None:
    client, store = office
    sign_in(client, "ann")
    before = store.get_binding("ark:99999/fk4x1")
    for path in ["/office/withdraw", "/office/reinstate", "/office/delete", "/office/mint", "/office/bind",
                 "/office/reserve", "/office/keys/revoke", "/office/signout", "/office/signout-everywhere"]:
        r = client.get(f"{path}?ark=ark:99999/fk4x1&reason=x&confirm=yes&minter=m-fk4&count=2")
        assert r.status_code == 405, path
    client.get("/office/tombstone?ark=ark:99999/fk4x1&reason=x&confirm=yes")
    client.get("/office/edit?ark=ark:99999/fk4x1&target=https://evil.example/&confirm=yes")
    assert store.get_binding("ark:99999/fk4x1") == before
    assert store.minted_count("m-fk4") == 0
    assert client.get("/office").status_code == 200  # still signed in


def test_find_by_prefix_target_text_and_status(office: tuple[TestClient, Store]) -> None:
    client, store = office
    sign_in(client, "ann")
    store.bind("ark:99999/b5one", "https://example.org/books/1", erc=Erc(what="Fifty% off_sale"),
               extra={"dc.subject": "Organ music"})
    store.bind("ark:99999/b5two", None, status="reserved")

    def keys(**query: str) -> list[str]:
        r = client.get("/office/find", params=query)
        assert r.status_code == 200, r.text
        _labels_on_every_field(r.text, "find")
        return re.findall(r'<a class="mono" href="/office/id\?ark=[^"]+">([^<]+)</a>', r.text)

    assert client.get("/office/find").status_code == 200
    assert keys(ark="ark:/99999/b5-") == ["ark:99999/b5one", "ark:99999/b5two"]  # any spelling
    assert keys(target="books/") == ["ark:99999/b5one"]
    assert keys(text="Organ") == ["ark:99999/b5one"]
    assert keys(text="Fifty% off_") == ["ark:99999/b5one"] and keys(text="y%_o") == []  # literal, no wildcard
    assert keys(text="Rhythm") == ["ark:99999/fk4x1"]
    assert keys(status="reserved", ark="ark:99999/") == ["ark:99999/b5two", "ark:99999/fk4res"]
    assert keys(status="tombstoned") == ["ark:99999/fk4gone"]
    # NAAN B's ids are not found, whatever the search
    everything = keys(ark=f"ark:{OTHER}/") + keys(text="B's") + keys(status="reserved")
    assert not [k for k in everything if OTHER in k]
    r = client.get("/office/find", params={"ark": SCRIPT, "target": SCRIPT, "text": SCRIPT})
    assert r.status_code == 200 and SCRIPT not in r.text


def _listed(html: str) -> list[str]:
    return re.findall(r'<a class="mono" href="/office/id\?ark=[^"]+">([^<]+)</a>', html)


def _link(html: str, name: str) -> str | None:
    found = re.search(rf'<a href="(/office/find\?[^"]+)"(?: rel="\w+")?>{name}</a>', html)
    return found[1].replace("&amp;", "&") if found else None


def test_find_pages_with_shareable_urls(office: tuple[TestClient, Store]) -> None:
    client, store = office
    sign_in(client, "carl")  # shoulder b5 of 99999
    for i in range(55):
        store.bind(f"ark:99999/b5p{i:02d}", f"https://example.org/p/{i}")
    first = client.get("/office/find", params={"target": "/p/"})
    found = _listed(first.text)
    assert len(found) == 50 and found[0] == "ark:99999/b5p00"
    assert "55 ARKs match; 50 on this page." in first.text
    assert _link(first.text, "Previous page") is None and _link(first.text, "First page") is None
    nxt = _link(first.text, "Next page")
    assert nxt is not None and "target=%2Fp%2F" in nxt  # the search travels with the page
    second = client.get(nxt)
    assert _listed(second.text) == [f"ark:99999/b5p{i:02d}" for i in range(50, 55)]
    assert _link(second.text, "Next page") is None and "55 ARKs match; 5 on this page." in second.text
    prev = _link(second.text, "Previous page")
    assert prev is not None and _listed(client.get(prev).text) == found
    assert _link(second.text, "First page") == "/office/find?target=%2Fp%2F"
    # sorted by creation, newest first, and the page after that too
    newest = client.get("/office/find", params={"target": "/p/", "sort": "created", "order": "desc"})
    assert _listed(newest.text) == [f"ark:99999/b5p{i:02d}" for i in range(54, 4, -1)]
    rest = client.get(str(_link(newest.text, "Next page")))
    assert _listed(rest.text) == [f"ark:99999/b5p{i:02d}" for i in range(4, -1, -1)]
    # carl's scope is shoulder b5: the fk4 ARKs are not found, nor counted
    page = client.get("/office/find", params={"ark": "ark:99999/"}).text
    listed = _listed(page)
    assert listed and all(k.startswith("ark:99999/b5") for k in listed)
    b5 = sum(n for (shoulder, _), n in store.status_counts("99999").items() if shoulder == "b5")
    assert b5 >= 55 and f"{b5} ARKs match; 50 on this page." in page


def test_find_dates_sorting_and_errors(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    sign_in(client, "ann")
    today = _dt.datetime.now(_dt.UTC).date().isoformat()
    query = {"from": today, "until": today, "on": "created", "status": "reserved"}
    r = client.get("/office/find", params=query)
    assert r.status_code == 200 and _listed(r.text) == ["ark:99999/fk4res"]
    assert f'value="{today}"' in r.text and 'type="date"' in r.text
    r = client.get("/office/find", params={"from": "2099-01-01"})
    assert r.status_code == 200 and "No ARK matches." in r.text and "0 ARKs match." in r.text
    r = client.get("/office/find", params={"from": today, "until": "9999-12-31", "status": "reserved"})
    assert r.status_code == 200 and _listed(r.text) == ["ark:99999/fk4res"]  # the last day: no overflow
    for query, said in (({"from": "2024-02-30"}, "from: &#x27;2024-02-30&#x27; is not a date"),
                        ({"until": "tomorrow"}, "until: &#x27;tomorrow&#x27; is not a date (YYYY-MM-DD)"),
                        ({"from": "2024-05-02", "until": "2024-05-01"},
                         "from 2024-05-02 is after until 2024-05-01"),
                        ({"status": "lost"}, "status: &#x27;lost&#x27; is not one of"),
                        ({"sort": "title"}, "sort: &#x27;title&#x27; is not one of"),
                        ({"order": "sideways"}, "order: &#x27;sideways&#x27; is not"),
                        ({"sort": "updated", "after": "ark:99999/nothere"}, "is not there any more"),
                        ({"text": "x" * 1001}, "at most 1000 characters")):  # fmt: skip
        r = client.get("/office/find", params=query)
        assert r.status_code == 400 and 'role="alert"' in r.text, query
        assert said in r.text, (query, r.text[:3000])
        _labels_on_every_field(r.text, "find")
    r = client.get("/office/find", params={"from": SCRIPT, "text": SCRIPT, "ark": SCRIPT, "target": SCRIPT})
    assert r.status_code == 400 and SCRIPT not in r.text and "&lt;script&gt;" in r.text
    r = client.get("/office/find", params={"after": SCRIPT, "before": SCRIPT})
    assert r.status_code == 400 and SCRIPT not in r.text
    found = client.get("/office/find", params={"text": "rhythm"}).text
    assert re.findall(r"<script[^>]*>", found) == ['<script src="/static/office.js" defer>']


def test_find_never_shows_nor_counts_another_naans_ids(office: tuple[TestClient, Store]) -> None:
    client, _ = office
    sign_in(client, "ann")
    for query in ({"ark": f"ark:/{OTHER}/"}, {"ark": f"ark:{OTHER}/x5secret"}, {"text": "unpublished"},
                  {"text": "B's"}, {"status": "reserved"}, {"target": "example.org/b"}, {}):  # fmt: skip
        r = client.get("/office/find", params={**query, "sort": "updated"})
        results = r.text.split("<h2>Results</h2>", 1)[1]  # the form above repeats the query
        assert r.status_code == 200 and OTHER not in results and "unpublished" not in results, query
        assert f"{len(_listed(results))} ARK" in results
    # a page cursor naming B's id is "not there", not a page of A's ids after B's time
    r = client.get("/office/find", params={"sort": "updated", "after": f"ark:{OTHER}/x5secret"})
    assert r.status_code == 400 and "not there any more" in r.text
    client.cookies.clear()
    sign_in(client, "bob")
    r = client.get("/office/find", params={"text": "unpublished"})
    assert _listed(r.text) == [f"ark:{OTHER}/x5secret"] and "1 ARK matches" in r.text


#: A row of the dashboard's table of counts: the shoulder, then a cell per status.
_COUNT_ROW = re.compile(r'<tr><th scope="row" class="mono">([^<]+)</th>((?:<td class="num">\d+</td>){4})')


def _dashboard(client: TestClient) -> tuple[dict[str, list[int]], list[str]]:
    """The dashboard's counts (shoulder → public, reserved, withdrawn, tombstoned) and its recent
    changes (each item's text, tags removed), newest first."""
    r = client.get("/office")
    assert r.status_code == 200, r.text
    heads = re.findall(r'<th scope="col" class="num"><span class="badge \w+">(\w+)</span></th>', r.text)
    assert heads == ["public", "reserved", "withdrawn", "tombstoned"]
    counts = {s: [int(n) for n in re.findall(r"\d+", cells)] for s, cells in _COUNT_ROW.findall(r.text)}
    recent = r.text.split("<h3>Recent changes</h3><ul>", 1)[1].split("</ul>", 1)[0]
    items = [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li>(.*?)</li>", recent)]
    return counts, items


def test_dashboard_counts_recent_changes_and_scope(office: tuple[TestClient, Store]) -> None:
    client, store = office
    # shoulder b5: 4 public, 2 reserved, 4 tombstoned (fk4 has the seeded 3 public, 1 reserved, 1 tombstoned)
    for i in range(4):
        store.bind(f"ark:99999/b5p{i}", f"https://example.org/p/{i}")
    for i in range(2):
        store.bind(f"ark:99999/b5r{i}", None, status="reserved")
    for i in range(4):
        store.bind(f"ark:99999/b5t{i}", f"https://example.org/t/{i}")
        store.tombstone(f"ark:99999/b5t{i}", "gone")
    # one change each through the office: ann withdraws an fk4 id, then carl (shoulder b5) a b5 id
    csrf = sign_in(client, "ann")
    assert client.post("/office/withdraw", data={"csrf": csrf, "ark": "ark:99999/fk4x1", "reason": "x"}
                       ).status_code == 303  # fmt: skip
    carl = TestClient(client.app, follow_redirects=False)
    carl_csrf = sign_in(carl, "carl")
    assert carl.post("/office/withdraw", data={"csrf": carl_csrf, "ark": "ark:99999/b5p0", "reason": "y"}
                     ).status_code == 303  # fmt: skip

    counts, recent = _dashboard(client)  # ann: NAAN 99999, every shoulder
    assert counts == {"b5": [3, 2, 1, 4], "fk4": [2, 1, 1, 1]}
    assert recent[0].endswith("ark:99999/b5p0 status → unavailable by user:carl")
    assert recent[1].endswith("ark:99999/fk4x1 status → unavailable by user:ann")
    assert re.match(r"\d\d \w{3} \d{4}, \d\d:\d\d UTC ", recent[1])  # when, in UTC for people
    assert len(recent) == 10  # the latest ten

    counts, recent = _dashboard(carl)  # carl: shoulder b5 only, neither fk4's counts nor its changes
    assert counts == {"b5": [3, 2, 1, 4]}
    assert recent[0].endswith("ark:99999/b5p0 status → unavailable by user:carl")
    assert recent and all(" ark:99999/b5" in item for item in recent), recent
    page = carl.get("/office").text
    assert "fk4" not in page and "user:ann" not in page and "m-fk4" not in page

    bob = TestClient(client.app, follow_redirects=False)
    sign_in(bob, "bob")
    counts, recent = _dashboard(bob)  # NAAN B: its own shoulder only
    assert counts == {"x5": [1, 1, 0, 0]}
    assert all(f" ark:{OTHER}/x5" in item for item in recent) and "99999" not in bob.get("/office").text
