"""What a store's database holds besides its rows, as the database describes it: shared by the tests of
the loads that drop indexes and make them again (a restore into an empty store, a big import into a store
without bindings)."""

from __future__ import annotations

from typing import Any

import pytest


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
