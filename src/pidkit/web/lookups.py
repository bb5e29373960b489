"""What the resolver reads from the store, and where each read runs.

The resolution flow (:func:`pidkit.web.resolver.decide`) asks two things of a :class:`Lookup`: what an
ARK resolves to, and whether this resolver serves a NAAN.  :class:`StoreLookup` answers them from the
app's store, running each read where the store says it belongs (:attr:`pidkit.store.Store.lookup_mode`)
— the web layer never asks which backend it has:

* ``inline``: on the event loop (SQLite: a read takes tens of µs, less than a hand-off to a thread);
* ``batched``: the ARK lookups of every request waiting at the same moment read together by one
  :meth:`~pidkit.store.Store.resolve_many` (:class:`~pidkit.web.batch.LookupBatcher`, PostgreSQL); an
  ARK with more than :data:`~pidkit.web.batch.MAX_BATCHED_COST` keys is read on its own, in a thread,
  so that it cannot hold up a batch; the rarer NAAN read goes to a thread;
* ``thread`` — and a store not open yet (opening may wait up to
  :data:`~pidkit.web.stores.OPEN_WAIT` seconds for another request that is opening it): in a thread.

Which NAANs the store serves is kept in memory, a set read again at most every :data:`SERVED_TTL`
second with one statement (:meth:`pidkit.store.Store.naan_names`; while it is being read again, other
requests use the set already in memory): an ARK under a NAAN the store does not serve — every ARK the
NAAN registry or N2T answers — then costs one store read (its binding), as a bound ARK does, however
many NAANs the requests spread over.  A NAAN added meanwhile is served (its unbound ARKs a 404) at the
latest a second later; its bound ARKs resolve at once (the binding is always read first).  NAANs are
never removed from a store.

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
from collections.abc import Callable
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

    async def naan_served(self, naan: str) -> bool:
        """True if the store holds ``naan``: a look in the set of the store's NAANs, read again (where
        the store says, never batched) when it is older than :data:`SERVED_TTL` second."""
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
