"""arklet import (pidkit.importers.arklet) from the databases arklet 0.2.3 itself made.

Fixtures (``tools/build_arklet_fixture.py``, run with arklet installed in its own virtualenv):
``arklet.sqlite3`` — arklet's migrations and models on SQLite; ``arklet.postgres.sql`` — arklet's three
tables as its migrations and models made them on PostgreSQL (``pg_dump``), loaded here into a fresh
schema.  arklet itself is not needed to run these tests.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from _importcheck import compact, mint_everything, minted_and_held, space
from pidkit import importers, noid
from pidkit.ark import Ark
from pidkit.importers import ImportRefusedError, SourceError
from pidkit.importers.arklet import import_arklet
from pidkit.store import Store, open_store

DATA = Path(__file__).parent / "data" / "importers" / "arklet"
SQLITE = DATA / "arklet.sqlite3"
POSTGRES_SQL = DATA / "arklet.postgres.sql"
#: The names tools/build_arklet_fixture.py makes on the small shoulder /t2 (with arklet's check digit).
T2 = {"ark:99999/t200", "ark:99999/t25j", "ark:99999/t2b3", "ark:99999/t2k8", "ark:99999/t2zp"}


def _arklet_rows(path: Path) -> list[tuple[str, str, str, str, str, str | None]]:
    """The fixture's ARKs read with plain SQL (independently of the importer)."""
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT ark, url, metadata, commitment, shoulder, created_at FROM ark_ark"))


@pytest.fixture
def store() -> Iterator[Store]:
    with open_store("sqlite:///:memory:") as s:
        yield s


@pytest.fixture
def arklet_postgres(new_postgres_url: Callable[[], str]) -> str:
    """A fresh PostgreSQL schema holding the arklet tables of ``arklet.postgres.sql``."""
    import psycopg

    url = new_postgres_url()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(POSTGRES_SQL.read_text())  # our own fixture script (several statements, no parameters)
    return url


@pytest.mark.parametrize("spelling", ["path", "url"])
def test_sqlite_database_imports_everything(spelling: str, store: Store) -> None:
    source = str(SQLITE) if spelling == "path" else f"sqlite:///{SQLITE}"
    report = importers.run("arklet", source, store)
    rows = _arklet_rows(SQLITE)
    assert report.count("imported") == len(rows) == 13 and report.count("refused") == 0
    assert [(n.naan, n.name, n.shoulders) for n in store.list_naans()] == [
        ("12345", "Second NAAN", ("x9",)),
        ("99999", "Test NAAN", ("c1", "t2")),
    ]
    for ark, url, metadata, commitment, _shoulder, created_at in rows:
        b = store.get_binding(f"ark:/{ark}")
        assert b is not None, ark
        assert (b.target, b.status) == ((url, "public") if url else (None, "reserved"))
        assert (b.erc.what, b.support.what) == (metadata, commitment)
        assert created_at is not None
        assert b.created == _dt.datetime.fromisoformat(created_at).replace(tzinfo=_dt.UTC)
    assert any(b.erc.what == "Café ✓ Grüße" for b in store.list_bindings("99999", limit=100))
    # arklet's minting state is the set of ARKs it made: every one is in the minted log
    assert compact(minted_and_held(store)) == {f"ark:{r[0]}" for r in rows}
    assert store.check() == []


def test_each_shoulder_gets_a_minter_of_arklets_shape(store: Store) -> None:
    importers.run("arklet", SQLITE, store)
    minters = {m.name: m for m in store.list_minters()}
    assert {n: m.template for n, m in minters.items()} == {
        "arklet-12345-x9": "x9.reeeeeeeek",
        "arklet-99999-c1": "c1.reeeeeeeek",
        "arklet-99999-t2": "t2.reeeeeeeek",
    }
    old = {f"ark:{r[0]}" for r in _arklet_rows(SQLITE)}
    new = store.mint("arklet-99999-c1", 50)
    assert not old & set(new)
    for ark in new:  # the same shape arklet mints: c1 + 8 betanumeric + NCDA check over NAAN/name
        name = Ark.parse(ark).name
        assert len(name) == 11 and noid.verify(f"99999/{name}")
    arklet_made = next(r[0] for r in _arklet_rows(SQLITE) if r[4] == "/c1" and len(r[0]) == 17)
    assert noid.verify(arklet_made)  # arklet's check digit is NCDA over the same zone


def test_minting_the_whole_remaining_space_never_returns_an_arklet_id(store: Store) -> None:
    import_arklet(str(SQLITE), store, templates={"/t2": "t2.rek"})
    assert store.get_minter("arklet-99999-t2").template == "t2.rek"
    minted = mint_everything(store, "arklet-99999-t2", limit=29)
    assert not T2 & set(minted)
    assert set(minted) | T2 == space("t2.rek", "99999")
    assert len(minted) == 24
    assert store.check() == []


@pytest.mark.postgres
def test_postgres_database_imports_everything(
    arklet_postgres: str, new_postgres_url: Callable[[], str]
) -> None:
    with open_store(new_postgres_url()) as target:
        report = importers.run("arklet", arklet_postgres, target)
        assert report.count("imported") == 13
        assert {b.key for b in target.list_bindings("99999", shoulder="t2")} >= T2
        two = [
            b for b in target.list_bindings("99999", shoulder="c1", limit=100) if "Two lines" in b.erc.what
        ]
        assert two[0].erc.what == "who: Doe, Jane\nwhat: Two lines"
        assert two[0].created is not None and two[0].created.tzinfo is not None
        assert target.check() == []
        again = importers.run("arklet", arklet_postgres, target)
        assert again.count("kept") == 13 and sum(again.restored.values()) == 0


def test_a_rerun_writes_nothing(store: Store) -> None:
    importers.run("arklet", SQLITE, store)
    seeds = {m.name: m.seed for m in store.list_minters()}
    again = importers.run("arklet", SQLITE, store)
    assert again.count("kept") == 13 and again.count("imported") == 0
    assert sum(again.restored.values()) == 0
    assert {m.name: m.seed for m in store.list_minters()} == seeds  # the minters are kept as they are


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "arklet.sqlite3"
    shutil.copyfile(SQLITE, path)
    return path


def test_a_bad_row_refuses_the_whole_import(tmp_path: Path, store: Store) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ark_ark SET url = 'javascript:alert(1)' WHERE ark = '99999/t25j'")
        conn.execute("UPDATE ark_shoulder SET shoulder = 'x9' WHERE shoulder = '/x9'")
        conn.execute("UPDATE ark_shoulder SET shoulder = '/c 1' WHERE shoulder = '/c1'")
    with pytest.raises(ImportRefusedError) as caught:
        importers.run("arklet", path, store)
    refused = {o.where: o.reason for o in caught.value.report.by_action("refused")}
    assert "target must be an http or https URL" in refused["ark_ark 99999/t25j"]
    assert "starts with '/'" in refused["ark_shoulder 12345x9"]
    assert "character ' ' not allowed in an ARK" in refused["ark_shoulder 99999/c 1"]
    assert store.list_naans() == [] and store.minted_count() == 0


def test_an_ark_that_does_not_match_its_parts_is_refused(tmp_path: Path, store: Store) -> None:
    path = _copy(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ark_ark SET assigned_name = 'zz' WHERE ark = '99999/t25j'")
    with pytest.raises(ImportRefusedError, match=r"is not NAAN 99999 \+ shoulder '/t2' \+ name 'zz'"):
        importers.run("arklet", path, store)


@pytest.mark.parametrize(("table", "column", "where", "said"), [
    ("ark_ark", "url", "ark = '99999/t25j'", "url holds bytes, not text"),
    ("ark_ark", "metadata", "ark = '99999/t25j'", "metadata holds bytes, not text"),
    ("ark_shoulder", "shoulder", "shoulder = '/c1'", "shoulder holds bytes, not text"),
])  # fmt: skip
def test_a_value_of_another_type_than_arklets_is_refused_naming_it(
    tmp_path: Path, store: Store, table: str, column: str, where: str, said: str
) -> None:
    """A SQLite file takes a BLOB in a text column: it was a traceback (a red-team finding)."""
    path = _copy(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET {column} = CAST({column} AS BLOB) WHERE {where}")
    with pytest.raises(SourceError, match=rf"{table} row [0-9]+: {said} in '.*arklet.sqlite3'"):
        importers.run("arklet", path, store)
    assert store.list_naans() == [] and store.minted_count() == 0


def test_sources_that_are_not_arklet_databases(tmp_path: Path, store: Store) -> None:
    with pytest.raises(SourceError, match="no arklet database file here"):
        importers.run("arklet", tmp_path / "missing.sqlite3", store)
    other = tmp_path / "other.sqlite3"
    sqlite3.connect(other).close()
    with pytest.raises(
        SourceError, match=r"not an arklet database \(tables ark_naan, ark_shoulder, ark_ark\)"
    ):
        importers.run("arklet", other, store)
    with pytest.raises(SourceError, match=r"cannot open the arklet database: .* in 'postgresql://u:\*\*\*@"):
        importers.run("arklet", "postgresql://u:secret@127.0.0.1:1/none?connect_timeout=2", store)
