"""Opening a store: :func:`open_store` picks the backend from a URL.

* ``sqlite:///relative/path.db`` — a file relative to the working directory;
* ``sqlite:////absolute/path.db`` — an absolute path (four slashes);
* ``sqlite:///:memory:`` — a private in-memory database (tests, one-off scripts);
* ``postgresql://user@host:port/db`` (or ``postgres://``) — PostgreSQL through psycopg 3 with a
  connection pool; libpq parameters such as ``?options=-csearch_path%3Dmyschema`` pass through.

Without a URL: ``$PIDKIT_DATABASE_URL``, else ``sqlite:///pidkit.db``.  Opening a store runs the
schema migrations it lacks (safe from several processes at once).

>>> with open_store("sqlite:///:memory:") as store:
...     store.schema_version() >= 1
True
"""

from __future__ import annotations

import os
import stat
import urllib.parse

from ..errors import NotFoundError, StoreError
from .base import Store
from .urls import POSTGRES_PREFIXES, default_url, redact_url, sqlite_path

__all__ = ["open_store"]


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open the store at ``url`` (default :func:`default_url`), running the migrations it lacks.

    With ``create=False`` a store must already be there: a missing SQLite file is a
    :class:`~pidkit.errors.NotFoundError` ("no pidkit store at …") instead of a new empty store (what
    the CLI's read commands need: a mistyped ``--db`` must not create one).  A file that is not a pidkit
    store is refused either way.

    >>> open_store("mysql://x")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: unsupported store URL (use sqlite:/// or postgresql://) in 'mysql://x'
    >>> open_store("sqlite:////no/such/dir/p.db", create=False)
    Traceback (most recent call last):
    ...
    pidkit.errors.NotFoundError: no pidkit store at /no/such/dir/p.db: directory /no/such/dir does not exist
    """
    url = url or default_url()
    if url.startswith("sqlite:"):
        from .sqlite import SqliteStore

        path = sqlite_path(url)
        if path not in (":memory:", ""):
            _check_sqlite_file(path, create=create)
        return SqliteStore(path)
    if url.startswith(POSTGRES_PREFIXES):
        from .postgres import PostgresStore

        return PostgresStore(url)
    raise StoreError("unsupported store URL (use sqlite:/// or postgresql://)", text=redact_url(url))


def _check_sqlite_file(path: str, *, create: bool) -> None:
    """Refuse what SQLite would otherwise fail on with a bare error, or silently create: no file (unless
    ``create``; then its directory must exist), a directory, a file that is not SQLite, or a SQLite
    database of some other program."""
    import sqlite3

    try:
        info = os.stat(path)
    except FileNotFoundError:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            missing = f"directory {directory} does not exist"
            if not create:
                raise NotFoundError(f"no pidkit store at {path}: {missing}") from None
            raise StoreError(f"cannot create a store at {path}: {missing}") from None
        if not create:
            raise NotFoundError(f"no pidkit store at {path} (create one with `pidkit init`)") from None
        return
    except OSError as exc:
        raise StoreError(f"cannot open the store: {exc.strerror}", text=path) from None
    if stat.S_ISDIR(info.st_mode):
        raise StoreError("is a directory, not a store file", text=path)
    if info.st_size == 0:  # an empty SQLite database: the migrations would make it a store
        if not create:  # (what a refused restore or an export over the store used to leave behind)
            raise NotFoundError(f"no pidkit store at {path}: an empty file (create one with `pidkit init`)")
        return
    try:
        conn = sqlite3.connect(f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro", uri=True)
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"not a pidkit store ({exc})", text=path) from None
    if names and "schema_version" not in names:
        raise StoreError("not a pidkit store (a SQLite database of something else)", text=path)
