"""What a store's database holds besides its rows, as the database describes it: shared by the tests of
the loads that drop indexes and make them again (a restore into an empty store, a big import into a store
without bindings); the URL of a test's PostgreSQL schema; two writers at once, and a lock held elsewhere;
SQL run under the store's interface, and the writes of an earlier build."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest


def schema_url(base: str, schema: str) -> str:
    """The URL of ``base``'s database with ``schema`` as its search_path, for a test's store.  Its commits
    do not wait for the server to flush them to disk (``synchronous_commit=off``): what a test reads back
    is the same (the server's own view of a commit does not change), and a test never outlives a crash of
    the server (the one that restarts it runs its own cluster: ``stress/test_restore_restart.py``).

    >>> schema_url("postgresql://127.0.0.1/test", "s1")
    'postgresql://127.0.0.1/test?options=-csearch_path%3Ds1%20-csynchronous_commit%3Doff'
    """
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}%20-csynchronous_commit%3Doff"


def schema_objects(url: str) -> list[tuple[str, ...]]:
    """Every index and trigger of the store's tables, as the database describes them (SQLite's
    sqlite_master; PostgreSQL's pg_indexes and pg_trigger of the store's schema)."""
    if url.startswith("sqlite:///"):
        import sqlite3

        lite = sqlite3.connect(url[len("sqlite:///") :])
        try:
            return lite.execute("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master "
                                "WHERE type IN ('index', 'trigger') ORDER BY 1, 2").fetchall()  # fmt: skip
        finally:
            lite.close()
    import psycopg

    with psycopg.connect(url) as conn:
        indexes = conn.execute("SELECT 'index', indexname, tablename, indexdef FROM pg_indexes "
                               "WHERE schemaname = current_schema() ORDER BY 2").fetchall()  # fmt: skip
        triggers = conn.execute(
            "SELECT 'trigger', t.tgname, c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t "
            "JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal "
            "AND c.relnamespace = current_schema()::regnamespace ORDER BY 2"
        ).fetchall()
    return [tuple(r) for r in indexes + triggers]


def loads_entered(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The tables of every load that builds indexes after its rows (``_load_empty``) ``store`` enters
    from now on, recorded as it enters them."""
    entered: list[tuple[str, ...]] = []
    load = store._load_empty

    def recording(cur: object, tables: tuple[str, ...]) -> object:
        entered.append(tuple(tables))
        return load(cur, tables)

    monkeypatch.setattr(store, "_load_empty", recording)
    return entered


def waits_for(first: Callable[[], object], paused: threading.Event, release: threading.Event,
              second: Callable[[], object], patience: float = 1.0) -> bool:
    """Run ``first`` in a thread until it sets ``paused`` (and waits for ``release``); then ``second`` in
    another; return whether ``second`` was still waiting ``patience`` seconds later.  Both are then let
    finish; an error of either is raised (a deadlock PostgreSQL broke, say)."""
    errors: list[BaseException] = []

    def run(work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    one = threading.Thread(target=run, args=(first,))
    one.start()
    assert paused.wait(60)
    two = threading.Thread(target=run, args=(second,))
    two.start()
    two.join(patience)
    waited = two.is_alive()
    release.set()
    one.join(60)
    two.join(60)
    assert not one.is_alive() and not two.is_alive()
    if errors:
        raise errors[0]
    return waited


@contextlib.contextmanager
def held(url: str, statement: str, params: tuple[object, ...]) -> Iterator[None]:
    """Another connection's hold on the store for as long as the block runs, released with nothing
    written: on SQLite the database's write lock (``BEGIN IMMEDIATE``); on PostgreSQL what ``statement``
    takes in a transaction (an advisory lock, say)."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield
            conn.execute("ROLLBACK")
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url) as pg:
        pg.execute(statement, params)
        yield
        pg.rollback()


def raw_sql(store: Any, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Run SQL under the store's interface (test-only), in a write transaction; its rows, if any: a peek,
    or a store an earlier version could have written."""
    from pidkit.store.sql import SqlStore

    assert isinstance(store, SqlStore)
    with store._transaction(write=True) as cur:
        store._exec(cur, sql, params)
        return [tuple(r) for r in cur.fetchall()] if getattr(cur, "description", None) else []


@contextlib.contextmanager
def earlier_build() -> Iterator[None]:
    """Write as pidkit did before 2026-11-29, when a published binding could be made reserved again
    (its binding and history rows are what that build wrote)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pidkit.store.sql.refuse_reserving_again", lambda *args: None)
        yield
