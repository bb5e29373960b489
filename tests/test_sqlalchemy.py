"""SQLAlchemy 2 column types against SQLite and PostgreSQL: round trips, ORDER BY = time, NULLs, queries."""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import StatementError

from pidkit import Ark, GedcomUid, RecordKey, Tid, XarkId
from pidkit.errors import ArkError, TidError, XarkIdError
from pidkit.sqlalchemy import (
    ArkText,
    GedcomUidText,
    RecordKeyText,
    TidInteger,
    TidText,
    XarkIdText,
    XarkIdUuid,
)

DATA = Path(__file__).parent / "data" / "vectors"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[sa.Engine, str | None]]:
    if request.param == "sqlite":
        eng = sa.create_engine(f"sqlite:///{tmp_path / 'sa.db'}")
        yield eng, None
        eng.dispose()
        return
    url: str = request.getfixturevalue("postgres_url")
    eng = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    schema = f"pidkit_sa_{secrets.token_hex(4)}"  # our own schema: no collision with other tests
    with eng.begin() as db:
        db.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield eng, schema
    finally:
        with eng.begin() as db:
            db.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        eng.dispose()


def _table(schema: str | None) -> sa.Table:
    return sa.Table(
        "pidkit_sa_ids",
        sa.MetaData(schema=schema),
        sa.Column("n", sa.Integer, primary_key=True),
        sa.Column("xid", XarkIdUuid),
        sa.Column("xtext", XarkIdText),
        sa.Column("tid", TidText),
        sa.Column("tidnum", TidInteger),
        sa.Column("rkey", RecordKeyText),
        sa.Column("uid", GedcomUidText),
        sa.Column("ark", ArkText),
    )


@pytest.fixture
def table(engine: tuple[sa.Engine, str | None]) -> tuple[sa.Engine, sa.Table]:
    eng, schema = engine
    t = _table(schema)
    t.metadata.create_all(eng)
    return eng, t


ROW = {
    "xid": "018bcfe5-6800-4fbf-8fbf-0123456789ab",
    "xtext": "AYvP5WgA-_-_ASNFZ4mr",
    "tid": "3jzfcijpj2z2a",
    "tidnum": "3jzfcijpj2z2a",
    "rkey": "pre:fix",
    "uid": "{550E8400-e29b-11d4-a716-446655440000}",
    "ark": "https://n2t.net/ark:/12345/x5-4-xz-321?info",
}


def test_round_trip(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    with eng.begin() as db:
        db.execute(t.insert(), [{"n": 1, **ROW}])
        row = db.execute(sa.select(t).where(t.c.n == 1)).one()
    assert row.xid == XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert row.xtext == XarkId.parse("AYvP5WgA-_-_ASNFZ4mr")
    assert row.tid == row.tidnum == Tid.parse("3jzfcijpj2z2a")
    assert row.rkey == RecordKey.parse("pre:fix")
    assert row.uid == GedcomUid.parse("{550E8400-e29b-11d4-a716-446655440000}")
    assert str(row.uid) == "{550E8400-e29b-11d4-a716-446655440000}"  # verbatim
    assert row.ark == Ark.parse("ark:12345/x54xz321")
    assert (type(row.xid), type(row.tid), type(row.ark)) == (XarkId, Tid, Ark)


def test_stored_forms(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    with eng.begin() as db:
        db.execute(t.insert(), [{"n": 1, **ROW}])
        raw = db.execute(
            sa.select(
                sa.cast(t.c.xtext, sa.String),
                sa.cast(t.c.tid, sa.String),
                sa.cast(t.c.tidnum, sa.BigInteger),
                sa.cast(t.c.ark, sa.String),
                sa.cast(t.c.xid, sa.String),
            )
        ).one()
    assert raw[0] == "AYvP5WgA-_-_ASNFZ4mr"
    assert raw[1] == "3jzfcijpj2z2a"
    assert raw[2] == 1728652679052295174
    assert raw[3] == "ark:12345/x54xz321"
    # the GUID form: dashed on PostgreSQL's uuid, 32 hex digits in SQLite's CHAR(32)
    assert raw[4].replace("-", "") == "018bcfe568004fbf8fbf0123456789ab"


@pytest.mark.postgres
@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)  # native uuid is PostgreSQL's
def test_native_uuid_on_postgresql(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    assert eng.dialect.name == "postgresql"
    with eng.begin() as db:
        db.execute(t.insert(), [{"n": 1, **ROW}])
        kind = db.execute(sa.select(sa.func.pg_typeof(t.c.xid))).scalar_one()
        text = db.execute(sa.select(sa.cast(t.c.xid, sa.Text))).scalar_one()
    assert kind == "uuid"
    assert text == "018bcfe5-6800-4fbf-8fbf-0123456789ab"


def test_nulls(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    with eng.begin() as db:
        db.execute(t.insert(), [{"n": 1}])
        row = db.execute(sa.select(t)).one()
        assert (
            db.execute(sa.select(sa.func.count()).where(t.c.xid.is_(None), t.c.ark.is_(None))).scalar_one()
            == 1
        )
    assert row == (1, None, None, None, None, None, None, None)


def test_order_by_is_time_order(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    rng = random.Random(7)
    # ids across milliseconds and within one millisecond (the random part decides there)
    xids = [
        XarkId.from_parts(unix_ms=1_700_000_000_000 + rng.randrange(3), random=rng.getrandbits(72))
        for _ in range(40)
    ]
    tids = [
        Tid.from_parts(micros=1_700_000_000_000_000 + rng.randrange(5), clock_id=rng.randrange(1024))
        for _ in range(40)
    ]
    with eng.begin() as db:
        db.execute(
            t.insert(),
            [
                {"n": i, "xid": x, "tid": d, "tidnum": d}
                for i, (x, d) in enumerate(zip(xids, tids, strict=True))
            ],
        )
        by_xid = db.execute(sa.select(t.c.xid).order_by(t.c.xid)).scalars().all()
        by_tid = db.execute(sa.select(t.c.tid).order_by(t.c.tid)).scalars().all()
        by_num = db.execute(sa.select(t.c.tidnum).order_by(t.c.tidnum)).scalars().all()
    assert by_xid == sorted(xids, key=lambda x: (x.unix_ms, x.random))
    assert [x.timestamp for x in by_xid] == sorted(x.timestamp for x in xids)
    assert by_tid == by_num == sorted(tids, key=lambda d: (d.micros, d.clock_id))


def test_queries_convert_their_operands(table: tuple[sa.Engine, sa.Table]) -> None:
    eng, t = table
    with eng.begin() as db:
        db.execute(t.insert(), [{"n": 1, **ROW}])
        db.execute(t.insert(), [{"n": 2, "ark": "ark:99999/b2", "xid": "AXbFiygAAQIDBAUGBwgJ"}])

        def n_where(clause: sa.ColumnElement[bool]) -> list[int]:
            return list(db.execute(sa.select(t.c.n).where(clause).order_by(t.c.n)).scalars())

        # every spelling of the ARK finds the normalized row
        assert n_where(t.c.ark == "ark:12345/x54xz321") == [1]
        assert n_where(t.c.ark == "ARK:/12345/x5-4-xz-3-2-1") == [1]
        assert n_where(t.c.ark == Ark.parse("https://other.org/ark:12345/x54--xz32-1")) == [1]
        assert n_where(t.c.ark.in_(["ark:/12345/x5-4-xz-321", "ark:/99999/b-2"])) == [1, 2]
        # LIKE-family operators take the stored text as it is
        assert n_where(t.c.ark.startswith("ark:12345/")) == [1]
        # a XarkId column compared with any of its forms
        assert n_where(t.c.xid == "AYvP5WgA-_-_ASNFZ4mr") == [1]
        assert n_where(t.c.xid == XarkId.parse("{018BCFE5-6800-4FBF-8FBF-0123456789AB}")) == [1]
        assert n_where(t.c.xid > "AYvP5WgA-_-_ASNFZ4mr") == []
        assert n_where(t.c.xid < "AYvP5WgA-_-_ASNFZ4mr") == [2]
        assert n_where(t.c.tid == 1728652679052295174) == [1]


@pytest.mark.parametrize(
    ("column", "value", "error"),
    [
        ("xid", "AYvP5WgA-_-_ASNFZ4m!", XarkIdError),
        ("xtext", "not a xarkid", XarkIdError),
        ("tid", "3jzfcijpj2z21", TidError),
        ("tidnum", "czzzzzzzzzzzz", TidError),  # top bit set: no room in a signed BIGINT
        ("ark", "ark:12345/x#y", ArkError),
    ],
)
def test_bad_values_are_refused(
    table: tuple[sa.Engine, sa.Table], column: str, value: str, error: type[Exception]
) -> None:
    eng, t = table
    with pytest.raises(StatementError) as info, eng.begin() as db:
        db.execute(t.insert(), [{"n": 1, column: value}])
    assert isinstance(info.value.orig, error)


def test_compiled_ddl_types() -> None:
    from sqlalchemy.dialects import postgresql, sqlite
    from sqlalchemy.schema import CreateTable

    t = _table(None)
    pg = str(CreateTable(t).compile(dialect=postgresql.dialect()))  # type: ignore[no-untyped-call]
    lite = str(CreateTable(t).compile(dialect=sqlite.dialect()))
    assert "xid UUID" in pg and 'tid VARCHAR(13) COLLATE "C"' in pg and "tidnum BIGINT" in pg
    assert "xid CHAR(32)" in lite and "tid VARCHAR(13)," in lite and "ark TEXT" in lite
