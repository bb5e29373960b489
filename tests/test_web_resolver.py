"""The resolver through the test client, on SQLite and PostgreSQL: redirects, normalization of the
request path, suffix passthrough, tombstones, reserved and unknown ARKs, N2T forwarding, ``?info`` in
three representations, ``/.well-known/ark``, ``/id/{value}`` and 503 when the store is unavailable."""

from __future__ import annotations

import json
import sqlite3

import pytest
from fastapi.testclient import TestClient

from _webutil import COLLECTION, SCRIPT, TARGET, Seeded, without_times
from pidkit.store import Store, open_store
from pidkit.web import Settings, create_app

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

# (request path, why it must reach ark:99999/fk4x1)
SPELLINGS = [
    ("/ark:99999/fk4x1", "canonical"),
    ("/ark:/99999/fk4x1", "old label"),
    ("/ARK:/99999/fk4x1", "label case"),
    ("/ark:99999/fk4-x1", "hyphen"),
    ("/ark:99999/f-k-4--x-1", "many hyphens"),
    ("/ark:99999/fk4x1/", "final slash"),
    ("/ark:99999/fk4x1.", "final period"),
    ("/ark:99-999/fk4x1", "hyphen in NAAN"),
]


@pytest.mark.parametrize(("path", "why"), SPELLINGS, ids=[w for _, w in SPELLINGS])
def test_bound_ark_redirects_in_any_spelling(client: TestClient, path: str, why: str) -> None:
    r = client.get(path)
    assert r.status_code == 302, why
    assert r.headers["location"] == TARGET


def test_head_redirects(client: TestClient) -> None:
    r = client.head("/ark:99999/fk4x1")
    assert (r.status_code, r.headers["location"]) == (302, TARGET)


@pytest.mark.parametrize("path", ["/ark:99999/fk4a%2Fb", "/ark:99999/fk4a%2fb", "/ark:/99999/fk4-a%2fb"])
def test_percent_hex_case_does_not_matter(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert (r.status_code, r.headers["location"]) == (302, "https://example.org/pct")


@pytest.mark.parametrize("path", ["/ark:B9999/x1y", "/ark:/b9999/x1y", "/ark:B-9999/x-1y"])
def test_naan_case_does_not_matter(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert (r.status_code, r.headers["location"]) == (302, "https://example.org/letters")


PASSTHROUGH = [
    ("/ark:99999/fk4coll/p1", COLLECTION + "p1"),
    ("/ark:99999/fk4coll/p1/s2.pdf", COLLECTION + "p1/s2.pdf"),
    ("/ark:99999/fk4coll.v2", "https://example.org/coll/.v2"),
    ("/ark:/99999/fk4-coll/p-1", COLLECTION + "p-1"),  # the suffix as the request spelled it
]


@pytest.mark.parametrize(("path", "location"), PASSTHROUGH, ids=[p for p, _ in PASSTHROUGH])
def test_suffix_passthrough(client: TestClient, path: str, location: str) -> None:
    r = client.get(path)
    assert (r.status_code, r.headers["location"]) == (302, location)


def test_no_passthrough_without_the_flag(client: TestClient) -> None:
    assert client.get("/ark:99999/fk4x1/more").status_code == 404


def test_tombstoned_is_410_with_a_page(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4gone")
    assert r.status_code == 410
    assert "location" not in r.headers
    assert "withdrawn for good" in r.text
    assert "ark:99999/fk4gone" in r.text
    assert SCRIPT not in r.text
    assert "withdrawn &lt;script&gt;alert(1)&lt;/script&gt;" in r.text


def test_reserved_is_404(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4res")
    assert r.status_code == 404
    assert "location" not in r.headers


def test_unknown_name_under_local_naan_is_404_page(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4nothing")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert "ark:99999/fk4nothing is not bound" in r.text


# NAANs 00000 and 00001 are not in the public NAAN registry (the registered ones resolve through it:
# tests/test_web_registry.py).
@pytest.mark.parametrize(("path", "location"), [
    ("/ark:00000/x6np1wh8k", "https://n2t.net/ark:00000/x6np1wh8k"),
    ("/ark:/00001/tf5p30086k/c3?info", "https://n2t.net/ark:00001/tf5p30086k/c3?info"),
])
def test_unknown_naan_goes_to_n2t(client: TestClient, path: str, location: str) -> None:
    r = client.get(path)
    assert (r.status_code, r.headers["location"]) == (302, location)


def test_not_an_ark_is_400_naming_the_position(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4%zz")
    assert r.status_code == 400
    assert "position 14" in r.text


ANVL = """erc:
who: Austin,%0ALarry
what: Rhythm <script>alert(1)</script>
when: 1952
where: ark:99999/fk4x1
erc-support:
who: UNT Libraries
what: Permanent: Stable Content:
when: 20081203
where: https://example.org/policy
"""


@pytest.mark.parametrize("query", ["?info", "??"])
def test_info_is_anvl_by_default(client: TestClient, query: str) -> None:
    r = client.get("/ark:/99999/fk4-x1" + query)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["link"] == '</ark:99999/fk4x1>; rel="describes"'
    assert without_times(r.text) == ANVL


def test_info_json(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4x1?info", headers={"Accept": "application/json"})
    assert r.status_code == 200
    assert r.headers["link"] == '</ark:99999/fk4x1>; rel="describes"'
    got = r.json()
    created, updated = got.pop("created"), got.pop("updated")  # when made and last changed (issue 13)
    assert created.endswith("Z") and created <= updated
    assert (got.pop("extra"), got.pop("reason")) == ({}, None)
    assert got == {
        "id": "ark:99999/fk4x1", "kind": "ark", "status": "public", "target": TARGET,
        "erc": {"who": "Austin,\nLarry", "what": f"Rhythm {SCRIPT}", "when": "1952",
                "where": "ark:99999/fk4x1"},
        "erc-support": {"who": "UNT Libraries", "what": "Permanent: Stable Content:", "when": "20081203",
                        "where": "https://example.org/policy"},
        "tombstone_reason": None,
    }


def test_info_html_for_browsers_is_escaped(client: TestClient) -> None:
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    r = client.get("/ark:99999/fk4x1?info", headers={"Accept": accept})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert "<script>" not in r.text
    assert "Rhythm &lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert "UNT Libraries" in r.text


def test_info_of_a_tombstone_says_so(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4gone?info")
    assert r.status_code == 200
    assert without_times(r.text).splitlines()[-2:] == [
        "status: tombstoned", "reason: withdrawn <script>alert(1)</script>"]


def test_info_of_reserved_is_404(client: TestClient) -> None:
    assert client.get("/ark:99999/fk4res?info").status_code == 404


def test_well_known_ark(client: TestClient) -> None:
    r = client.get("/.well-known/ark")
    assert (r.status_code, r.text) == (200, "/\n")
    assert r.headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(("value", "location"), [
    ("AYvP5WgA-_-_ASNFZ4mr", "https://example.org/xarkid"),
    ("3jzfcijpj2z2a", "https://example.org/tid"),
])
def test_other_ids_resolve(client: TestClient, value: str, location: str) -> None:
    r = client.get(f"/id/{value}")
    assert (r.status_code, r.headers["location"]) == (302, location)


def test_other_id_info_and_unknown(client: TestClient) -> None:
    r = client.get("/id/AYvP5WgA-_-_ASNFZ4mr?info", headers={"Accept": "application/json"})
    assert r.json()["erc"]["what"] == "a XarkId"
    assert r.headers["link"] == '</id/AYvP5WgA-_-_ASNFZ4mr>; rel="describes"'
    assert client.get("/id/3jzfcijpj2z2b").status_code == 404
    assert client.get("/id/not-an-id-at-all!").status_code == 404


def test_store_outage_is_503_then_recovers(tmp_path: pytest.TempPathFactory) -> None:
    """The store cannot be opened at first (e.g. PostgreSQL down): 503 + Retry-After, then it opens."""
    attempts: list[int] = []
    url = f"sqlite:///{tmp_path}/late.db"

    def opener() -> Store:
        attempts.append(1)
        if len(attempts) < 3:
            raise sqlite3.OperationalError("unable to open database file")
        return open_store(url)

    with TestClient(create_app(opener, settings=Settings(store_retry=0.0)), follow_redirects=False) as c:
        for _ in range(2):
            r = c.get("/ark:00000/fk4x1")
            assert r.status_code == 503
            assert r.headers["retry-after"] == "5"
        r = c.get("/ark:00000/fk4x1")
        assert (r.status_code, r.headers["location"]) == (302, "https://n2t.net/ark:00000/fk4x1")
        r = c.get("/api/v1/bindings", params={"ark": "ark:99999/x"})
        assert r.status_code == 404


def test_database_error_during_a_request_is_503(client: TestClient, seeded: Seeded,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    def down(*args: object) -> None:
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(seeded.store, "resolve", down)
    r = client.get("/ark:99999/fk4x1")
    assert r.status_code == 503
    monkeypatch.undo()
    assert client.get("/ark:99999/fk4x1").status_code == 302


def test_redirect_only_to_http_targets(client: TestClient) -> None:
    """Import with a target that is not http(s) is refused by the store, so no such redirect exists."""
    line = json.dumps({"kind": "ark", "text": "ark:99999/fk4js", "target": "javascript:alert(1)",
                       "status": "public"})
    assert client.post("/api/v1/import", content=line).status_code in (401, 422)
