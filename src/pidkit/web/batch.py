"""ARK lookups of concurrent requests, batched: one store read for every ARK a worker waits on.

On PostgreSQL one lookup is a pool checkout, a network round trip, the server parsing, planning and
running a statement, and a hand-off to a pool thread and back.  Under load a worker has many requests
waiting on lookups at once, so :class:`LookupBatcher` gathers them and reads them all with one
:meth:`~pidkit.store.Store.resolve_many` (one statement, ``key = ANY(array)``) in one pool thread — the
"group commit" / DataLoader pattern: while one batch is at the database the next one gathers.

What it does not do:

* **cache**: every answer comes from a read that began after its request arrived, so a write committed
  before a request arrived (by this instance or by any other serving the same database) is seen by it;
* **wait for a batch to fill**: a lookup that arrives when no batch is in flight starts at once (no
  timer).  A lookup that arrives while one is in flight waits for it: so a batch is bounded — at most
  :data:`MAX_BATCH` ARKs and :data:`MAX_BATCH_KEYS` keys (:func:`lookup_cost`; the resolver looks an ARK
  with more than :data:`MAX_BATCHED_COST` keys up on its own, outside the batches) — and has a deadline
  (``timeout`` of :func:`in_thread`, ``PIDKIT_LOOKUP_TIMEOUT``), after which its requests get 503 and
  the next batch goes (a connection that went silent cannot hold up a worker).

A batch that fails with one of the ``unavailable`` errors (the database unreachable, the pool exhausted,
the deadline) fails every request in it (the app answers 503).  Any other error is not allowed to spoil
the others: the batch is then read again one ARK at a time and only the request at fault gets it.

Measured (``benchmarks/resolver/cpu_per_request.py``, table in ``benchmarks/resolver/PROFILE.md``):
one batch in flight per worker, read in a pool thread, cost the least CPU per request without
keep-alive; two in flight cost ~35 % more there, and reading on the event loop with psycopg's async
pool ~20 % more there (it was ~10 % cheaper with keep-alive).

>>> import asyncio
>>> from pidkit.store import open_store
>>> store = open_store("sqlite:///:memory:")
>>> _ = store.add_naan("99999")
>>> _ = store.bind("ark:99999/fk4x", "https://e.org/x")
>>> batcher = LookupBatcher(in_thread(lambda: store))
>>> async def two() -> list[str | None]:
...     found = await asyncio.gather(batcher.resolve("ark:99999/fk4x"), batcher.resolve("ark:99999/y"))
...     return [r and r.location for r in found]
>>> asyncio.run(two())
['https://e.org/x', None]
>>> store.close()
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

import anyio
import anyio.to_thread

from ..ark.chars import STRUCTURAL
from ..store import Resolution, Store

__all__ = [
    "MAX_BATCH",
    "MAX_BATCHED_COST",
    "MAX_BATCH_KEYS",
    "MAX_IN_FLIGHT",
    "LookupBatcher",
    "LookupTimeoutError",
    "in_thread",
    "lookup_cost",
]

#: Most ARKs one batch reads (a worker rarely has more waiting: 64 connections over 2 workers).
MAX_BATCH: Final = 256
#: Most keys (ARKs and their ancestors, by :func:`lookup_cost`) one batch reads.
MAX_BATCH_KEYS: Final = 1024
#: ARKs whose :func:`lookup_cost` is higher are not batched: the resolver looks them up on their own.
MAX_BATCHED_COST: Final = 32
#: Batches of one worker at the database at the same time (see the measurements above).
MAX_IN_FLIGHT: Final = 1
#: Seconds a batch may take by default before its requests are answered 503.
DEFAULT_TIMEOUT: Final = 5.0

#: Reads what each of the ARKs resolves to, in order (one batch).
Lookup = Callable[[Sequence[str]], Coroutine[Any, Any, list[Resolution | None]]]


class LookupTimeoutError(Exception):
    """A batch read did not finish within its deadline (answered 503, like an unreachable store)."""


def lookup_cost(text: str) -> int:
    """How many keys the store reads for the ARK ``text`` at most: the ARK and one ancestor per
    structural character (``/`` or ``.``, draft-kunze-ark-40 §2.5).

    >>> lookup_cost("ark:99999/fk4x"), lookup_cost("ark:/99999/fk4x/c3/s5.v7.xsl")
    (2, 7)
    """
    return 1 + sum(map(text.count, STRUCTURAL))


def in_thread(store: Callable[[], Store], *, timeout: float = DEFAULT_TIMEOUT) -> Lookup:
    """The batch read: ``store().resolve_many(arks)`` in a pool thread (``store`` may open the store),
    abandoned with :class:`LookupTimeoutError` after ``timeout`` seconds (the thread finishes or fails
    on its own; its requests are answered meanwhile).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as s:
    ...     asyncio.run(in_thread(lambda: s)(["ark:99999/x"]))
    [None]
    """

    async def lookup(arks: Sequence[str]) -> list[Resolution | None]:
        try:
            with anyio.fail_after(timeout):
                return await anyio.to_thread.run_sync(
                    lambda: store().resolve_many(arks), abandon_on_cancel=True
                )
        except TimeoutError:
            raise LookupTimeoutError(f"the store did not answer within {timeout:g} s") from None

    return lookup


class _Waiter:
    __slots__ = ("cost", "future", "text")

    def __init__(self, text: str, future: asyncio.Future[Resolution | None]) -> None:
        self.text = text
        self.cost = lookup_cost(text)
        self.future = future


class LookupBatcher:
    """Coalesces the :meth:`resolve` calls of one event loop into batches for ``lookup`` (at most
    ``max_in_flight`` at once; ``max_batch`` ARKs and ``max_keys`` keys each, but always at least one
    ARK).  An error of a type in ``unavailable`` fails the whole batch; any other one is narrowed down
    to its ARK."""

    def __init__(
        self,
        lookup: Lookup,
        *,
        max_batch: int = MAX_BATCH,
        max_keys: int = MAX_BATCH_KEYS,
        max_in_flight: int = MAX_IN_FLIGHT,
        unavailable: tuple[type[Exception], ...] = (LookupTimeoutError,),
    ) -> None:
        if max_batch < 1 or max_keys < 1 or max_in_flight < 1:
            raise ValueError("max_batch, max_keys and max_in_flight must be at least 1")
        self._lookup = lookup
        self._max_batch = max_batch
        self._max_keys = max_keys
        self._max_in_flight = max_in_flight
        self._unavailable = unavailable
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: deque[_Waiter] = deque()
        self._in_flight = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def resolve(self, text: str) -> Resolution | None:
        """What the store resolves the ARK ``text`` to (as :meth:`~pidkit.store.Store.resolve`), read
        together with the lookups of every other request waiting at the same time."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # first use, or a new event loop (a new test client): start afresh
            self._loop, self._queue, self._in_flight, self._tasks = loop, deque(), 0, set()
        future: asyncio.Future[Resolution | None] = loop.create_future()
        self._queue.append(_Waiter(text, future))
        if self._in_flight < self._max_in_flight:
            self._in_flight += 1
            task = loop.create_task(self._drain(self._queue))
            self._tasks.add(task)  # a strong reference until it is done
            task.add_done_callback(self._tasks.discard)
        return await future

    def _next_batch(self, queue: deque[_Waiter]) -> list[_Waiter]:
        """The waiters of the next batch: the first in line, then as many as fit."""
        batch = [queue.popleft()]
        keys = batch[0].cost
        while queue and len(batch) < self._max_batch and keys + queue[0].cost <= self._max_keys:
            keys += queue[0].cost
            batch.append(queue.popleft())
        return [w for w in batch if not w.future.done()]  # not cancelled meanwhile

    async def _drain(self, queue: deque[_Waiter]) -> None:
        """Run batches until nothing is waiting."""
        try:
            while queue:
                waiting = self._next_batch(queue)
                if waiting:
                    await self._run(waiting)
        except asyncio.CancelledError:  # the loop is shutting down: nobody will run the rest
            while queue:
                queue.popleft().future.cancel()
            raise
        finally:
            if queue is self._queue:
                self._in_flight -= 1

    async def _run(self, waiting: list[_Waiter]) -> None:
        """One batch: every waiter gets its resolution or an error (or is cancelled with the batch)."""
        try:
            outcomes = await self._outcomes([w.text for w in waiting])
        except asyncio.CancelledError:
            for w in waiting:
                w.future.cancel()
            raise
        for w, outcome in zip(waiting, outcomes, strict=True):
            if w.future.done():
                continue
            if isinstance(outcome, Exception):
                w.future.set_exception(outcome)
            else:
                w.future.set_result(outcome)

    async def _outcomes(self, texts: list[str]) -> list[Resolution | Exception | None]:
        """The resolution of each text, or the error its request gets (as many as ``texts``)."""
        try:
            found = await self._lookup(texts)
        except self._unavailable as exc:  # the store cannot answer now: every request in the batch
            return [exc] * len(texts)
        except Exception as exc:  # narrow it down: read them one by one so only the culprit fails
            if len(texts) == 1:
                return [exc]
            return [await self._one(text) for text in texts]
        if len(found) != len(texts):
            error = RuntimeError(f"the store answered {len(found)} lookups for {len(texts)} ARKs")
            return [error] * len(texts)
        return list(found)

    async def _one(self, text: str) -> Resolution | Exception | None:
        try:
            found = await self._lookup([text])
        except Exception as exc:
            return exc
        return found[0] if len(found) == 1 else RuntimeError(f"the store answered {len(found)} lookups")
