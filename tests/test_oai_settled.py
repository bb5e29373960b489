"""``Store.settled_time`` and the OAI-PMH window it ends: a change stamped before a harvest's
``responseDate`` but committed after the harvest read is never lost to the next incremental harvest.

A write stamps its change once it holds its lock (SQLite's one writer; on PostgreSQL its NAAN's lock,
or the bulk lock of an import) and commits later; an import commits minutes later.  Without the wait,
a harvest that ran in between answered 200 without the import's lines and a ``responseDate`` past
their stamp, so the next harvest, starting from that ``responseDate``, skipped them for good.

The ARKs here are under NAAN 24680, which no other test uses: on PostgreSQL a NAAN's lock is the
database's, and a write held open here would hold up the writes of other tests under the same NAAN.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pidkit.errors import StoreError
from pidkit.store import Store, WritesInFlightError, open_store
from pidkit.store.postgres import _STAMP_HOLDERS, NAAN_LOCK, STAMP_LOCK
from pidkit.store.sql import _IMPORT_CHUNK as IMPORT_CHUNK
from pidkit.store.sqlite import BUSY_TIMEOUT_MS, SqliteStore
from pidkit.web.oai import respond

OAI = "{http://www.openarchives.org/OAI/2.0/}"
BASE = "http://h/oai"
NAAN = "24680"
#: A write of the store of the connection's schema, as far as settled_time can tell.
_TAKE_STAMP_LOCK = "SELECT pg_advisory_xact_lock_shared(%s, hashtext(current_schema()))"


class BlockedImport:
    """``store.import_jsonl`` of ``first`` then ``rest`` in a thread, held inside its transaction after
    ``first`` (its stamp read; ``first`` written and given its history rows when it is a whole chunk of
    the import; nothing committed) until :meth:`finish`."""

    def __init__(self, store: Store, rest: list[str], first: list[str] | None = None) -> None:
        self.began, self.release = threading.Event(), threading.Event()
        self.errors: list[BaseException] = []

        def feed() -> Iterator[str]:
            yield from first or []  # asked for inside the import's transaction
            self.began.set()
            if not self.release.wait(60):
                raise TimeoutError("never released")  # rolls the import back
            yield from rest

        def run() -> None:
            try:
                store.import_jsonl(feed())
            except BaseException as exc:  # reported by finish()
                self.errors.append(exc)

        self.thread = threading.Thread(target=run)
        self.thread.start()
        if not self.began.wait(30):
            self.finish()
            raise AssertionError(f"the import did not begin: {self.errors}")

    def finish(self) -> None:
        """Let the import go on, wait for its commit; again: nothing more."""
        self.release.set()
        self.thread.join(60)
        assert not self.thread.is_alive() and not self.errors


@pytest.fixture
def blocked() -> Iterator[Callable[..., BlockedImport]]:
    """A maker of :class:`BlockedImport` whose imports are all let go when the test ends, even failed."""
    made: list[BlockedImport] = []

    def make(store: Store, rest: list[str], first: list[str] | None = None) -> BlockedImport:
        made.append(BlockedImport(store, rest, first))
        return made[-1]

    yield make
    for b in made:
        b.finish()


def _lines(prefix: str, n: int) -> list[str]:
    return [json.dumps({"text": f"ark:{NAAN}/{prefix}{i}", "target": f"https://e.org/{prefix}/{i}"})
            for i in range(n)]  # fmt: skip


@pytest.fixture
def file_store(new_url: Callable[[], str]) -> Iterator[Store]:
    """A store another connection can write beside: a SQLite file, a PostgreSQL schema."""
    with open_store(new_url()) as s:
        s.add_naan(NAAN, "Test")
        yield s


def _raises_after(store: Store, wait: float) -> float:
    start = time.monotonic()
    with pytest.raises(WritesInFlightError, match="try again later"):
        store.settled_time(wait)
    return time.monotonic() - start


def test_settled_time_is_after_every_committed_stamp_and_before_later_ones(store: Store) -> None:
    store.add_naan(NAAN)
    first = store.bind(f"ark:{NAAN}/a", "https://e.org/a")
    settled = store.settled_time()
    later = store.bind(f"ark:{NAAN}/b", "https://e.org/b")
    first_at, later_at = store.recorded_at(first), store.recorded_at(later)
    assert first_at is not None and later_at is not None
    assert first_at <= settled < later_at


def test_settled_time_waits_for_an_import_in_flight(
    file_store: Store, blocked: Callable[..., BlockedImport]
) -> None:
    held = blocked(file_store, _lines("fk4i", 20))
    assert 0.3 <= _raises_after(file_store, 0.3) < 10
    held.finish()
    settled = file_store.settled_time(0.3)
    stamps = [file_store.recorded_at(b) for b in file_store.list_bindings(kind="ark")]
    assert len(stamps) == 20 and all(at is not None and at <= settled for at in stamps)


def test_settled_time_of_a_private_store_waits_for_its_one_connection(
    blocked: Callable[..., BlockedImport],
) -> None:
    with open_store("sqlite:///:memory:") as s:
        s.add_naan(NAAN)
        held = blocked(s, _lines("fk4m", 3))
        _raises_after(s, 0.2)
        held.finish()
        stamps = [s.recorded_at(b) for b in s.list_bindings()]
        settled = s.settled_time(0.2)
        assert len(stamps) == 3 and all(at is not None and at <= settled for at in stamps)


def test_sqlite_settled_time_waits_for_another_processes_writer(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    s = SqliteStore(str(path))
    try:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # any writer of the file: it stamps once it holds this
        try:
            _raises_after(s, 0.2)
        finally:
            other.execute("ROLLBACK")
            other.close()
        s.settled_time(0.2)
        # the reader's busy timeout is the store's own again: a later read waits as before
        assert s._reader().execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        with s._transaction(write=False), pytest.raises(StoreError, match="inside a read transaction"):
            s.settled_time(0.2)
    finally:
        s.close()


def _stamp_lock_holders(url: str) -> int:
    """Transactions holding the stamp lock of the store at ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        return len(conn.execute(_STAMP_HOLDERS.replace("?", "%s"), (STAMP_LOCK, None, None)).fetchall())


def _waiting_for_naan(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                           "AND classid = %s", (NAAN_LOCK,)).fetchone()  # fmt: skip
    return int(row[0]) if row else 0


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 20
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_postgres_bind_in_flight_is_waited_for_one_queued_for_its_naan_is_not(
    postgres_url: str, new_postgres_url: Callable[[], str]
) -> None:
    url = new_postgres_url()
    with open_store(url) as s, psycopg.connect(url, autocommit=True) as admin:
        s.add_naan(NAAN)
        # a bind that stays in flight, stamped, for a while: its history row takes 1.5 s to write
        admin.execute("CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.key = "
                      f"'ark:{NAAN}/slow' THEN PERFORM pg_sleep(1.5); END IF; RETURN NEW; END $$")
        admin.execute("CREATE TRIGGER slow BEFORE INSERT ON history FOR EACH ROW EXECUTE FUNCTION slow()")
        slow = threading.Thread(target=s.bind, args=(f"ark:{NAAN}/slow", "https://e.org/s"))
        slow.start()
        try:
            _until(lambda: _stamp_lock_holders(url) == 1, "the bind never held the stamp lock")
            _raises_after(s, 0.2)
        finally:
            slow.join(30)
        # a bind queued behind its NAAN's lock (held by another store's writer) has stamped nothing yet
        holder = psycopg.connect(postgres_url)
        holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (NAAN_LOCK, NAAN))
        bound: list[Any] = []
        binder = threading.Thread(target=lambda: bound.append(s.bind(f"ark:{NAAN}/w", "https://e.org/w")))
        binder.start()
        try:
            _until(lambda: _waiting_for_naan(url) >= 1, "the bind never waited for its NAAN")
            assert _stamp_lock_holders(url) == 0
            settled = s.settled_time(0.2)
        finally:
            holder.commit()
            holder.close()
            binder.join(30)
        at = s.recorded_at(bound[0])
        assert at is not None and settled < at <= s.settled_time(0.5)


def test_postgres_settled_time_waits_only_for_the_writes_under_way(
    new_postgres_url: Callable[[], str], blocked: Callable[..., BlockedImport],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writes that began while it waits are not waited for: a steady stream of them cannot keep a
    harvest waiting.  Nor is a write of another store of the database (another schema)."""
    url, neighbour = new_postgres_url(), new_postgres_url()
    with (
        open_store(url) as s, open_store(neighbour),
        psycopg.connect(neighbour) as elsewhere, psycopg.connect(url) as later,
    ):
        s.add_naan(NAAN)
        elsewhere.execute(_TAKE_STAMP_LOCK, (STAMP_LOCK,))  # the other store's write, under way throughout
        held = blocked(s, _lines("fk4q", 2))
        polled = threading.Event()
        exec_ = s._exec  # type: ignore[attr-defined]

        def spy(cur: Any, sql: str, params: Sequence[Any] = ()) -> Any:
            out = exec_(cur, sql, params)
            if sql == _STAMP_HOLDERS:
                polled.set()  # the transactions to wait for are known
            return out

        monkeypatch.setattr(s, "_exec", spy)
        settled: list[Any] = []
        waiter = threading.Thread(target=lambda: settled.append(s.settled_time(20)))
        waiter.start()
        try:
            assert polled.wait(20)
            later.execute(_TAKE_STAMP_LOCK, (STAMP_LOCK,))  # a write of this store, begun after that
            assert _stamp_lock_holders(url) == 2 and _stamp_lock_holders(neighbour) == 1
            time.sleep(0.3)
            assert not settled  # the import it found is still running
            held.finish()
            waiter.join(10)
            assert len(settled) == 1 and _stamp_lock_holders(url) == 1  # the later write still runs
        finally:
            held.finish()
            waiter.join(30)
        assert len(s.list_bindings()) == 2


def _harvest(store: Store, since: str | None) -> tuple[int, str | None, set[str]]:
    """One incremental ListIdentifiers harvest through :func:`respond` (every page): its HTTP status,
    the first response's responseDate and the identifiers."""
    args = [("verb", "ListIdentifiers"), ("metadataPrefix", "oai_dc")] + ([("from", since)] if since else [])
    got: set[str] = set()
    first: str | None = None
    while True:
        r = respond(store, BASE, args)
        if r.status_code != 200:
            assert r.headers["Retry-After"].isdigit() and b"try again later" in r.body
            return r.status_code, first, got
        root = ET.fromstring(r.body)
        first = first or root.findtext(f"{OAI}responseDate")
        got.update(e.text or "" for e in root.iter(f"{OAI}identifier"))
        token = root.findtext(f".//{OAI}resumptionToken")
        if not token:
            return 200, first, got
        args = [("verb", "ListIdentifiers"), ("resumptionToken", token)]


def test_an_incremental_harvester_misses_nothing_of_an_import_under_way(
    file_store: Store, blocked: Callable[..., BlockedImport]
) -> None:
    file_store.bind(f"ark:{NAAN}/before", "https://e.org/before")
    status, since, seen = _harvest(file_store, None)
    assert status == 200 and seen == {f"ark:{NAAN}/before"}
    lines = _lines("fk4h", IMPORT_CHUNK + 150)
    # the first chunk written and recorded now, committed only below
    held = blocked(file_store, lines[IMPORT_CHUNK:], lines[:IMPORT_CHUNK])
    time.sleep(1.05 - time.time() % 1)  # into the next second: a responseDate past the stamp
    during, date, got = _harvest(file_store, since)
    if during == 200:  # a harvester goes on from a harvest that succeeded
        since, seen = date, seen | got
    held.finish()
    status, _, got = _harvest(file_store, since)
    assert status == 200
    assert {f"ark:{NAAN}/fk4h{i}" for i in range(IMPORT_CHUNK + 150)} <= seen | got
    assert during == 503  # told to come back once the import has committed


def test_a_harvest_under_way_goes_on_during_an_import(
    file_store: Store, blocked: Callable[..., BlockedImport]
) -> None:
    """Only a harvest's first request waits for the writes in flight: its window is fixed then."""
    assert file_store.import_jsonl(_lines("fk4p", 150)).created == 150
    r = respond(file_store, BASE, [("verb", "ListIdentifiers"), ("metadataPrefix", "oai_dc")])
    token = ET.fromstring(r.body).findtext(f".//{OAI}resumptionToken")
    assert token
    blocked(file_store, _lines("fk4z", 5))
    start = time.monotonic()
    rest = respond(file_store, BASE, [("verb", "ListIdentifiers"), ("resumptionToken", token)])
    assert rest.status_code == 200 and time.monotonic() - start < 1.5
    assert len(list(ET.fromstring(rest.body).iter(f"{OAI}identifier"))) == 50
