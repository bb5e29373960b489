"""The HTML pages through the test client: home (resolver box, inspector), /resolve, /inspect, error
pages; escaping, no external assets, phone-ready markup, labelled forms."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from _webutil import SCRIPT

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client


def test_home_has_both_boxes_and_no_external_assets(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    html = r.text
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<label for="f-ark">' in html and 'id="f-ark" name="ark"' in html
    assert '<label for="f-id">' in html and 'id="f-id" name="id"' in html
    assert html.count("<form ") == 2 and html.count('type="submit"') == 2
    assert "99999" in html and "fk4" in html  # the NAANs served here
    assert not re.search(r'(src|href)="(https?:)?//(?!n2t\.net/)', html)
    assert "<script" not in html and 'rel="stylesheet"' not in html
    assert ":focus-visible" in html and "@media" in html


def test_resolve_box_sends_the_browser_to_the_ark(client: TestClient) -> None:
    r = client.get("/resolve", params={"ark": "  https://n2t.net/ark:/99999/fk4-x1?info "})
    assert (r.status_code, r.headers["location"]) == (303, "/ark:99999/fk4-x1?info")
    r = client.get("/resolve", params={"ark": f"not an ark {SCRIPT}"})
    assert r.status_code == 400
    assert SCRIPT not in r.text and "&lt;script&gt;" in r.text


@pytest.mark.parametrize(("text", "expected"), [
    ("3jzfcijpj2z2a", ["tid", "record-key", "time (UTC)"]),
    ("ark:/99999/fk4-x1", ["ark", "ark:99999/fk4x1"]),
    # 0x018BCFE56800 ms = 1,700,000,000,000 ms after the epoch
    ("AYvP5WgA-_-_ASNFZ4mr", ["xarkid", "2023-11-14T22:13:20.000Z"]),
])
def test_inspector_shows_readings_and_time(client: TestClient, text: str, expected: list[str]) -> None:
    r = client.get("/inspect", params={"id": text})
    assert r.status_code == 200
    for piece in expected:
        assert piece in r.text


def test_inspector_escapes_and_reports_unknown(client: TestClient) -> None:
    r = client.get("/inspect", params={"id": SCRIPT})
    assert r.status_code == 200
    assert SCRIPT not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert client.get("/inspect").status_code == 200
    assert client.get("/inspect", params={"id": "x" * 5000}).status_code == 400


def test_error_pages_are_html_and_api_errors_json(client: TestClient) -> None:
    r = client.get("/no/such/page")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "404 Not found" in r.text
    r = client.get("/api/v1/nothing")
    assert r.status_code == 404 and r.json()["error"]["status"] == 404
    r = client.delete("/api/v1/bindings")
    assert r.status_code == 405
