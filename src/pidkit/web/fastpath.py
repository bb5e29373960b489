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

>>> from fastapi.testclient import TestClient
>>> from pidkit.web import create_app
>>> with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as client:
...     client.get("/ark:00000/x").headers["location"]
'https://n2t.net/ark:00000/x'
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

from fastapi import FastAPI
from starlette.requests import Request

from ..errors import PidkitError
from ..settings import Settings
from .asgi import Receive, Scope, Send
from .convertors import ArkPathConvertor
from .errors import UNAVAILABLE, domain_error_response, service_unavailable
from .lookups import Lookup, RegistryHolder
from .resolver import decide, raw_ark, render

__all__ = ["FastPathApp", "is_fast"]

#: The path the ARK route (``/{ark:arkpath}``) matches, compiled as Starlette compiles route paths.
ARK_ROUTE: Final = re.compile(f"^/(?:{ArkPathConvertor.regex})$")
#: Methods the ARK route serves.
FAST_METHODS: Final = frozenset({"GET", "HEAD"})
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


async def redirect(send: Send, location: str, status: int = 302) -> None:
    """Send the redirect (302, or a registry record's code) that :func:`~pidkit.web.resolver.render`
    would (Starlette's ``RedirectResponse``:
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
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


class FastPathApp(FastAPI):
    """The FastAPI app, with plain ARK resolution (:func:`is_fast`) answered before it."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a fast-path request here, hand every other one to FastAPI."""
        if self.root_path or not is_fast(scope):
            await super().__call__(scope, receive, send)
            return
        request = Request(scope, receive)
        settings: Settings = self.state.settings
        lookup: Lookup = self.state.lookup
        registry: RegistryHolder = self.state.registry
        try:
            decision = await decide(raw_ark(scope), lookup, fallback=settings.forward_to,
                                    registry=registry.get())
            if decision.location is not None:
                await redirect(send, decision.location, decision.status)  # most of a resolver's answers
                return
            response = render(request, decision)
        except UNAVAILABLE:
            response = service_unavailable(request)
        except PidkitError as exc:
            response = domain_error_response(request, exc)
        await response(scope, receive, send)
