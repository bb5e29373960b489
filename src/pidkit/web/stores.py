"""Store access for the web layer: the store opened lazily and retried (:class:`StoreHolder`), and the
request's store and settings.

A store that cannot be reached (PostgreSQL down, SQLite locked for too long) is answered 503 with
``Retry-After`` (:mod:`pidkit.web.errors`); :class:`StoreHolder` opens the store on first use and
retries, so the service recovers by itself.

>>> from pidkit.store import open_store
>>> h = StoreHolder(lambda: open_store("sqlite:///:memory:"))
>>> h.get().lookup_mode
'inline'
>>> h.close()
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Final

from fastapi import Request

from ..errors import PidkitError
from ..settings import Settings
from ..store import Store, WritesInFlightError

try:  # the postgres extra is optional
    import psycopg
    import psycopg_pool

    _PG_UNAVAILABLE: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg_pool.PoolTimeout)
    _PG_ERRORS: tuple[type[Exception], ...] = (psycopg.Error,)
except ImportError:  # pragma: no cover - postgres extra not installed
    _PG_UNAVAILABLE = ()
    _PG_ERRORS = ()

__all__ = [
    "OPEN_WAIT",
    "UNAVAILABLE_ERRORS",
    "StoreHolder",
    "StoreUnavailableError",
    "settings_of",
    "store_of",
]

#: Exceptions meaning "the database cannot be reached right now", or is busy (→ 503, try again).
UNAVAILABLE_ERRORS: Final[tuple[type[Exception], ...]] = (
    sqlite3.OperationalError, WritesInFlightError, *_PG_UNAVAILABLE
)
#: Exceptions meaning "the store cannot be opened" (bad URL, unreachable server, unreadable file).
_OPEN_ERRORS: Final[tuple[type[Exception], ...]] = (PidkitError, OSError, sqlite3.Error, *_PG_ERRORS)
#: Seconds a request waits for another request that is opening the store (a healthy cold start).
OPEN_WAIT: Final = 10.0


class StoreUnavailableError(Exception):
    """The store cannot be opened or reached now (answered 503; the service retries by itself)."""


class StoreHolder:
    """Opens the store on first use and hands it out; if opening fails it answers
    :class:`StoreUnavailableError` and tries again at most every ``retry`` seconds (without making
    every request wait for a dead database).  Requests arriving while another one opens the store wait
    for it (up to ``wait`` seconds) instead of failing; inside the back-off window they fail at once.

    >>> from pidkit.store import open_store
    >>> h = StoreHolder(lambda: open_store("sqlite:///:memory:"))
    >>> h.get().schema_version() >= 1
    True
    >>> h.close()
    """

    def __init__(self, opener: Callable[[], Store], *, retry: float = 2.0, owned: bool = True,
                 wait: float = OPEN_WAIT) -> None:
        self._opener = opener
        self._retry = retry
        self._wait = wait
        self._owned = owned
        self._store: Store | None = None
        self._lock = threading.Lock()
        self._next_try = 0.0
        self._last_error = ""

    def get(self) -> Store:
        """The open store, or :class:`StoreUnavailableError`."""
        store = self._store
        if store is not None:
            return store
        if time.monotonic() < self._next_try:  # the last attempt failed: do not wait, do not retry yet
            raise StoreUnavailableError(self._last_error)
        if not self._lock.acquire(timeout=self._wait):  # another request is opening it: wait for it
            raise StoreUnavailableError("the store is being opened")
        try:
            if self._store is not None:
                return self._store
            if time.monotonic() < self._next_try:
                raise StoreUnavailableError(self._last_error)
            try:
                self._store = self._opener()
            except _OPEN_ERRORS as exc:
                self._last_error = f"cannot open the store: {exc}"
                self._next_try = time.monotonic() + self._retry
                raise StoreUnavailableError(self._last_error) from None
            return self._store
        finally:
            self._lock.release()

    def peek(self) -> Store | None:
        """The store if it is open already, else ``None`` (never opens, never waits).

        >>> from pidkit.store import open_store
        >>> StoreHolder(lambda: open_store("sqlite:///:memory:")).peek() is None
        True
        """
        return self._store

    def close(self) -> None:
        """Close the store if this holder opened it."""
        with self._lock:
            if self._store is not None and self._owned:
                self._store.close()
            self._store = None


def store_of(request: Request) -> Store:
    """The request's store (raises :class:`StoreUnavailableError` → 503)."""
    holder: StoreHolder = request.app.state.stores
    return holder.get()


def settings_of(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings
