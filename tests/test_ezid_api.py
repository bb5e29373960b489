"""EZID's API v2 below /ezid (pidkit.web.ezid), on both backends: every operation, every error the
documentation names (and the ones pidkit adds), scope, sessions, the ANVL encoding, history.

Seeded store (tests/_webutil.py) plus users: ann (NAAN 99999), carl (99999, shoulder b5 only), bob (NAAN
12346, with its own minter on x5), root (administrator)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from _webutil import Seeded
from pidkit import importers
from pidkit.store import Store
from pidkit.web import Settings, create_app
from pidkit.web.fastpath import is_fast

pytest_plugins = ["_webutil"]

PASSWORD = "correct horse battery"
OTHER = "12346"
PLAIN = "text/plain; charset=UTF-8"


@pytest.fixture
def ezid(seeded: Seeded) -> Iterator[tuple[TestClient, Store]]:
    store = seeded.store
    store.add_naan(OTHER, "NAAN B", shoulders=["x5"])
    store.create_minter("m-x5", naan=OTHER, template="x5.sdd", seed=1)
    store.add_user("ann", PASSWORD, naan="99999")
    store.add_user("carl", PASSWORD, naan="99999", shoulder="b5")
    store.add_user("bob", PASSWORD, naan=OTHER)
    store.add_user("root", PASSWORD, naan="99999", admin=True)
    with TestClient(create_app(store, settings=Settings(max_body=4096)), follow_redirects=False) as c:
        yield c, store


def basic(name: str, password: str = PASSWORD) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def anvl(text: str) -> dict[str, str]:
    """Parse a response body as EZID's documentation does (the status line included)."""
    import re

    def unescape(s: str) -> str:
        return re.sub("%([0-9A-Fa-f][0-9A-Fa-f])", lambda m: chr(int(m.group(1), 16)), s)

    return dict(tuple(unescape(v).strip() for v in line.split(":", 1)) for line in text.splitlines())  # type: ignore[misc]


def check_error(r: object, status: int, line: str) -> None:
    assert r.status_code == status, r.text  # type: ignore[attr-defined]
    assert r.headers["content-type"] == PLAIN  # type: ignore[attr-defined]
    assert r.text == f"error: {line}\n"  # type: ignore[attr-defined]


# -- status, version, reading --------------------------------------------------------------------------
def test_status_and_version(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    r = c.get("/ezid/status")
    assert (r.status_code, r.text, r.headers["content-type"]) == (200, "success: EZID is up\n", PLAIN)
    assert c.get("/ezid/version").text.startswith("success: pidkit ")


def test_view_a_public_id_needs_no_authentication(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    r = c.get("/ezid/id/ark:/99999/fk4x1")
    assert r.status_code == 200 and r.headers["content-type"] == PLAIN
    assert r.text.splitlines()[0] == "success: ark:/99999/fk4x1"
    got = anvl(r.text)
    b = store.get_binding("ark:99999/fk4x1")
    assert b is not None and b.created is not None and b.updated is not None
    assert got["_target"] == "https://example.org/x1"
    assert got["_created"] == str(int(b.created.timestamp())) and got["_updated"].isdigit()
    assert (got["_status"], got["_profile"], got["_export"]) == ("public", "erc", "yes")
    assert got["erc.who"] == "Austin,\nLarry" and got["erc.when"] == "1952"
    assert got["erc-support.who"] == "UNT Libraries"
    assert "erc.where" not in got  # empty elements are not written (EZID: no empty values)
    assert "%0A" in r.text  # the newline is escaped on the wire


def test_view_errors(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    check_error(c.get("/ezid/id/ark:/99999/bogus"), 400, "bad request - no such identifier")
    check_error(c.get("/ezid/id/doi:10.5072/FK2TEST"), 400, "bad request - no such identifier")
    check_error(c.get("/ezid/id/uuid:1234"), 400, "bad request - no such identifier")
    r = c.get("/ezid/id/ark:/99999/fk4x1", headers=basic("ann", "wrong password!"))
    check_error(r, 401, "unauthorized")  # invalid credentials are refused even where none are needed
    assert r.headers["www-authenticate"] == 'Basic realm="EZID"'


def test_view_tombstone_and_prefix_match(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    assert anvl(c.get("/ezid/id/ark:/99999/fk4gone").text)["_status"].startswith("unavailable | withdrawn")
    check_error(c.get("/ezid/id/ark:/99999/fk4coll/a/b"), 400, "bad request - no such identifier")
    r = c.get("/ezid/id/ark:/99999/fk4coll/a/b", params={"prefix_match": "yes"})
    assert r.status_code == 200
    assert r.text.splitlines()[0] == "success: ark:/99999/fk4coll in_lieu_of ark:/99999/fk4coll/a/b"
    assert anvl(r.text)["_target"] == "https://example.org/coll/"


def test_reserved_ids_are_shown_only_within_scope(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    r = c.get("/ezid/id/ark:/99999/fk4res")
    check_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == 'Basic realm="EZID"'
    check_error(c.get("/ezid/id/ark:/99999/fk4res", headers=basic("bob")), 403, "forbidden")
    r = c.get("/ezid/id/ark:/99999/fk4res", headers=basic("ann"))
    assert r.status_code == 200 and anvl(r.text)["_status"] == "reserved" and "_target" not in anvl(r.text)


# -- create, update, delete ----------------------------------------------------------------------------
def test_create_view_update_and_history_as_the_user(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    body = "_target: https://example.org/new\nerc.who: Proust, Marcel\ndc.title: Swann\n"
    r = c.put("/ezid/id/ark:/99999/b5new", content=body.encode(), headers=basic("ann"))
    assert (r.status_code, r.text, r.headers["content-type"]) == (201, "success: ark:/99999/b5new\n", PLAIN)
    got = anvl(c.get("/ezid/id/ark:/99999/b5new").text)
    assert got["_owner"] == "ann" and got["erc.who"] == "Proust, Marcel" and got["dc.title"] == "Swann"
    r = c.post("/ezid/id/ark:/99999/b5new", content=b"_target: https://example.org/moved\ndc.title: \n",
               headers=basic("ann"))
    assert (r.status_code, r.text) == (200, "success: ark:/99999/b5new\n")
    b = store.get_binding("ark:99999/b5new")
    assert b is not None and b.target == "https://example.org/moved" and b.extra_dict == {}
    assert b.erc.who == "Proust, Marcel"  # an element not named is kept
    history = store.history("ark", "ark:99999/b5new")
    assert [h.principal for h in history] == ["user:ann", "user:ann"]
    # root (administrator) may update it too; _owner stays who created it
    r = c.post("/ezid/id/ark:/99999/b5new", content=b"erc.what: W", headers=basic("root"))
    assert r.status_code == 200
    assert store.history("ark", "ark:99999/b5new")[-1].principal == "user:root"
    assert anvl(c.get("/ezid/id/ark:/99999/b5new").text)["_owner"] == "ann"


def test_a_create_that_loses_a_race_is_refused(ezid: tuple[TestClient, Store],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Another create of the same id that commits between this create's look and its write is never
    overwritten: the store decides "new" inside its write transaction (``only_new``)."""
    c, store = ezid
    assert c.put("/ezid/id/ark:/99999/b5race", content=b"_target: https://example.org/first",
                 headers=basic("ann")).status_code == 201  # fmt: skip
    monkeypatch.setattr(type(store), "get_binding", lambda self, *a, **k: None)  # the look saw nothing
    second = b"_target: https://example.org/second"
    r = c.put("/ezid/id/ark:/99999/b5race", content=second, headers=basic("ann"))
    check_error(r, 400, "bad request - identifier already exists")
    monkeypatch.undo()
    b = store.get_binding("ark:99999/b5race")
    assert b is not None and b.target == "https://example.org/first"


def test_a_charset_that_decodes_nothing_is_a_bad_request(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    for charset in ("undefined", "nonesuch"):
        r = c.put("/ezid/id/ark:/99999/b5cs", content=b"_target: https://example.org/", headers={
            **basic("ann"), "Content-Type": f"text/plain; charset={charset}"})
        assert r.status_code == 400 and r.text.startswith("error: bad request - "), r.text


def test_never_reserved_again_is_decided_on_the_stored_row(ezid: tuple[TestClient, Store],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An update that read the id while still reserved, and writes after it was made public, is refused
    as EZID's invalid transition (the store checks the row it locks, not the request's early read)."""
    c, store = ezid
    assert c.put("/ezid/id/ark:/99999/b5pub", content=b"_status: reserved",
                 headers=basic("ann")).status_code == 201  # fmt: skip
    stale = store.get_binding("ark:99999/b5pub")
    assert stale is not None and stale.status == "reserved"
    assert c.post("/ezid/id/ark:/99999/b5pub", content=b"_target: https://example.org/p\n_status: public",
                  headers=basic("ann")).status_code == 200  # fmt: skip
    monkeypatch.setattr(type(store), "get_binding", lambda self, *a, **k: stale)  # the read saw "reserved"
    for path in ("/ezid/id/ark:/99999/b5pub", "/ezid/id/ark:/99999/b5pub?update_if_exists=yes"):
        send = c.post if "?" not in path else c.put
        r = send(path, content=b"_status: reserved", headers=basic("ann"))
        assert r.status_code == 400 and "invalid transition" in r.text, r.text
    monkeypatch.undo()
    b = store.get_binding("ark:99999/b5pub")
    assert b is not None and b.status == "public"


def test_create_errors(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    r = c.put("/ezid/id/ark:/99999/b5new", content=b"_target: https://example.org/")
    check_error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == 'Basic realm="EZID"'
    wrongs = (basic("ann", "not the password"), {"Authorization": "Basic !!"}, {"Authorization": "Bearer x"})
    for wrong in wrongs:
        check_error(c.put("/ezid/id/ark:/99999/b5new", headers=wrong), 401, "unauthorized")
    check_error(c.put("/ezid/id/ark:/99999/b5new", headers=basic("bob")), 403, "forbidden")
    check_error(c.put("/ezid/id/ark:/99999/fk4new", headers=basic("carl")), 403, "forbidden")  # b5 only
    check_error(c.put("/ezid/id/ark:/99999/fk4x1", headers=basic("ann")), 400,
                "bad request - identifier already exists")
    r = c.put("/ezid/id/doi:10.5072/FK2TEST", headers=basic("ann"))
    assert r.status_code == 400 and r.text.startswith("error: bad request - unsupported identifier type")
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"_target: javascript:alert(1)", headers=basic("ann"))
    assert r.status_code == 400 and r.text.startswith("error: bad request - ") and "javascript" in r.text
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"_created: 1", headers=basic("ann"))
    check_error(r, 400, "bad request - element '_created': not settable (EZID sets it)")
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"_export: maybe", headers=basic("ann"))
    check_error(r, 400, "bad request - element '_export': must be yes or no in 'maybe'")
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"_owner: bob", headers=basic("ann"))
    assert r.status_code == 400 and "element '_owner'" in r.text
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"_status: gone", headers=basic("ann"))
    assert r.status_code == 400 and "element '_status'" in r.text
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"no colon here", headers=basic("ann"))
    assert r.status_code == 400 and r.text.startswith("error: bad request - ANVL parse error (")
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"a: 1\na: 2", headers=basic("ann"))
    assert r.status_code == 400 and "element named twice" in r.text
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"dc.title: \xff", headers=basic("ann"))
    assert r.status_code == 400 and "not utf-8 text" in r.text
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"erc: who: x%0Ahow: y", headers=basic("ann"))
    check_error(r, 400, "bad request - element 'erc': not an ERC element (who, what, when, where) in 'how'")
    r = c.put("/ezid/id/ark:/99999/b5y", content=b"erc: who: x\nerc.who: y", headers=basic("ann"))
    check_error(r, 400, "bad request - element 'erc.who': disagrees with the who of the element 'erc' in 'y'")
    assert store.get_binding("ark:99999/b5y") is None  # nothing refused was written


def test_whole_erc_element(ezid: tuple[TestClient, Store]) -> None:
    """EZID "Profile erc": an entire ANVL ERC document bound to the element erc, line terminators
    escaped, is the ERC (read back as erc.who, erc.what …); an empty erc deletes it."""
    c, store = ezid
    body = b"_target: https://example.org/p\nerc: who: Proust, Marcel%0Awhat: Remembrance of Things Past\n"
    r = c.put("/ezid/id/ark:/99999/b5erc", content=body, headers=basic("ann"))
    assert (r.status_code, r.text) == (201, "success: ark:/99999/b5erc\n")
    got = anvl(c.get("/ezid/id/ark:/99999/b5erc").text)
    assert (got["erc.who"], got["erc.what"]) == ("Proust, Marcel", "Remembrance of Things Past")
    r = c.post("/ezid/id/ark:/99999/b5erc", content=b"erc: who: Kunze, John%0Awhen: 2001\nerc.when: 2001",
               headers=basic("ann"))
    assert r.status_code == 200, r.text
    b = store.get_binding("ark:99999/b5erc")
    assert b is not None and (b.erc.who, b.erc.what, b.erc.when) == (
        "Kunze, John", "Remembrance of Things Past", "2001")  # an update changes only what it names
    r = c.post("/ezid/id/ark:/99999/b5erc", content=b"erc:", headers=basic("ann"))
    assert r.status_code == 200, r.text
    got = anvl(c.get("/ezid/id/ark:/99999/b5erc").text)
    assert not any(name.startswith("erc.") for name in got)


def test_update_if_exists(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    r = c.put("/ezid/id/ark:/99999/fk4x1", params={"update_if_exists": "yes"},
              content=b"_target: https://example.org/again", headers=basic("ann"))
    assert (r.status_code, r.text) == (200, "success: ark:/99999/fk4x1\n")
    r = c.put("/ezid/id/ark:/99999/b5z", params={"update_if_exists": "yes"},
              content=b"_target: https://example.org/z", headers=basic("ann"))
    assert r.status_code == 201
    b = store.get_binding("ark:99999/fk4x1")
    assert b is not None and b.target == "https://example.org/again"


def test_update_errors(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    store.tombstone("ark:99999/b5gone", "withdrawn for good")
    check_error(c.post("/ezid/id/ark:/99999/fk4x1", content=b"erc.what: x"), 401, "unauthorized")
    r = c.post("/ezid/id/ark:/99999/fk4x1", content=b"erc.what: x", headers=basic("bob"))
    check_error(r, 403, "forbidden")
    check_error(c.post("/ezid/id/ark:/99999/fk4nothere", headers=basic("ann")), 400,
                "bad request - no such identifier")
    r = c.post("/ezid/id/ark:/99999/b5gone", content=b"erc.what: x", headers=basic("ann"))
    assert r.status_code == 400 and "tombstoned" in r.text
    check_error(c.post("/ezid/id/doi:10.5072/FK2", headers=basic("ann")), 400,
                "bad request - unsupported identifier type: pidkit serves ARKs only, not doi: identifiers "
                "('doi:10.5072/FK2')")


def test_status_transitions(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    ident, ann = "/ezid/id/ark:/99999/b5st", basic("ann")
    assert c.put(ident, content=b"_status: reserved", headers=ann).status_code == 201
    b = store.get_binding("ark:99999/b5st")
    assert b is not None and b.status == "reserved" and b.target is None
    assert c.post(ident, content=b"_status: public", headers=ann).status_code == 200
    b = store.get_binding("ark:99999/b5st")  # made public without a target: its own EZID URL
    assert b is not None and b.status == "public" and b.target == "http://testserver/ezid/id/ark:/99999/b5st"
    check_error(c.post(ident, content=b"_status: reserved", headers=ann), 400,
                "bad request - element '_status': invalid transition: an identifier made public is never "
                "reserved again in 'reserved'")
    r = c.post(ident, content=b"_status: unavailable | withdrawn by author", headers=ann)
    assert r.status_code == 200
    assert anvl(c.get(ident).text)["_status"] == "unavailable | withdrawn by author"
    assert c.get("/ark:/99999/b5st").status_code == 410  # the resolver agrees
    assert c.post(ident, content=b"_status: public", headers=ann).status_code == 200
    assert anvl(c.get(ident).text)["_status"] == "public"
    check_error(c.post(ident, content=b"_status: reserved", headers=ann), 400,
                "bad request - element '_status': invalid transition: an identifier made public is never "
                "reserved again in 'reserved'")
    check_error(c.post(ident, content=b"_status: ", headers=ann), 400,
                "bad request - element '_status': cannot be deleted (public, reserved or unavailable)")


def test_profile_and_export_are_kept(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    body = b"_target: https://example.org/p\n_profile: dc\n_export: no\ndc.creator: Kunze\n"
    assert c.put("/ezid/id/ark:/99999/b5p", content=body, headers=basic("ann")).status_code == 201
    b = store.get_binding("ark:99999/b5p")  # kept where the importer keeps them too (pidkit.store.ezid)
    assert b is not None
    assert b.extra_dict == {"dc.creator": "Kunze", "ezid.profile": "dc", "ezid.export": "no"}
    got = anvl(c.get("/ezid/id/ark:/99999/b5p").text)
    assert (got["_profile"], got["_export"], got["dc.creator"]) == ("dc", "no", "Kunze")
    assert "ezid.profile" not in got
    r = c.post("/ezid/id/ark:/99999/b5p", content=b"_profile: \n_export: ", headers=basic("ann"))
    assert r.status_code == 200
    got = anvl(c.get("/ezid/id/ark:/99999/b5p").text)
    assert (got["_profile"], got["_export"]) == ("erc", "yes")  # deleted: the defaults
    r = c.post("/ezid/id/ark:/99999/b5p", content=b"ezid.profile: x", headers=basic("ann"))
    assert r.status_code == 400 and "reserved here" in r.text


def test_delete_only_reserved(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    check_error(c.delete("/ezid/id/ark:/99999/fk4res"), 401, "unauthorized")
    check_error(c.delete("/ezid/id/ark:/99999/fk4res", headers=basic("bob")), 403, "forbidden")
    check_error(c.delete("/ezid/id/ark:/99999/fk4x1", headers=basic("ann")), 400,
                "bad request - identifier status does not support deletion")
    check_error(c.delete("/ezid/id/ark:/99999/fk4nothere", headers=basic("ann")), 400,
                "bad request - no such identifier")
    r = c.delete("/ezid/id/ark:/99999/fk4res", headers=basic("ann"))
    assert (r.status_code, r.text) == (200, "success: ark:/99999/fk4res\n")
    check_error(c.get("/ezid/id/ark:/99999/fk4res"), 400, "bad request - no such identifier")
    assert store.history("ark", "ark:99999/fk4res")[-1].principal == "user:ann"
    # a deleted id stays held: it is never made public again
    r = c.put("/ezid/id/ark:/99999/fk4res", content=b"_target: https://example.org/", headers=basic("ann"))
    assert r.status_code == 400


# -- mint ------------------------------------------------------------------------------------------------
def test_mint(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    body = b"_target: https://example.org/obj/${identifier}\nerc.what: minted"
    r = c.post("/ezid/shoulder/ark:/99999/fk4", content=body, headers=basic("ann"))
    assert r.status_code == 201 and r.headers["content-type"] == PLAIN
    ident = r.text.removeprefix("success: ").strip()
    assert ident.startswith("ark:/99999/fk4")
    b = store.get_binding(ident)
    assert b is not None and b.target == f"https://example.org/obj/{ident}" and b.erc.what == "minted"
    assert [h.principal for h in store.history("ark", ident)] == ["user:ann"]
    count = store.minted_count()
    check_error(c.post("/ezid/shoulder/ark:/99999/fk4"), 401, "unauthorized")
    check_error(c.post("/ezid/shoulder/ark:/99999/fk4", headers=basic("bob")), 403, "forbidden")
    check_error(c.post("/ezid/shoulder/ark:/99999/fk4", headers=basic("carl")), 403, "forbidden")
    check_error(c.post("/ezid/shoulder/ark:/12346/x5", headers=basic("ann")), 403, "forbidden")
    check_error(c.post("/ezid/shoulder/ark:/99999/zz9", headers=basic("ann")), 400,
                "bad request - no minter mints on shoulder 'ark:/99999/zz9'")
    r = c.post("/ezid/shoulder/doi:10.5072/FK2", headers=basic("ann"))
    assert r.status_code == 400 and "unsupported identifier type" in r.text
    r = c.post("/ezid/shoulder/ark:/99999/fk4", content=b"_target: ftp://x/${identifier}",
               headers=basic("ann"))
    assert r.status_code == 400
    r = c.post("/ezid/shoulder/ark:/99999/fk4", content=b"_target: https://example.org/x\nerc.what: a%00b",
               headers=basic("ann"))  # refused only as it would be written (a review found an id used up)
    assert r.status_code == 400 and "U+0000" in r.text
    assert store.minted_count() == count  # refused requests minted nothing
    r = c.post("/ezid/shoulder/ark:/12346/x5", content=b"_status: reserved", headers=basic("bob"))
    assert r.status_code == 201 and r.text.startswith("success: ark:/12346/x5")


# -- sessions ----------------------------------------------------------------------------------------------
def test_login_cookie_then_logout(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    check_error(c.get("/ezid/login"), 401, "unauthorized")
    check_error(c.get("/ezid/login", headers=basic("ann", "wrong password!")), 401, "unauthorized")
    r = c.get("/ezid/login", headers=basic("ann"))
    assert (r.status_code, r.text) == (200, "success: session cookie returned\n")
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("sessionid=") and "HttpOnly" in cookie and "Path=/ezid" in cookie
    assert "samesite=strict" in cookie.lower()
    session = cookie.split(";")[0]
    c.cookies.clear()
    r = c.put("/ezid/id/ark:/99999/b5c", content=b"_target: https://example.org/c",
              headers={"Cookie": session})
    assert r.status_code == 201
    assert store.history("ark", "ark:99999/b5c")[0].principal == "user:ann"
    r = c.get("/ezid/logout", headers={"Cookie": session})
    assert (r.status_code, r.text) == (200, "success: authentication credentials flushed\n")
    c.cookies.clear()
    r = c.post("/ezid/id/ark:/99999/b5c", content=b"erc.what: x", headers={"Cookie": session})
    check_error(r, 401, "unauthorized")
    forged = session[:-3] + "abc"
    check_error(c.post("/ezid/id/ark:/99999/b5c", headers={"Cookie": forged}), 401, "unauthorized")


def test_failed_sign_ins_are_rate_limited(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    for _ in range(5):
        check_error(c.put("/ezid/id/ark:/99999/b5r", headers=basic("ann", "wrong password!")), 401,
                    "unauthorized")
    r = c.put("/ezid/id/ark:/99999/b5r", headers=basic("ann"))  # even the right password, for a while
    assert r.status_code == 429 and r.text.startswith("error: too many requests - ")
    assert int(r.headers["retry-after"]) > 0


def test_cross_site_writes_are_refused(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        r = c.put("/ezid/id/ark:/99999/b5cs", content=b"_target: https://example.org/",
                  headers={**basic("ann"), **headers})
        check_error(r, 403, "forbidden")
    assert store.get_binding("ark:99999/b5cs") is None
    r = c.put("/ezid/id/ark:/99999/b5cs", content=b"_target: https://example.org/",
              headers={**basic("ann"), "Origin": "http://testserver"})
    assert r.status_code == 201


# -- the encoding -------------------------------------------------------------------------------------
def test_anvl_round_trip(ezid: tuple[TestClient, Store]) -> None:
    c, store = ezid

    def escape(s: str) -> str:  # EZID's documented escaping
        import re

        return re.sub("[%:\r\n]", lambda m: f"%{ord(m.group(0)):02X}", s)

    metadata = {"_target": "https://example.org/a?b=c%20d", "erc.what": "100% done: yes\r\nline two",
                "dc:title": "Ünïcödé ☃ — 日本", "erc.who": "a\nb\rc"}
    body = "\n".join(f"{escape(k)}: {escape(v)}" for k, v in metadata.items()).encode("utf-8")
    r = c.put("/ezid/id/ark:/99999/b5enc", content=body, headers={**basic("ann"), "Content-Type": PLAIN})
    assert r.status_code == 201, r.text
    b = store.get_binding("ark:99999/b5enc")
    assert b is not None and b.erc.what == "100% done: yes\r\nline two" and b.extra_dict == {
        "dc:title": "Ünïcödé ☃ — 日本"}
    got = anvl(c.get("/ezid/id/ark:/99999/b5enc").content.decode("utf-8"))
    assert {k: got[k] for k in metadata} == metadata
    text = c.get("/ezid/id/ark:/99999/b5enc").text
    assert "dc%3Atitle: " in text and "100%25 done: yes%0D%0Aline two" in text
    # another declared charset is read as such
    r = c.post("/ezid/id/ark:/99999/b5enc", content="erc.when: été".encode("latin-1"),
               headers={**basic("ann"), "Content-Type": "text/plain; charset=ISO-8859-1"})
    assert r.status_code == 200 and store.get_binding("ark:99999/b5enc").erc.when == "été"  # type: ignore[union-attr]
    r = c.post("/ezid/id/ark:/99999/b5enc", content=b"x: y", headers={**basic("ann"),
               "Content-Type": "text/plain; charset=klingon"})
    check_error(r, 400, "bad request - unknown charset 'klingon'")
    # comments and continuation lines (accepted on upload)
    r = c.post("/ezid/id/ark:/99999/b5enc", content=b"# note\nerc.who: Proust,\n  Marcel\n",
               headers=basic("ann"))
    assert r.status_code == 200 and store.get_binding("ark:99999/b5enc").erc.who == "Proust, Marcel"  # type: ignore[union-attr]


# -- limits, methods, paths --------------------------------------------------------------------------------
def test_body_limit_and_method_not_allowed(ezid: tuple[TestClient, Store]) -> None:
    c, _ = ezid
    r = c.put("/ezid/id/ark:/99999/b5big", content=b"dc.title: " + b"x" * 5000, headers=basic("ann"))
    assert r.status_code == 413 and r.headers["content-type"] == PLAIN
    assert r.text == "error: request body too large - request body larger than 4096 bytes\n"

    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b"x" * 1000

    r = c.put("/ezid/id/ark:/99999/b5big", content=chunks(), headers=basic("ann"))
    assert r.status_code == 413 and r.text.startswith("error: ")
    r = c.patch("/ezid/id/ark:/99999/fk4x1", headers=basic("ann"))
    check_error(r, 405, "method not allowed")
    r = c.get("/ezid/nothing")
    assert r.status_code == 404 and r.text.startswith("error: not found")


def test_ezid_paths_go_past_the_fast_path(ezid: tuple[TestClient, Store]) -> None:
    scope = {"type": "http", "method": "GET", "path": "/ezid/id/ark:/99999/fk4x1", "query_string": b"",
             "headers": []}
    assert not is_fast(scope)
    c, _ = ezid
    r = c.get("/ezid/id/ark:/99999/fk4x1")
    assert r.status_code == 200 and r.text.startswith("success: ")  # metadata, not a redirect
    assert c.get("/id/3jzfcijpj2z2a").status_code == 302  # pidkit's own /id/{value} is unchanged


def test_the_base_path_is_configurable(seeded: Seeded) -> None:
    settings = Settings.from_env({"PIDKIT_EZID_BASE": "/api/ezid2"})
    with TestClient(create_app(seeded.store, settings=settings)) as c:
        assert c.get("/api/ezid2/status").text == "success: EZID is up\n"
        assert c.get("/api/ezid2/id/ark:/99999/fk4x1").text.startswith("success: ark:/99999/fk4x1")
        assert c.get("/ezid/status").status_code == 404
    with pytest.raises(ValueError, match="PIDKIT_EZID_BASE"):
        Settings.from_env({"PIDKIT_EZID_BASE": "ezid/"})


def test_an_imported_download_reads_back_as_it_was(ezid: tuple[TestClient, Store], tmp_path: Path) -> None:
    """The importer and the API share one mapping (pidkit.store.ezid): a record of an EZID download
    imported by `pidkit import --from ezid` reads back through the API with the elements it had."""
    c, store = ezid
    record = {"_target": "https://example.org/imp", "_profile": "dc", "_export": "no",
              "_status": "unavailable | withdrawn by author", "_created": "1300812337",
              "_updated": "1300913550", "_owner": "apitest", "_ownergroup": "cdl",
              "erc.who": "Proust, Marcel", "dc.title": "100%: a\nb"}
    download = tmp_path / "dl.txt"
    escaped = {k: v.replace("%", "%25").replace("\n", "%0A") for k, v in record.items()}
    download.write_text(":: ark:/99999/b5imp\n" + "".join(f"{k}: {v}\n" for k, v in escaped.items()),
                        encoding="utf-8")
    assert importers.run("ezid", download, store).count("imported") == 1
    got = anvl(c.get("/ezid/id/ark:/99999/b5imp").text)
    assert {k: got[k] for k in record} == record
