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
import urllib.parse
from typing import Final

from ..errors import StoreError
from .base import (
    DEFAULT_BATCH,
    KINDS,
    STATUSES,
    ApiKey,
    Binding,
    Erc,
    ImportRejectedError,
    ImportReport,
    Kind,
    MinterInfo,
    Naan,
    NotOwnerError,
    Resolution,
    Status,
    Store,
    UnsafeLocationError,
    check_text,
    validate_target,
)
from .sql import ImportRow, parse_import_line

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_URL",
    "KINDS",
    "STATUSES",
    "ApiKey",
    "Binding",
    "Erc",
    "ImportRejectedError",
    "ImportReport",
    "ImportRow",
    "Kind",
    "MinterInfo",
    "Naan",
    "NotOwnerError",
    "Resolution",
    "Status",
    "Store",
    "UnsafeLocationError",
    "check_text",
    "default_url",
    "open_store",
    "parse_import_line",
    "redact_url",
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


def open_store(url: str | None = None) -> Store:
    """Open (creating and migrating as needed) the store at ``url`` (default :func:`default_url`).

    >>> open_store("mysql://x")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: unsupported store URL (use sqlite:/// or postgresql://) in 'mysql://x'
    """
    url = url or default_url()
    if url.startswith("sqlite:"):
        from .sqlite import SqliteStore

        return SqliteStore(sqlite_path(url))
    if url.startswith(_POSTGRES_PREFIXES):
        from .postgres import PostgresStore

        return PostgresStore(url)
    raise StoreError("unsupported store URL (use sqlite:/// or postgresql://)", text=redact_url(url))
