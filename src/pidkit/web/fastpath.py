"""The resolver's fast path: plain ``GET``/``HEAD /ark:…`` answered before FastAPI.

Resolving an ARK is most of what a resolver serves, and through FastAPI most of its time went to the
middleware stack, routing, dependency solving and the thread-pool hand-off of the sync route (see
``benchmarks/resolver/PROFILE.md``).  :class:`FastPathApp` is the FastAPI app with one raw-ASGI
shortcut in front: a ``GET`` or ``HEAD`` whose path the ARK route matches, without a query string, a
request body or a ``root_path``, is answered here by the resolver's own rule
(:func:`~pidkit.web.resolver.decide`, or its steps :func:`~pidkit.web.resolver.parse_request`,
:func:`~pidkit.web.resolver.bound` and
:func:`~pidkit.web.resolver.unbound`) and rendered by :func:`~pidkit.web.resolver.render` — a 302 as two
raw ASGI messages with the very headers ``render`` would send (:func:`redirect`) — so the answer (302,
410 page, 404 page, N2T redirect, 400, 503, HTML or JSON errors) is the one the FastAPI route gives.
Every other request goes to FastAPI unchanged; the route stays there for ``?info`` and the OpenAPI
document.

Where the lookup runs:

* **SQLite**: on the event loop.  A lookup takes tens of µs, less than the hand-off to a worker
  thread and back, and the loop never waits for another lookup (it is the only caller on the loop).
* **PostgreSQL**: batched (:class:`~pidkit.web.batch.LookupBatcher`): the lookups of every request
  waiting at the same time are read by one statement in one pool thread, with a deadline
  (``PIDKIT_LOOKUP_TIMEOUT``).  A lookup is a pool checkout plus a network round trip; on the loop,
  one slow query or an exhausted pool (up to the pool timeout) would stall every connection of the
  worker.  An ARK nothing resolves reads again (its NAAN), in the thread pool; an ARK with more than
  :data:`~pidkit.web.batch.MAX_BATCHED_COST` keys (many ``/`` and ``.``) is looked up on its own, in
  the thread pool, so that it cannot hold up a batch.
* A store that is not open yet, or of another kind, is read in the thread pool too (opening may wait
  up to :data:`~pidkit.web.app.OPEN_WAIT` seconds for another request that is opening it).

>>> from fastapi.testclient import TestClient
>>> from pidkit.web.app import create_app
>>> with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as client:
...     client.get("/ark:12345/x").headers["location"]
'https://n2t.net/ark:12345/x'
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

import anyio.to_thread
from fastapi import FastAPI
from starlette.requests import Request

from ..errors import PidkitError
from ..store import Store
from ..store.postgres import PostgresStore
from ..store.sqlite import SqliteStore
from .app import (
    UNAVAILABLE_ERRORS,
    ArkPathConvertor,
    Receive,
    Scope,
    Send,
    StoreHolder,
    StoreUnavailableError,
    domain_error_response,
    service_unavailable,
)
from .batch import MAX_BATCHED_COST, LookupTimeoutError, lookup_cost
from .resolver import Decision, bound, decide, parse_request, raw_ark, render, unbound
from .settings import Settings

__all__ = ["FastPathApp", "is_fast"]

#: The path the ARK route (``/{ark:arkpath}``) matches, compiled as Starlette compiles route paths.
ARK_ROUTE: Final = re.compile(f"^/(?:{ArkPathConvertor.regex})$")
#: Methods the ARK route serves.
FAST_METHODS: Final = frozenset({"GET", "HEAD"})
#: What the app's exception handlers answer 503 for.
_UNAVAILABLE: Final[tuple[type[Exception], ...]] = (
    StoreUnavailableError, LookupTimeoutError, *UNAVAILABLE_ERRORS
)
#: What ``starlette.responses.RedirectResponse`` leaves unencoded in a ``location``.
_LOCATION_SAFE: Final = ":/%#?=@[]!$&'()*+,;"
#: Request headers that send the request to FastAPI (the body limit checks them).
_BODY_HEADERS: Final = frozenset({b"content-length", b"transfer-encoding"})


def is_fast(scope: Scope) -> bool:
    """True if the fast path answers this request: ``GET``/``HEAD`` of a path the ARK route matches,
    no query, no body headers, no ``root_path``.

    >>> is_fast({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"", "headers": []})
    True
    >>> is_fast({"type": "http", "method": "GET", "path": "/ark:1/x", "query_string": b"info", "headers": []})
    False
    >>> is_fast({"type": "http", "method": "POST", "path": "/ark:1/x", "query_string": b"", "headers": []})
    False
    """
    if (
        scope["type"] != "http"
        or scope["method"] not in FAST_METHODS
        or scope.get("query_string")
        or scope.get("root_path")
        or ARK_ROUTE.match(scope["path"]) is None
    ):
        return False
    return not any(name in _BODY_HEADERS for name, _ in scope.get("headers", ()))


async def redirect(send: Send, location: str) -> None:
    """Send the 302 that :func:`~pidkit.web.resolver.render` would (Starlette's ``RedirectResponse``:
    the same ``content-length`` and percent-encoded ``location`` headers, empty body) as two ASGI
    messages, without building a response object.

    >>> import asyncio
    >>> sent = []
    >>> async def send(message): sent.append(message)
    >>> asyncio.run(redirect(send, "https://e.org/caf\u00e9"))
    >>> sent[0]["status"], sent[0]["headers"]
    (302, [(b'content-length', b'0'), (b'location', b'https://e.org/caf%C3%A9')])
    """
    headers = [(b"content-length", b"0"), (b"location", quote(location, _LOCATION_SAFE).encode("latin-1"))]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


class FastPathApp(FastAPI):
    """The FastAPI app, with plain ARK resolution (:func:`is_fast`) answered before it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a fast-path request here, hand every other one to FastAPI."""
        if self.root_path or not is_fast(scope):
            await super().__call__(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            decision = await self._decide(scope)
            if decision.status == 302 and decision.location is not None:
                await redirect(send, decision.location)  # most of a resolver's answers
                return
            response = render(request, decision)
        except _UNAVAILABLE:
            response = service_unavailable(request)
        except PidkitError as exc:
            response = domain_error_response(request, exc)
        await response(scope, receive, send)

    async def _decide(self, scope: Scope) -> Decision:
        holder: StoreHolder = self.state.stores
        settings: Settings = self.state.settings
        store: Store | None = holder.peek()
        text = raw_ark(scope)
        fallback = settings.fallback_resolver
        if isinstance(store, SqliteStore):
            return decide(holder.get, text, fallback=fallback)
        if not isinstance(store, PostgresStore) or lookup_cost(text) > MAX_BATCHED_COST:
            # not open yet (open it in the thread pool), another store, or an ARK with many ancestors
            # (a long read that would hold up a batch): looked up on its own, in the thread pool
            return await anyio.to_thread.run_sync(lambda: decide(holder.get, text, fallback=fallback))
        parsed = parse_request(text)
        if isinstance(parsed, Decision):
            return parsed
        found = await self.state.lookups.resolve(text)
        if found is None:  # rare on a resolver's hot path: reads the NAAN, in the thread pool
            return await anyio.to_thread.run_sync(lambda: unbound(holder.get(), parsed, fallback=fallback))
        return bound(found)
