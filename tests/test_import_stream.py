"""``import_jsonl`` streams (issue 18): memory independent of the file's size, still all or nothing.

The import reads, checks and writes the lines a chunk at a time (``pidkit.store.sql._IMPORT_CHUNK``) in one
transaction; these tests use files of several chunks, on both backends.  Killing an import half-way is in
``tests/test_persist_faults.py``.
"""

from __future__ import annotations

import json
import re
import threading
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from _schema import loads_entered, schema_objects, waits_for
from pidkit.noid import Minter
from pidkit.store import Scope, Search, Store, open_store, sql
from pidkit.store.records import ImportRejectedError
from pidkit.store.sql import Cursor, SqlStore

NAAN = "99999"
#: Lines per chunk of an import in these tests (``pidkit.store.sql._IMPORT_CHUNK``, 5,000, made smaller
#: by :func:`_small_chunks` for every test here): the same code, on files a fifth as long.
CHUNK = 1000
#: Lines of a "big" file in these tests: three chunks and a part.
BIG = 3 * CHUNK + 234


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql, "_IMPORT_CHUNK", CHUNK)


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new store on each backend."""
    if request.param == "postgres":
        new_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_url()
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    with open_store(url) as s:
        s.add_naan(NAAN)
        yield s


def _line(i: int, prefix: str = "fk4s", target: str = "https://example.org/") -> str:
    return json.dumps({"text": f"ark:{NAAN}/{prefix}{i}", "target": f"{target}{i}"}) + "\n"


def _lines(n: int, prefix: str = "fk4s") -> Iterator[str]:
    """``n`` lines made one at a time (the input itself is never all in memory)."""
    return (_line(i, prefix) for i in range(n))


def _count(store: Store, kind: str = "ark") -> int:
    total = 0
    after: str | None = None
    while page := store.list_bindings(kind=kind, after=after, limit=1000):
        total += len(page)
        after = page[-1].key
    return total


def _peak(n: int) -> int:
    """Peak traced memory (bytes) of importing ``n`` generated lines into a fresh SQLite store."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/m.db") as s:
        s.add_naan(NAAN)
        tracemalloc.start()
        try:
            report = s.import_jsonl(_lines(n))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert report.created == n
    return peak


def test_memory_does_not_grow_with_the_file() -> None:
    """Four times the lines, about the same peak: the chunk bounds it (before: ~2 KB per line held, so
    the 6,000 more lines would add some 12 MB)."""
    small = _peak(2 * CHUNK)
    large = _peak(8 * CHUNK)
    assert large < small * 1.5 and large - small < 3_000_000, (small, large)


def test_a_big_import_writes_every_line_and_one_history_row_each(store: Store) -> None:
    report = store.import_jsonl(_lines(BIG))
    assert (report.lines, report.created, report.updated) == (BIG, BIG, 0)
    assert _count(store) == BIG
    for i in (0, CHUNK - 1, CHUNK, BIG - 1):  # first, chunk edges, last
        b = store.get_binding(f"ark:{NAAN}/fk4s{i}")
        assert b is not None and b.target == f"https://example.org/{i}"
        assert [h.operation for h in store.history("ark", f"ark:{NAAN}/fk4s{i}")] == ["import"]


def test_a_later_chunk_sees_an_earlier_one(store: Store) -> None:
    """A key on line 1 and again in the last chunk: created once, then updated; the last line wins."""
    lines = [_line(7, "fk4d", "https://old.example/"), *_lines(BIG - 2), _line(7, "fk4d", "https://new.example/")]
    report = store.import_jsonl(iter(lines))
    assert (report.lines, report.created, report.updated) == (BIG, BIG - 1, 1)
    b = store.get_binding(f"ark:{NAAN}/fk4d7")
    assert b is not None and b.target == "https://new.example/7"
    after = [h.after for h in store.history("ark", f"ark:{NAAN}/fk4d7")]
    assert after[-1] is not None and after[-1]["target"] == "https://new.example/7"


def test_bad_lines_near_the_end_write_nothing_and_are_all_named(store: Store) -> None:
    store.bind(f"ark:{NAAN}/fk4keep", "https://example.org/keep")
    history_before = len(store.history("ark", f"ark:{NAAN}/fk4keep"))
    lines = list(_lines(BIG))
    lines[BIG - 3] = "{not json\n"
    lines[BIG - 1] = json.dumps({"text": f"ark:{NAAN}/fk4s1", "target": "ftp://not-http/"}) + "\n"
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(iter(lines))
    assert [n for n, _ in info.value.problems] == [BIG - 2, BIG]
    assert _count(store) == 1  # only the binding made before
    assert store.get_binding(f"ark:{NAAN}/fk4s0") is None
    assert len(store.history("ark", f"ark:{NAAN}/fk4keep")) == history_before
    assert store.history("ark", f"ark:{NAAN}/fk4s0") == []


def test_a_refused_line_in_a_late_chunk_undoes_the_earlier_chunks(store: Store) -> None:
    """A tombstone met in the third chunk (after two chunks were written in the transaction): nothing
    stays, and an unreadable line in a later chunk is reported too."""
    store.bind(f"ark:{NAAN}/fk4t1", "https://example.org/t")
    store.tombstone(f"ark:{NAAN}/fk4t1", reason="gone")
    lines = list(_lines(BIG))
    lines[3 * CHUNK - 10] = _line(1, "fk4t")
    lines[BIG - 1] = "[]\n"
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(iter(lines))
    assert [n for n, _ in info.value.problems] == [3 * CHUNK - 9, BIG]
    assert "tombstoned" in info.value.problems[0][1]
    assert _count(store) == 1
    assert store.get_binding(f"ark:{NAAN}/fk4s0") is None


def _lookup_without(store: Store, monkeypatch: pytest.MonkeyPatch, hidden: str, seen: object = None) -> None:
    """Make the import's lookup of the stored bindings miss ``hidden`` (or see ``seen`` there instead):
    what it would have read had another writer changed that key between the lookup and the write (no
    other writer can, on SQLite: the import holds the write lock)."""
    lookup = store._import_state  # type: ignore[attr-defined]

    def state(cur: object, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], object]:
        found = dict(lookup(cur, pairs))
        if ("ark", hidden) in found:
            del found[("ark", hidden)]
            if seen is not None:
                found[("ark", hidden)] = seen
        return found

    monkeypatch.setattr(store, "_import_state", state)


def test_a_key_bound_by_another_writer_since_the_lookup_is_never_written_over(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import writes a key its lookup found free with a plain insert: when the key is there after all
    (another writer bound it meanwhile), the insert leaves that binding alone and the import is refused
    naming the line — it never silently replaces what another writer bound, nor records it as created."""
    key = f"ark:{NAAN}/fk4s{CHUNK + 5}"
    store.bind(key, "https://example.org/theirs")
    history = store.history("ark", key)
    _lookup_without(store, monkeypatch, key)
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(_lines(BIG))
    assert list(info.value.problems) == [
        (CHUNK + 6, f"{key} was bound by another writer during the import; nothing imported: import "
                            "again (the line then updates it)")
    ]  # fmt: skip
    b = store.get_binding(key)
    assert b is not None and b.target == "https://example.org/theirs"
    assert store.history("ark", key) == history
    assert _count(store) == 1 and store.get_binding(f"ark:{NAAN}/fk4s0") is None


def test_a_key_tombstoned_since_the_lookup_is_not_rebound(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key the lookup saw bound but tombstoned when the import writes it: the upsert's guard leaves the
    tombstone, and the import is refused naming the line."""
    key = f"ark:{NAAN}/fk4s{2 * CHUNK + 7}"
    live = store.bind(key, "https://example.org/was")
    store.tombstone(key, reason="gone")
    _lookup_without(store, monkeypatch, key, seen=live)
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(_lines(BIG))
    line = 2 * CHUNK + 8
    assert list(info.value.problems) == [(line, f"{key} was tombstoned meanwhile; not rebound")]
    b = store.get_binding(key)
    assert b is not None and b.status == "tombstoned"
    assert _count(store) == 1


def test_a_source_that_fails_half_way_writes_nothing(store: Store) -> None:
    """The file becomes unreadable in its third chunk: the error is the import's, and nothing of the two
    chunks written before stays."""

    def failing() -> Iterator[str]:
        yield from _lines(2 * CHUNK + 10)
        raise OSError("input/output error")

    with pytest.raises(OSError, match="input/output error"):
        store.import_jsonl(failing())
    assert _count(store) == 0
    assert store.history("ark", f"ark:{NAAN}/fk4s0") == []
    assert store.import_jsonl(_lines(10)).created == 10  # the store takes the next import, and finds it
    found = store.find_bindings(Scope(NAAN, admin=True), Search(target="example.org/9"))
    assert [b.key for b in found.bindings] == [f"ark:{NAAN}/fk4s9"]



@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_reads_the_next_chunk_while_the_server_writes_the_last(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL leaves each chunk's ``INSERT … SELECT`` running on the server (pipeline mode) while the
    import reads and parses its next chunk; the connection leaves pipeline mode before the next
    statement of the import, and after it."""
    import psycopg

    cursors: list[psycopg.Cursor[object]] = []
    write = store._import_write  # type: ignore[attr-defined]

    def recording(cur: psycopg.Cursor[object], *args: object) -> None:
        cursors.append(cur)
        write(cur, *args)

    monkeypatch.setattr(store, "_import_write", recording)
    seen: dict[int, psycopg.pq.PipelineStatus] = {}

    def source() -> Iterator[str]:
        for i, line in enumerate(_lines(BIG)):
            if i % CHUNK == CHUNK - 1 and cursors:  # the last line of a chunk after the first
                seen[i] = psycopg.pq.PipelineStatus(cursors[-1].connection.pgconn.pipeline_status)
            yield line

    assert store.import_jsonl(source()).created == BIG
    assert seen == dict.fromkeys((2 * CHUNK - 1, 3 * CHUNK - 1), psycopg.pq.PipelineStatus.ON)
    assert {psycopg.pq.PipelineStatus(c.connection.pgconn.pipeline_status) for c in cursors} == {
        psycopg.pq.PipelineStatus.OFF
    }
    assert _count(store) == BIG


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
@pytest.mark.parametrize("at", [CHUNK + 17, BIG - 1], ids=["a middle chunk", "the last chunk"])
def test_postgres_a_write_the_server_refuses_undoes_the_import(store: Store, at: int) -> None:
    """The server fails one chunk's pipelined ``INSERT … SELECT`` (here a trigger refuses one key): the
    error is the import's, raised when the import next waits for the server (after reading the next
    chunk, or at the end); nothing of the import stays, and the store's connections work afterwards."""
    import psycopg

    refused = f"ark:{NAAN}/fk4s{at}"
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused by the test: %', NEW.key; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON bindings FOR EACH ROW "
            f"WHEN (NEW.key = '{refused}') EXECUTE FUNCTION refuse()"
        )
    with pytest.raises(psycopg.errors.RaiseException, match=f"refused by the test: {refused}"):
        store.import_jsonl(_lines(BIG))
    assert _count(store) == 0
    assert store.history("ark", f"ark:{NAAN}/fk4s0") == []
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute("DROP TRIGGER refuse ON bindings")
    report = store.import_jsonl(_lines(BIG))  # every pooled connection is out of pipeline mode
    assert report.created == BIG and _count(store) == BIG
    assert [h.operation for h in store.history("ark", refused)] == ["import"]


def test_a_big_import_into_a_store_without_bindings_keeps_its_indexes(url: str, store: Store) -> None:
    """Into a store without bindings a big import loads its rows first and indexes them at its end, as a
    restore into an empty store does (PostgreSQL drops the secondary indexes of ``bindings`` and
    ``history`` in the import's transaction and makes them again from their definitions): afterwards
    the database holds the same indexes and triggers as before, they find the imported rows, and an
    import refused in a late chunk rolls the drop back with its rows."""
    made = schema_objects(url)
    assert any(row[0] == "index" and row[2] == "history" for row in made)
    lines = list(_lines(BIG))
    with pytest.raises(ImportRejectedError):
        store.import_jsonl(iter([*lines[:-1], "{not json\n"]))
    assert schema_objects(url) == made and _count(store) == 0
    assert store.import_jsonl(iter(lines)).created == BIG
    assert schema_objects(url) == made
    found = store.find_bindings(Scope(NAAN, admin=True), Search(target=f"example.org/{BIG - 7}"))
    assert [b.key for b in found.bindings] == [f"ark:{NAAN}/fk4s{BIG - 7}"]
    assert [h.operation for h in store.history("ark", f"ark:{NAAN}/fk4s{BIG - 1}")] == ["import"]
    assert len(store.list_changed(naan=NAAN, shoulder="fk4", limit=3)) == 3


def test_only_a_big_import_into_a_store_without_bindings_defers_its_indexes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store with bindings keeps its indexes through an import (making them again would cost more than
    the import, and lock the tables it serves from), and so does a store through a small import."""
    entered = loads_entered(store, monkeypatch)
    with pytest.raises(ImportRejectedError):  # small, and refused: the store stays without bindings
        store.import_jsonl(iter([*_lines(CHUNK - 2, "fk4a"), "[]\n"]))
    assert store.import_jsonl(_lines(BIG, "fk4d"), dry_run=True).created == BIG  # a dry run: never
    assert entered == [] and _count(store) == 0
    store.import_jsonl(_lines(BIG, "fk4b"))
    assert entered == [("bindings", "history")]
    store.import_jsonl(_lines(BIG, "fk4c"))
    assert entered == [("bindings", "history")] and _count(store) == 2 * BIG


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_two_big_imports_that_both_found_no_bindings_both_succeed(
    url: str, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two big imports into a store without bindings, at once: both find it so before either drops an
    index (a barrier holds each until the other has looked).  The look leaves no lock behind, so the
    second import waits for the first's exclusive lock and then goes on; had each kept the shared lock
    of its look, each would wait for the other (PostgreSQL fails one of them: deadlock detected).
    Imports of this version run one at a time (:meth:`_lock_many_naans`), so these two are imports of an
    earlier version, which does not take that lock, beside each other during an upgrade."""
    monkeypatch.setattr(store, "_lock_many_naans", lambda cur: None)
    made = schema_objects(url)
    barrier = threading.Barrier(2, timeout=30)
    load = store._load_empty  # type: ignore[attr-defined]

    def after_both_looked(cur: object, tables: tuple[str, ...]) -> object:
        barrier.wait()
        return load(cur, tables)

    monkeypatch.setattr(store, "_load_empty", after_both_looked)
    errors: list[BaseException] = []

    def run(prefix: str) -> None:
        try:
            store.import_jsonl(_lines(BIG, prefix))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(p,)) for p in ("fk4a", "fk4b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == [] and _count(store) == 2 * BIG
    assert schema_objects(url) == made


def _index_oids(store: Store) -> dict[str, int]:
    """The indexes of ``bindings`` and ``history`` by name, each with its oid (a new one once made again)."""
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        rows = conn.execute(
            "SELECT c.relname, c.oid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid "
            "JOIN pg_class t ON t.oid = x.indrelid WHERE t.relnamespace = current_schema()::regnamespace "
            "AND t.relname IN ('bindings', 'history')"
        ).fetchall()
    return {str(name): int(oid) for name, oid in rows}


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_load_that_finds_bindings_once_it_holds_the_tables_keeps_their_indexes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import looked at the store before it locked the tables; a binding another writer made in
    between (here: the look made to miss it) is seen once they are locked, and the indexes then stay
    as they are, as in any import into a store with bindings."""
    made = _index_oids(store)
    assert store.import_jsonl(_lines(BIG, "fk4a")).created == BIG
    rebuilt = _index_oids(store)
    assert rebuilt.keys() == made.keys() and rebuilt != made  # premise: a new oid tells an index made again
    monkeypatch.setattr(store, "_is_empty", lambda cur, table: True)
    entered = loads_entered(store, monkeypatch)
    assert store.import_jsonl(_lines(BIG, "fk4b")).created == BIG
    assert entered == [("bindings", "history")]  # the load was entered, and found the bindings
    assert _index_oids(store) == rebuilt


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_load_locks_its_tables_before_it_reads_their_indexes(
    url: str, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the first big import reads the definitions of the indexes it drops, it already holds both
    tables exclusively: a second load reads them only once the first has made them again (read while
    they are being dropped, the catalog fails: "cache lookup failed")."""
    import psycopg

    assert isinstance(store, SqlStore)
    run, held = store._exec, []

    def checking(cur: Cursor, sql: str, params: Sequence[object] = ()) -> object:
        if "pg_get_indexdef" in sql:
            with psycopg.connect(url, autocommit=True) as other:
                held.append(sorted(str(row[0]) for row in other.execute(
                    "SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                    "WHERE l.mode = 'AccessExclusiveLock' AND l.granted AND c.relkind = 'r' "
                    "AND c.relnamespace = (SELECT relnamespace FROM pg_class "
                    "WHERE oid = 'bindings'::regclass)"
                ).fetchall()))  # fmt: skip
        return run(cur, sql, params)

    monkeypatch.setattr(store, "_exec", checking)
    assert store.import_jsonl(_lines(BIG)).created == BIG
    assert held == [["bindings", "history"]]


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_big_dry_run_into_a_store_without_bindings_holds_no_reader(store: Store) -> None:
    """A dry run (the back office's check of an upload) writes nothing that stays, so it never locks
    the tables: a lookup made while it runs is answered at once."""
    answered: list[object] = []
    reader = threading.Thread(target=lambda: answered.append(store.get_binding(f"ark:{NAAN}/fk4s0")))
    waited: list[bool] = []

    def source() -> Iterator[str]:
        for i, line in enumerate(_lines(BIG)):
            if i == 2 * CHUNK:  # the first chunk is written in the dry run's transaction
                reader.start()
                reader.join(10)
                waited.append(reader.is_alive())
            yield line

    assert store.import_jsonl(source(), dry_run=True).created == BIG
    reader.join(30)
    assert waited == [False] and answered == [None] and _count(store) == 0


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_read_during_the_first_big_import_waits_for_it(store: Store) -> None:
    """While the first big import into a store holds its tables (their indexes dropped), a lookup waits
    for its commit and then finds the imported binding, instead of answering that it does not exist."""
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(store.get_binding(f"ark:{NAAN}/fk4s0")))
    waited: list[bool] = []

    def source() -> Iterator[str]:
        for i, line in enumerate(_lines(BIG)):
            if i == 2 * CHUNK:  # the first chunk is written, the tables held
                reader.start()
                reader.join(1.0)
                waited.append(reader.is_alive())
            yield line

    assert store.import_jsonl(source()).created == BIG
    reader.join(30)
    assert waited == [True]
    assert len(found) == 1 and getattr(found[0], "target", None) == "https://example.org/0"


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_mint_during_the_first_big_import_waits_for_it_and_skips_what_it_bound(
    store: Store,
) -> None:
    """The first big import holds its tables from its first chunk on and takes a NAAN's lock only when a
    later chunk brings the NAAN; a mint under that NAAN, begun in between, waits for the import before it
    takes the NAAN's lock (had it taken it first, each would wait for the other: PostgreSQL fails one of
    them, "deadlock detected"), then skips the id the import bound."""
    other = "99998"
    store.add_naan(other)
    m = store.create_minter("m", naan=other, template="fk4.reedeedk", seed=7)
    reference = Minter(m.template, other, seed=m.seed)
    first, second = (reference.mint_at(i) for i in range(2))
    later = json.dumps({"text": f"ark:{other}/{first}", "target": "https://example.org/imported"}) + "\n"
    reading, release = threading.Event(), threading.Event()

    def source() -> Iterator[str]:
        for i, line in enumerate(_lines(BIG)):
            if i == CHUNK + 10:  # the first chunk (NAAN 99999 alone) is written, the tables held
                reading.set()
                release.wait(30)
                yield later  # the second chunk brings the minter's NAAN
            yield line

    minted: list[str] = []
    assert waits_for(lambda: store.import_jsonl(source()), reading, release,
                     lambda: minted.extend(store.mint("m", 1)))  # fmt: skip
    assert minted == [f"ark:{other}/{second}"]
    b = store.get_binding(f"ark:{other}/{first}")
    assert b is not None and b.target == "https://example.org/imported"
    assert _count(store) == BIG + 1


def test_two_imports_beside_each_other_never_deadlock(store: Store) -> None:
    """Each import locks the NAANs of a chunk as it comes: the first holds ``99999`` (its first chunk)
    and then wants ``11111``; the second wants ``11111`` then ``99999`` in one chunk.  The second waits
    for the first to end instead (PostgreSQL: the lock of the writes of several NAANs; SQLite: its one
    writer), and both commit — before, PostgreSQL failed one of them ("deadlock detected")."""
    other = "11111"
    store.add_naan(other)
    store.bind(f"ark:{NAAN}/fk4first", "https://example.org/f")  # not a first import into an empty store
    later = json.dumps({"text": f"ark:{other}/fk4later", "target": "https://example.org/l"}) + "\n"
    reading, release = threading.Event(), threading.Event()

    def source() -> Iterator[str]:
        for i, line in enumerate(_lines(CHUNK + 1)):
            if i == CHUNK:  # the first chunk (NAAN 99999 alone) is written
                reading.set()
                release.wait(30)
                yield later  # the second chunk brings NAAN 11111
            yield line

    beside = [json.dumps({"text": f"ark:{n}/fk4beside", "target": "https://example.org/b"})
              for n in (other, NAAN)]  # fmt: skip
    assert waits_for(lambda: store.import_jsonl(source()), reading, release,
                     lambda: store.import_jsonl(beside))  # fmt: skip
    assert _count(store) == 1 + CHUNK + 1 + 1 + 2
    assert store.check() == []


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_the_lookups_of_an_import_probe_each_key_on_a_table_without_statistics(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an import reads of the bindings it is given (their rows, their statuses) is planned as a
    probe of the primary key per key even where the table has no statistics — as during the first big
    import into a store, whose rows ANALYZE sees only after the commit.  Premise, checked first: there,
    ``kind = ? AND key = ANY(?)`` is planned as a read of every binding of the kind, filtered."""
    assert isinstance(store, SqlStore)
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute("ALTER TABLE bindings SET (autovacuum_enabled = false)")  # no ANALYZE behind our back
    store.import_jsonl(_lines(BIG))
    keys = [f"ark:{NAAN}/fk4s{i}" for i in range(BIG - 100, BIG + CHUNK)]
    seen = _recorded(store, monkeypatch)
    with store._transaction(write=True) as cur:
        cur.execute("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
                    "AND tablename = 'bindings'")
        assert cur.fetchone()[0] == 0  # never analyzed: no statistics of its columns
        any_of = "SELECT key FROM bindings WHERE kind = %s AND key = ANY(%s) FOR UPDATE"
        old = _explain(cur, any_of, ("ark", keys))
        assert "key = ANY" not in " ".join(line for line in old if "Index Cond" in line), old
        state = store._import_state(cur, {("ark", k) for k in keys})
        statuses = store._statuses(cur, "ark", keys)
        assert len(state) == len(statuses) == 100
        assert len(seen) == 2
        for sql, params in seen:
            _assert_probes(_explain(cur, store._q(sql), params), "bindings", "kind", "key")


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_mint_probes_each_candidate_on_a_table_without_statistics(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a mint reads to skip ids already minted, held or bound is planned as a probe of each table's
    primary key per candidate even where the minted log has no statistics yet: a big mint into a new
    store no longer reads every id minted under the NAAN for each batch."""
    assert isinstance(store, SqlStore)
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute("ALTER TABLE minted SET (autovacuum_enabled = false)")
    store.create_minter("many", naan=NAAN, template="b5.reeeeeee", seed=3)
    assert sum(len(batch) for batch in store.mint_batches("many", 20_000)) == 20_000
    store.add_hold(NAAN, f"ark:{NAAN}/held")  # so that the mint reads all three tables
    store.bind(f"ark:{NAAN}/bound", "https://example.org/", force=True)
    seen = _recorded(store, monkeypatch)
    assert len(store.mint("many", 500)) == 500
    taken = [(sql, params) for sql, params in seen if "FROM minted" in sql]
    assert len(taken) == 1 and "FROM holds" in taken[0][0] and "FROM bindings" in taken[0][0]
    with store._transaction(write=False) as cur:
        cur.execute("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
                    "AND tablename = 'minted'")
        assert cur.fetchone()[0] == 0  # never analyzed: no statistics of its columns
        plan = _explain(cur, store._q(taken[0][0]), taken[0][1])
    _assert_probes(plan, "minted", "naan", "id")  # (holds and bindings are empty here: any plan is cheap)


@pytest.mark.parametrize("url", ["postgres"], indirect=True)
def test_postgres_a_mint_reads_the_arks_qualifying_each_candidate_by_a_range_on_a_table_without_statistics(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a NAAN with bindings, a mint skips the ids bound, and those that a bound ARK qualifies
    (``X/c``, ``X.v``): both read by one range of ``bindings_key_c`` per candidate, never by reading the
    NAAN's bindings, even where the table has no statistics (its first big import not analyzed yet)."""
    assert isinstance(store, SqlStore)
    with store._pool.connection() as conn:  # type: ignore[attr-defined]
        conn.execute("ALTER TABLE bindings SET (autovacuum_enabled = false)")
    store.import_jsonl(_lines(BIG))
    store.create_minter("m", naan=NAAN, template="fk4.reedeedk", seed=5)
    first = Minter("fk4.reedeedk", NAAN, seed=5).mint_at(0)
    store.bind(f"ark:{NAAN}/{first}/part", "https://example.org/", force=True)
    store.add_hold(NAAN, "held")  # the holds are read too
    seen = _recorded(store, monkeypatch)
    assert first not in store.mint("m", 300)[0]
    taken = [(sql, params) for sql, params in seen if "FROM minted" in sql]
    assert len(taken) == 2 and "FROM bindings" in taken[0][0], taken  # the 2nd: one more candidate
    with store._transaction(write=False) as cur:
        cur.execute("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
                    "AND tablename = 'bindings'")
        assert cur.fetchone()[0] == 0  # never analyzed: no statistics of its columns
        plan = _explain(cur, store._q(taken[0][0]), taken[0][1])
    by_range = re.compile(r"Index (Only )?Scan using (bindings_key_c|holds_id_c)")
    ranges = [i for i, line in enumerate(plan) if by_range.search(line)]
    assert len(ranges) == 2, plan
    bounded = re.compile(r"Index Cond: .*\((key|id) >= \(.*\)\) AND \((key|id) < \(.*'0'::text\)\)")
    for i in ranges:
        assert bounded.search(plan[i + 1]), plan
    whole = re.compile(r"(Seq Scan|Bitmap Heap Scan) on (bindings|holds)\b")
    assert not any(whole.search(line) for line in plan), plan


def _assert_probes(plan: list[str], table: str, scope: str, key: str) -> None:
    """``plan`` reads ``table`` only by probes of its primary key on ``scope`` and ``key`` (an index
    scan whose condition has both, in a nested loop), never whole or by ``scope`` alone."""
    probe = re.compile(rf"Index (Only )?Scan using \w+ on {table}\b")
    found = [i for i, line in enumerate(plan) if probe.search(line)]
    assert found, plan
    for i in found:
        assert re.search(rf"Index Cond: \(\({scope} = .*\) AND \({key} = k(_\d+)?\.v\)\)", plan[i + 1]), plan
    assert not any(re.search(rf"(Seq Scan|Bitmap Heap Scan) on {table}\b", line) for line in plan), plan


def _recorded(store: SqlStore, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[object, ...]]]:
    """The statements (and parameters) ``store`` runs from now on, as they are run."""
    seen: list[tuple[str, tuple[object, ...]]] = []
    run = store._exec

    def recording(cur: Cursor, sql: str, params: Sequence[object] = ()) -> object:
        seen.append((sql, tuple(params)))
        return run(cur, sql, params)

    monkeypatch.setattr(store, "_exec", recording)
    return seen


def _explain(cur: Cursor, sql: str, params: Sequence[object]) -> list[str]:
    cur.execute("EXPLAIN " + sql, params)
    return [str(row[0]) for row in cur.fetchall()]
