"""The store: one suite run against SQLite and PostgreSQL (set PIDKIT_TEST_POSTGRES_URL for the second)."""

from __future__ import annotations

import functools
import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _schema import held, raw_sql
from pidkit.errors import (
    ArkError,
    ConflictError,
    ExhaustedError,
    NoidError,
    NotFoundError,
    StoreError,
)
from pidkit.noid import Minter
from pidkit.store import Erc, ImportRejectedError, ReservedAgainError, Store, open_store
from pidkit.store.migrations import load as load_migrations
from pidkit.store.sql import SqlStore
from pidkit.store.sqlite import SqliteStore, StoreFileChangedError

NAAN = "99999"
TEMPLATE = "fk4.reedeedk"
LATEST = max(m.version for m in load_migrations())

Factory = Callable[[], tuple[str, Store]]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """A function giving fresh, empty store URLs on one backend (a file in tmp_path / a new schema)."""
    if request.param == "postgres":
        new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_postgres_url
    made: list[str] = []

    def new_url() -> str:
        path = tmp_path / f"store{len(made)}.db"
        made.append(str(path))
        return f"sqlite:///{path}"

    return new_url


@pytest.fixture
def url(backend: Callable[[], str]) -> str:
    return backend()


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    s = open_store(url)
    s.add_naan(NAAN, "Test", shoulders=["fk4"])
    yield s
    s.close()



# -- migrations --------------------------------------------------------------------------------------


def test_fresh_store_is_at_latest_schema(url: str) -> None:
    with open_store(url) as s:
        assert s.schema_version() == LATEST
        rows = raw_sql(s, "SELECT version FROM schema_version ORDER BY version")
    assert [r[0] for r in rows] == [m.version for m in load_migrations()]  # every one shipped, no more


def _statements(store: Store, call: Callable[[], object]) -> list[tuple[str, tuple[object, ...]]]:
    """The SQL statements (in the store's portable spelling, ``?`` placeholders) and parameters ``call``
    runs on ``store``."""
    assert isinstance(store, SqlStore)
    seen: list[tuple[str, tuple[object, ...]]] = []
    run = store._exec

    def recording(cur: object, sql: str, params: Sequence[object] = ()) -> object:
        seen.append((sql, tuple(params)))
        return run(cur, sql, params)  # type: ignore[arg-type]

    store._exec = recording  # type: ignore[method-assign]
    try:
        call()
    finally:
        del store._exec
    return seen


def _plan(store: Store, sql: str, params: tuple[object, ...]) -> str:
    """The plan the database makes for ``sql`` (PostgreSQL: told not to read the table whole, so that
    on a small table it still shows which index would give the order)."""
    if store.backend == "sqlite":
        return " ".join(str(r[-1]) for r in raw_sql(store, "EXPLAIN QUERY PLAN " + sql, params))
    assert isinstance(store, SqlStore)
    with store._transaction(write=False) as cur:
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("EXPLAIN " + store._q(sql), params)
        return " ".join(str(r[0]) for r in cur.fetchall())


def test_the_changes_index_serves_list_changed(url: str) -> None:
    """Migrations 0005, 0008 and 0009: list_changed's filter and order are served by one index on both
    backends.  The plan of the statement list_changed runs reads bindings_by_updated (kind, updated,
    key, …) with no separate sort for its ORDER BY, and migration 0005's narrower bindings_by_update
    (kind, updated, key) is gone (SQLite: 0008; PostgreSQL: 0009, once list_changed ordered keys by
    code point, as bindings_by_updated does)."""
    import datetime as dt

    with open_store(url) as s:
        s.add_naan(NAAN)
        since = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        for after in (None, (since, f"ark:{NAAN}/x")):
            [(sql, params)] = _statements(s, functools.partial(s.list_changed, since=since, after=after,
                                                               limit=10))
            plan = _plan(s, sql, params)
            assert "bindings_by_updated" in plan, plan
            assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan
        if s.backend == "sqlite":
            names = raw_sql(s, "SELECT name FROM sqlite_master WHERE type = 'index'")
        else:
            names = raw_sql(s, "SELECT indexname FROM pg_indexes WHERE tablename = 'bindings' "
                            "AND schemaname = current_schema()")
        assert ("bindings_by_update",) not in names and ("bindings_by_updated",) in names
        assert raw_sql(s, "SELECT name FROM schema_version WHERE version = 5") == [("changes_index",)]
        assert raw_sql(s, "SELECT name FROM schema_version WHERE version = 8") == [("leaner_indexes",)]
        assert raw_sql(s, "SELECT name FROM schema_version WHERE version = 9") == [("code_point_order",)]


def test_lists_order_keys_by_code_point_whatever_the_collation(icu_postgres_url: str) -> None:
    """Migration 0009: on a PostgreSQL database whose collation is not code point order (ICU en-US:
    a < B < b), a list of bindings and the changes feed still give keys in code point order (B < a < b),
    as SQLite and a Find do, and their cursors walk every key once.  So a cursor stays good when a store
    moves between backends or databases.  A list under a NAAN and shoulder reads the order from
    bindings_by_naan, made again in that order.  Overrides made at one time are listed in that order
    too."""
    import datetime as dt

    url = icu_postgres_url
    names = ["fk4b", "fk4B", "fk4a", "fk4A1", "fk4a1", "fk4Z", "fk4z", "fk40"]
    keys = sorted(f"ark:{NAAN}/{n}" for n in names)  # code point order
    assert keys != sorted(keys, key=str.lower)  # … which differs from a case-blind one
    with open_store(url) as s:
        s.add_naan(NAAN, shoulders=["fk4"])
        s.import_jsonl(json.dumps({"text": k, "target": f"https://example.org/{k[-4:]}"})
                       for k in reversed(keys))  # one import: one updated time for all
        for scope in ({}, {"naan": NAAN}, {"naan": NAAN, "shoulder": "fk4"}):
            assert [b.key for b in s.list_bindings(**scope, limit=100)] == keys
            walked: list[str] = []
            after: str | None = None
            while page := s.list_bindings(**scope, after=after, limit=3):
                walked += [b.key for b in page]
                after = page[-1].key
            assert walked == keys, scope
        changed = s.list_changed(limit=100)
        assert [b.key for b in changed] == keys and len({b.updated for b in changed}) == 1
        walked = []
        cursor: tuple[dt.datetime, str] | None = None
        while page := s.list_changed(after=cursor, limit=3):
            walked += [b.key for b in page]
            assert page[-1].updated is not None
            cursor = (page[-1].updated, page[-1].key)
        assert walked == keys
        [(sql, params)] = _statements(s, lambda: s.list_bindings(NAAN, shoulder="fk4", limit=3))
        plan = _plan(s, sql, params)
        assert "bindings_by_naan" in plan and "Sort" not in plan, plan
        forced = sorted(f"ark:12345/{n}" for n in ("b", "B", "a", "Z"))  # NAAN 12345: not registered
        lines = (json.dumps({"text": k, "target": "https://example.org/f"}) for k in reversed(forced))
        s.import_jsonl(lines, force=True)
        overrides = s.list_overrides()
        assert [o.key for o in overrides] == forced and len({o.at for o in overrides}) == 1


def test_reopen_keeps_data_and_does_not_migrate_again(url: str) -> None:
    with open_store(url) as s:
        s.add_naan("12345", "Kept")
    with open_store(url) as s:
        assert s.schema_version() == LATEST
        assert s.get_naan("12345").name == "Kept"
        assert len(raw_sql(s, "SELECT version FROM schema_version")) == len(load_migrations())


def test_bad_url() -> None:
    with pytest.raises(StoreError, match="unsupported store URL"):
        open_store("mysql://localhost/x")


# -- NAANs and minters -------------------------------------------------------------------------------


def test_naans(store: Store) -> None:
    store.add_naan("12345", "Other")
    store.add_shoulder("12345", "b5")
    assert [n.naan for n in store.list_naans()] == ["12345", NAAN]
    assert store.get_naan("12345").shoulders == ("b5",)
    assert store.get_naan(NAAN).shoulders == ("fk4",)
    with pytest.raises(ConflictError):
        store.add_naan(NAAN)
    with pytest.raises(NotFoundError):
        store.get_naan("00000")
    with pytest.raises(ArkError):
        store.add_naan("12 45")


def test_naan_stays_a_string(store: Store) -> None:
    store.add_naan("01234")
    assert store.get_naan("01234").naan == "01234"


def test_create_minter(store: Store) -> None:
    m = store.create_minter("m1", naan=NAAN, template="b5.sdd", seed=42)
    assert (m.name, m.naan, m.template, m.seed, m.counter) == ("m1", NAAN, "b5.sdd", 42, 0)
    assert store.get_minter("m1") == m
    assert "b5" in store.get_naan(NAAN).shoulders  # the template's prefix becomes a shoulder
    assert [x.name for x in store.list_minters()] == ["m1"]
    random_seed = store.create_minter("m2", naan=NAAN, template=TEMPLATE)
    assert random_seed.seed >= 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        pytest.param({"naan": NAAN, "template": "bad"}, NoidError, id="bad-template"),
        pytest.param({"naan": "00000", "template": TEMPLATE}, NotFoundError, id="unknown-naan"),
    ],
)
def test_create_minter_refused(store: Store, kwargs: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        store.create_minter("m", **kwargs)  # type: ignore[arg-type]


def test_duplicate_minter_name(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE)
    with pytest.raises(ConflictError):
        store.create_minter("m", naan=NAAN, template=TEMPLATE)


# -- minting -----------------------------------------------------------------------------------------


def test_mint_follows_the_minter_and_records(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=7)
    reference = Minter(TEMPLATE, NAAN, seed=7)
    expected = [f"ark:{NAAN}/{reference.mint_at(i)}" for i in range(25)]
    got = store.mint("m", 10) + store.mint("m", 15, batch_size=4)
    assert got == expected
    assert store.get_minter("m").counter == 25
    assert store.minted_count("m") == 25
    assert store.minted_count() == 25


def test_mint_unknown_minter(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.mint("nope", 1)


def test_holds_are_skipped(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=7)
    reference = Minter(TEMPLATE, NAAN, seed=7)
    first, second, third = (reference.mint_at(i) for i in range(3))
    assert store.add_hold("m", second, f"ark:/{NAAN}/{third}") == 2
    assert store.add_hold(NAAN, second) == 0  # already held
    got = store.mint("m", 2)
    assert got == [f"ark:{NAAN}/{first}", f"ark:{NAAN}/{reference.mint_at(3)}"]
    assert store.get_minter("m").counter == 4


def test_a_mint_skips_an_id_that_a_bound_ark_qualifies(store: Store) -> None:
    """An ARK with qualifiers is contained in the ARK without them (draft-kunze-ark-40 §2.5): once
    ``X/chapter1`` or ``X.v2`` is bound (in any status), ``X`` is given out and never minted; an id that
    merely begins like a bound Name (a longer Name, ``X0``) is not."""
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=11)
    reference = Minter(TEMPLATE, NAAN, seed=11)
    first, second, third, fourth = (reference.mint_at(i) for i in range(4))
    store.bind(f"ark:{NAAN}/{first}/chapter1", "https://other.org/1")
    store.bind(f"ark:{NAAN}/{second}.v2", None, status="reserved")
    store.bind(f"ark:{NAAN}/{third}0", "https://other.org/3", force=True)
    store.bind(f"ark:{NAAN}/{third}*x", "https://other.org/3", force=True)
    assert store.mint("m", 2) == [f"ark:{NAAN}/{third}", f"ark:{NAAN}/{fourth}"]


def test_a_mint_skips_an_id_that_a_held_ark_qualifies(store: Store) -> None:
    """A deleted reserved ``X.v2`` or ``X/c`` stays held, and ``X`` stays given out with it."""
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=13)
    reference = Minter(TEMPLATE, NAAN, seed=13)
    first, second, third, fourth = (reference.mint_at(i) for i in range(4))
    for ark in (f"ark:{NAAN}/{first}.v2", f"ark:{NAAN}/{second}/c"):
        store.bind(ark, None, status="reserved")
        store.delete("ark", ark)
    store.add_hold(NAAN, f"{third}0")  # a longer Name: holds nothing of third
    assert store.get_binding(f"ark:{NAAN}/{first}.v2") is None
    assert store.mint("m", 2) == [f"ark:{NAAN}/{third}", f"ark:{NAAN}/{fourth}"]


def test_a_name_without_shoulder_is_taken_by_the_arks_qualifying_it(store: Store) -> None:
    """The same for a Name without a shoulder, and only for the Names the bound ARKs qualify."""
    store.bind(f"ark:{NAAN}/xyz/c", "https://e.org/", force=True)
    store.bind(f"ark:{NAAN}/fk4x1.v", "https://e.org/", force=True)
    with store._transaction(write=False) as cur:  # type: ignore[attr-defined]
        taken = store._taken(cur, NAAN, ["xyz", "xy", "xyzz", "fk4x1", "fk4x", "fk4x10"])  # type: ignore[attr-defined]
    assert taken == {"xyz", "fk4x1"}


def test_hold_refuses_other_naan(store: Store) -> None:
    with pytest.raises(StoreError, match="not under NAAN"):
        store.add_hold(NAAN, "ark:12345/x")
    with pytest.raises(NotFoundError):
        store.add_hold("neither-minter-nor-naan", "x")


def test_exhaustion(store: Store) -> None:
    store.create_minter("small", naan=NAAN, template="b5.sd", seed=1)
    with pytest.raises(ExhaustedError):
        store.mint("small", 11)
    assert store.minted_count("small") == 0  # all or nothing per batch
    ids = store.mint("small", 10)
    assert sorted(ids) == [f"ark:{NAAN}/b5{d}" for d in "0123456789"]
    with pytest.raises(ExhaustedError):
        store.mint("small", 1)
    assert store.get_minter("small").counter == 10


def test_two_minters_same_state_never_repeat(store: Store) -> None:
    store.create_minter("a", naan=NAAN, template=TEMPLATE, seed=3)
    store.create_minter("b", naan=NAAN, template=TEMPLATE, seed=3)
    a = store.mint("a", 50)
    b = store.mint("b", 50)
    assert not set(a) & set(b)


def test_tombstoned_and_bound_ids_are_never_minted(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=11)
    reference = Minter(TEMPLATE, NAAN, seed=11)
    ids = [f"ark:{NAAN}/{reference.mint_at(i)}" for i in range(4)]
    store.tombstone(ids[0], "withdrawn before minting")
    store.bind(ids[2], "https://example.org/2")
    assert store.mint("m", 2) == [ids[1], ids[3]]


def _tables_read(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The tables each of ``store``'s mint batches reads to check its candidates, recorded."""
    assert isinstance(store, SqlStore)
    cls = type(store)
    original, read = cls._taken_in, []

    def recorded(self: SqlStore, cur: Any, naan: str, ids: Sequence[str], tables: Sequence[str]) -> set[str]:
        read.append(list(tables))
        return original(self, cur, naan, ids, tables)

    monkeypatch.setattr(cls, "_taken_in", recorded)
    return read


def test_a_mint_reads_only_the_tables_that_can_hold_its_candidates(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Holds and bindings are read only once the NAAN has one (another NAAN's do not count), and a
    held, a bound and a tombstoned id are each skipped once they are there."""
    read = _tables_read(store, monkeypatch)
    store.add_naan("12345")
    store.add_hold("12345", "ark:12345/fk4x")
    store.bind("ark:12345/fk4y", "https://example.org/y")
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=5)
    reference = Minter(TEMPLATE, NAAN, seed=5)
    ids = [f"ark:{NAAN}/{reference.mint_at(i)}" for i in range(8)]

    def mint(n: int, reads: list[str]) -> list[str]:
        read.clear()
        minted = store.mint("m", n)
        assert read and all(tables == reads for tables in read)
        return minted

    assert mint(1, ["minted"]) == ids[:1]
    store.add_hold("m", ids[2])
    assert mint(2, ["minted", "holds"]) == [ids[1], ids[3]]
    store.bind(ids[5], "https://example.org/5")
    assert mint(1, ["minted", "holds", "bindings"]) == [ids[4]]
    store.tombstone(ids[7], "withdrawn before minting")
    assert mint(1, ["minted", "holds", "bindings"]) == [ids[6]]
    assert len(set(mint(20, ["minted", "holds", "bindings"])) | set(ids)) == 8 + 20


def test_a_mint_skips_the_ids_a_big_first_import_bound(store: Store) -> None:
    """An import into a store without bindings that writes its rows in bulk (several chunks) still
    records their NAAN among the bound ones, so a mint then reads the bindings."""
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=9)
    reference = Minter(TEMPLATE, NAAN, seed=9)
    ids = [f"ark:{NAAN}/{reference.mint_at(i)}" for i in range(6003)]
    lines = [json.dumps({"text": ark, "target": "https://example.org/"}) for ark in ids[3:]]
    lines[4321] = json.dumps({"text": ids[0], "status": "reserved"})
    lines[5999] = json.dumps({"text": ids[1], "target": "https://example.org/1"})
    assert store.import_jsonl(lines).created == 6000
    assert store.mint("m", 1) == [ids[2]]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    template=st.sampled_from(["fk4.reedeedk", "b5.rdddk", "x.sddd", "q.zd", "c.reek"]),
    seed=st.integers(0, 2**62),
    n=st.integers(1, 300),
    batch=st.integers(1, 120),
)
def test_property_mint_n_gives_n_distinct(template: str, seed: int, n: int, batch: int) -> None:
    with open_store("sqlite:///:memory:") as s:
        s.add_naan(NAAN)
        s.create_minter("m", naan=NAAN, template=template, seed=seed)
        ids = s.mint("m", n, batch_size=batch)
        assert len(ids) == n
        assert len(set(ids)) == n
        assert s.minted_count("m") == n


# -- bindings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "ark:99999/fk4x1",
        "ark:/99999/fk4x1",
        "ARK:/99999/fk4-x1",
        "https://n2t.net/ark:/99999/fk4x1",
        "ark:99999/fk4-x-1",
        "ark:99999/fk4x1?info",
    ],
)
def test_lookup_by_any_spelling(store: Store, spelling: str) -> None:
    store.bind("ark:/99999/fk4-x1", "https://example.org/x1")
    found = store.get_binding(spelling)
    assert found is not None
    assert found.key == "ark:99999/fk4x1"
    assert found.text == "ark:/99999/fk4-x1"


def test_bind_create_update(store: Store) -> None:
    erc = Erc(who="Austin, Larry", what="A Study of Rhythm", when="1952")
    support = Erc(who="UNT Libraries", what="Permanent: Stable Content:", when="20081203")
    b = store.bind("ark:99999/fk4x1", "https://example.org/1", erc=erc, support=support)
    assert (b.status, b.naan, b.shoulder, b.erc, b.support) == ("public", NAAN, "fk4", erc, support)
    assert b.created is not None
    assert b.created.utcoffset() is not None
    time.sleep(0.002)
    b2 = store.bind("ark:99999/fk4-x1", "https://example.org/2", passthrough=True)
    assert b2.target == "https://example.org/2"
    assert b2.passthrough
    assert b2.created == b.created
    assert b2.text == "ark:99999/fk4x1"  # the first text stays
    assert b2.updated is not None
    assert b.updated is not None
    assert b2.updated > b.updated
    assert store.get_binding("ark:99999/fk4x1") == b2
    assert store.get_binding("ark:99999/fk4x2") is None


def test_reserved_binding(store: Store) -> None:
    b = store.bind("ark:99999/fk4r1", None, status="reserved")
    assert b.status == "reserved"
    res = store.resolve("ark:99999/fk4r1")
    assert res is not None
    assert res.location is None
    with pytest.raises(StoreError, match="needs a target"):
        store.bind("ark:99999/fk4r2", None)


@pytest.mark.parametrize(
    "target",
    [
        "javascript:alert(1)",
        "/relative/path",
        "example.org/x",
        "ftp://example.org/x",
        "https://example.org/a b",
        "https://example.org/a\nb",
        "https://example.org/\x00",
        "https:///nohost",
        "data:text/html,hi",
    ],
    ids=repr,
)
def test_bad_targets_refused(store: Store, target: str) -> None:
    with pytest.raises(StoreError):
        store.bind("ark:99999/fk4x1", target)
    assert store.get_binding("ark:99999/fk4x1") is None


def test_bad_ark_refused(store: Store) -> None:
    with pytest.raises(ArkError):
        store.bind("not an ark", "https://example.org/")


def test_passthrough_resolution(store: Store) -> None:
    store.bind("ark:99999/fk4p1", "https://example.org/obj", passthrough=True)
    store.bind("ark:99999/fk4n1", "https://example.org/nopass")
    exact = store.resolve("ark:/99999/fk4-p1")
    assert exact is not None
    assert exact.exact
    assert exact.location == "https://example.org/obj"
    deep = store.resolve("ark:99999/fk4p1/chapter/2.pdf")
    assert deep is not None
    assert deep.binding.key == "ark:99999/fk4p1"
    assert deep.suffix == "/chapter/2.pdf"
    assert deep.location == "https://example.org/obj/chapter/2.pdf"
    assert store.resolve("ark:99999/fk4n1/chapter") is None  # no passthrough
    assert store.resolve("ark:99999/fk4zz") is None


def test_passthrough_picks_longest_ancestor(store: Store) -> None:
    store.bind("ark:99999/fk4p1", "https://example.org/a", passthrough=True)
    store.bind("ark:99999/fk4p1/b", "https://example.org/b", passthrough=True)
    res = store.resolve("ark:99999/fk4p1/b/c")
    assert res is not None
    assert (res.binding.key, res.suffix) == ("ark:99999/fk4p1/b", "/c")


def test_tombstone(store: Store) -> None:
    store.bind("ark:99999/fk4t1", "https://example.org/t", passthrough=True)
    t = store.tombstone("ark:99999/fk4-t1", "object destroyed")
    assert t.is_tombstoned
    assert t.tombstone_reason == "object destroyed"
    assert t.tombstoned_at is not None
    assert t.target == "https://example.org/t"  # kept for the record, never redirected to
    with pytest.raises(ConflictError):
        store.bind("ark:99999/fk4t1", "https://example.org/new")
    with pytest.raises(ConflictError):
        store.bind("ark:/99999/fk4-t1", None, status="reserved")
    again = store.tombstone("ark:99999/fk4t1", "second reason")
    assert again.tombstone_reason == "object destroyed"
    res = store.resolve("ark:99999/fk4t1")
    assert res is not None
    assert res.location is None
    assert store.resolve("ark:99999/fk4t1/sub") is None  # a tombstone passes nothing through
    assert "status: tombstoned" in t.to_anvl()
    with pytest.raises(StoreError):
        store.tombstone("ark:99999/fk4t2", "  ")


def test_list_bindings_keyset_pagination(store: Store) -> None:
    store.add_shoulder(NAAN, "b5")
    keys = [f"ark:99999/fk4k{i:02d}" for i in range(7)] + ["ark:99999/b5k1"]
    for key in keys:
        store.bind(key, "https://example.org/")
    seen: list[str] = []
    after = None
    while True:
        page = store.list_bindings(NAAN, shoulder="fk4", after=after, limit=3)
        seen += [b.key for b in page]
        if len(page) < 3:
            break
        after = page[-1].key
    assert seen == sorted(keys[:7])
    assert [b.key for b in store.list_bindings(NAAN)] == sorted(keys)
    assert store.list_bindings("12345") == []


def test_other_kinds(store: Store) -> None:
    b = store.bind_id("uuid", "0E4A9C1E-6B1F-4C3A-9D2B-1A2B3C4D5E6F", "https://example.org/u")
    assert b.key == "0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f"
    assert store.get_id("uuid", "0e4a9c1e6b1f4c3a9d2b1a2b3c4d5e6f") == b
    store.bind_id("llid", "AAECAwQFBgc", "https://example.org/l")
    found = store.find_ids("AAECAwQFBgc")
    assert [(x.kind, x.target) for x in found] == [("llid", "https://example.org/l")]
    assert store.find_ids("nothing-bound-here") == []
    with pytest.raises(StoreError, match="unknown id kind"):
        store.bind_id("isbn", "x", "https://example.org/")
    assert store.list_bindings(kind="uuid") == [b]


# -- export / import ---------------------------------------------------------------------------------


def _fill(store: Store) -> None:
    store.bind(
        "ark:/99999/fk4-e1",
        "https://example.org/e1",
        erc=Erc("Ann", "Ünïcode ✓", "2024", ""),
        support=Erc("Lib", "Permanent", "2024", "https://example.org/policy"),
        passthrough=True,
    )
    store.bind("ark:99999/fk4e2", None, status="reserved")
    store.bind("ark:99999/fk4e3", "https://example.org/e3")
    store.tombstone("ark:99999/fk4e3", "gone")
    store.bind_id("uuid", "0e4a9c1e-6b1f-4c3a-9d2b-1a2b3c4d5e6f", "https://example.org/u")


def test_export_import_round_trip(store: Store, backend: Callable[[], str]) -> None:
    _fill(store)
    out = io.StringIO()
    assert store.export_jsonl(out) == 4
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert all(json.loads(line)["key"] for line in lines)
    with open_store(backend()) as fresh:
        fresh.add_naan(NAAN)  # an ARK binding is made under a NAAN the store serves (or with force)
        report = fresh.import_jsonl(io.StringIO(out.getvalue()))
        assert (report.lines, report.created, report.updated) == (4, 4, 0)
        for kind in ("ark", "uuid"):
            assert fresh.list_bindings(kind=kind) == store.list_bindings(kind=kind)
        again = io.StringIO()
        fresh.export_jsonl(again)
        assert again.getvalue() == out.getvalue()
        # re-importing the same file updates, and a tombstone stays a tombstone
        report = fresh.import_jsonl(io.StringIO(out.getvalue()))
        assert (report.created, report.updated) == (0, 3)


def test_import_bad_lines_writes_nothing(store: Store) -> None:
    good = json.dumps(
        {"kind": "ark", "text": "ark:99999/fk4g1", "target": "https://example.org/", "status": "public"}
    )
    lines = [
        good,
        "{not json",
        json.dumps({"kind": "ark", "text": "ark:99999/fk4g2", "target": "javascript:x", "status": "public"}),
        "",
        json.dumps({"kind": "ark", "text": "ark:99999/fk4g3", "target": None, "status": "public"}),
        json.dumps(
            {"kind": "ark", "text": "ark:99999/fk4g4", "key": "ark:99999/other", "status": "reserved"}
        ),
        good.replace("fk4g1", "fk4g5"),
    ]
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(io.StringIO("\n".join(lines) + "\n"))
    assert [line for line, _ in info.value.problems] == [2, 3, 5, 6]
    assert info.value.line == 2
    assert store.list_bindings() == []


def test_import_refuses_what_bind_refuses_unless_forced(store: Store) -> None:
    """A line that creates an ARK binding passes bind's rule (NAAN registered, NOID check character
    right for a k minter of its shoulder); force imports it and records each override."""
    store.create_minter("m", naan=NAAN, template="fk4.reedeedk")
    good, wrong = "ark:99999/fk4bb2bb24", "ark:99999/fk4bb2bb2x"  # check character '4'

    def line(text: str) -> str:
        return json.dumps({"text": text, "target": "https://e.org/x"})

    lines = [line(good), line("ark:12345/zz1"), line(wrong)]
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(lines)
    assert list(info.value.problems) == [
        (2, "NAAN 12345 is not registered in this store"),
        (3, "check character 'x' is wrong for template fk4.reedeedk (expected '4') (minter m)"),
    ]
    assert info.value.overridable == {2, 3}
    assert store.list_bindings() == [] and store.list_overrides() == []  # all or nothing
    report = store.import_jsonl(lines, force=True)
    assert (report.created, report.updated) == (3, 0)
    assert [(o.key, o.reason.split(" (")[0]) for o in store.list_overrides()] == [
        ("ark:12345/zz1", "NAAN 12345 is not registered in this store"),
        ("ark:99999/fk4bb2bb2x", "check character 'x' is wrong for template fk4.reedeedk"),
    ]
    # an update of a binding already made (forced or not) is not asked again
    again = [json.dumps({"text": "ark:12345/zz1", "target": "https://e.org/y"})]
    assert store.import_jsonl(again).updated == 1
    assert len(store.list_overrides()) == 2


def test_import_refuses_to_rebind_a_tombstone(store: Store) -> None:
    store.tombstone("ark:99999/fk4d1", "gone")
    lines = [
        json.dumps({"kind": "ark", "text": text, "target": "https://e.org/", "status": "public"})
        for text in ("ark:99999/fk4d2", "ark:99999/fk4-d1")
    ]
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(lines)
    assert [line for line, _ in info.value.problems] == [2]
    assert store.get_binding("ark:99999/fk4d2") is None  # rolled back


def test_import_applies_lines_in_order(store: Store) -> None:
    def line(text: str, status: str = "public", **extra: str) -> str:
        return json.dumps({"text": text, "target": "https://e.org/" + text[-2:], "status": status, **extra})

    tomb = {"tombstone_reason": "gone", "tombstoned_at": "2024-01-01T00:00:00Z"}
    lines = [
        line("ark:99999/fk4o1"),
        json.dumps({"text": "ark:99999/fk4-o1", "target": "https://e.org/again"}),  # same key: last wins
        line("ark:99999/fk4o2", "tombstoned", **tomb),
    ]
    report = store.import_jsonl(lines)
    assert (report.lines, report.created, report.updated) == (3, 2, 1)
    first = store.get_binding("ark:99999/fk4o1")
    assert first is not None and first.target == "https://e.org/again"
    # a tombstone imported by an earlier line is not rebound by a later one of the same file
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl([line("ark:99999/fk4o3", "tombstoned", **tomb), line("ark:99999/fk4o3")])
    assert [n for n, _ in info.value.problems] == [2]
    assert store.get_binding("ark:99999/fk4o3") is None  # rolled back


def test_import_many_lines(store: Store) -> None:
    """20,000 lines (more than one lookup/write chunk, and past psycopg's prepare threshold) import
    in one transaction; a re-import updates them all.  Speed is measured in benchmarks/bench_mint.py."""
    n = 20_000
    lines = [json.dumps({"text": f"ark:99999/fk4m{i}", "target": f"https://e.org/{i}"}) for i in range(n)]
    report = store.import_jsonl(lines)
    assert (report.lines, report.created, report.updated) == (n, n, 0)
    assert raw_sql(store, "SELECT COUNT(*) FROM bindings") == [(n,)]
    b = store.get_binding("ark:99999/fk4m12345")
    assert b is not None and b.target == "https://e.org/12345"
    store.tombstone("ark:99999/fk4m777", "gone")
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(lines)
    assert [n for n, _ in info.value.problems] == [778]
    report = store.import_jsonl(lines[:777] + lines[778:])
    assert (report.created, report.updated) == (0, n - 1)


def test_sqlite_reads_do_not_wait_for_a_write_transaction(tmp_path: Path) -> None:
    """Reads use their thread's own connection: a write transaction held open does not block them."""
    import threading

    from pidkit.store.sqlite import SqliteStore

    store = SqliteStore(str(tmp_path / "r.db"))
    store.add_naan(NAAN)
    store.bind("ark:99999/fk4r1", "https://e.org/r1")
    seen: list[str | None] = []
    with store._transaction(write=True) as cur:  # this thread holds the write lock and SQLite's
        store._exec(cur, "UPDATE bindings SET target = 'https://e.org/new'")

        def read() -> None:
            b = store.get_binding("ark:99999/fk4r1")
            seen.append(None if b is None else b.target)

        reader = threading.Thread(target=read)
        reader.start()
        reader.join(timeout=10)
        assert not reader.is_alive()
    assert seen == ["https://e.org/r1"]  # the committed state, not the open transaction's
    assert store.get_binding("ark:99999/fk4r1") == store.get_binding("ark:99999/fk4r1")
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.get_binding("ark:99999/fk4r1")


def test_sqlite_memory_store_is_shared_by_threads() -> None:
    """A private ``:memory:`` database keeps one connection: every thread sees the same data."""
    import threading

    with open_store("sqlite:///:memory:") as store:
        store.add_naan(NAAN)
        store.bind("ark:99999/fk4m1", "https://e.org/m1")
        targets: list[str | None] = []

        def read() -> None:
            b = store.get_binding("ark:99999/fk4m1")
            targets.append(None if b is None else b.target)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert targets == ["https://e.org/m1"] * 4


# -- API keys ----------------------------------------------------------------------------------------


def test_api_keys(store: Store) -> None:
    key, secret = store.create_api_key(NAAN, "fk4", label="ci")
    assert secret.startswith(f"pk_{key.key_id}_")
    assert (key.naan, key.shoulder, key.label, key.revoked) == (NAAN, "fk4", "ci", False)
    stored = raw_sql(store, "SELECT secret_hash FROM api_keys WHERE key_id = ?", (key.key_id,))
    import hashlib

    assert stored == [(hashlib.sha256(secret.encode()).hexdigest(),)]
    dump = repr(raw_sql(store, "SELECT * FROM api_keys"))
    assert secret not in dump
    assert secret.split("_", 2)[2] not in dump  # the random part may itself hold "_"
    assert store.verify_api_key(secret) == key
    assert store.verify_api_key(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert store.verify_api_key("pk_0000000000000000_" + "A" * 43) is None
    assert store.verify_api_key("garbage") is None
    assert key.allows(NAAN, "fk4")
    assert not key.allows(NAAN, "b5")
    assert not key.allows("12345", "fk4")
    wide, _ = store.create_api_key(NAAN)
    assert wide.allows(NAAN, "b5")
    assert [k.key_id for k in store.list_api_keys()] == [key.key_id, wide.key_id]
    revoked = store.revoke_api_key(key.key_id)
    assert revoked.revoked
    assert not revoked.allows(NAAN, "fk4")
    assert store.verify_api_key(secret) is None
    assert store.revoke_api_key(key.key_id).revoked_at == revoked.revoked_at  # idempotent
    with pytest.raises(NotFoundError):
        store.revoke_api_key("nope")


# -- concurrency and crashes -------------------------------------------------------------------------

WORKER = """
import sys
from pidkit.store import open_store
url, name, n, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open_store(url) as s:
    for ids in s.mint_batches(name, n, batch_size=batch):
        sys.stdout.write("\\n".join(ids) + "\\n")
        sys.stdout.flush()
"""


def _worker(
    url: str, name: str, n: int, batch: int, *, stderr: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, url, name, str(n), str(batch)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


@pytest.mark.slow
def test_multi_process_minting(url: str) -> None:
    with open_store(url) as s:
        s.add_naan(NAAN)
        s.create_minter("m", naan=NAAN, template=TEMPLATE, seed=5)
    procs = [_worker(url, "m", 2000, 100) for _ in range(4)]
    reported: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        reported += out.split()
    assert len(reported) == 8000
    assert len(set(reported)) == 8000
    with open_store(url) as s:
        minted = {f"ark:{NAAN}/{r[0]}" for r in raw_sql(s, "SELECT id FROM minted WHERE minter = ?", ("m",))}
        assert set(reported) == minted
        assert s.get_minter("m").counter == 8000


def test_concurrent_first_open_migrates_once(backend: Callable[[], str]) -> None:
    url = backend()
    code = "import sys; from pidkit.store import open_store; open_store(sys.argv[1]).close()"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with open_store(url) as s:
        assert len(raw_sql(s, "SELECT version FROM schema_version")) == len(load_migrations())


def test_a_store_at_the_current_schema_opens_beside_a_writer(url: str) -> None:
    """Opening a store that has every migration only reads its version: it neither waits for a writer
    (SQLite: it waited 30 s and failed, "database is locked", while an import ran) nor for the migration
    lock; it answers reads at once.  A store that lacks a migration still takes the lock (test_upgrade)."""
    with open_store(url) as s:
        s.add_naan(NAAN, "Test")
        s.bind(f"ark:{NAAN}/x", "https://example.org/x")
    from pidkit.store.postgres import MIGRATION_LOCK

    # another process writing (SQLite: as a long import does), or migrating any store of the database
    with held(url, "SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,)):
        start = time.monotonic()
        with open_store(url) as s:
            b = s.get_binding(f"ark:{NAAN}/x")
            assert s.migrated_from == max(m.version for m in load_migrations())
        assert time.monotonic() - start < 5
    assert b is not None and b.target == "https://example.org/x"


def test_first_open_waits_for_a_rollback_mode_writer(tmp_path: Path) -> None:
    """Converting to WAL while another connection holds the reserved lock fails at once in SQLite
    (the busy handler is not called): the store retries instead of failing (the race CI hit when four
    processes opened one fresh file)."""
    path = str(tmp_path / "fresh.db")
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE t(x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        start = time.monotonic()
        with SqliteStore(path) as s:
            assert time.monotonic() - start >= 0.2  # it waited for the writer, and then it opened
            assert raw_sql(s, "PRAGMA journal_mode") == [("wal",)]
            assert len(raw_sql(s, "SELECT version FROM schema_version")) == len(load_migrations())
    finally:
        release.join()
        other.close()


def _settled_minter(store: Store, name: str) -> tuple[int, list[tuple[object, ...]]]:
    """A minter's counter and its minted rows, read in one transaction that first takes the minter's
    row lock.  A client killed just after it sent COMMIT leaves the server committing its mint for a
    moment: two separate reads could fall on either side of that commit (a CI run read the counter
    before it and the minted rows after it).  The lock waits for that transaction to end."""
    assert isinstance(store, SqlStore)
    with store._transaction(write=True) as cur:
        store._exec(cur, "UPDATE minters SET counter = counter WHERE name = ?", (name,))
        store._exec(cur, "SELECT counter FROM minters WHERE name = ?", (name,))
        (counter,) = cur.fetchone()
        store._exec(cur, "SELECT id, position FROM minted WHERE minter = ?", (name,))
        rows = [tuple(r) for r in cur.fetchall()]
    return int(counter), rows


@pytest.mark.slow
def test_kill_during_mint_leaves_a_consistent_store(url: str) -> None:
    with open_store(url) as s:
        s.add_naan(NAAN)
        s.create_minter("m", naan=NAAN, template=TEMPLATE, seed=9)
    with _worker(url, "m", 1_000_000, 500, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # minting has begun
        time.sleep(random.uniform(0.05, 0.8))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()  # through the buffer readline() filled (communicate() would bypass it)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    with open_store(url) as s:
        counter, rows = _settled_minter(s, "m")
        assert 0 < counter < 1_000_000
        positions = sorted(int(str(r[1])) for r in rows)
        assert positions == list(range(counter))  # counter and minted table agree
        minted = {f"ark:{NAAN}/{r[0]}" for r in rows}
        complete = rest.split("\n")[:-1]  # a line cut by the kill has no newline yet
        printed = {first.strip(), *complete}
        assert printed <= minted  # every reported id was committed
        more = s.mint("m", 2000)
        assert not set(more) & minted
        assert s.minted_count("m") == counter + 2000


# -- issue 11: updates are partial; unregistered NAANs and wrong check characters need force --------
def test_update_changes_only_the_named_fields(store: Store) -> None:
    erc = Erc(who="Austin, Larry", what="A Study of Rhythm", when="1952", where="UNT")
    support = Erc(who="UNT Libraries", what="Permanent: Stable Content:", when="2008")
    store.bind("ark:99999/fk4p1", "https://example.org/1", erc=erc, support=support, passthrough=True)
    b = store.bind("ark:99999/fk4p1", "https://example.org/2")  # a new target, nothing else named
    assert (b.target, b.erc, b.support, b.passthrough, b.status) == (
        "https://example.org/2", erc, support, True, "public",
    )  # fmt: skip
    b = store.bind("ark:99999/fk4p1", erc={"who": "", "when": "1953"})  # two elements, target kept
    assert b.erc == Erc(who="", what="A Study of Rhythm", when="1953", where="UNT")
    assert (b.target, b.support) == ("https://example.org/2", support)
    b = store.bind("ark:99999/fk4p1", support=Erc(what="Temporary"))  # an Erc replaces all four
    assert b.support == Erc(what="Temporary")
    assert b.erc.what == "A Study of Rhythm"
    assert store.get_binding("ark:99999/fk4p1") == b


def test_reserved_stays_reserved_unless_named(store: Store) -> None:
    store.bind("ark:99999/fk4p2", None, status="reserved", erc={"what": "Draft"})
    b = store.bind("ark:99999/fk4p2", "https://example.org/p2")
    assert (b.status, b.target, b.erc.what) == ("reserved", "https://example.org/p2", "Draft")
    b = store.bind("ark:99999/fk4p2", status="public")
    assert (b.status, b.target) == ("public", "https://example.org/p2")
    with pytest.raises(StoreError, match="needs a target"):  # clearing the target of a public binding
        store.bind("ark:99999/fk4p2", "")
    assert store.get_binding("ark:99999/fk4p2") == b  # rolled back
    with pytest.raises(ReservedAgainError, match="never reserved again"):  # once public: for ever published
        store.bind("ark:99999/fk4p2", "", status="reserved")
    assert store.get_binding("ark:99999/fk4p2") == b


def test_unknown_erc_element_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="not an ERC element"):
        store.bind("ark:99999/fk4p3", "https://example.org/3", erc={"how": "x"})
    assert store.get_binding("ark:99999/fk4p3") is None


def test_bind_under_unregistered_naan_needs_force_and_is_recorded(store: Store) -> None:
    with pytest.raises(StoreError, match="NAAN 12345 is not registered"):
        store.bind("ark:12345/x1", "https://example.org/x1")
    assert store.get_binding("ark:12345/x1") is None
    assert store.list_overrides() == []
    b = store.bind("ark:/12345/x-1", "https://example.org/x1", force=True)
    assert b.key == "ark:12345/x1"
    [override] = store.list_overrides("ark:12345/x1")
    assert (override.kind, override.key) == ("ark", "ark:12345/x1")
    assert "NAAN 12345 is not registered" in override.reason
    assert override.at == b.updated
    store.bind("ark:99999/fk4ok", "https://example.org/ok", force=True)  # nothing to override
    assert len(store.list_overrides()) == 1


def test_wrong_check_character_on_a_k_template_shoulder_needs_force(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=5)
    good = store.mint("m", 1)[0]
    name = good.split("/")[1]
    wrong = next(c for c in "0123456789bcdfghjkmnpqrstvwxz" if c != name[-1])
    bad = f"ark:{NAAN}/{name[:-1]}{wrong}"
    with pytest.raises(StoreError, match=f"check character '{wrong}' is wrong for template {TEMPLATE}"):
        store.bind(bad, "https://example.org/bad")
    assert store.bind(good, "https://example.org/good").status == "public"
    assert store.bind(f"{good}/chapter-1.pdf", "https://example.org/good/1").status == "public"
    store.bind(bad, "https://example.org/bad", force=True)
    assert "check character" in store.list_overrides(bad)[0].reason
    store.bind("ark:99999/b5x", "https://example.org/other-shoulder")  # no k minter mints on b5


def test_hold_reduces_hyphen_like_characters_as_ark_normalization_does(store: Store) -> None:
    store.create_minter("m", naan=NAAN, template=TEMPLATE, seed=9)
    reference = Minter(TEMPLATE, NAAN, seed=9)
    first, second = reference.mint_at(0), reference.mint_at(1)
    spelled = f"{first[:3]}\u2010{first[3:6]}\u2011{first[6:]}"  # fk4‐xxx‑xxxx, as pasted from a PDF
    assert store.add_hold("m", spelled) == 1
    assert store.add_hold("m", first) == 0  # the same id
    assert store.mint("m", 1) == [f"ark:{NAAN}/{second}"]


# -- the SQLite file deleted or replaced under an open store (issue 11) -------------------------------


def _sqlite_store(path: Path) -> SqliteStore:
    store = SqliteStore(str(path))
    store.add_naan(NAAN)
    store.bind("ark:99999/fk4f1", "https://e.org/f1")
    store.create_minter("m", naan=NAAN, template="b5.sd")
    return store


def _keys(path: Path) -> list[str]:
    with open_store(f"sqlite:///{path}", create=False) as s:
        return [b.key for b in s.list_bindings()]


def _refused_everywhere(store: SqliteStore) -> None:
    """Writes and reads refused, from this thread and from a new one (which would open a connection)."""
    with pytest.raises(StoreFileChangedError, match="deleted or replaced"):
        store.bind("ark:99999/fk4f2", "https://e.org/f2")
    batches = store.mint_batches("m", 1)
    with pytest.raises(StoreFileChangedError):
        next(batches)
    with pytest.raises(StoreFileChangedError):
        store.get_binding("ark:99999/fk4f1")
    errors: list[BaseException] = []

    def read() -> None:
        try:
            store.get_binding("ark:99999/fk4f1")
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(timeout=10)
    assert [type(e) for e in errors] == [StoreFileChangedError]


def test_sqlite_file_deleted_under_the_store_refuses_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = _sqlite_store(path)
    path.unlink()
    _refused_everywhere(store)
    assert not path.exists()  # never a new empty store in its place
    store.close()


def test_sqlite_file_replaced_by_another_store_is_refused(tmp_path: Path) -> None:
    path, other = tmp_path / "s.db", tmp_path / "other.db"
    store = _sqlite_store(path)
    with open_store(f"sqlite:///{other}") as o:
        o.add_naan("12345")
    os.replace(other, path)
    _refused_everywhere(store)
    store.close()
    assert _keys(path) == []  # the replacement got nothing of ours
    with open_store(f"sqlite:///{path}", create=False) as s:
        assert [n.naan for n in s.list_naans()] == ["12345"]


def test_sqlite_file_moved_away_and_back(tmp_path: Path) -> None:
    """Back = the same file (device and inode) at the path again: everything works as before, and
    every write acknowledged is in the file."""
    path, away = tmp_path / "s.db", tmp_path / "away.db"
    store = _sqlite_store(path)
    path.rename(away)
    _refused_everywhere(store)
    with sqlite3.connect(away) as conn:  # complete by itself: the WAL left at the path was checkpointed
        assert [r[0] for r in conn.execute("SELECT key FROM bindings")] == ["ark:99999/fk4f1"]
    conn.close()
    away.rename(path)
    store.bind("ark:99999/fk4f3", "https://e.org/f3")
    assert store.get_binding("ark:99999/fk4f1") is not None
    store.close()
    assert _keys(path) == ["ark:99999/fk4f1", "ark:99999/fk4f3"]


def test_sqlite_copy_put_back_is_another_file(tmp_path: Path) -> None:
    """A copy (a restored backup) is not the file the store opened: still refused."""
    path = tmp_path / "s.db"
    store = _sqlite_store(path)
    copy = tmp_path / "copy.db"
    with sqlite3.connect(path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    path.unlink()
    copy.rename(path)
    _refused_everywhere(store)
    store.close()
    assert _keys(path) == ["ark:99999/fk4f1"]


def test_sqlite_file_replaced_unnoticed_until_close_gets_nothing_of_ours(tmp_path: Path) -> None:
    """SQLite leaves the WAL of a moved database behind at close: it must not be replayed into the
    file that replaced ours."""
    path, other = tmp_path / "s.db", tmp_path / "other.db"
    store = _sqlite_store(path)
    with open_store(f"sqlite:///{other}") as o:
        o.add_naan("12345")
    os.replace(other, path)
    store.close()
    assert _keys(path) == []
    with open_store(f"sqlite:///{path}", create=False) as s:
        assert [n.naan for n in s.list_naans()] == ["12345"]


def test_sqlite_write_to_a_file_deleted_during_it_is_not_acknowledged(tmp_path: Path) -> None:
    """The file checked again after the commit: a write that went to a deleted file raises."""
    path = tmp_path / "s.db"
    store = _sqlite_store(path)
    writing = store._transaction(write=True)
    cur = writing.__enter__()
    store._exec(cur, "UPDATE bindings SET target = 'https://e.org/lost'")
    path.unlink()
    with pytest.raises(StoreFileChangedError):
        writing.__exit__(None, None, None)  # the commit
    store.close()


def test_psycopg_warnings_never_reach_stderr_unconfigured() -> None:
    """A PostgreSQL restart mid-COPY made psycopg log "error ignored terminating <psycopg.Copy …>" through
    Python's last-resort handler, beside the CLI's one-line error (stress/test_restore_restart.py)."""
    code = (
        "import logging, pidkit.store.postgres\n"
        "logging.getLogger('psycopg').warning('error ignored terminating copy: the connection is lost')\n"
        "logging.getLogger('psycopg.pool').warning('discarding closed connection')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (0, "")


def _stamped_after_a_wait(url: str, store: Store, ark: str, write: Callable[[], object]) -> None:
    """Run ``write`` while another connection holds the lock it needs (SQLite's one writer; on
    PostgreSQL the NAAN's), release it, and check the change's time is not before the release."""
    from pidkit.store.postgres import NAAN_LOCK

    errors: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as exc:  # reported below
            errors.append(exc)

    with held(url, "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (NAAN_LOCK, NAAN)):
        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.5)
        assert worker.is_alive()  # it waits for the lock
        released = time.time()
    worker.join(30)
    assert not errors, errors
    b = store.get_binding(ark)
    assert b is not None
    at = store.history("ark", ark)[-1].at
    assert b.updated is not None and at is not None
    assert b.updated.timestamp() >= released, b.updated
    assert at.timestamp() >= released, at


@pytest.mark.parametrize("write", ["bind", "tombstone"])
def test_a_change_that_waited_for_the_lock_is_stamped_once_it_holds_it(
    url: str, store: Store, write: str
) -> None:
    """A write that waits behind another holder of its lock takes its time after the wait: stamped
    before it, its ``updated`` and history row sorted before the change it followed, and a harvest
    (``updated >= from``) missed it for good (a red-team finding)."""
    ark = f"ark:{NAAN}/fk4-waits"
    if write == "bind":
        _stamped_after_a_wait(url, store, ark, lambda: store.bind(ark, "https://example.org/w"))
    else:
        _stamped_after_a_wait(url, store, ark, lambda: store.tombstone(ark, "withdrawn"))


def test_an_import_that_waited_for_the_writer_is_stamped_once_it_writes(tmp_path: Path) -> None:
    """SQLite: the import's one time is read once it holds the write lock.  (On PostgreSQL an import
    takes its NAANs' locks chunk by chunk, after reading its time: docs/oai.md says what a harvester
    does about a long one.)"""
    url = f"sqlite:///{tmp_path}/stamp.db"
    ark = f"ark:{NAAN}/fk4-waits"
    with open_store(url) as store:
        store.add_naan(NAAN, "Test", shoulders=["fk4"])
        line = json.dumps({"text": ark, "target": "https://example.org/w"})
        _stamped_after_a_wait(url, store, ark, lambda: store.import_jsonl([line]))
