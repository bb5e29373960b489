"""Import an arklet database (Internet Archive's Django ARK service, 0.2.x): SQLite or PostgreSQL.

What is read (arklet's own tables, as its migrations make them):

* ``ark_naan`` → NAANs (``naan``, ``name``).  arklet keeps a NAAN as an integer, so a NAAN with
  leading zeros has already lost them in arklet (its ``ark`` column too); it is imported as arklet
  wrote it.
* ``ark_shoulder`` → shoulders (``/c1`` → ``c1``), and for each one a pidkit minter named
  ``arklet-NAAN-SHOULDER`` with arklet's own shape: 8 random betanumeric characters and an NCDA check
  character (template ``c1.reeeeeeeek``; arklet computes its check digit over ``NAAN/c1…``, the same
  zone).  arklet's minting state is nothing but the set of ARKs it made (it draws names at random and
  retries on a collision), so every one of them goes to the minted log: the new minter skips them.
* ``ark_ark`` → bindings: ``url`` → target (public; an ARK without a URL is reserved — arklet answers
  it 404), ``metadata`` → ``erc.what`` (arklet's metadata is one free text), ``commitment`` →
  ``erc-support`` ``what`` (the commitment statement), ``created_at`` / ``updated_at`` → times.

Not imported: arklet's users and API keys (their secrets are arklet's UUIDs; pidkit keys have their own
form — make new ones with ``pidkit apikey create``).

>>> arklet_minter_name("99999", "/c1"), arklet_template("/c1")
('arklet-99999-c1', 'c1.reeeeeeeek')
"""

from __future__ import annotations

import datetime as _dt
import os
import secrets
import sqlite3
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from ..errors import PidkitError
from ..store import Erc, Principal, Store
from .common import (
    DumpBuilder,
    ImportReport,
    Outcome,
    Progress,
    SourceError,
    apply,
    ark_id,
    progress_every,
    source_name,
)

__all__ = ["arklet_minter_name", "arklet_template", "import_arklet"]

#: arklet's mint: ``generate_noid(8)`` (betanumeric) then ``noid_check_digit`` (NCDA).
ARKLET_MASK: Final = "reeeeeeeek"
_TABLES: Final = ("ark_naan", "ark_shoulder", "ark_ark")


def arklet_template(shoulder: str) -> str:
    """The NOID template of arklet's minting on ``shoulder`` (``/c1``)."""
    return f"{shoulder.lstrip('/')}.{ARKLET_MASK}"


def arklet_minter_name(naan: str, shoulder: str) -> str:
    """The name of the pidkit minter that takes over arklet's minting on ``shoulder`` of ``naan``."""
    return f"arklet-{naan}-{shoulder.lstrip('/')}"


@contextmanager
def _connect(source: str) -> Iterator[Any]:
    """A DB-API connection to the arklet database at ``source`` (``postgresql://…``, ``sqlite:///…``
    or a SQLite file path), read-only where the driver allows."""
    shown = source_name(source)
    if source.startswith(("postgresql://", "postgres://")):
        try:
            import psycopg
        except ImportError:  # pragma: no cover - the postgres extra is installed with dev
            raise SourceError("reading PostgreSQL needs pidkit[postgres] (psycopg)", text=shown) from None
        try:
            conn = psycopg.connect(source, connect_timeout=10)
        except psycopg.Error as exc:
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SourceError(f"cannot open the arklet database: {said}", text=shown) from None
        try:
            conn.read_only = True
            yield conn
        finally:
            conn.close()
        return
    path = source[len("sqlite:///") :] if source.startswith("sqlite:///") else source
    if not os.path.isfile(path):
        raise SourceError("no arklet database file here", text=shown)
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro"
    conn3 = sqlite3.connect(uri, uri=True)
    try:
        # a file from elsewhere (the back office takes uploads): its schema's views and triggers may use
        # only SQLite's innocuous functions (SQLite's advice for databases of unknown origin)
        conn3.execute("PRAGMA trusted_schema = OFF")
        yield conn3
    finally:
        conn3.close()


def _rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    try:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]
    finally:
        cur.close()


def _read(source: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``(naans, shoulders, arks)`` rows of the arklet database."""
    db_errors: tuple[type[Exception], ...] = (sqlite3.Error,)
    try:
        import psycopg

        db_errors += (psycopg.Error,)
    except ImportError:  # pragma: no cover - the postgres extra is installed with dev
        pass
    with _connect(source) as conn:
        try:
            if isinstance(conn, sqlite3.Connection):  # arklet's tables, not views of the same names
                marks = ", ".join("?" * len(_TABLES))
                found = dict(conn.execute(f"SELECT name, type FROM sqlite_master WHERE name IN ({marks})",
                                          _TABLES).fetchall())  # fmt: skip
                missing = [t for t in _TABLES if found.get(t) != "table"]
                if missing:
                    raise sqlite3.DatabaseError(f"no table {', '.join(missing)}")
            naans = _rows(conn, "SELECT naan, name FROM ark_naan ORDER BY naan")
            shoulders = _rows(
                conn, "SELECT naan_id, shoulder, name FROM ark_shoulder ORDER BY naan_id, shoulder"
            )
            arks = _rows(
                conn,
                "SELECT ark, naan_id, shoulder, assigned_name, url, metadata, commitment, created_at, "
                "updated_at FROM ark_ark ORDER BY ark",
            )
        except db_errors as exc:
            said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SourceError(
                f"not an arklet database (tables {', '.join(_TABLES)}): {said}", text=source_name(source)
            ) from None
    _check_text(naans, "ark_naan", ("naan", "name"), source)
    _check_text(shoulders, "ark_shoulder", ("naan_id", "shoulder", "name"), source)
    _check_text(arks, "ark_ark", ("ark", "naan_id", "shoulder", "assigned_name", "url", "metadata",
                                  "commitment"), source)  # fmt: skip
    return naans, shoulders, arks


#: The columns that arklet's models make integers (a NAAN); every other one read is text.
_NUMBERS: Final = frozenset({"naan", "naan_id"})


def _check_text(rows: Sequence[Sequence[Any]], table: str, columns: Sequence[str], source: str) -> None:
    """Refuse, naming the row, the column and the database, a value of another type than arklet's model
    gives the column: a SQLite file takes any value in any column (a BLOB, a number for a text), which
    the mapping would read as something else or fail on.

    >>> _check_text([("1/x", 2)], "ark_ark", ("ark", "naan_id"), "db")
    >>> _check_text([(b"/x", 2)], "ark_ark", ("ark", "naan_id"), "db")
    Traceback (most recent call last):
    ...
    pidkit.importers.common.SourceError: ark_ark row 1: ark holds bytes, not text in 'db'
    """
    for number, row in enumerate(rows, 1):
        for column, value in zip(columns, row, strict=False):
            ok = (int, str) if column in _NUMBERS else (str,)
            if value is not None and not isinstance(value, ok):
                kind = "an integer" if column in _NUMBERS else "text"
                raise SourceError(f"{table} row {number}: {column} holds {type(value).__name__}, not {kind}",
                                  text=source_name(source))  # fmt: skip


def _time(value: Any) -> _dt.datetime | None:
    """An arklet time (a datetime from PostgreSQL, text in UTC from SQLite) as an aware datetime."""
    if value is None or value == "":
        return None
    when = value if isinstance(value, _dt.datetime) else _dt.datetime.fromisoformat(str(value))
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.UTC)


def _shoulder(b: DumpBuilder, naan: str, shoulder: str, templates: Mapping[str, str]) -> str | None:
    """Add an arklet shoulder and its minter; why it is refused, or ``None``."""
    if not shoulder.startswith("/"):
        return "an arklet shoulder starts with '/' (arklet resolves NAAN/shoulder+name)"
    try:
        ark_id(f"{naan}{shoulder}")  # a shoulder is the start of an ARK Name (draft-kunze-ark-40 §3.1)
        b.add_shoulder(naan, shoulder[1:])
        template = templates.get(shoulder, arklet_template(shoulder))
        b.add_minter(
            arklet_minter_name(naan, shoulder), naan=naan, template=template, seed=secrets.randbits(63),
            counter=0,
        )  # fmt: skip
    except PidkitError as exc:
        return str(exc)
    return None


def _ark(b: DumpBuilder, row: Sequence[Any], where: str) -> str | None:
    """Add one ``ark_ark`` row; why it is refused, or ``None``."""
    ark, naan_id, shoulder, assigned, url, metadata, commitment, created_at, updated_at = row
    naan = str(naan_id)
    if assigned and ark != f"{naan}{shoulder}{assigned}":
        return f"ark {ark!r} is not NAAN {naan} + shoulder {shoulder!r} + name {assigned!r}"
    if not str(ark).startswith(f"{naan}/"):
        return f"ark {ark!r} does not start with its NAAN {naan}/ (arklet could not resolve it)"
    try:
        created = _time(created_at)
        b.add_ark(
            f"ark:/{ark}", target=url or None, where=where, status="public" if url else "reserved",
            erc=Erc(what=metadata or ""), support=Erc(what=commitment or ""), created=created,
            updated=_time(updated_at) or created,
        )  # fmt: skip
    except (PidkitError, ValueError) as exc:
        return str(exc)
    return None


def import_arklet(
    source: str,
    store: Store,
    *,
    templates: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    principal: Principal | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import the arklet database at ``source`` into ``store`` (all or nothing; see the module text).
    ``templates`` maps an arklet shoulder (``/t2``) to the template of its new pidkit minter when it
    should not be arklet's own shape.  Raises :class:`~pidkit.importers.common.ImportRefusedError`
    (nothing written) if a record is refused, :class:`~pidkit.importers.common.SourceError` if the
    database cannot be read.  ``principal`` and ``dry_run``: as :func:`~pidkit.importers.common.apply`
    takes them."""
    naans, shoulders, arks = _read(source)
    b = DumpBuilder("arklet")
    outcomes: list[Outcome] = []
    for naan_id, name in naans:
        b.add_naan(str(naan_id), name or "")
    for naan_id, shoulder, _name in shoulders:
        where = f"ark_shoulder {naan_id}{shoulder}"
        refusal = _shoulder(b, str(naan_id), shoulder, templates or {})
        if refusal is not None:
            outcomes.append(Outcome(where, f"{naan_id}{shoulder}", "refused", refusal))
    for n, row in enumerate(arks, 1):
        where = f"ark_ark {row[0]}"
        refusal = _ark(b, row, where)
        ident = f"ark:/{row[0]}"
        outcomes.append(
            Outcome(where, ident, "refused", refusal) if refusal else Outcome(where, ident, "imported")
        )
        progress_every(progress, n, last=n == len(arks))
    minters = len(b.rows["minters"])
    notes = (
        f"{minters} minter{'' if minters == 1 else 's'} made for arklet's shoulders (arklet-NAAN-SHOULDER)",
    )
    report = ImportReport("arklet", source_name(source), tuple(outcomes), notes=notes)
    return apply(b, store, report, principal=principal, dry_run=dry_run)
