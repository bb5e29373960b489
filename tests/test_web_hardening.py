"""Regression tests for issue 11 (web layer): redirects that climb out of their target with dot
segments, redirects built from the ``Host`` header, line breaks in ANVL, JSON Lines split on Unicode
line breaks.  Seeded data: ``_webutil.seed``."""

from __future__ import annotations

import urllib.parse

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from _webutil import Seeded, without_times
from pidkit.store import Binding, Resolution, UnsafeLocationError
from pidkit.store.redirects import browser_path, stays_under
from pidkit.web import Settings, create_app
from pidkit.web.app import Receive, Scope, Send

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

BASE = "https://good.example/base/"


def _route_client(client: TestClient) -> TestClient:
    """A client over the same app entering at FastAPI (the route), skipping the raw-ASGI fast path."""
    app = client.app
    assert isinstance(app, FastAPI)

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        await FastAPI.__call__(app, scope, receive, send)

    return TestClient(asgi, follow_redirects=False)


# --- 1. passthrough never climbs out of the bound path, however the dots are spelled ---------------

ESCAPES = {
    "pct-lower": "/%2e%2e/%2e%2e/other",
    "pct-upper": "/%2E%2E/%2E%2E/other",
    "mixed-case": "/%2E%2e/%2e%2E/other",
    "one-level": "/%2e%2e",
    "deep": "/a/%2e%2e/%2e%2e/%2e%2e/other",
}


@pytest.mark.parametrize("suffix", list(ESCAPES.values()), ids=list(ESCAPES))
def test_passthrough_refuses_dot_segments_on_both_entries(
    client: TestClient, seeded: Seeded, suffix: str
) -> None:
    seeded.store.bind("ark:99999/fk4p", BASE, passthrough=True, force=True)
    route = _route_client(client)
    for c in (client, route):
        r = c.get("/ark:99999/fk4p" + suffix)
        assert r.status_code == 404, (suffix, r.headers.get("location"))
        assert "location" not in r.headers
    # a suffix that stays inside still passes through, on both entries
    for c in (client, route):
        r = c.get("/ark:99999/fk4p/a/%2e%2e/b")
        assert (r.status_code, r.headers["location"]) == (302, BASE + "a/%2e%2e/b")


@pytest.mark.parametrize(
    ("suffix", "safe"),
    [("/%2e%2e/x", False), ("/%2E%2e", False), ("/.%2E/x", False), ("/%2e./x", False), ("/..", False),
     ("\\..\\..\\x", False), ("\\..\\x", True), ("/a/%2e%2e/b", True),
     ("/a/%2e/b", True), ("/%2e%2ex", True), ("/x%2e%2e", True)],
)
def test_resolution_location_decides_on_the_browser_path(suffix: str, safe: bool) -> None:
    b = Binding("ark", "ark:1/x", "ark:1/x", BASE, passthrough=True)
    if safe:
        location = Resolution(b, suffix).location
        assert location is not None and location.startswith(BASE.rstrip("/"))
    else:
        with pytest.raises(UnsafeLocationError):
            _ = Resolution(b, suffix).location


def test_browser_path_resolves_like_whatwg() -> None:
    # expectations from the WHATWG URL Standard's path state (and what browsers do)
    assert browser_path("/base/%2e%2e/%2e%2e/other") == "/other"
    assert browser_path("/a/b/..") == "/a/"
    assert browser_path("/a/b/%2E") == "/a/b/"
    assert browser_path("/a\\b\\..\\c") == "/a/c"
    assert browser_path("/a/..%2e/b") == "/a/..%2e/b"
    assert not stays_under("https://good.example/base", "https://good.example/base/..")
    assert stays_under("https://good.example/base", "https://good.example/base.html")


def test_fallback_redirect_never_climbs_out_of_the_resolver(seeded: Seeded) -> None:
    app = create_app(seeded.store, settings=Settings(fallback_resolver="https://resolver.example/r/"))
    with TestClient(app, follow_redirects=False) as fast:
        for c in (fast, _route_client(fast)):
            r = c.get("/ark:00000/%2e%2e/%2e%2e/x")
            assert r.status_code == 404, r.headers.get("location")
            r = c.get("/ark:00000/x")
            assert (r.status_code, r.headers["location"]) == (302, "https://resolver.example/r/ark:00000/x")




# --- 2. no redirect is ever built from the Host header ----------------------------------------------

#: One path of every route family, each also with a trailing slash.
FAMILIES = [
    "/api/v1/export", "/api/v1/bindings?ark=ark:99999/fk4x1", "/api/v1/mint", "/api/v1/import",
    "/api/v1/tombstones", "/api/v1/naans/99999/bindings", "/openapi.json", "/.well-known/ark", "/",
    "/resolve?ark=ark:99999/fk4x1", "/inspect?id=x", "/id/3jzfcijpj2z2a", "/ark:99999/fk4x1",
    "/ark:99999/fk4coll/sub", "/ark:00000/x", "/ark:12148/x", "/ark:99999/fk4x1?info",
]


def _slashed(path: str) -> str:
    head, sep, query = path.partition("?")
    return head.rstrip("/") + "/" + sep + query


FORGED = ({"host": "evil.example"}, {"host": "evil.example", "x-forwarded-host": "evil2.example"})


def test_forged_host_is_never_a_redirect_target(client: TestClient, seeded: Seeded) -> None:
    seen = []
    for path in [p for f in FAMILIES for p in (f, _slashed(f))]:
        for method in ("GET", "HEAD", "POST", "PUT", "OPTIONS"):
            for forged in FORGED:
                r = client.request(method, path, headers={**forged, "authorization": f"Bearer {seeded.key}"})
                location = r.headers.get("location", "")
                seen.append(location)
                assert "evil" not in location, (method, path, r.status_code, location)
                if location and not location.startswith("/"):
                    # ark.bnf.fr: the NAAN registry's target for NAAN 12148
                    trusted = ("https://example.org/", "https://n2t.net/", "http://ark.bnf.fr/")
                    assert location.startswith(trusted), location
    assert any(seen) and not all(seen)  # redirects and other answers were both checked


@pytest.mark.parametrize("path", ["/api/v1/export/", "/api/v1/bindings/", "/openapi.json/", "/inspect/",
                                  "/.well-known/ark/", "/id/3jzfcijpj2z2a/", "/resolve/"])
def test_trailing_slash_variants_are_404(client: TestClient, seeded: Seeded, path: str) -> None:
    r = client.get(path, headers={"host": "evil.example", "authorization": f"Bearer {seeded.key}"})
    assert r.status_code == 404
    assert "location" not in r.headers


# --- 3. ANVL ?info: every line break a reader knows is %-encoded --------------------------------------

BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def test_line_breaks_are_the_splitlines_set() -> None:
    from pidkit.anvl import LINE_BREAKS

    splitting = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert set(LINE_BREAKS) == splitting == set(BREAKS)


@pytest.mark.parametrize("brk", list(BREAKS), ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_info_anvl_keeps_one_element_per_line(client: TestClient, seeded: Seeded, brk: str) -> None:
    erc = {"who": f"a{brk}b", "what": f"x{brk}{brk}y%z", "when": f"1{brk}", "where": f"w{brk}here"}
    seeded.store.bind("ark:99999/fk4br", "https://example.org/br", erc=erc, support={"what": f"s{brk}t"},
                      force=True)
    text = client.get("/ark:99999/fk4br?info").text
    lines = without_times(text).splitlines()
    assert len(lines) == 10, lines  # erc: + 4 elements, erc-support: + 4 elements (then created, updated)
    values = dict(line.split(": ", 1) for line in lines[1:5])
    assert {k: urllib.parse.unquote(v) for k, v in values.items()} == {
        k: v.strip() for k, v in erc.items()}
    assert urllib.parse.unquote(lines[7].split(": ", 1)[1]) == f"s{brk}t"


def test_anvl_names_and_values_round_trip() -> None:
    from pidkit.anvl import anvl_line

    for brk in BREAKS:
        name, value = f"dc:ti{brk}tle%", f"v{brk}1%0A"
        line = anvl_line(name, value)
        assert len(line.splitlines()) == 1
        got_name, got_value = line.split(": ", 1)
        assert (urllib.parse.unquote(got_name), urllib.parse.unquote(got_value)) == (name, value)


def test_anvl_error_answers_keep_one_element_per_line(client: TestClient) -> None:
    r = client.get("/ark:99999/fk4nothere%E2%80%A8x%C2%85y?info")
    assert r.status_code == 404
    assert len(r.text.splitlines()) == 2


# --- 4. JSON Lines through the API are split at "\n" only --------------------------------------------

def test_api_export_then_import_keeps_unicode_line_breaks(client: TestClient, seeded: Seeded) -> None:
    odd = {"who": "a\u2028b", "what": "c\u2029d", "when": "e\x85f", "where": "g\u2028\u2029\x85h"}
    seeded.store.bind("ark:99999/fk4u", "https://example.org/u", erc=odd, force=True)
    headers = {"authorization": f"Bearer {seeded.key}"}
    exported = client.get("/api/v1/export", headers=headers)
    assert exported.status_code == 200
    assert "\u2028" in exported.text and "\x85" in exported.text  # written raw, as JSON allows
    count = exported.text.count("\n")
    r = client.post("/api/v1/import", content=exported.content,
                    headers={**headers, "content-type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    assert r.json()["lines"] == count and r.json()["created"] == 0
    b = seeded.store.get_binding("ark:99999/fk4u")
    assert b is not None and b.erc.to_dict() == odd
