"""EXPERIMENT, not part of pidkit: a raw-ASGI fast path for plain ``GET /ark:…`` in front of the app.

It answers an exactly bound, public ARK with a bare 302 straight from the store — no FastAPI/Starlette
middleware, routing, dependency solving or thread-pool hand-off — and passes every other request (``?info``,
passthrough, tombstones, 404s, the API, the pages) to pidkit's own app unchanged.  It exists to measure
how much of the resolver's time is framework overhead (see ``benchmarks/resolver/PROFILE.md``); the fix
itself belongs in ``src/pidkit/web``.

Run: ``PIDKIT_DATABASE_URL=… uvicorn fastpath:app --app-dir benchmarks/resolver --workers 2``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pidkit.errors import PidkitError
from pidkit.store import default_url, open_store
from pidkit.web.app import app_from_env

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

inner = app_from_env()
store = open_store(default_url())


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """Bound public ARK, GET, no query: 302 from here; anything else: pidkit's app."""
    if (
        scope["type"] == "http"
        and scope["method"] == "GET"
        and scope["path"].startswith("/ark:")
        and not scope.get("query_string")
    ):
        raw = scope.get("raw_path") or scope["path"].encode("latin-1")
        try:
            found = store.resolve(raw.decode("latin-1")[1:])
        except PidkitError:
            found = None
        if (
            found is not None
            and not found.suffix
            and found.binding.status == "public"
            and found.binding.target
        ):
            headers = [(b"location", found.binding.target.encode("latin-1")), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 302, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
    await inner(scope, receive, send)
