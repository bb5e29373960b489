"""The REST API through the test client, on SQLite and PostgreSQL: API keys and their scope, minting,
bindings, tombstones, listing, JSON Lines import/export, field-naming 4xx errors and the body limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _webutil import LETTER_NAAN, NAAN, SCRIPT, Seeded, auth
from pidkit.store import Store
from pidkit.web import Settings, create_app

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client


def test_writes_need_a_key(client: TestClient) -> None:
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "fk4"})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert r.json()["error"]["field"] == "Authorization"
    bad = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "fk4"}, headers=auth("pk_nope"))
    assert bad.status_code == 401


def test_mint_one_and_many(client: TestClient, seeded: Seeded) -> None:
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "fk4"}, headers=auth(seeded.key))
    assert r.status_code == 201
    (one,) = r.json()["arks"]
    many = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "fk4", "count": 25},
                       headers=auth(seeded.key)).json()["arks"]
    assert len({one, *many}) == 26
    assert all(a.startswith("ark:99999/fk4") and len(a) == len("ark:99999/fk4") + 7 for a in [one, *many])


@pytest.mark.parametrize(("body", "field"), [
    ({"naan": NAAN, "shoulder": "fk4", "count": 0}, "body.count"),
    ({"naan": NAAN, "shoulder": "fk4", "count": 10_001}, "body.count"),
    ({"shoulder": "fk4"}, "body.naan"),
    ({"naan": NAAN, "shoulder": "fk4", "colour": "red"}, "body.colour"),
])
def test_mint_bad_request_names_the_field(client: TestClient, seeded: Seeded, body: dict[str, object],
                                          field: str) -> None:
    r = client.post("/api/v1/mint", json=body, headers=auth(seeded.key))
    assert r.status_code == 422
    assert r.json()["error"]["field"] == field


def test_mint_scope_and_missing_minter(client: TestClient, seeded: Seeded) -> None:
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "fk4"}, headers=auth(seeded.b5_key))
    assert r.status_code == 403
    r = client.post("/api/v1/mint", json={"naan": NAAN, "shoulder": "b5"}, headers=auth(seeded.b5_key))
    assert (r.status_code, r.json()["error"]["field"]) == (404, "shoulder")


def test_bind_create_update_fetch_resolve(client: TestClient, seeded: Seeded) -> None:
    body = {"ark": "ark:/99999/fk4-new1", "target": "https://example.org/new1",
            "erc": {"who": "W", "what": "New one", "when": "2024"}}
    r = client.put("/api/v1/bindings", json=body, headers=auth(seeded.key))
    assert r.status_code == 201
    assert (r.json()["key"], r.json()["text"], r.json()["erc"]["what"]) == (
        "ark:99999/fk4new1", "ark:/99999/fk4-new1", "New one")
    r = client.put("/api/v1/bindings", json={**body, "target": "https://example.org/moved"},
                   headers=auth(seeded.key))
    assert r.status_code == 200
    assert client.get("/ark:99999/fk4new1").headers["location"] == "https://example.org/moved"
    got = client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4-new1"})
    assert (got.status_code, got.json()["target"]) == (200, "https://example.org/moved")


def test_put_with_only_a_target_keeps_the_metadata(client: TestClient, seeded: Seeded) -> None:
    """Issue 11: an update names the fields it changes; a PUT with only a target used to reset the ERC."""
    body = {"ark": "ark:99999/fk4keepj", "target": "https://example.org/a",
            "erc": {"who": "W", "what": "Kept", "when": "1952", "where": "https://example.org/a"}}
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.key)).status_code == 201
    r = client.put("/api/v1/bindings", json={"ark": "ark:99999/fk4keepj", "target": "https://example.org/b"},
                   headers=auth(seeded.key))
    assert r.status_code == 200
    got = client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4keepj"}).json()
    assert got["target"] == "https://example.org/b"
    assert (got["erc"]["who"], got["erc"]["what"], got["erc"]["when"]) == ("W", "Kept", "1952")


def test_put_changes_only_the_erc_elements_it_sends(client: TestClient, seeded: Seeded) -> None:
    """Issue 11: a PUT's ERC changes the elements it names; null (or "") clears one explicitly."""
    body = {"ark": "ark:99999/fk4ercpk", "target": "https://example.org/a",
            "erc": {"who": "W", "what": "Kept", "when": "1952"}, "support": {"who": "UNT", "what": "S"}}
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.key)).status_code == 201
    r = client.put("/api/v1/bindings", headers=auth(seeded.key), json={
        "ark": "ark:99999/fk4ercpk", "target": "https://example.org/a",
        "erc": {"who": "New", "when": None}, "support": {"what": ""}})
    assert r.status_code == 200, r.text
    got = client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4ercpk"}).json()
    assert got["erc"] == {"who": "New", "what": "Kept", "when": "", "where": ""}
    assert got["support"] == {"who": "UNT", "what": "", "when": "", "where": ""}


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"ark": "ark:99999/fk4y", "target": "javascript:alert(1)"}, 400, "target"),
    ({"ark": "ark:99999/fk4y", "target": "ftp://example.org/"}, 400, "target"),
    ({"ark": "ark:99999/fk4y"}, 422, "target"),
    ({"ark": "99999/fk4y", "target": "https://example.org/"}, 400, "ark"),
    ({"ark": "ark:99999/fk4y", "target": "https://example.org/", "status": "gone"}, 422, "body.status"),
    ({"ark": "ark:99999/fk4y", "target": "https://e.org/", "erc": {"who": "a\x00b"}}, 422, "body.erc.who"),
    ({"ark": "ark:99999/fk4y", "target": "https://e.org/", "erc": {"who": "\ud800"}}, 422, "body.erc.who"),
])
def test_bind_bad_input_names_the_field(client: TestClient, seeded: Seeded, body: dict[str, object],
                                        status: int, field: str) -> None:
    r = client.put("/api/v1/bindings", content=json.dumps(body), headers={
        **auth(seeded.key), "Content-Type": "application/json"})
    assert r.status_code == status
    assert r.json()["error"]["field"] == field


@pytest.mark.parametrize("accept", ["application/json", "text/html", "text/plain"])
def test_a_lone_surrogate_in_an_object_key_is_refused_and_answered(
    client: TestClient, seeded: Seeded, accept: str
) -> None:
    """A JSON text may escape a lone surrogate in an object key, where no value check reaches: the
    store refuses it naming the element, and the answer — which names the input — is still written
    (it was a 500: the surrogate cannot be encoded; a red-team finding)."""
    headers = {**auth(seeded.key), "Content-Type": "application/json", "Accept": accept}
    put = b'{"ark": "ark:99999/fk4new1", "target": "https://e.org/", "extra": {"\\ud800x": "v"}}'
    patch = b'{"erc": {"\\ud800": "v"}}'
    assert client.put("/api/v1/bindings", json={"ark": "ark:99999/fk4new1", "target": "https://e.org/"},
                      headers=auth(seeded.key)).status_code == 201  # fmt: skip
    where = "/api/v1/bindings?ark=ark:99999/fk4new1"
    for r in (client.put("/api/v1/bindings", content=put, headers=headers),
              client.patch(where, content=patch, headers=headers)):  # fmt: skip
        assert 400 <= r.status_code < 500, r.text
        assert "\\ud800" in r.text  # the input named, escaped
        if accept == "application/json":
            assert r.json()["error"]["input"].startswith("\\ud800")
    b = seeded.store.get_binding("ark:99999/fk4new1")
    assert b is not None and not b.extra and b.erc.who == ""


def test_a_refused_import_lists_the_first_thousand_bad_lines_and_counts_them_all(
    client: TestClient, seeded: Seeded
) -> None:
    """The answer stays small however many lines are bad (each was listed: 1 MiB of bad lines gave a
    35 MB answer and 420 MB of memory; a red-team finding)."""
    app = create_app(seeded.store, settings=Settings(max_body=1 << 20))
    with TestClient(app) as big:  # the suite's client takes 4 KiB
        r = big.post("/api/v1/import", content=b"x\n" * 3000, headers=auth(seeded.key))
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["count"] == 3000 and len(error["problems"]) == 1000
    assert [p["line"] for p in error["problems"][:2]] == [1, 2] and error["problems"][-1]["line"] == 1000
    assert error["message"].startswith("3000 bad lines, nothing imported")


def test_a_put_answers_201_only_when_the_store_created_the_binding(
    client: TestClient, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store decides under the id's lock whether a PUT creates (``only_new``, then an update):
    of concurrent PUTs of a new ARK one creates it and the others update it — each answered 201 when
    it had read the ARK free before another created it (a red-team finding: 5 of 30 ARKs put four
    times at once), and a PUT that created an ARK deleted after its read answered 200."""
    body = {"ark": "ark:99999/fk4new1", "target": "https://example.org/first", "status": "reserved"}
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.key)).status_code == 201
    r = client.put("/api/v1/bindings", json={**body, "target": "https://example.org/second"},
                   headers=auth(seeded.key))  # fmt: skip
    assert (r.status_code, r.json()["target"]) == (200, "https://example.org/second")
    store = seeded.store
    real = type(store).change

    def deleted_first(self: Store, *args: Any, **kwargs: Any) -> Any:
        """Another request deletes the reserved ARK just before this PUT writes."""
        monkeypatch.setattr(type(store), "change", real)
        store.delete("ark", "ark:99999/fk4new1")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "change", deleted_first)
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.key)).status_code == 201
    history = store.history("ark", "ark:99999/fk4new1")
    assert [h.operation for h in history] == ["create", "update", "delete", "create"]


def test_bind_outside_scope_is_403(client: TestClient, seeded: Seeded) -> None:
    body = {"ark": "ark:99999/fk4z", "target": "https://example.org/"}
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.b5_key)).status_code == 403
    assert client.put("/api/v1/bindings", json=body, headers=auth(seeded.other_key)).status_code == 403
    ok = {"ark": "ark:99999/b5z", "target": "https://example.org/"}
    assert client.put("/api/v1/bindings", json=ok, headers=auth(seeded.b5_key)).status_code == 201


def test_reserved_is_visible_only_with_a_key(client: TestClient, seeded: Seeded) -> None:
    assert client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4res"}).status_code == 404
    r = client.get("/api/v1/bindings", params={"ark": "ark:99999/fk4res"}, headers=auth(seeded.key))
    assert (r.status_code, r.json()["status"]) == (200, "reserved")


def test_tombstone_is_final(client: TestClient, seeded: Seeded) -> None:
    r = client.post("/api/v1/tombstones", json={"ark": "ark:99999/fk4x1", "reason": "duplicate"},
                    headers=auth(seeded.key))
    assert (r.status_code, r.json()["status"]) == (200, "tombstoned")
    assert r.json()["tombstone_reason"] == "duplicate"
    assert client.get("/ark:99999/fk4x1").status_code == 410
    again = client.put("/api/v1/bindings", json={"ark": "ark:99999/fk4x1", "target": "https://example.org/"},
                       headers=auth(seeded.key))
    assert again.status_code == 409
    empty = client.post("/api/v1/tombstones", json={"ark": "ark:99999/fk4x1", "reason": ""},
                        headers=auth(seeded.key))
    assert (empty.status_code, empty.json()["error"]["field"]) == (422, "body.reason")


def test_a_naan_is_taken_in_any_case(client: TestClient, seeded: Seeded) -> None:
    """The documented NAAN pattern allows any case (§3.2 step 4 lowercases a NAAN): listing and minting
    under an uppercase spelling act on the NAAN itself; a NAAN the rule refuses is 422 naming the field."""
    _, secret = seeded.store.create_api_key(LETTER_NAAN, label="letters")
    seeded.store.create_minter("m-x1", naan=LETTER_NAAN, template="x1.sdd")
    r = client.get(f"/api/v1/naans/{LETTER_NAAN.upper()}/bindings", headers=auth(secret))
    assert r.status_code == 200, r.text
    assert [b["key"] for b in r.json()["bindings"]] == ["ark:b9999/x1y"]
    r = client.post("/api/v1/mint", json={"naan": LETTER_NAAN.upper(), "shoulder": "x1"},
                    headers=auth(secret))
    assert r.status_code in (200, 201), r.text
    assert all(ark.startswith(f"ark:{LETTER_NAAN}/x1") for ark in r.json()["arks"]), r.text
    r = client.get("/api/v1/naans/b9l99/bindings", headers=auth(secret))
    assert (r.status_code, r.json()["error"]["field"]) == (422, "naan")
    r = client.post("/api/v1/mint", json={"naan": "b9l99", "shoulder": "x1"}, headers=auth(secret))
    assert (r.status_code, r.json()["error"]["field"]) == (422, "body.naan")


def test_list_a_shoulder_in_pages(client: TestClient, seeded: Seeded) -> None:
    seen: list[str] = []
    after: str | None = None
    while True:
        params: dict[str, str | int] = {"shoulder": "fk4", "limit": 2}
        if after:
            params["after"] = after
        r = client.get(f"/api/v1/naans/{NAAN}/bindings", params=params, headers=auth(seeded.key))
        assert r.status_code == 200
        seen += [b["key"] for b in r.json()["bindings"]]
        after = r.json()["next"]
        if after is None:
            break
    assert seen == sorted(["ark:99999/fk4x1", "ark:99999/fk4coll", "ark:99999/fk4gone", "ark:99999/fk4res",
                           "ark:99999/fk4a%2Fb"])
    assert client.get("/api/v1/naans/12346/bindings", headers=auth(seeded.key)).status_code == 403


def test_export_then_import_round_trip(client: TestClient, seeded: Seeded) -> None:
    r = client.get("/api/v1/export", headers=auth(seeded.key))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = r.text.splitlines()
    rows = [json.loads(line) for line in lines]
    assert {row["key"] for row in rows} == {"ark:99999/fk4x1", "ark:99999/fk4coll", "ark:99999/fk4gone",
                                            "ark:99999/fk4res", "ark:99999/fk4a%2Fb"}
    assert next(row for row in rows if row["key"] == "ark:99999/fk4x1")["erc"]["what"] == f"Rhythm {SCRIPT}"
    r = client.post("/api/v1/import", content="\n".join(lines), headers=auth(seeded.key))
    assert r.status_code == 200
    # the tombstone is left as it is (neither created nor updated); the four others are rewritten
    assert r.json() == {"lines": 5, "created": 0, "updated": 4}


def test_import_creates_and_rejects_all_or_nothing(client: TestClient, seeded: Seeded) -> None:
    good = json.dumps({"kind": "ark", "text": "ark:99999/fk4impt", "target": "https://example.org/i1",
                       "status": "public"})
    bad = json.dumps({"kind": "ark", "text": "ark:99999/fk4imp2", "target": "javascript:x",
                      "status": "public"})
    r = client.post("/api/v1/import", content=f"{good}\nnot json\n{bad}\n", headers=auth(seeded.key))
    assert r.status_code == 422
    assert [p["line"] for p in r.json()["error"]["problems"]] == [2, 3]
    assert client.get("/ark:99999/fk4impt").status_code == 404
    r = client.post("/api/v1/import", content=good + "\n", headers=auth(seeded.key))
    assert (r.status_code, r.json()["created"]) == (200, 1)
    assert client.get("/ark:99999/fk4impt").headers["location"] == "https://example.org/i1"


def test_import_scope_and_encoding(client: TestClient, seeded: Seeded) -> None:
    line = json.dumps({"kind": "ark", "text": "ark:99999/fk4q", "target": "https://e.org/",
                       "status": "public"})
    r = client.post("/api/v1/import", content=line, headers=auth(seeded.b5_key))
    assert (r.status_code, r.json()["error"]["field"]) == (403, "body")
    r = client.post("/api/v1/import", content=b"\xff\xfe", headers=auth(seeded.key))
    assert (r.status_code, r.json()["error"]["field"]) == (400, "body")


def test_oversized_body_is_413(client: TestClient, seeded: Seeded) -> None:
    """The test app's limit is 4096 bytes: by Content-Length, and counted for a chunked body."""
    big = b"x" * 5000
    r = client.post("/api/v1/import", content=big, headers=auth(seeded.key))
    assert r.status_code == 413

    def chunks() -> Iterator[bytes]:
        for _ in range(10):
            yield b"y" * 1000

    r = client.post("/api/v1/import", content=chunks(), headers=auth(seeded.key))
    assert r.status_code == 413
    assert "larger than 4096 bytes" in r.json()["error"]["message"]


def test_openapi_document(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert set(doc["paths"]) == {"/api/v1/mint", "/api/v1/bindings", "/api/v1/tombstones",
                                 "/api/v1/naans/{naan}/bindings", "/api/v1/import", "/api/v1/export",
                                 "/api/v1/history"}
    assert "HTTPBearer" in doc["components"]["securitySchemes"]
