"""What the resolver reads from the store, and where each read runs.

The resolution flow (:func:`pidkit.web.resolver.decide`) asks three things of a :class:`Lookup`: whether
the store may hold a binding under a NAAN, what an ARK resolves to, and whether this resolver serves a
NAAN.  :class:`StoreLookup` answers them from the
app's store, running each read where the store says it belongs (:attr:`pidkit.store.Store.lookup_mode`)
— the web layer never asks which backend it has:

* ``inline``: on the event loop (SQLite: a read takes tens of µs, less than a hand-off to a thread);
* ``batched``: the ARK lookups of every request waiting at the same moment read together by one
  :meth:`~pidkit.store.Store.resolve_many` (:class:`~pidkit.web.batch.LookupBatcher`, PostgreSQL); an
  ARK with more than :data:`~pidkit.web.batch.MAX_BATCHED_COST` keys is read on its own, in a thread,
  so that it cannot hold up a batch; the rarer NAAN read goes to a thread;
* ``thread`` — and a store not open yet (opening may wait up to
  :data:`~pidkit.web.stores.OPEN_WAIT` seconds for another request that is opening it): in a thread.

Which NAANs the store serves, and under which it holds any ARK binding (:meth:`pidkit.store.Store.naan_names`,
:meth:`~pidkit.store.Store.bound_naans`), is kept in memory, exact: the two sets are read again only when
the store's :meth:`~pidkit.store.Store.naans_token` changed (SQLite: the WAL-index header, which any
commit rewrites; PostgreSQL: a NOTIFY of migration 7's triggers, heard by a
listener thread).  An ARK under a NAAN the store binds nothing under — every ARK the NAAN registry or N2T
answers — is then decided without reading the store at all; a write is seen by the next request
(PostgreSQL: as soon as its notification arrives).  A store without a token (a private in-memory
store) reads the binding of every ARK first, as before, and re-reads the NAANs it serves at most every
:data:`SERVED_TTL` second (while one request reads them, the others use the set in memory): a NAAN added
meanwhile is served at the latest a second later, its bound ARKs at once.  NAANs are never removed.

The public NAAN registry is read from memory (:class:`RegistryHolder`): loaded once when the app is
built, then, at most every ``PIDKIT_REGISTRY_CHECK`` seconds (not per request), one ``stat`` of the file
in force (:func:`pidkit.registry.default`) tells whether ``pidkit registry update`` replaced it; a
changed file is read again, and a file that cannot be read keeps the registry already in memory.

>>> import asyncio
>>> from pidkit.store import open_store
>>> store = open_store("sqlite:///:memory:")
>>> _ = store.add_naan("99999")
>>> _ = store.bind("ark:99999/fk4x", "https://e.org/x")
>>> from pidkit.web.batch import LookupBatcher, in_thread
>>> from pidkit.web.stores import StoreHolder
>>> holder = StoreHolder(lambda: store, owned=False)
>>> lookup = StoreLookup(holder, LookupBatcher(in_thread(holder.get)))
>>> asyncio.run(lookup.resolve("ark:99999/fk4x")).location, asyncio.run(lookup.naan_served("12345"))
('https://e.org/x', False)
>>> store.close()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import Final, Protocol, TypeVar

import anyio.to_thread

from .. import registry as _registry
from ..store import Resolution, Store
from ..store.base import LookupMode
from .batch import MAX_BATCHED_COST, LookupBatcher, lookup_cost
from .stores import StoreHolder

__all__ = ["Lookup", "RegistryHolder", "StoreLookup"]

_log = logging.getLogger("pidkit.web")

#: Seconds the set of NAANs the store serves is reused (see the module docstring).
SERVED_TTL: Final = 1.0

T = TypeVar("T")


class Lookup(Protocol):
    """The reads the resolution flow makes."""

    async def resolve(self, text: str) -> Resolution | None:
        """What the ARK ``text`` resolves to (:meth:`pidkit.store.Store.resolve`)."""

    async def naan_served(self, naan: str) -> bool:
        """True if this resolver serves ``naan`` (normalized)."""

    async def may_be_bound(self, naan: str) -> bool:
        """False only if the store certainly holds no ARK binding under ``naan`` (normalized): then
        :meth:`resolve` need not be asked."""

    def changes_token(self) -> Hashable | None:
        """A value that changes whenever any answer of the three reads above may have changed (asked on
        the event loop: in memory or a local pragma); ``None``: it cannot be told at once."""


class StoreLookup:
    """:class:`Lookup` over the store of ``holder``; batched lookups go through ``batcher``."""

    def __init__(self, holder: StoreHolder, batcher: LookupBatcher, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.holder = holder
        self.batcher = batcher
        self._clock = clock
        self._served: frozenset[str] | None = None  # the NAANs the store serves, once read
        self._served_until = 0.0  # until when (of clock) that set holds
        self._reading_served = False  # a request is reading it again
        #: The store, its NAANs token and, read after it, the NAANs it serves and those it binds under.
        self._known: tuple[Store, Hashable, frozenset[str], frozenset[str]] | None = None

    def _mode(self) -> LookupMode:
        store = self.holder.peek()  # never opens the store on the event loop
        return "thread" if store is None else store.lookup_mode

    async def _run(self, read: Callable[[Store], T], *, inline: bool) -> T:
        if inline:
            return read(self.holder.get())
        return await anyio.to_thread.run_sync(lambda: read(self.holder.get()))

    async def resolve(self, text: str) -> Resolution | None:
        """What the ARK ``text`` resolves to, read where the store says."""
        mode = self._mode()
        if mode == "batched" and lookup_cost(text) <= MAX_BATCHED_COST:
            return await self.batcher.resolve(text)
        return await self._run(lambda store: store.resolve(text), inline=mode == "inline")

    def changes_token(self) -> Hashable | None:
        """The store's :meth:`~pidkit.store.Store.changes_token`, with the store object (a store opened
        again starts afresh); ``None`` while the store is not open or cannot tell."""
        store = self.holder.peek()  # never opens the store on the event loop
        if store is None:
            return None
        token = store.changes_token()
        return None if token is None else (store, token)

    async def _naan_sets(self) -> tuple[frozenset[str], frozenset[str]] | None:
        """The NAANs the store serves and those it binds under, exact: kept while the store's
        :meth:`~pidkit.store.Store.naans_token` stays the same (asked on the event loop: in memory or a
        local pragma), read again (where the store says) when it changed; ``None`` when the store cannot
        tell (no token, or no set of bound NAANs) or is not open yet."""
        store = self.holder.peek()  # never opens the store on the event loop
        if store is None:
            return None
        token = store.naans_token()
        if token is None:
            return None
        known = self._known
        if known is not None and known[0] is store and known[1] == token:  # a store opened again: read
            return known[2], known[3]

        def read(store: Store) -> tuple[frozenset[str], frozenset[str] | None]:
            return store.naan_names(), store.bound_naans()  # after the token: never older than it

        served, bound = await self._run(read, inline=self._mode() == "inline")
        if bound is None:
            return None
        self._known = (store, token, served, bound)
        return served, bound

    async def may_be_bound(self, naan: str) -> bool:
        """False when ``naan`` is neither among the NAANs the store binds under nor among those it serves
        (:meth:`_naan_sets`: no read of the store while nothing changed); True when it is, or the store
        cannot tell.  A NAAN served is always read: the first binding under it may have committed a moment
        before its notification reaches this worker (PostgreSQL), and an id bound must never answer 404."""
        sets = await self._naan_sets()
        return sets is None or naan in sets[1] or naan in sets[0]

    async def naan_served(self, naan: str) -> bool:
        """True if the store holds ``naan``: a look in the set of the store's NAANs — exact while the
        store's NAANs token holds (:meth:`_naan_sets`); for a store without one, read again (where the
        store says, never batched) when it is older than :data:`SERVED_TTL` second."""
        sets = await self._naan_sets()
        if sets is not None:
            return naan in sets[0]
        served = self._served
        if served is None or (self._clock() >= self._served_until and not self._reading_served):
            self._reading_served = True
            try:
                served = await self._run(lambda store: store.naan_names(), inline=self._mode() == "inline")
            finally:
                self._reading_served = False
            self._served, self._served_until = served, self._clock() + SERVED_TTL
        return naan in served


class RegistryHolder:
    """The public NAAN registry for the resolver, in memory: :meth:`get` is an attribute read, and at
    most every ``check_every`` seconds (of ``clock``) one ``stat`` of the registry file in force
    (:func:`pidkit.registry.default`, which reads a file again only when its modification time or size
    changed).  The registry is loaded when the holder is built: a registry that cannot be read then is
    an error (:class:`~pidkit.registry.RegistryError`); later, a failed reload keeps the registry in
    memory (and is logged).

    >>> holder = RegistryHolder(check_every=10.0)
    >>> holder.get().naan("12148").who.acronym
    'BNF'
    """

    def __init__(self, check_every: float = 10.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.check_every = check_every
        self._clock = clock
        self._registry = _registry.default()
        self._checked = clock()

    def get(self) -> _registry.Registry:
        """The registry in force (see the class docstring)."""
        now = self._clock()
        if now - self._checked >= self.check_every:
            self._checked = now
            try:
                self._registry = _registry.default()
            except (_registry.RegistryError, OSError) as exc:  # keep serving the registry in memory
                _log.warning("the NAAN registry was not reloaded: %s", exc)
        return self._registry
