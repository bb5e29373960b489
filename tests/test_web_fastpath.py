"""The resolver's fast path (``pidkit.web.fastpath``) answers exactly as the FastAPI route does.

Each request of the table is sent twice over the same app and store: once through the app as served
(plain ``GET``/``HEAD /ark:…`` answered by the fast path) and once straight into FastAPI (the
``resolve_ark`` route); status, headers and body must be identical.  A second test proves the fast path
really answers those requests without FastAPI, and that everything else still reaches FastAPI.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from _webutil import BACKENDS, new_store_url, seed
from pidkit.store import Store, open_store
from pidkit.web import Settings, create_app
from pidkit.web.app import ASGIApp, Receive, Scope, Send
from pidkit.web.fastpath import is_fast

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client

#: (id, path, expected status) — the seeded data of ``tests/_webutil.py``.
PATHS = [
    ("bound", "/ark:99999/fk4x1", 302),
    ("old-label", "/ark:/99999/fk4x1", 302),
    ("hyphenated", "/ark:99999/fk4-x1", 302),
    ("label-case", "/ARK:99999/fk4x1", 302),
    ("naan-case", "/ark:B9999/x1y", 302),
    ("percent-encoded", "/ark:99999/fk4a%2Fb", 302),
    ("passthrough", "/ark:99999/fk4coll/sub/page.html", 302),
    ("tombstoned", "/ark:99999/fk4gone", 410),
    ("reserved", "/ark:99999/fk4res", 404),
    ("unknown", "/ark:99999/fk4nope", 404),
    ("unknown-naan", "/ark:12345/x", 302),  # registered: the registry's NAAN record (EZID)
    ("unregistered-naan", "/ark:00000/x", 302),  # N2T
    ("registry-shoulder", "/ark:19156/tkt42abc", 302),
    ("registry-303", "/ark:99166/w6zz1", 303),
    ("registry-unsafe", "/ark:12148/%2e%2e/%2e%2e/%2e%2e/x", 404),
    ("malformed-empty", "/ark:", 400),
    ("malformed-naan", "/ark:/", 400),
]
ACCEPTS = [
    ("no-accept", None),
    ("html", "text/html,application/xhtml+xml,*/*;q=0.8"),
    ("json", "application/json"),
]


def _fastapi_only(app: FastAPI) -> ASGIApp:
    """The same app entered at FastAPI itself, skipping the fast path."""

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        await FastAPI.__call__(app, scope, receive, send)

    return asgi


def _answer(client: TestClient, method: str, path: str,
            accept: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = {"accept": accept} if accept is not None else {}
    response = client.request(method, path, headers=headers)
    return response.status_code, list(response.headers.multi_items()), response.content


@pytest.fixture
def route_client(client: TestClient) -> TestClient:
    """A client over the same app and store as ``client``, entering at FastAPI (the route)."""
    assert isinstance(client.app, FastAPI)
    return TestClient(_fastapi_only(client.app), follow_redirects=False)


@pytest.fixture(scope="module", params=BACKENDS)
def clients(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, TestClient]]:
    """Two clients over one app on one seeded store per backend, shared by the comparisons (``GET`` and
    ``HEAD`` change nothing): one as served, one entering at FastAPI (the route)."""
    for url in new_store_url(request, tmp_path_factory):
        with open_store(url) as store:
            seed(store)
            with TestClient(create_app(store, settings=Settings(max_body=4096)), follow_redirects=False) as c:
                assert isinstance(c.app, FastAPI)
                yield c, TestClient(_fastapi_only(c.app), follow_redirects=False)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("accept", [a for _, a in ACCEPTS], ids=[i for i, _ in ACCEPTS])
@pytest.mark.parametrize(("path", "status"), [(p, s) for _, p, s in PATHS], ids=[i for i, _, _ in PATHS])
def test_fast_path_matches_route(clients: tuple[TestClient, TestClient], method: str,
                                 accept: str | None, path: str, status: int) -> None:
    client, route_client = clients
    fast = _answer(client, method, path, accept)
    route = _answer(route_client, method, path, accept)
    assert fast[0] == status
    assert fast == route


def test_fast_path_answers_without_fastapi(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = FastAPI.__call__

    async def spy(self: FastAPI, scope: Scope, receive: Receive, send: Send) -> None:
        calls.append(scope.get("path", ""))
        await original(self, scope, receive, send)

    monkeypatch.setattr(FastAPI, "__call__", spy)
    assert client.get("/ark:99999/fk4x1").headers["location"] == "https://example.org/x1"
    assert client.head("/ark:99999/fk4gone").status_code == 410
    assert client.get("/ark:12148/x").headers["location"] == "http://ark.bnf.fr/ark:/12148/x"  # the registry
    assert calls == []
    # a query, another method, another path: FastAPI
    assert client.get("/ark:99999/fk4x1?info").status_code == 200
    assert client.post("/ark:99999/fk4x1").status_code == 405
    assert client.get("/.well-known/ark").text == "/\n"
    assert calls == ["/ark:99999/fk4x1", "/ark:99999/fk4x1", "/.well-known/ark"]


@pytest.mark.parametrize(
    ("scope", "fast"),
    [
        ({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"", "headers": []}, True),
        ({"type": "http", "method": "HEAD", "path": "/aRk:1/x", "query_string": b"", "headers": []}, True),
        ({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"?", "headers": []}, False),
        ({"type": "http", "method": "PUT", "path": "/ark:1/x", "query_string": b"", "headers": []}, False),
        ({"type": "http", "method": "GET", "path": "/id/x", "query_string": b"", "headers": []}, False),
        ({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"",
          "headers": [(b"content-length", b"5")]}, False),
        ({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"", "headers": [],
          "root_path": "/r"}, False),
        ({"type": "websocket", "path": "/ark:1/x", "query_string": b"", "headers": []}, False),
    ],
    ids=["get", "head-label-case", "query", "put", "other-path", "body", "root-path", "websocket"],
)
def test_is_fast(scope: Scope, fast: bool) -> None:
    assert is_fast(scope) is fast


def test_body_on_get_still_limited(client: TestClient, route_client: TestClient) -> None:
    """A GET with a body is left to FastAPI's body limit (413), on either entry."""
    fast = client.request("GET", "/ark:99999/fk4x1", content=b"x" * 5000)
    route = route_client.request("GET", "/ark:99999/fk4x1", content=b"x" * 5000)
    assert fast.status_code == route.status_code == 413


@pytest.mark.parametrize("accept", [a for _, a in ACCEPTS], ids=[i for i, _ in ACCEPTS])
def test_unavailable_store_same_503(accept: str | None) -> None:
    def broken() -> Store:
        raise OSError("database is down")

    app = create_app(broken, settings=Settings(store_retry=60.0))
    with TestClient(app, follow_redirects=False) as fast_client:
        fast = _answer(fast_client, "GET", "/ark:99999/fk4x1", accept)
    route = _answer(TestClient(_fastapi_only(app), follow_redirects=False), "GET", "/ark:99999/fk4x1", accept)
    assert fast[0] == 503
    assert ("retry-after", "5") in fast[1]
    assert fast == route
    # a malformed ARK is a 400 even while the store is down, on both entries
    assert _answer(TestClient(app), "GET", "/ark:", accept)[0] == 400

