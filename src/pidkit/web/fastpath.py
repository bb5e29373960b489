"""The resolver's fast path: plain ``GET``/``HEAD /ark:…`` answered before FastAPI.

Resolving an ARK is most of what a resolver serves, and through FastAPI most of its time went to the
middleware stack, routing, dependency solving and the thread-pool hand-off of the sync route (see
``benchmarks/resolver/PROFILE.md``).  :class:`FastPathApp` is the FastAPI app with one raw-ASGI
shortcut in front: a ``GET`` or ``HEAD`` whose path the ARK route matches, without a query string, a
request body or a ``root_path``, is answered here by the resolver's one flow
(:func:`~pidkit.web.resolver.decide`, with the app's lookup and NAAN registry) and rendered by
:func:`~pidkit.web.resolver.render` — a redirect as two
raw ASGI messages with the very headers ``render`` would send (:func:`redirect`) — so the answer (302,
410 page, 404 page, registry redirect, N2T redirect, 400, 503, HTML or JSON errors) is the one the
FastAPI route gives.
Every other request goes to FastAPI unchanged; the route stays there for ``?info`` and the OpenAPI
document.

Where the lookups run is the store's to say (:mod:`pidkit.web.lookups`): the same lookup object serves
the fast path and the route.

A worker keeps the redirects it decided in memory (:class:`RedirectCache`, ``PIDKIT_RESOLVE_CACHE``
of them), exact: each is filed under the store's :meth:`~pidkit.web.lookups.Lookup.changes_token`
taken before it was decided and under the NAAN registry in force, and the whole cache is dropped when
either changes — a write, by this worker or any other process, is seen by the next request.  A store
that cannot tell at once (PostgreSQL: other instances' writes arrive as notifications) has no token,
and nothing is kept.  :meth:`FastPathApp.kept_redirect` tells the HTTP protocol such an answer, so that
it writes it without an ASGI task (:mod:`pidkit.web.protocol`), as uvicorn would write the two messages.

>>> from fastapi.testclient import TestClient
>>> from pidkit.web import create_app
>>> with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as client:
...     client.get("/ark:00000/x").headers["location"]
'https://n2t.net/ark:00000/x'
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Hashable
from typing import Any, Final
from urllib.parse import quote

from fastapi import FastAPI
from starlette.requests import Request

from ..errors import PidkitError
from ..settings import Settings
from .asgi import Receive, Scope, Send
from .convertors import ArkPathConvertor
from .errors import UNAVAILABLE, domain_error_response, service_unavailable
from .lookups import Lookup, RegistryHolder
from .resolver import Decision, decide, raw_ark, render

__all__ = ["FastPathApp", "RedirectCache", "is_fast"]

_log = logging.getLogger("pidkit.web")

#: The path the ARK route (``/{ark:arkpath}``) matches, compiled as Starlette compiles route paths.
ARK_ROUTE: Final = re.compile(f"^/(?:{ArkPathConvertor.regex})$")
#: Methods the ARK route serves.
FAST_METHODS: Final = frozenset({"GET", "HEAD"})
#: What ``starlette.responses.RedirectResponse`` leaves unencoded in a ``location``.
_LOCATION_SAFE: Final = ":/%#?=@[]!$&'()*+,;"
#: Request headers that send the request to FastAPI (the body limit checks them).
_BODY_HEADERS: Final = frozenset({b"content-length", b"transfer-encoding"})


#: The ``content-length`` header of a redirect.
_NO_BODY: Final = (b"content-length", b"0")


def _plain(scope: Scope) -> bool:
    """The part of :func:`is_fast` that does not look at the path: an HTTP ``GET``/``HEAD`` without a
    query, a ``root_path`` or body headers."""
    return (
        scope["type"] == "http"
        and scope["method"] in FAST_METHODS
        and not scope.get("query_string")
        and not scope.get("root_path")
        and not any(name in _BODY_HEADERS for name, _ in scope.get("headers", ()))
    )


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
    return _plain(scope) and ARK_ROUTE.match(scope["path"]) is not None


def redirect_start(location: str, status: int = 302) -> dict[str, Any]:
    """The ``http.response.start`` message of the redirect (302, or a registry record's code) that
    :func:`~pidkit.web.resolver.render` would send (Starlette's ``RedirectResponse``: the same
    ``content-length`` and percent-encoded ``location`` headers; the body is empty).

    >>> redirect_start("https://e.org/caf\u00e9")["headers"]
    [(b'content-length', b'0'), (b'location', b'https://e.org/caf%C3%A9')]
    """
    headers = [_NO_BODY, (b"location", quote(location, _LOCATION_SAFE).encode("latin-1"))]
    return {"type": "http.response.start", "status": status, "headers": headers}


async def redirect(send: Send, location: str, status: int = 302) -> None:
    """Send :func:`redirect_start`'s redirect as two ASGI messages, without building a response object.

    >>> import asyncio
    >>> sent = []
    >>> async def send(message): sent.append(message)
    >>> asyncio.run(redirect(send, "https://e.org/x", 303))
    >>> sent[0]["status"], sent[1]["body"]
    (303, b'')
    """
    await send(redirect_start(location, status))
    await send({"type": "http.response.body", "body": b""})


def kept_start(kept: tuple[int, bytes]) -> dict[str, Any]:
    """The ``http.response.start`` message of a redirect kept by a :class:`RedirectCache` (its status
    and encoded ``location``): the message :func:`redirect_start` made when it was decided.

    >>> kept_start((302, b"https://e.org/x")) == redirect_start("https://e.org/x")
    True
    """
    return {"type": "http.response.start", "status": kept[0], "headers": [_NO_BODY, (b"location", kept[1])]}


#: The longest request path plus encoded target (bytes) a :class:`RedirectCache` keeps: its memory stays
#: bounded by its size (about 200 bytes of overhead and these bytes an entry), whatever clients send.
CACHED_BYTES: Final = 512


class RedirectCache:
    """The redirects a worker decided (the status and :func:`redirect_start`'s ``location``), by the
    request's raw path, for one ``stamp`` (the store's changes token and the registry in force):
    :meth:`get` with another stamp drops them all.  At most ``size`` of them (the oldest goes first: a
    queue beside the dict, so keeping one is O(1) however full it is), each at most
    :data:`CACHED_BYTES` bytes of path and encoded target.

    >>> cache = RedirectCache(2)
    >>> cache.get(b"/ark:1/a", 1) is None  # a miss: the request decides, then keeps its redirect
    True
    >>> cache.put(b"/ark:1/a", 1, Decision(302, location="https://e.org/a"))
    >>> cache.get(b"/ark:1/a", 1)
    (302, b'https://e.org/a')
    >>> cache.get(b"/ark:1/a", 2) is None, len(cache)
    (True, 0)
    """

    __slots__ = ("_entries", "_order", "_stamp", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._stamp: Hashable = None
        self._entries: dict[bytes, tuple[int, bytes]] = {}
        self._order: deque[bytes] = deque()  # the keys of _entries, oldest first

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: bytes) -> tuple[int, bytes] | None:
        """The redirect kept for ``key`` under whatever stamp is in force (then ask :meth:`get`)."""
        return self._entries.get(key)

    def get(self, key: bytes, stamp: Hashable) -> tuple[int, bytes] | None:
        """The redirect kept for ``key`` under ``stamp``; a new stamp drops every one kept."""
        if stamp != self._stamp:
            self._entries.clear()
            self._order.clear()
            self._stamp = stamp
            return None
        return self._entries.get(key)

    def put(self, key: bytes, stamp: Hashable, decision: Decision) -> None:
        """Keep ``decision`` if it is a redirect, small enough, and ``stamp`` is still the one in force
        (a request that began before a change keeps nothing)."""
        location = decision.location
        if self.size <= 0 or location is None or stamp != self._stamp:
            return
        encoded = redirect_start(location, decision.status)["headers"][1][1]
        if len(key) + len(encoded) > CACHED_BYTES:
            return
        entries = self._entries
        if key not in entries:
            if len(entries) >= self.size:
                entries.pop(self._order.popleft(), None)  # the oldest
            self._order.append(key)
        entries[key] = (decision.status, encoded)


class FastPathApp(FastAPI):
    """The FastAPI app, with plain ARK resolution (:func:`is_fast`) answered before it."""

    #: ``state``'s redirect cache, lookup and registry holder, read once (each read of Starlette's
    #: ``State`` costs a ``__getattr__``; :func:`~pidkit.web.app.create_app` sets them before serving).
    _hot: tuple[RedirectCache, Lookup, RegistryHolder] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a fast-path request here (from the worker's :class:`RedirectCache` when it holds the
        answer), hand every other one to FastAPI."""
        keep = self._keeping(scope, kept_only=False)
        if keep is not None:
            kept = keep[0].get(keep[2], keep[1])
            if kept is not None:
                await send(kept_start(kept))
                await send({"type": "http.response.body", "body": b""})
                return
            await self._resolve(scope, receive, send, raw_ark(scope), keep)
            return
        if self.root_path or not is_fast(scope):
            await super().__call__(scope, receive, send)
            return
        await self._resolve(scope, receive, send, raw_ark(scope), None)

    def kept_redirect(self, scope: Scope) -> tuple[int, bytes] | None:
        """The redirect :meth:`__call__` would send for the request ``scope`` from the worker's
        :class:`RedirectCache` (its status and encoded ``location``; :func:`kept_start` makes the first
        message), or ``None`` when it would not; never raises.  The HTTP protocol asks this to answer
        such a request without an ASGI task (:mod:`pidkit.web.protocol`).

        >>> from pidkit.web import create_app
        >>> app = create_app("sqlite:///:memory:")
        >>> app.kept_redirect({"type": "http", "method": "GET", "path": "/ark:1/x",
        ...                    "raw_path": b"/ark:1/x", "query_string": b"", "headers": []}) is None
        True
        """
        keep = self._keeping(scope, kept_only=True)
        return None if keep is None else keep[0].get(keep[2], keep[1])

    def _keeping(self, scope: Scope, *, kept_only: bool) -> tuple[RedirectCache, Hashable, bytes] | None:
        """The worker's cache, the stamp in force and the request's key when the cache may answer
        ``scope`` or keep its answer: a fast-path request (:func:`_plain`, no ``root_path``) whose raw
        path the cache holds or — unless ``kept_only`` — the ARK route matches (the same raw path
        decodes the same); the stamp is taken before anything is read."""
        hot = self._hot or self._read_hot()
        if hot is None:
            return None
        cache = hot[0]
        key = scope.get("raw_path")
        if (
            cache.size <= 0
            or not isinstance(key, bytes)
            or self.root_path
            or not _plain(scope)
            or (cache.peek(key) is None and (kept_only or ARK_ROUTE.match(scope["path"]) is None))
        ):
            return None
        stamp = self._stamp(hot[1], hot[2])
        return None if stamp is None else (cache, stamp, key)

    def _read_hot(self) -> tuple[RedirectCache, Lookup, RegistryHolder] | None:
        """:attr:`_hot`, once ``state`` holds all three (``None`` before, or without a cache)."""
        state = self.state
        cache = getattr(state, "redirects", None)
        lookup = getattr(state, "lookup", None)
        registry = getattr(state, "registry", None)
        if cache is None or lookup is None or registry is None:
            return None
        self._hot = (cache, lookup, registry)
        return self._hot

    @staticmethod
    def _stamp(lookup: Lookup, registry: RegistryHolder) -> Hashable | None:
        """What the kept redirects are filed under: the store's changes token and the registry in force
        (objects, compared by identity first); ``None`` when the store cannot tell or asking it failed
        (the request is then answered as without the cache, which says what is wrong)."""
        try:
            token = lookup.changes_token()
            return None if token is None else (token, registry.get())
        except Exception:  # the cache never fails a request: the uncached path answers, or says why
            _log.debug("no changes token: answered without the cache", exc_info=True)
            return None

    async def _resolve(self, scope: Scope, receive: Receive, send: Send, text: str,
                       keep: tuple[RedirectCache, Hashable, bytes] | None) -> None:
        """Decide ``text`` by the one resolution flow and answer; a redirect is kept in ``keep``'s
        cache under its stamp and key."""
        settings: Settings = self.state.settings
        lookup: Lookup = self.state.lookup
        request = Request(scope, receive)
        try:
            decision = await decide(text, lookup, fallback=settings.forward_to,
                                    registry=self.state.registry.get())
            if decision.location is not None:
                if keep is not None:
                    keep[0].put(keep[2], keep[1], decision)
                await redirect(send, decision.location, decision.status)  # most of a resolver's answers
                return
            response = render(request, decision)
        except UNAVAILABLE:
            response = service_unavailable(request)
        except PidkitError as exc:
            response = domain_error_response(request, exc)
        await response(scope, receive, send)
