"""Batched ARK lookups (``pidkit.web.batch``) and the resolver answers that go through them.

The batcher is tested with a controllable lookup (batch sizes, error isolation, cancellation, a new
event loop); the app is tested on both backends with many concurrent requests, whose answers must equal
the ones the same requests get one at a time, and with writes that must be seen at once (no caching).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from _webutil import COLLECTION, _postgres_url, seed
from pidkit.errors import ArkError, StoreError
from pidkit.store import Binding, Resolution, Store, open_store
from pidkit.web import Settings, create_app
from pidkit.web.batch import MAX_BATCHED_COST, LookupBatcher, LookupTimeoutError, in_thread, lookup_cost
from pidkit.web.fastpath import redirect

pytest_plugins = ["_webutil"]  # fixtures: store_url (SQLite and PostgreSQL), seeded, client


def _resolution(text: str) -> Resolution:
    return Resolution(Binding("ark", text, text, f"https://example.org/{text}"))


class Recorder:
    """A lookup that records its batches; the first batch waits until ``release`` is set, so that
    every request made meanwhile queues behind it."""

    def __init__(self, *, fail_on: str | None = None, broken: bool = False) -> None:
        self.batches: list[list[str]] = []
        self.release = asyncio.Event()
        self.fail_on = fail_on
        self.broken = broken

    async def __call__(self, arks: Sequence[str]) -> list[Resolution | None]:
        self.batches.append(list(arks))
        if len(self.batches) == 1:
            await self.release.wait()
        if self.broken:
            raise ConnectionError("database unreachable")
        if self.fail_on is not None and self.fail_on in arks:
            raise StoreError("refused", text=self.fail_on)
        return [None if a.endswith("unbound") else _resolution(a) for a in arks]


async def _gather_behind_first(batcher: LookupBatcher, recorder: Recorder, texts: list[str]) -> list[Any]:
    """Resolve ``texts[0]``; while its lookup is held back, the rest concurrently; then let it go."""
    tasks = [asyncio.ensure_future(batcher.resolve(texts[0]))]
    while not recorder.batches:
        await asyncio.sleep(0)
    tasks += [asyncio.ensure_future(batcher.resolve(t)) for t in texts[1:]]
    for _ in range(5):
        await asyncio.sleep(0)  # every task queues its lookup
    recorder.release.set()
    return await asyncio.gather(*tasks, return_exceptions=True)


def test_waiting_lookups_are_read_in_one_batch() -> None:
    recorder = Recorder()
    texts = [f"ark:99999/a{i}" for i in range(50)] + ["ark:99999/unbound"]
    results = asyncio.run(_gather_behind_first(LookupBatcher(recorder), recorder, texts))
    assert recorder.batches == [texts[:1], texts[1:]]  # the first alone (no waiting), the rest together
    assert [r.binding.key if r else None for r in results] == [*texts[:-1], None]


def test_lookups_of_the_same_moment_share_the_first_batch() -> None:
    recorder = Recorder()
    recorder.release.set()
    texts = [f"ark:99999/a{i}" for i in range(5)]

    async def together() -> list[Resolution | None]:
        return await asyncio.gather(*(batcher.resolve(t) for t in texts))

    batcher = LookupBatcher(recorder)
    asyncio.run(together())
    assert recorder.batches == [texts]  # started in one loop iteration: one read, no waiting


def test_batches_are_capped() -> None:
    recorder = Recorder()
    texts = [f"ark:99999/a{i}" for i in range(25)]
    asyncio.run(_gather_behind_first(LookupBatcher(recorder, max_batch=10), recorder, texts))
    assert [len(b) for b in recorder.batches] == [1, 10, 10, 4]


def test_a_domain_error_fails_only_its_own_request() -> None:
    recorder = Recorder(fail_on="ark:99999/bad")
    texts = ["ark:99999/first", "ark:99999/a", "ark:99999/bad", "ark:99999/b"]
    results = asyncio.run(_gather_behind_first(LookupBatcher(recorder), recorder, texts))
    assert isinstance(results[2], StoreError)
    assert [r.binding.key for i, r in enumerate(results) if i != 2] == [texts[0], texts[1], texts[3]]
    # the failed batch was read again one ARK at a time
    assert recorder.batches[1] == texts[1:]
    assert recorder.batches[2:] == [[t] for t in texts[1:]]


def test_an_unavailable_store_fails_every_request_of_the_batch() -> None:
    recorder = Recorder(broken=True)
    texts = [f"ark:99999/a{i}" for i in range(5)]
    batcher = LookupBatcher(recorder, unavailable=(ConnectionError,))
    results = asyncio.run(_gather_behind_first(batcher, recorder, texts))
    assert all(isinstance(r, ConnectionError) for r in results)
    assert len(recorder.batches) == 2  # no retry one by one when the store cannot answer


def test_any_other_error_fails_only_its_own_request() -> None:
    """An error that is not "unavailable" (say a row that cannot be read) is narrowed down to its ARK."""

    async def lookup(arks: Sequence[str]) -> list[Resolution | None]:
        if "ark:99999/corrupt" in arks:
            raise ValueError("a stored row cannot be read")
        return [_resolution(a) for a in arks]

    async def together() -> list[Any]:
        batcher = LookupBatcher(lookup)
        texts = ["ark:99999/a", "ark:99999/corrupt", "ark:99999/b"]
        return await asyncio.gather(*(batcher.resolve(t) for t in texts), return_exceptions=True)

    a, corrupt, b = asyncio.run(together())
    assert isinstance(corrupt, ValueError)
    assert (a.binding.key, b.binding.key) == ("ark:99999/a", "ark:99999/b")


def test_a_lookup_answering_the_wrong_number_fails_the_batch_without_hanging() -> None:
    async def short(arks: Sequence[str]) -> list[Resolution | None]:
        return [None] * (len(arks) - 1)

    async def together() -> list[Any]:
        batcher = LookupBatcher(short)
        pending = (batcher.resolve(f"ark:99999/a{i}") for i in range(3))
        return await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 5)

    results = asyncio.run(together())
    assert all(isinstance(r, RuntimeError) and "answered" in str(r) for r in results)


def test_batches_are_capped_by_keys() -> None:
    recorder = Recorder()
    first = "ark:99999/first"
    deep = "ark:99999/x" + "/c" * 9  # lookup_cost 11
    texts = [first, deep, deep, "ark:99999/y", deep]
    asyncio.run(_gather_behind_first(LookupBatcher(recorder, max_keys=23), recorder, texts))
    assert recorder.batches == [[first], [deep, deep], ["ark:99999/y", deep]]
    assert lookup_cost(deep) == 11


def test_a_batch_over_its_deadline_is_answered_and_the_next_one_goes(seeded: Any) -> None:
    store: Store = seeded.store
    slow = threading.Event()
    stuck_done = threading.Event()
    real = store.resolve_many

    def maybe_stuck(arks: Sequence[str]) -> list[Resolution | None]:
        if "ark:99999/fk4stuck" not in arks:
            return real(arks)
        slow.wait(10)  # a connection that went silent
        try:
            return real(arks)
        finally:
            stuck_done.set()

    store.resolve_many = maybe_stuck  # type: ignore[method-assign]
    try:
        lookup = in_thread(lambda: store, timeout=1.5)
        with pytest.raises(LookupTimeoutError, match=r"did not answer within 1\.5 s"):
            asyncio.run(lookup(["ark:99999/fk4stuck"]))
        found = asyncio.run(lookup(["ark:99999/fk4x1"]))  # the next batch is not held up
        assert found[0] is not None and found[0].binding.key == "ark:99999/fk4x1"
    finally:
        slow.set()
        # the abandoned lookup finishes before the store is closed under it (the fixture's teardown): a
        # closed SQLite connection used from that thread crashed a test worker on a slow machine
        assert stuck_done.wait(10)
        del store.resolve_many


def test_a_cancelled_request_does_not_disturb_the_others() -> None:
    async def scenario() -> tuple[Sequence[Any], Recorder]:
        recorder = Recorder()
        batcher = LookupBatcher(recorder)
        first = asyncio.ensure_future(batcher.resolve("ark:99999/first"))
        while not recorder.batches:
            await asyncio.sleep(0)
        gone = asyncio.ensure_future(batcher.resolve("ark:99999/gone"))
        kept = asyncio.ensure_future(batcher.resolve("ark:99999/kept"))
        await asyncio.sleep(0)
        gone.cancel()
        recorder.release.set()
        return await asyncio.gather(first, gone, kept, return_exceptions=True), recorder

    results, recorder = asyncio.run(scenario())
    assert isinstance(results[1], asyncio.CancelledError)
    assert results[0].binding.key == "ark:99999/first"
    assert results[2].binding.key == "ark:99999/kept"
    assert recorder.batches == [["ark:99999/first"], ["ark:99999/kept"]]  # the cancelled one is not read


def test_requests_of_a_cancelled_batch_are_cancelled_not_left_waiting() -> None:
    """The loop shuts down (the batch task is cancelled) while a failed batch is read again one ARK at a
    time: its requests must end (cancelled), not wait forever."""
    stuck = asyncio.Event()

    async def lookup(arks: Sequence[str]) -> list[Resolution | None]:
        if len(arks) > 1:
            raise StoreError("one of them is refused")
        stuck.set()
        await asyncio.Event().wait()  # the one-by-one read never returns
        return [None]

    async def scenario() -> list[BaseException | Resolution | None]:
        batcher = LookupBatcher(lookup)
        requests = [asyncio.ensure_future(batcher.resolve(f"ark:99999/a{i}")) for i in range(3)]
        await stuck.wait()
        for task in list(batcher._tasks):
            task.cancel()
        return await asyncio.wait_for(asyncio.gather(*requests, return_exceptions=True), 5)

    results = asyncio.run(scenario())
    assert all(isinstance(r, asyncio.CancelledError) for r in results)


def test_a_batcher_works_across_event_loops() -> None:
    recorder = Recorder()
    recorder.release.set()
    batcher = LookupBatcher(recorder)
    for _ in range(3):  # a new loop each time, as a new test client makes
        found = asyncio.run(batcher.resolve("ark:99999/x"))
        assert found is not None and found.binding.key == "ark:99999/x"


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LookupBatcher(Recorder(), max_batch=0)
    with pytest.raises(ValueError, match="at least 1"):
        LookupBatcher(Recorder(), max_in_flight=0)
    with pytest.raises(ValueError, match="at least 1"):
        LookupBatcher(Recorder(), max_keys=0)


def test_in_thread_reads_the_store(seeded: Any) -> None:
    found = asyncio.run(in_thread(lambda: seeded.store)(["ark:99999/fk4x1", "ark:99999/fk4nope"]))
    assert found[0] is not None and found[0].binding.key == "ark:99999/fk4x1"
    assert found[1] is None


# --- the store's batch read ------------------------------------------------------------------------------
def test_resolve_many_equals_resolve_one_by_one(seeded: Any) -> None:
    store: Store = seeded.store
    arks = [
        "ark:99999/fk4x1", "ark:/99999/fk4-x1", "ark:99999/fk4coll/sub/page.html", "ark:99999/fk4gone",
        "ark:99999/fk4res", "ark:99999/fk4nope", "ark:12345/x", "ark:99999/fk4a%2Fb", "ark:99999/fk4x1",
    ]  # fmt: skip
    assert store.resolve_many(arks) == [store.resolve(a) for a in arks]
    assert store.resolve_many([]) == []


def test_resolve_many_reads_many_keys_in_chunks(seeded: Any) -> None:
    store: Store = seeded.store
    arks = [f"ark:99999/fk4coll/p{i}" for i in range(1500)]  # 3,000 keys: more than one statement
    found = store.resolve_many([*arks, "ark:99999/fk4x1"])
    assert [r.location if r else None for r in found[:-1]] == [COLLECTION + f"p{i}" for i in range(1500)]
    assert found[-1] is not None and found[-1].binding.key == "ark:99999/fk4x1"


def test_deep_arks_resolve_to_their_longest_bound_ancestor(seeded: Any) -> None:
    """An ARK of 1,500 components (PostgreSQL: the cut form of the read) finds the longest bound ancestor
    with passthrough, alone or in a batch with ordinary ARKs."""
    store: Store = seeded.store
    store.bind("ark:99999/fk4coll/a/a/a", "https://example.org/deep/", passthrough=True, force=True)
    deep = "ark:99999/fk4coll" + "/a" * 1500
    found = store.resolve_many([deep, "ark:99999/fk4x1", "ark:99999/fk4coll" + "/b" * 1500])
    assert found[0] is not None and found[0].binding.key == "ark:99999/fk4coll/a/a/a"
    assert found[0].location == "https://example.org/deep/" + "/".join(["a"] * 1497)
    assert found[1] is not None and found[1].binding.key == "ark:99999/fk4x1"
    assert found[2] is not None and found[2].binding.key == "ark:99999/fk4coll"
    assert store.resolve(deep) == found[0]


def test_both_forms_of_the_postgresql_read_agree(seeded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store: Store = seeded.store
    arks = [p.removeprefix("/") for p in PATHS if p not in ("/ark:", "/ark:/")]
    arks += ["ark:99999/fk4coll/x.v1/y", "ark:99999/fk4x1.v2", "ark:99999/fk4coll/sub/page.html/p"]
    plain = store.resolve_many(arks)
    if type(store).__name__ == "PostgresStore":
        from pidkit.store import postgres

        monkeypatch.setattr(postgres, "DEEP_KEYS", -1)  # every read in the cut form
    assert store.resolve_many(arks) == plain == [store.resolve(a) for a in arks]


def test_resolve_many_raises_for_a_malformed_ark(seeded: Any) -> None:
    with pytest.raises(ArkError):
        seeded.store.resolve_many(["ark:99999/fk4x1", "ark:"])


# --- the app: concurrent requests, writes seen at once ----------------------------------------------------
PATHS = [
    "/ark:99999/fk4x1", "/ark:/99999/fk4-x1", "/ark:99999/fk4coll/sub/page.html", "/ark:99999/fk4gone",
    "/ark:99999/fk4res", "/ark:99999/fk4nope", "/ark:12345/x", "/ark:99999/fk4a%2Fb", "/ark:", "/ark:/",
]  # fmt: skip


def _summary(response: httpx.Response) -> tuple[int, str | None, bytes]:
    return response.status_code, response.headers.get("location"), response.content


def test_concurrent_requests_get_the_answers_of_single_requests(
    seeded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: Store = seeded.store
    app = create_app(store, settings=Settings(max_body=4096))
    batches: list[int] = []
    gate = threading.Event()
    real = store.resolve_many

    def slow_first(arks: Sequence[str]) -> list[Resolution | None]:
        batches.append(len(arks))
        if len(batches) == 1:
            gate.wait(5)  # the first read is slow: the other requests queue behind it
        return real(arks)

    batched = type(store).__name__ == "PostgresStore"  # SQLite reads on the loop, without the batcher
    if batched:
        monkeypatch.setattr(store, "resolve_many", slow_first)

    async def run() -> tuple[list[Any], list[Any]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            single = [_summary(await client.get(p)) for p in PATHS]
            batches.clear()
            gate.clear()
            tasks = [asyncio.ensure_future(client.get(p)) for p in PATHS * 5]
            for _ in range(200 if batched else 0):
                if batches:
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1 if batched else 0)
            gate.set()
            together = [_summary(r) for r in await asyncio.gather(*tasks)]
        return single, together

    gate.set()
    single, together = asyncio.run(run())
    assert together == single * 5
    assert [s for s, _, _ in single] == [302, 302, 302, 410, 404, 404, 302, 302, 400, 400]
    if batched:
        assert max(batches) > 1  # lookups were batched


def test_an_ark_with_many_ancestors_is_looked_up_alone(
    client: TestClient, seeded: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deep ARK (many keys to read) must not hold up a batch: it is read on its own, and answered as
    the route answers it."""
    app: Any = client.app
    batched: list[str] = []
    real = app.state.lookups.resolve

    async def spy(text: str) -> Resolution | None:
        batched.append(text)
        found: Resolution | None = await real(text)
        return found

    monkeypatch.setattr(app.state.lookups, "resolve", spy)
    deep = "/ark:99999/fk4coll" + "/c" * (MAX_BATCHED_COST + 5)
    response = client.get(deep)
    assert response.status_code == 302
    assert response.headers["location"] == COLLECTION + deep.split("fk4coll/", 1)[1]
    assert client.get("/ark:99999/fk4x1").status_code == 302
    if type(seeded.store).__name__ == "PostgresStore":
        assert batched == ["ark:99999/fk4x1"]  # the deep one went alone
    else:
        assert batched == []  # SQLite reads on the event loop


@pytest.fixture
def postgres_store_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh schema of the test database (PostgreSQL only: the deadline is of the batched reads)."""
    yield from _postgres_url(request)


@pytest.mark.postgres
def test_a_stuck_batch_is_answered_503(postgres_store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(postgres_store_url) as store:
        seeded = seed(store)
        release = threading.Event()
        real = seeded.store.resolve_many

        def stuck(arks: Sequence[str]) -> list[Resolution | None]:
            if "ark:99999/fk4x1" in arks:
                release.wait(10)
            return real(arks)

        monkeypatch.setattr(seeded.store, "resolve_many", stuck)
        app = create_app(seeded.store, settings=Settings(lookup_timeout=1.5))
        try:
            with TestClient(app, follow_redirects=False) as client:
                assert client.get("/ark:99999/fk4coll/p").status_code == 302  # opens the store
                first = client.get("/ark:99999/fk4x1", headers={"accept": "application/json"})
                assert first.status_code == 503
                assert first.headers["retry-after"]
                assert client.get("/ark:99999/fk4coll/p").status_code == 302  # the next batch goes
        finally:
            release.set()


def test_a_write_is_seen_by_the_next_request(client: TestClient, seeded: Any) -> None:
    store: Store = seeded.store
    store.bind("ark:99999/fk4moving", "https://example.org/one", force=True)
    assert client.get("/ark:99999/fk4moving").headers["location"] == "https://example.org/one"
    store.bind("ark:99999/fk4moving", "https://example.org/two", force=True)
    assert client.get("/ark:99999/fk4moving").headers["location"] == "https://example.org/two"
    store.tombstone("ark:99999/fk4moving", "gone")
    assert client.get("/ark:99999/fk4moving").status_code == 410


# --- the raw 302 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "location",
    ["https://example.org/plain", "https://example.org/caf\u00e9?q=a b&x=[1]", "https://e.org/%7Ea'b(c)*"],
    ids=["plain", "non-ascii-and-space", "kept-characters"],
)
def test_raw_redirect_equals_starlette(location: str) -> None:
    from starlette.responses import RedirectResponse

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def nothing() -> dict[str, Any]:
        return {"type": "http.request"}

    asyncio.run(redirect(send, location))
    ours = list(sent)
    sent.clear()
    asyncio.run(RedirectResponse(location, status_code=302)({"type": "http"}, nothing, send))
    assert ours[0]["status"] == sent[0]["status"] == 302
    assert ours[0]["headers"] == sent[0]["headers"]
    assert ours[1]["body"] == sent[1]["body"] == b""
