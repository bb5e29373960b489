"""Schema upgrades (issue 13): stores written by pidkit's own older code (``tests/data/stores/``, built by
``tools/make_old_store.py`` from the commits that shipped schema 1 and schema 2) open with this code,
upgrade in place in one transaction, keep every row, never reissue an id, pass ``check``; on SQLite (the
files themselves) and PostgreSQL (their rows copied into a schema the old migrations made)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pidkit.errors import StoreError
from pidkit.store import open_store, parse_import_line
from pidkit.store.migrations import LATEST, load

STORES = Path(__file__).parent / "data" / "stores"
OLD = [1, 2]
#: The tables of each old schema, parents first.
_OLD_TABLES = ["naans", "shoulders", "minters", "minted", "holds", "bindings", "api_keys", "overrides"]


def _info(schema: int) -> dict[str, Any]:
    info: dict[str, Any] = json.loads((STORES / f"schema{schema}.json").read_text(encoding="utf-8"))
    return info


def _sqlite_copy(schema: int, tmp_path: Path) -> str:
    path = tmp_path / f"schema{schema}.db"
    shutil.copyfile(STORES / f"schema{schema}.db", path)
    return f"sqlite:///{path}"


def _postgres_copy(schema: int, url: str) -> str:
    """A PostgreSQL schema made by the migrations up to ``schema`` (their SQL never changes once
    shipped), holding the old file's rows."""
    import psycopg

    src = sqlite3.connect(STORES / f"schema{schema}.db")
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                     "applied TEXT NOT NULL)")  # fmt: skip
        for m in load():
            if m.version > schema:
                break
            for statement in m.for_backend("postgresql"):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version VALUES (%s, %s, 'old')", (m.version, m.name))
        for table in _OLD_TABLES:
            if not src.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall():
                continue
            cur = src.execute(f"SELECT * FROM {table}")
            cols = [d[0] for d in cur.description]
            with conn.cursor().copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
                for row in cur:
                    copy.write_row(row)
    src.close()
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[int], str]:
    if request.param == "postgres":
        new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return lambda schema: _postgres_copy(schema, new_postgres_url())
    return lambda schema: _sqlite_copy(schema, tmp_path)


@pytest.mark.parametrize("schema", OLD)
def test_an_old_store_upgrades_in_place(old_store: Callable[[int], str], schema: int) -> None:
    info = _info(schema)
    assert info["schema"] == schema
    url = old_store(schema)
    with open_store(url) as store:
        assert (store.migrated_from, store.schema_version()) == (schema, LATEST)
        assert store.check() == []
        naans = set()
        for line in info["export"]:  # every binding the old code exported, unchanged
            old = parse_import_line(line).binding
            assert store.get_id(old.kind, old.key) == old
            if old.kind == "ark":
                naans.add(old.key.removeprefix("ark:").split("/")[0])
            [adopted] = store.history(old.kind, old.key)
            assert (adopted.operation, adopted.principal) == ("adopt", "system:migration-0003")
        assert naans and store.bound_naans() == frozenset(naans)  # migration 7 filled the NAANs bound under
        minted = set(info["minted"])
        assert store.minted_count() == len(minted)
        assert not minted & set(store.mint("a", 50) + store.mint("b", 50))  # never reissued
        reserved = info["minted"][1]  # reserved by the old code
        store.bind(reserved, "https://example.org/now-public", status="public")
        assert [r.operation for r in store.history("ark", reserved)] == ["adopt", "status"]
        assert store.check() == []
    with open_store(url) as again:  # a second open has nothing to do
        assert again.migrated_from == again.schema_version() == LATEST


def _snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the store (the database's own list, ``schema_version`` included) and its rows, and
    under ``""`` every object of its schema (tables, indexes, triggers, functions), read straight from the
    database (sorted by ``repr``: a NULL never meets a value in a comparison)."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url[len("sqlite:///") :])
        try:
            objects = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"), key=repr)
            names = [
                name for kind, name, _, _ in objects if kind == "table" and not name.startswith("sqlite_")
            ]
            rows = {n: sorted(conn.execute(f"SELECT * FROM {n}"), key=repr) for n in names}
        finally:
            conn.close()
        return {"": objects, **rows}
    import psycopg

    with psycopg.connect(url) as pg:
        objects = pg.execute(
            "SELECT 'relation', c.relname, c.relkind::text FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace UNION ALL "
            "SELECT 'trigger', t.tgname, t.tgrelid::regclass::text FROM pg_trigger t JOIN pg_class c "
            "ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace UNION ALL "
            "SELECT 'function', p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
            "WHERE p.pronamespace = current_schema()::regnamespace ORDER BY 1, 2, 3"
        ).fetchall()
        names = [name for kind, name, relkind in objects if kind == "relation" and relkind == "r"]
        rows = {n: sorted(pg.execute(f"SELECT * FROM {n}"), key=repr) for n in names}
    return {"": objects, **rows}


def test_a_failed_upgrade_changes_nothing(
    old_store: Callable[[int], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All pending migrations run in one transaction: one failing statement (at the end of the last
    migration, after every other statement has run) leaves schema 1 as it was — on SQLite and on
    PostgreSQL (its DDL is transactional)."""
    checked_in = (STORES / "schema1.db").read_bytes()
    url = old_store(1)
    before = _snapshot(url)
    assert max(before["schema_version"])[0] == 1 and "history" not in before
    import pidkit.store.sql as sql

    broken = [*load()]
    last = broken[-1]
    broken[-1] = type(last)(last.version, last.name, (*last.statements, "CREATE TABLE naans (x TEXT)"),
                            last.by_backend)  # fmt: skip
    monkeypatch.setattr(sql, "load_migrations", lambda: broken)
    with pytest.raises((sqlite3.OperationalError, StoreError), match=r'naans"? already exists'):
        open_store(url)
    monkeypatch.undo()
    assert _snapshot(url) == before  # no table, index, trigger, function, row or version added or changed
    assert checked_in == (STORES / "schema1.db").read_bytes()  # the checked-in file itself was never opened
    with open_store(url) as store:  # and the real upgrade still works
        assert (store.migrated_from, store.schema_version()) == (1, LATEST)
        assert store.check() == []


@pytest.fixture(params=["sqlite", "postgres"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        new_postgres_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        return new_postgres_url()
    return f"sqlite:///{tmp_path / 'empty.db'}"


def test_a_dump_of_schema_2_restores_into_schema_3(empty_url: str) -> None:
    """A dump written by the first ``pidkit dump`` (format 1, schema 2): its bindings come back with no
    reason and no extra metadata, each gets an ``adopt`` history row, nothing minted there is minted again."""
    info: dict[str, Any] = json.loads((STORES / "dump-v1-schema2.json").read_text(encoding="utf-8"))
    dump = (STORES / "dump-v1-schema2.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads(dump[0])["schema"] == 2
    with open_store(empty_url) as store:
        report = store.restore(dump)
        assert report.restored["bindings"] == len(info["export"]) == report.restored["history"]
        for line in info["export"]:
            old = parse_import_line(line).binding
            b = store.get_id(old.kind, old.key)
            assert b == old and b is not None and (b.reason, b.extra) == (None, ())
            assert [(r.operation, r.principal) for r in store.history(old.kind, old.key)] == [
                ("adopt", "system:restore")]
        assert not set(info["minted"]) & set(store.mint("a", 50))
        assert store.check() == []
