"""The worker's cache of redirects (``pidkit.web.fastpath.RedirectCache``, issue 18): exact, bounded.

A redirect the fast path decided is answered again from memory while the store's changes token and the
NAAN registry in force stay the same; any write — through the app's store, another connection to the
same file, a file put in the store's place — is seen by the next request.  PostgreSQL stores have no
such token (another instance's write arrives as a notification, later), so nothing is kept for them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _webutil import COLLECTION, TARGET, seed
from pidkit.errors import PidkitError
from pidkit.store import open_store
from pidkit.web import Settings, create_app
from pidkit.web.fastpath import CACHED_BYTES, RedirectCache
from pidkit.web.resolver import Decision

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client


# --- the cache alone ----------------------------------------------------------------------------------
def _302(location: str) -> Decision:
    return Decision(302, location=location)


def test_a_new_stamp_drops_everything_kept() -> None:
    cache = RedirectCache(10)
    assert cache.get(b"/ark:1/a", "s1") is None
    cache.put(b"/ark:1/a", "s1", _302("https://e.org/a"))
    cache.put(b"/ark:1/b", "s1", Decision(303, location="https://e.org/b"))
    assert cache.get(b"/ark:1/b", "s1") == (303, b"https://e.org/b")
    assert cache.peek(b"/ark:1/a") == (302, b"https://e.org/a")
    assert cache.get(b"/ark:1/a", "s2") is None
    assert len(cache) == 0 and cache.peek(b"/ark:1/a") is None
    assert cache.get(b"/ark:1/b", "s1") is None  # the old stamp does not bring them back


def test_a_request_that_began_before_a_change_keeps_nothing() -> None:
    cache = RedirectCache(10)
    cache.get(b"/ark:1/a", "before")
    cache.get(b"/ark:1/z", "after")  # another request saw the change meanwhile
    cache.put(b"/ark:1/a", "before", _302("https://e.org/old"))
    assert cache.get(b"/ark:1/a", "after") is None
    assert len(cache) == 0


def test_only_redirects_small_enough_are_kept() -> None:
    cache = RedirectCache(10)
    cache.get(b"x", "s")
    cache.put(b"/ark:1/gone", "s", Decision(410))
    cache.put(b"/ark:1/none", "s", Decision(404, message="not bound"))
    cache.put(b"/ark:1/long", "s", _302("https://e.org/" + "a" * CACHED_BYTES))
    fits = "https://e.org/" + "b" * (CACHED_BYTES - len("https://e.org/") - len(b"/ark:1/fits"))
    cache.put(b"/ark:1/fits", "s", _302(fits))
    cache.put(b"/ark:1/caf%C3%A9", "s", _302("https://e.org/caf\u00e9"))
    # the bound counts the bytes kept: 100 CJK characters are 900 bytes once percent-encoded
    cache.put(b"/ark:1/cjk", "s", _302("https://e.org/" + "\u4e2d" * 100))
    assert len(cache) == 2
    assert cache.get(b"/ark:1/fits", "s") is not None
    assert cache.get(b"/ark:1/caf%C3%A9", "s") == (302, b"https://e.org/caf%C3%A9")  # as the route encodes it


def test_the_oldest_goes_first_and_the_size_holds() -> None:
    cache = RedirectCache(3)
    cache.get(b"x", "s")
    for name in "abcde":
        cache.put(f"/ark:1/{name}".encode(), "s", _302(f"https://e.org/{name}"))
    assert len(cache) == 3 == len(cache._order)
    kept = [cache.get(f"/ark:1/{n}".encode(), "s") is not None for n in "abcde"]
    assert kept == [False, False, True, True, True]
    cache.put(b"/ark:1/e", "s", _302("https://e.org/e2"))  # replacing one evicts none
    assert len(cache) == 3 == len(cache._order)
    assert cache.get(b"/ark:1/e", "s") == (302, b"https://e.org/e2")
    for i in range(1000):  # the queue beside the dict stays the dict's keys, oldest first
        cache.put(f"/ark:1/n{i}".encode(), "s", _302(f"https://e.org/{i}"))
    assert list(cache._order) == [b"/ark:1/n997", b"/ark:1/n998", b"/ark:1/n999"] == list(cache._entries)


def test_size_zero_keeps_nothing() -> None:
    for size in (0, -1):
        cache = RedirectCache(size)
        cache.get(b"x", "s")
        cache.put(b"/ark:1/a", "s", _302("https://e.org/a"))
        assert len(cache) == 0


def test_the_setting_is_read_from_the_environment() -> None:
    assert Settings().resolve_cache == 100_000
    assert Settings.from_env({"PIDKIT_RESOLVE_CACHE": "0"}).resolve_cache == 0
    assert Settings.from_env({"PIDKIT_RESOLVE_CACHE": "250"}).resolve_cache == 250
    for bad in ("-1", "many", "1e6", "\u0662", "100000001", "1" * 5000):
        with pytest.raises(PidkitError, match="PIDKIT_RESOLVE_CACHE must be a whole number"):
            Settings.from_env({"PIDKIT_RESOLVE_CACHE": bad})


# --- in the app ----------------------------------------------------------------------------------------
class Reads:
    """Counts the store's binding reads (``resolve_many``, which ``resolve`` calls)."""

    def __init__(self, store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = store.resolve_many

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(store, "resolve_many", counted)


def _summary(response: Any) -> tuple[int, str | None, str | None, bytes]:
    return response.status_code, response.headers.get("location"), response.headers.get("content-type"), \
        response.content


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/cache.db"


@pytest.fixture
def sqlite_client(sqlite_url: str) -> Iterator[tuple[TestClient, Any]]:
    with open_store(sqlite_url) as store:
        seed(store)
        with TestClient(create_app(store), follow_redirects=False) as client:
            assert client.get("/ark:99999/fk4res").status_code == 404  # opens the store: now it has a token
            yield client, store


def test_a_kept_redirect_is_answered_without_reading_the_store(
    sqlite_client: tuple[TestClient, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, store = sqlite_client
    reads = Reads(store, monkeypatch)
    first = client.get("/ark:99999/fk4x1")
    assert first.status_code == 302 and first.headers["location"] == TARGET
    assert reads.count == 1
    for path in ("/ark:99999/fk4x1", "/ark:99999/fk4x1"):
        again = client.get(path)
        assert _summary(again) == _summary(first)
        assert again.headers.raw == first.headers.raw
    head = client.head("/ark:99999/fk4x1")
    assert (head.status_code, head.headers["location"]) == (302, TARGET)
    assert reads.count == 1


def test_cached_answers_equal_the_uncached_ones(sqlite_url: str) -> None:
    paths = [
        "/ark:99999/fk4x1", "/ark:/99999/fk4x1", "/ark:99999/fk4-x1", "/ark:99999/fk4coll/p/q.html",
        "/ark:99999/fk4a%2Fb", "/ark:b9999/x1y", "/ark:99999/fk4gone", "/ark:99999/fk4res",
        "/ark:99999/fk4nope", "/ark:12148/btv1b8449691v", "/ark:/b6071/m3z07d", "/ark:00000/x",
        "/ark:99999/fk4coll/../../x", "/ARK:99999/fk4x1", "/ark:99999/fk4coll/caf%C3%A9",
    ]
    with open_store(sqlite_url) as store:
        seed(store)
        plain = TestClient(create_app(store, settings=Settings(resolve_cache=0)), follow_redirects=False)
        cached = TestClient(create_app(store), follow_redirects=False)
        with plain, cached:
            cached.get("/ark:99999/fk4res")  # opens the store
            for path in paths:
                for method in ("GET", "HEAD", "GET"):  # the last from the cache where it was a redirect
                    want = plain.request(method, path)
                    got = cached.request(method, path)
                    assert _summary(got) == _summary(want), (method, path)
                    assert got.headers.raw == want.headers.raw, (method, path)
            assert len(cached.app.state.redirects) > 5  # type: ignore[attr-defined]
            assert len(plain.app.state.redirects) == 0  # type: ignore[attr-defined]


def _asgi_get(app: Any, raw_path: bytes, path: str) -> int:
    """The status ``app`` answers a GET whose raw path and decoded path are given (as a server that
    accepts any request target would pass them)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": path, "raw_path": raw_path, "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver")], "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"])


def test_a_path_the_route_does_not_match_is_never_answered_from_the_cache(
    sqlite_client: tuple[TestClient, Any]
) -> None:
    client, _ = sqlite_client
    for _ in range(2):
        assert client.get("/ark:99999/fk4x1").status_code == 302
    assert len(client.app.state.redirects) == 1  # type: ignore[attr-defined]
    # the same ARK without the leading slash (a request target some servers pass on): not the route's
    assert _asgi_get(client.app, b"ark:99999/fk4x1", "ark:99999/fk4x1") == 404
    assert _asgi_get(client.app, b"/ark:99999/fk4x1", "/ark:99999/fk4x1") == 302


def test_a_query_or_a_body_still_goes_to_the_route(sqlite_client: tuple[TestClient, Any]) -> None:
    client, _ = sqlite_client
    assert client.get("/ark:99999/fk4x1").status_code == 302  # now kept
    assert len(client.app.state.redirects) == 1  # type: ignore[attr-defined]
    info = client.get("/ark:99999/fk4x1?info")
    assert info.status_code == 200 and "Rhythm" in info.text
    too_big = client.request("GET", "/ark:99999/fk4x1", content=b"x" * (Settings().max_body + 1))
    assert too_big.status_code == 413  # the body limit answers, not the cache
    assert client.post("/ark:99999/fk4x1").status_code == 405


def test_a_failing_changes_token_fails_no_request(
    sqlite_client: tuple[TestClient, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = sqlite_client
    assert client.get("/ark:99999/fk4x1").status_code == 302

    def broken() -> None:
        raise RuntimeError("token trouble")

    monkeypatch.setattr(client.app.state.lookup, "changes_token", broken)  # type: ignore[attr-defined]
    assert client.get("/.well-known/ark").status_code == 200
    assert client.get("/ark:99999/fk4x1").headers["location"] == TARGET
    assert client.get("/ark:99999/fk4gone").status_code == 410


def test_a_write_from_another_connection_is_seen_by_the_next_request(
    sqlite_client: tuple[TestClient, Any], sqlite_url: str
) -> None:
    client, _ = sqlite_client
    assert client.get("/ark:99999/fk4x1").headers["location"] == TARGET
    with open_store(sqlite_url) as other:  # another process would do the same: another connection
        other.bind("ark:99999/fk4x1", "https://example.org/moved", force=True)
    assert client.get("/ark:99999/fk4x1").headers["location"] == "https://example.org/moved"
    with open_store(sqlite_url) as other:
        other.tombstone("ark:99999/fk4x1", "withdrawn")
    assert client.get("/ark:99999/fk4x1").status_code == 410
    assert client.get("/ark:99999/fk4coll/x").headers["location"] == f"{COLLECTION}x"
    with open_store(sqlite_url) as other:
        other.bind("ark:99999/fk4coll/x", "https://example.org/own", force=True)
    assert client.get("/ark:99999/fk4coll/x").headers["location"] == "https://example.org/own"


def test_a_write_of_the_apps_own_store_is_seen_by_the_next_request(
    sqlite_client: tuple[TestClient, Any]
) -> None:
    client, store = sqlite_client
    assert client.get("/ark:99999/fk4x1").headers["location"] == TARGET
    store.bind("ark:99999/fk4x1", "https://example.org/two", force=True)
    assert client.get("/ark:99999/fk4x1").headers["location"] == "https://example.org/two"


def test_a_file_put_in_the_stores_place_is_not_answered_from_the_cache(
    sqlite_client: tuple[TestClient, Any], sqlite_url: str, tmp_path: Path
) -> None:
    client, _ = sqlite_client
    assert client.get("/ark:99999/fk4x1").status_code == 302
    other_url = f"sqlite:///{tmp_path}/other.db"
    with open_store(other_url) as other:
        other.add_naan("99999", "test", shoulders=["fk4"])
    path = sqlite_url.removeprefix("sqlite:///")
    shutil.copy(tmp_path / "other.db", tmp_path / "swap.db")
    os.replace(tmp_path / "swap.db", path)
    answer = client.get("/ark:99999/fk4x1")
    assert answer.status_code == 503  # the store refuses a file that is not its own; never the old answer
    assert len(client.app.state.redirects) == 0  # type: ignore[attr-defined]


def test_a_deleted_store_file_is_not_answered_from_the_cache(
    sqlite_client: tuple[TestClient, Any], sqlite_url: str
) -> None:
    client, _ = sqlite_client
    for _ in range(2):
        assert client.get("/ark:99999/fk4x1").status_code == 302
    os.remove(sqlite_url.removeprefix("sqlite:///"))
    assert client.get("/ark:99999/fk4x1").status_code == 503
    assert client.get("/ark:99999/fk4x1").status_code == 503


def test_a_new_registry_drops_the_kept_redirects(
    sqlite_client: tuple[TestClient, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = sqlite_client
    holder = client.app.state.registry  # type: ignore[attr-defined]
    first = client.get("/ark:12148/btv1b8449691v")
    assert first.headers["location"] == "http://ark.bnf.fr/ark:/12148/btv1b8449691v"
    assert len(client.app.state.redirects) == 1  # type: ignore[attr-defined]
    from pidkit.registry import Registry

    old = holder.get()
    without_bnf = Registry([r for r in old if r.naan != "12148"], old.metadata, "test: without 12148")
    monkeypatch.setattr(holder, "get", lambda: without_bnf)
    again = client.get("/ark:12148/btv1b8449691v")
    assert again.headers["location"] == "https://n2t.net/ark:12148/btv1b8449691v"


@pytest.mark.postgres
def test_a_postgresql_store_keeps_nothing(request: pytest.FixtureRequest) -> None:
    from _webutil import _postgres_url

    for url in _postgres_url(request):
        with open_store(url) as store:
            seed(store)
            assert store.changes_token() is None
            with TestClient(create_app(store), follow_redirects=False) as client:
                for _ in range(3):
                    assert client.get("/ark:99999/fk4x1").headers["location"] == TARGET
                assert len(client.app.state.redirects) == 0  # type: ignore[attr-defined]
                store.bind("ark:99999/fk4x1", "https://example.org/pg", force=True)
                assert client.get("/ark:99999/fk4x1").headers["location"] == "https://example.org/pg"
