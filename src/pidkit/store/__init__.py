"""Persistent state: NAANs, NOID minters, holds, bindings and API keys, in SQLite or PostgreSQL.

:func:`open_store` picks the backend from a URL:

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
import re
import stat
import urllib.parse
from typing import Final

from ..errors import NotFoundError, StoreError
from .base import (
    DEFAULT_BATCH,
    ERC_ELEMENTS,
    KINDS,
    STATUSES,
    ApiKey,
    Binding,
    Erc,
    ErcChange,
    ImportRejectedError,
    ImportReport,
    Kind,
    MinterInfo,
    Naan,
    NotOwnerError,
    Override,
    Resolution,
    RestoreReport,
    Status,
    Store,
    UnsafeLocationError,
    check_text,
    erc_changes,
    validate_target,
)
from .jsonl import ImportRow, binding_line, parse_import_line, split_lines

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_URL",
    "ERC_ELEMENTS",
    "KINDS",
    "STATUSES",
    "ApiKey",
    "Binding",
    "Erc",
    "ErcChange",
    "ImportRejectedError",
    "ImportReport",
    "ImportRow",
    "Kind",
    "MinterInfo",
    "Naan",
    "NotOwnerError",
    "Override",
    "Resolution",
    "RestoreReport",
    "Status",
    "Store",
    "UnsafeLocationError",
    "binding_line",
    "check_text",
    "default_url",
    "erc_changes",
    "open_store",
    "parse_import_line",
    "redact_url",
    "split_lines",
    "validate_target",
]

#: The embedded default store: a SQLite file in the working directory.
DEFAULT_URL: Final = "sqlite:///pidkit.db"

_SQLITE_PREFIX: Final = "sqlite:///"
_POSTGRES_PREFIXES: Final = ("postgresql://", "postgres://")


#: libpq connection parameters that carry a secret (draft: libpq "Parameter Key Words").
_SECRET_PARAMS: Final = re.compile(r"(?i)\b(password|passfile|sslpassword)(\s*=\s*)([^&\s]*)")


def redact_url(url: str) -> str:
    """``url`` safe to print: the password of the user part and the values of the ``password``,
    ``passfile`` and ``sslpassword`` parameters replaced by ``***`` (the one redaction, used by the
    store's errors and ``pidkit serve``).

    >>> redact_url("postgresql://u:s3cret@h:5432/db?sslmode=require&password=x&PassFile=/p")
    'postgresql://u:***@h:5432/db?sslmode=require&password=***&PassFile=***'
    >>> redact_url("postgresq://u:s3cret@h/db"), redact_url("sqlite:///x.db")
    ('postgresq://u:***@h/db', 'sqlite:///x.db')
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" in parts.netloc:
        userinfo, _, host = parts.netloc.rpartition("@")
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        url = urllib.parse.urlunsplit(parts._replace(netloc=f"{userinfo}@{host}"))
    return _SECRET_PARAMS.sub(r"\1\2***", url)


def default_url() -> str:
    """``$PIDKIT_DATABASE_URL`` if set, else :data:`DEFAULT_URL`.

    >>> import os
    >>> default_url() == os.environ.get("PIDKIT_DATABASE_URL", DEFAULT_URL)
    True
    """
    return os.environ.get("PIDKIT_DATABASE_URL") or DEFAULT_URL


def sqlite_path(url: str) -> str:
    """The file path (or ``:memory:``) of a ``sqlite:///`` URL.

    >>> sqlite_path("sqlite:///pidkit.db"), sqlite_path("sqlite:////var/lib/p.db")
    ('pidkit.db', '/var/lib/p.db')
    """
    if not url.startswith(_SQLITE_PREFIX) or len(url) == len(_SQLITE_PREFIX):
        raise StoreError(
            "a SQLite URL is sqlite:///relative.db, sqlite:////abs/path.db or sqlite:///:memory:",
            text=redact_url(url),
        )
    return url[len(_SQLITE_PREFIX) :]


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
    >>> open_store("sqlite:///no/such/dir/p.db", create=False)
    Traceback (most recent call last):
    ...
    pidkit.errors.NotFoundError: no pidkit store at no/such/dir/p.db (create one with `pidkit init`)
    """
    url = url or default_url()
    if url.startswith("sqlite:"):
        from .sqlite import SqliteStore

        path = sqlite_path(url)
        if path not in (":memory:", ""):
            _check_sqlite_file(path, create=create)
        return SqliteStore(path)
    if url.startswith(_POSTGRES_PREFIXES):
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
        if not create:
            raise NotFoundError(f"no pidkit store at {path} (create one with `pidkit init`)") from None
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise StoreError("cannot create a store: no such directory", text=directory) from None
        return
    except OSError as exc:
        raise StoreError(f"cannot open the store: {exc.strerror}", text=path) from None
    if stat.S_ISDIR(info.st_mode):
        raise StoreError("is a directory, not a store file", text=path)
    if info.st_size == 0:
        return  # an empty file is an empty SQLite database: the migrations make it a store
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
