"""Persistent state: NAANs, NOID minters, holds, bindings and API keys, in SQLite or PostgreSQL.

This package only gathers the public names of its modules: records and the :class:`Store` interface
(:mod:`.base`), JSON Lines (:mod:`.jsonl`), store URLs (:mod:`.urls`) and :func:`open_store`
(:mod:`.opener`), which picks the backend from a URL:

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

from .base import DEFAULT_BATCH, Store
from .changes import BindingChange, change_from_patch
from .jsonl import ImportRow, binding_line, parse_import_line, parse_update_line, split_lines
from .opener import open_store
from .records import (
    ERC_ELEMENTS,
    KINDS,
    STATUSES,
    AlreadyBoundError,
    ApiKey,
    Binding,
    ChangedMeanwhileError,
    Erc,
    ErcChange,
    HistoryEntry,
    ImportRejectedError,
    ImportReport,
    Kind,
    MinterInfo,
    Naan,
    NotOwnerError,
    Override,
    Principal,
    Recorded,
    ReservedAgainError,
    Resolution,
    RestoreReport,
    Scope,
    SessionInfo,
    Status,
    User,
    WritesInFlightError,
    binding_version,
    check_extra_name,
    check_text,
    erc_changes,
    published,
)
from .redirects import UnsafeLocationError, validate_target
from .search import FoundPage, Search
from .urls import DEFAULT_URL, default_url, redact_url, sqlite_path

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_URL",
    "ERC_ELEMENTS",
    "KINDS",
    "STATUSES",
    "AlreadyBoundError",
    "ApiKey",
    "Binding",
    "BindingChange",
    "ChangedMeanwhileError",
    "Erc",
    "ErcChange",
    "FoundPage",
    "HistoryEntry",
    "ImportRejectedError",
    "ImportReport",
    "ImportRow",
    "Kind",
    "MinterInfo",
    "Naan",
    "NotOwnerError",
    "Override",
    "Principal",
    "Recorded",
    "ReservedAgainError",
    "Resolution",
    "RestoreReport",
    "Scope",
    "Search",
    "SessionInfo",
    "Status",
    "Store",
    "UnsafeLocationError",
    "User",
    "WritesInFlightError",
    "binding_line",
    "binding_version",
    "change_from_patch",
    "check_extra_name",
    "check_text",
    "default_url",
    "erc_changes",
    "open_store",
    "parse_import_line",
    "parse_update_line",
    "published",
    "redact_url",
    "split_lines",
    "sqlite_path",
    "validate_target",
]
