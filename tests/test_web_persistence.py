"""The web side of issue 13: 410 with the reason for an unavailable ARK (the FastAPI route and the raw-ASGI
fast path alike), ``?info`` with extra metadata and times, ``PATCH /api/v1/bindings`` (JSON merge patch),
``GET /api/v1/history`` scoped like the binding; on SQLite and PostgreSQL."""

from __future__ import annotations

import email.utils

import pytest
from fastapi.testclient import TestClient

from _webutil import NAAN, Seeded, auth, without_times

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

ARK = "ark:99999/fk4x1"


def _withdraw(client: TestClient, seeded: Seeded, reason: str = "withdrawn by author") -> None:
    body = {"status": "unavailable", "reason": reason}
    r = client.patch("/api/v1/bindings", params={"ark": ARK}, json=body, headers=auth(seeded.key))
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["reason"]) == ("unavailable", reason)


@pytest.mark.parametrize("path", [f"/{ARK}", f"/{ARK}?x=1"], ids=["fast-path", "route"])
def test_unavailable_answers_410_with_the_reason(client: TestClient, seeded: Seeded, path: str) -> None:
    _withdraw(client, seeded)
    r = client.get(path, headers={"Accept": "application/json"}, follow_redirects=False)
    assert r.status_code == 410
    assert "withdrawn by author" in r.json()["error"]["message"]
    assert "never reissued" not in r.json()["error"]["message"]
    html = client.get(path, headers={"Accept": "text/html"}, follow_redirects=False)
    assert html.status_code == 410 and "withdrawn by author" in html.text and "not available" in html.text


def test_unavailable_info_answers_and_public_again_redirects(client: TestClient, seeded: Seeded) -> None:
    _withdraw(client, seeded)
    info = client.get(f"/{ARK}?info")
    assert info.status_code == 200
    assert without_times(info.text).splitlines()[-2:] == [
        "status: unavailable", "reason: withdrawn by author"]
    r = client.patch("/api/v1/bindings", params={"ark": ARK}, json={"status": "public"},
                     headers=auth(seeded.key))
    assert (r.status_code, r.json()["reason"]) == (200, None)
    assert client.get(f"/{ARK}", follow_redirects=False).status_code == 302


@pytest.mark.parametrize("withdrawn", [False, True], ids=["public", "unavailable"])
def test_a_published_ark_is_never_reserved_again(client: TestClient, seeded: Seeded, withdrawn: bool) -> None:
    """PATCH and PUT alike answer 409 naming the ARK; the ARK still answers as before (EZID's rule)."""
    if withdrawn:
        _withdraw(client, seeded)
    before = client.get(f"/{ARK}", follow_redirects=False).status_code
    r = client.patch("/api/v1/bindings", params={"ark": ARK}, json={"status": "reserved"},
                     headers=auth(seeded.key))
    assert r.status_code == 409
    assert r.json()["error"]["message"].startswith("an identifier made public is never reserved again")
    assert ARK in r.json()["error"]["message"]
    body = {"ark": ARK, "target": "https://example.org/new", "status": "reserved"}
    r = client.put("/api/v1/bindings", json=body, headers=auth(seeded.key))
    assert r.status_code == 409 and "never reserved again" in r.json()["error"]["message"]
    assert client.get(f"/{ARK}", follow_redirects=False).status_code == before == (410 if withdrawn else 302)
    b = seeded.store.get_binding(ARK)
    assert b is not None and b.target != "https://example.org/new"


def test_unavailable_other_id_is_410(client: TestClient, seeded: Seeded) -> None:
    seeded.store.bind_id("tid", "3jzfcijpj2z2a", status="unavailable", reason="moved away")
    r = client.get("/id/3jzfcijpj2z2a", headers={"Accept": "application/json"}, follow_redirects=False)
    assert r.status_code == 410 and "moved away" in r.json()["error"]["message"]


def test_info_shows_extra_metadata_and_times(client: TestClient, seeded: Seeded) -> None:
    body = {"extra": {"dc.title": "A Study", "app:n": "7"}}
    r = client.patch("/api/v1/bindings", params={"ark": ARK}, json=body, headers=auth(seeded.key))
    assert r.json()["extra"] == {"app:n": "7", "dc.title": "A Study"}
    b = seeded.store.get_binding(ARK)
    assert b is not None and b.created is not None and b.updated is not None
    anvl = client.get(f"/{ARK}?info")
    assert without_times(anvl.text).splitlines()[-2:] == ["app%3An: 7", "dc.title: A Study"]
    created, updated = b.to_dict()["created"], b.to_dict()["updated"]
    assert anvl.text.splitlines()[-2:] == [f"created: {created}", f"updated: {updated}"]
    modified = email.utils.parsedate_to_datetime(anvl.headers["last-modified"])
    assert modified == b.updated.replace(microsecond=0)
    js = client.get(f"/{ARK}?info", headers={"Accept": "application/json"}).json()
    assert js["extra"] == {"app:n": "7", "dc.title": "A Study"}
    assert (js["created"], js["updated"]) == (b.to_dict()["created"], b.to_dict()["updated"])
    html = client.get(f"/{ARK}?info", headers={"Accept": "text/html"}).text
    assert "A Study" in html and "last changed" in html and js["updated"] in html


def test_patch_is_a_json_merge_patch(client: TestClient, seeded: Seeded) -> None:
    before = seeded.store.get_binding(ARK)
    assert before is not None
    r = client.patch("/api/v1/bindings", params={"ark": ARK}, json={"erc": {"when": None}},
                     headers={**auth(seeded.key), "content-type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["erc"]["when"] == "" and after["erc"]["who"] == before.erc.who
    assert (after["target"], after["support"]) == (before.target, before.support.to_dict())
    history = seeded.store.history("ark", ARK)
    assert history[-1].principal.startswith("apikey:")
    assert (history[-1].before, history[-1].after) == (
        {"erc": before.erc.to_dict()}, {"erc": {**before.erc.to_dict(), "when": ""}})


@pytest.mark.parametrize(("ark", "body", "key", "status"), [
    ("ark:99999/fk4nope", {"extra": {"a": "b"}}, "key", 404),
    (ARK, {"status": "tombstoned"}, "key", 422),
    (ARK, {"colour": "red"}, "key", 422),
    (ARK, {"status": "unavailable"}, "key", 400),
    (ARK, {"extra": {"_status": "x"}}, "key", 400),
    (ARK, {"target": None}, "key", 400),
    (ARK, {"status": "public"}, "key", 409),  # tombstoned first
    (ARK, {"extra": {"a": "b"}}, "b5_key", 403),
    (ARK, {"extra": {"a": "b"}}, None, 401),
])  # fmt: skip
def test_patch_refusals(
    client: TestClient, seeded: Seeded, ark: str, body: dict[str, object], key: str | None, status: int
) -> None:
    if status == 409:
        seeded.store.tombstone(ark, "gone")
    before = seeded.store.get_binding(ark)
    headers = auth(getattr(seeded, key)) if key else {}
    r = client.patch("/api/v1/bindings", params={"ark": ark}, json=body, headers=headers)
    assert r.status_code == status, r.text
    assert seeded.store.get_binding(ark) == before


def test_history_is_scoped_like_the_binding(client: TestClient, seeded: Seeded) -> None:
    public = client.get("/api/v1/history", params={"ark": "ark:/99999/fk4-x1"})
    assert public.status_code == 200
    assert [e["operation"] for e in public.json()["history"]] == ["create"]
    reserved = "ark:99999/fk4res"
    assert client.get("/api/v1/history", params={"ark": reserved}).status_code == 404
    for other in (seeded.other_key, seeded.b5_key):  # another NAAN, another shoulder
        assert client.get("/api/v1/history", params={"ark": reserved}, headers=auth(other)).status_code == 404
    mine = client.get("/api/v1/history", params={"ark": reserved}, headers=auth(seeded.key))
    assert mine.status_code == 200 and mine.json()["history"][0]["after"]["status"] == "reserved"
    assert client.get("/api/v1/history", params={"ark": f"ark:{NAAN}/fk4never"}).status_code == 404
