"""The back office's administration pages (issue 14), on SQLite and PostgreSQL: administrators only (403
for anyone else, GET and POST), NAANs and shoulders, minters from a template, users (add, disable,
enable, scope, password), every API key (revoke); each change recorded in the history as the
administrator; CSRF on every POST; input reflected escaped; the API documentation page and the copy
buttons' script."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from _webutil import Seeded
from pidkit.store import Store
from pidkit.web.assets import OFFICE_JS
from test_office import OTHER, PASSWORD, _labels_on_every_field, office_app, sign_in

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded

Office = tuple[TestClient, Store]


@pytest.fixture
def office(seeded: Seeded) -> Iterator[Office]:
    """The app over the seeded store with the users of ``test_office``."""
    yield from office_app(seeded)

ADMIN_PAGES = ["/office/admin", "/office/admin/naans", "/office/admin/minters", "/office/admin/users",
               "/office/admin/keys", "/office/admin/user?name=ann"]  # fmt: skip
ADMIN_POSTS = {
    "/office/admin/naans": {"naan": "55555", "name": "New"},
    "/office/admin/shoulders": {"naan": "99999", "shoulder": "q7"},
    "/office/admin/minters": {"name": "m-new", "naan": "99999", "shoulder": "q7", "mask": "zeedk"},
    "/office/admin/users": {"name": "dora", "password": PASSWORD, "naan": "99999"},
    "/office/admin/user/disable": {"name": "ann"},
    "/office/admin/user/enable": {"name": "ann"},
    "/office/admin/user/password": {"name": "ann", "password": "another long password"},
    "/office/admin/user/scope": {"name": "ann", "naan": OTHER},
    "/office/admin/keys/revoke": {"key_id": "x"},
}


def _history(store: Store, kind: str, key: str) -> list[tuple[str, str]]:
    return [(h.operation, h.principal) for h in store.history(kind, key)]


def _state(store: Store) -> tuple[object, ...]:
    return (store.list_naans(), store.list_minters(), store.list_users(), store.list_api_keys())


def test_admin_pages_are_for_administrators_only(office: Office) -> None:
    client, store = office
    for path in ADMIN_PAGES:  # not signed in: to the sign-in page
        r = client.get(path)
        assert r.status_code == 303 and r.headers["location"].startswith("/office/signin"), path
    csrf = sign_in(client, "ann")
    assert "/office/admin" not in client.get("/office").text  # no Admin link for a user
    for path in ADMIN_PAGES:
        r = client.get(path)
        assert r.status_code == 403 and "administrators only" in r.text, path
    before = _state(store)
    for path, data in ADMIN_POSTS.items():  # a valid CSRF token, still refused
        r = client.post(path, data={"csrf": csrf, **data})
        assert r.status_code == 403, (path, r.text)
    assert _state(store) == before


def test_admin_pages_answer_with_labels(office: Office) -> None:
    client, _ = office
    sign_in(client, "root")
    for path in ADMIN_PAGES:
        r = client.get(path)
        assert r.status_code == 200, path
        _labels_on_every_field(r.text, path)
        assert "content-security-policy" in r.headers and 'href="/office/admin"' in r.text


def test_every_admin_post_needs_the_csrf_token(office: Office) -> None:
    client, store = office
    sign_in(client, "root")
    before = _state(store)
    for path, data in ADMIN_POSTS.items():
        for token in ({}, {"csrf": "forged"}):
            r = client.post(path, data={**token, **data})
            assert r.status_code == 403 and "nothing was changed" in r.text, path
    assert _state(store) == before


def test_naans_and_shoulders(office: Office) -> None:
    client, store = office
    csrf = sign_in(client, "root")
    page = client.get("/office/admin/naans")
    assert page.status_code == 200 and ", ".join(store.get_naan("99999").shoulders) in page.text
    r = client.post("/office/admin/naans", data={"csrf": csrf, "naan": "55555", "name": "<b>New</b>",
                                                 "shoulders": "t1 t2"})  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/office/admin/naans"
    naan = store.get_naan("55555")
    assert naan.name == "<b>New</b>" and set(naan.shoulders) == {"t1", "t2"}
    text = client.get("/office/admin/naans").text
    assert "&lt;b&gt;New&lt;/b&gt;" in text and "<b>New</b>" not in text
    r = client.post("/office/admin/shoulders", data={"csrf": csrf, "naan": "55555", "shoulder": "t3"})
    assert r.status_code == 303 and "t3" in store.get_naan("55555").shoulders
    assert ("naan.add", "user:root") in _history(store, "naan", "55555")
    assert ("shoulder.add", "user:root") in _history(store, "naan", "55555")
    r = client.post("/office/admin/naans", data={"csrf": csrf, "naan": "55555"})  # taken
    assert r.status_code == 400 and "55555" in r.text
    r = client.post("/office/admin/shoulders", data={"csrf": csrf, "naan": "55555", "shoulder": "<x>"})
    assert r.status_code == 400 and "&lt;x&gt;" in r.text and "<x>" not in r.text


def test_minters_from_a_template(office: Office) -> None:
    client, store = office
    csrf = sign_in(client, "root")
    page = client.get("/office/admin/minters").text
    assert "m-fk4" in page and "fk4.reedeedk" in page and "70728100" in page  # counter 0: all ids left
    r = client.post("/office/admin/minters", data={"csrf": csrf, "name": "m-q7", "naan": "99999",
                                                   "shoulder": "q7", "mask": "sddddk"})  # fmt: skip
    assert r.status_code == 303
    m = store.get_minter("m-q7")
    assert m.template == "q7.sddddk" and m.naan == "99999" and "q7" in store.get_naan("99999").shoulders
    assert ("minter.create", "user:root") in _history(store, "minter", "m-q7")
    store.mint("m-q7", 3)
    row = re.search(r"m-q7</th>.*?</tr>", client.get("/office/admin/minters").text)
    assert row and '<td class="num">3</td>' in row[0] and '<td class="num">9997</td>' in row[0]
    r = client.post("/office/admin/minters", data={"csrf": csrf, "name": "m-w", "naan": "99999",
                                                   "template": "w1.zek"})  # fmt: skip
    assert r.status_code == 303 and store.get_minter("m-w").template == "w1.zek"
    r = client.post("/office/admin/minters", data={"csrf": csrf, "name": "m-bad", "naan": "99999",
                                                   "template": "q7.<script>"})  # fmt: skip
    assert r.status_code == 400 and "<script>" not in r.text
    r = client.post("/office/admin/minters", data={"csrf": csrf, "name": "m-bad", "naan": "99999",
                                                   "shoulder": "q8", "mask": "not-offered"})  # fmt: skip
    assert r.status_code == 400
    assert "m-bad" not in {x.name for x in store.list_minters()}


def test_users_add_disable_enable_scope_password(office: Office) -> None:
    client, store = office
    csrf = sign_in(client, "root")
    r = client.post("/office/admin/users", data={"csrf": csrf, "name": "dora", "password": PASSWORD,
                                                 "naan": "99999", "shoulder": "b5"})  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == "/office/admin/user?name=dora"
    dora = store.get_user("dora")
    assert dora.naan == "99999" and dora.shoulder == "b5" and not dora.admin
    assert ("user.add", "user:root") in _history(store, "user", "dora")
    r = client.post("/office/admin/users", data={"csrf": csrf, "name": "eve", "password": "short",
                                                 "naan": "99999"})  # fmt: skip
    assert r.status_code == 400 and "10 to 1024" in r.text and "short" not in r.text.split("<main>")[1]
    other = TestClient(client.app, follow_redirects=False)
    sign_in(other, "dora")
    assert other.get("/office").status_code == 200
    r = client.post("/office/admin/user/disable", data={"csrf": csrf, "name": "dora"})
    assert r.status_code == 200 and "disabled" in r.text
    assert not store.get_user("dora").active
    assert other.get("/office").status_code == 303  # her session ended
    r = client.post("/office/admin/user/enable", data={"csrf": csrf, "name": "dora"})
    assert r.status_code == 200 and store.get_user("dora").active
    sign_in(other, "dora")
    r = client.post("/office/admin/user/scope", data={"csrf": csrf, "name": "dora", "naan": OTHER})
    assert r.status_code == 200
    dora = store.get_user("dora")
    assert (dora.naan, dora.shoulder, dora.admin) == (OTHER, None, False)
    assert other.get("/office").status_code == 303  # a changed scope ends the sessions
    r = client.post("/office/admin/user/password", data={"csrf": csrf, "name": "dora",
                                                         "password": "a brand new password"})  # fmt: skip
    assert r.status_code == 200
    sign_in(other, "dora", "a brand new password")
    ops = [op for op, who in _history(store, "user", "dora") if who == "user:root"]
    assert ops == ["user.add", "user.disable", "user.enable", "user.scope", "user.passwd"]
    # an administrator keeps their own role and account
    r = client.post("/office/admin/user/disable", data={"csrf": csrf, "name": "root"})
    assert r.status_code == 400 and store.get_user("root").active
    r = client.post("/office/admin/user/scope", data={"csrf": csrf, "name": "root", "naan": "99999"})
    assert r.status_code == 400 and store.get_user("root").admin
    assert client.get("/office/admin/user?name=%3Cnobody%3E").status_code == 404


def test_every_api_key_listed_and_revoked(office: Office) -> None:
    client, store = office
    key, _secret = store.create_api_key(OTHER, label="<bob's job>", owner="bob")
    csrf = sign_in(client, "root")
    page = client.get("/office/admin/keys").text
    assert key.key_id in page and "&lt;bob&#x27;s job&gt;" in page and "bob" in page
    assert _secret not in page
    r = client.post("/office/admin/keys/revoke", data={"csrf": csrf, "key_id": key.key_id})
    assert r.status_code == 200 and f"Key {key.key_id} revoked" in r.text
    assert next(k for k in store.list_api_keys() if k.key_id == key.key_id).revoked
    assert ("apikey.revoke", "user:root") in _history(store, "api_key", key.key_id)
    assert client.post("/office/admin/keys/revoke", data={"csrf": csrf, "key_id": "nope"}).status_code == 404


def test_no_admin_get_changes_anything(office: Office) -> None:
    client, store = office
    sign_in(client, "root")
    before = _state(store)
    for path in [*ADMIN_PAGES, *ADMIN_POSTS]:
        client.get(path, params={"name": "ann", "naan": "55555", "key_id": "x"})
    assert _state(store) == before


# -- the API documentation and the script ------------------------------------------------------------
def test_api_docs_page_documents_every_path(office: Office) -> None:
    client, _ = office
    doc = client.get("/openapi.json").json()  # still served
    r = client.get("/api/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    for path, item in doc["paths"].items():
        assert f"<code>{path}</code>" in r.text, path
        for method in item:
            assert f'<span class="verb {method}">{method.upper()}</span>' in r.text
    for name in doc["components"]["schemas"]:
        assert 'id="schema-' in r.text and f"<h3>{name}</h3>" in r.text
    assert "<script" not in r.text and "http://" not in r.text.replace("http://testserver", "")
    assert "cdn" not in r.text.lower()
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404
    assert 'href="/api/docs"' in client.get("/").text  # the site's API link leads here


def test_ark_page_copy_fields_and_the_script(office: Office) -> None:
    client, _ = office
    sign_in(client, "ann")
    page = client.get("/office/id", params={"ark": "ark:99999/fk4x1"})
    assert page.status_code == 200
    for label, value in (("ARK", "ark:99999/fk4x1"), ("Resolution URL", "http://testserver/ark:99999/fk4x1"),
                         ("Description URL (?info)", "http://testserver/ark:99999/fk4x1?info")):
        found = re.search(r'<label for="(share-\w+)">' + re.escape(label) + r'</label><input type="text" '
                          r'id="\1" class="mono" readonly value="([^"]+)"', page.text)  # fmt: skip
        assert found and found[2] == value, label
    assert '<script src="/static/office.js" defer></script>' in page.text
    assert re.search(r"<script(?![^>]*\bsrc=)", page.text) is None  # no inline script
    assert "script-src 'self'" in page.headers["content-security-policy"]
    js = client.get("/static/office.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert js.text == OFFICE_JS and "clipboard" in js.text and "http" not in js.text


@pytest.mark.parametrize("path", ["/office/import", "/office/export"])
def test_nav_links_to_import_export(office: Office, path: str) -> None:
    client, _ = office
    sign_in(client, "ann")
    assert f'href="{path}"' in client.get("/office").text
    assert client.get(path).status_code == 200
