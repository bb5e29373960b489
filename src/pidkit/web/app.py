"""The ASGI application: resolver, REST API and HTML pages over one store.

:func:`create_app` builds it from a store URL, an open :class:`~pidkit.store.Store` or a factory;
:func:`app_from_env` is the factory ``uvicorn`` imports in each worker process (configuration from the
environment, :mod:`pidkit.web.settings`).

Error handling lives here, in one place:

* :func:`http_status` maps the :mod:`pidkit.errors` tree to 4xx statuses (no catch-all);
* a store that cannot be reached (PostgreSQL down, SQLite locked for too long) is a 503 with
  ``Retry-After``; :class:`StoreHolder` opens the store lazily and retries, so the service recovers
  by itself;
* API paths (``/api/…``) get JSON errors; elsewhere the error takes the negotiated type: for
  ``?info`` ANVL text by default (``error:`` / ``message:``), HTML or JSON on request; otherwise an
  HTML page, or JSON for a client that prefers ``application/json``;
* :class:`BodyLimit` refuses bodies over ``max_body`` bytes with 413 — by ``Content-Length`` up
  front, and by counting bytes as they arrive (chunked bodies too).

>>> from fastapi.testclient import TestClient
>>> with TestClient(create_app("sqlite:///:memory:")) as client:
...     client.get("/.well-known/ark").text
'/\\n'
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..errors import (
    ConflictError,
    ExhaustedError,
    NotFoundError,
    PidkitError,
)
from ..store import ImportRejectedError, NotOwnerError, Store, open_store
from .settings import Settings
from .templates import esc, page

try:  # the postgres extra is optional
    import psycopg
    import psycopg_pool

    _PG_UNAVAILABLE: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg_pool.PoolTimeout)
    _PG_ERRORS: tuple[type[Exception], ...] = (psycopg.Error,)
except ImportError:  # pragma: no cover - postgres extra not installed
    _PG_UNAVAILABLE = ()
    _PG_ERRORS = ()

__all__ = ["BodyLimit", "StoreHolder", "StoreUnavailableError", "app_from_env", "create_app", "http_status"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Exceptions meaning "the database cannot be reached right now" (→ 503, try again).
UNAVAILABLE_ERRORS: Final[tuple[type[Exception], ...]] = (sqlite3.OperationalError, *_PG_UNAVAILABLE)
#: Exceptions meaning "the store cannot be opened" (bad URL, unreachable server, unreadable file).
_OPEN_ERRORS: Final[tuple[type[Exception], ...]] = (PidkitError, OSError, sqlite3.Error, *_PG_ERRORS)
#: Seconds a client is told to wait after a 503.
RETRY_AFTER: Final = 5
#: Seconds a request waits for another request that is opening the store (a healthy cold start).
OPEN_WAIT: Final = 10.0
API_PREFIX: Final = "/api/"


class StoreUnavailableError(Exception):
    """The store cannot be opened or reached now (answered 503; the service retries by itself)."""


class StoreHolder:
    """Opens the store on first use and hands it out; if opening fails it answers
    :class:`StoreUnavailableError` and tries again at most every ``retry`` seconds (without making
    every request wait for a dead database).  Requests arriving while another one opens the store wait
    for it (up to ``wait`` seconds) instead of failing; inside the back-off window they fail at once.

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


def http_status(exc: PidkitError) -> int:
    """The HTTP status for a domain error — the one mapping of :mod:`pidkit.errors` to HTTP.

    >>> http_status(NotFoundError("unknown NAAN")), http_status(ConflictError("tombstoned"))
    (404, 409)
    >>> from pidkit.errors import ArkError
    >>> http_status(ArkError("bad"))
    400
    """
    if isinstance(exc, NotOwnerError):
        return 403
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ConflictError | ExhaustedError):
        return 409
    if isinstance(exc, ImportRejectedError):
        return 422
    return 400


def error_body(status: int, message: str, **extra: object) -> dict[str, object]:
    """The JSON error document of the API: ``{"error": {"status", "message", …}}``.

    >>> error_body(400, "bad", field="ark")
    {'error': {'status': 400, 'message': 'bad', 'field': 'ark'}}
    """
    details = {k: v for k, v in extra.items() if v is not None}
    return {"error": {"status": status, "message": message, **details}}


class ApiError(Exception):
    """An API refusal with a status, a message and the request field it concerns."""

    def __init__(self, status: int, message: str, *, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.headers = headers


def _wants_api(request: Request) -> bool:
    return request.url.path.startswith(API_PREFIX) or request.url.path == "/openapi.json"


def error_type(request: Request) -> str:
    """The media type of an error answer to ``request``: JSON on API paths; for ``?info`` the
    negotiated description type (ANVL ``text/plain`` by default); otherwise HTML unless the client
    prefers ``application/json``."""
    if _wants_api(request):
        return "application/json"
    from .resolver import negotiate, wants_info  # the resolver imports this module

    accept = request.headers.get("accept", "*/*")
    if wants_info(request):
        return negotiate(accept)
    return negotiate(accept, ("text/html", "application/json"))


def error_response(request: Request, status: int, message: str, *, title: str | None = None,
                   headers: Mapping[str, str] | None = None, **extra: object) -> Response:
    """An error in the type :func:`error_type` negotiates: JSON, ANVL text or an HTML page."""
    kind = error_type(request)
    if kind == "application/json":
        return JSONResponse(error_body(status, message, **extra), status_code=status, headers=headers)
    heading = title or _TITLES.get(status, "Error")
    if kind == "text/plain":  # ANVL (draft-kunze-ark-40 §5.2): one element per line, no raw newlines
        anvl = f"error: {status} {heading}\nmessage: {' '.join(message.split())}\n"
        return PlainTextResponse(anvl, status_code=status, headers=headers)
    body = (f'<section class="card"><p class="bad">{esc(message)}</p>'
            '<p><a href="/">Back to the resolver</a></p></section>')
    return HTMLResponse(page(f"{status} {heading}", body), status_code=status, headers=headers)


_TITLES: Final = {
    400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
    409: "Conflict", 410: "Gone", 413: "Request body too large", 422: "Unprocessable request",
    503: "Service unavailable",
}


# --- body size limit ---------------------------------------------------------------------------------

class BodyTooLargeError(StarletteHTTPException):
    """Raised from ``receive`` once more than the limit has arrived (an HTTPException, so a route that
    is reading its body answers 413 through the normal handler)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes")


class BodyLimit:
    """ASGI middleware: refuse request bodies over ``limit`` bytes with 413.

    A ``Content-Length`` over the limit is refused before the app runs; otherwise the bytes are counted
    as they arrive (also for ``Transfer-Encoding: chunked``) and ``receive`` raises
    :class:`BodyTooLargeError` as soon as the count passes the limit.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                status = 413 if value.isdigit() else 400
                await _send_json(send, status, f"request body larger than {self.limit} bytes"
                                 if status == 413 else "bad Content-Length header")
                return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLargeError(self.limit)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLargeError as exc:
            if started:
                raise
            await _send_json(send, 413, exc.detail)


async def _send_json(send: Send, status: int, message: str) -> None:
    import json

    body = json.dumps(error_body(status, message)).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


# --- path convertors, one per id type (starlette) -------------------------------------------------

class ArkPathConvertor(Convertor[str]):
    """Matches a path that is an ARK: the label ``ark:`` in any case (§3.2 step 3) and the rest."""

    regex = "[aA][rR][kK]:.*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


class PidConvertor(Convertor[str]):
    """Matches one path segment naming a non-ARK id (XarkId, TID, UUID, GEDCOM UID, Library.Link id)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("arkpath", ArkPathConvertor())
register_url_convertor("pid", PidConvertor())


# --- the app ---------------------------------------------------------------------------------------

def create_app(
    store: str | Store | Callable[[], Store] | None = None,
    *,
    settings: Settings | None = None,
) -> FastAPI:
    """The ASGI app.  ``store`` is a store URL, an open :class:`~pidkit.store.Store` (not closed by the
    app) or a zero-argument factory; ``None`` uses ``settings.database_url`` / ``$PIDKIT_DATABASE_URL``.

    >>> create_app("sqlite:///:memory:").title
    'pidkit'
    """
    from . import api, pages, resolver
    from .batch import LookupBatcher, LookupTimeoutError, in_thread
    from .fastpath import FastPathApp

    settings = settings or Settings()
    if isinstance(store, Store):
        opened = store
        holder = StoreHolder(lambda: opened, retry=settings.store_retry, owned=False)
    elif callable(store):
        holder = StoreHolder(store, retry=settings.store_retry)
    else:
        url = store or settings.database_url
        holder = StoreHolder(lambda: open_store(url), retry=settings.store_retry)

    app = FastPathApp(
        title="pidkit",
        version=__version__,
        summary="ARK resolver and naming service",
        description=(
            "Mint ARKs on a shoulder, bind them to targets with ERC metadata, tombstone them, import and "
            "export bindings as JSON Lines.  Every write needs an API key (`pidkit apikey create`) sent as "
            "`Authorization: Bearer <key>`, scoped to a NAAN and optionally a shoulder."
        ),
        docs_url=None,  # Swagger UI and ReDoc load assets from a CDN; the service serves no external assets
        redoc_url=None,
    )
    app.add_middleware(BodyLimit, limit=settings.max_body)
    app.state.stores = holder
    app.state.settings = settings
    app.state.lookups = LookupBatcher(
        in_thread(holder.get, timeout=settings.lookup_timeout),
        unavailable=(LookupTimeoutError, StoreUnavailableError, *UNAVAILABLE_ERRORS),
    )
    app.router.add_event_handler("shutdown", holder.close)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return error_response(request, exc.status, exc.message, headers=exc.headers, field=exc.field)

    @app.exception_handler(ImportRejectedError)
    async def _import_rejected(request: Request, exc: ImportRejectedError) -> Response:
        problems = [{"line": n, "message": m} for n, m in exc.problems]
        return error_response(request, 422, str(exc), field="body", problems=problems)

    @app.exception_handler(PidkitError)
    async def _domain_error(request: Request, exc: PidkitError) -> Response:
        return domain_error_response(request, exc)

    @app.exception_handler(StoreUnavailableError)
    async def _unavailable(request: Request, exc: StoreUnavailableError) -> Response:
        return service_unavailable(request)

    for exc_type in UNAVAILABLE_ERRORS:
        app.add_exception_handler(exc_type, _unavailable_db)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        loc = ".".join(str(p) for p in first.get("loc", ()))
        details = [{"field": ".".join(str(p) for p in e.get("loc", ())), "message": str(e.get("msg", ""))}
                   for e in errors]
        message = f"{loc}: {first.get('msg', 'invalid')}"
        return error_response(request, 422, message, field=loc, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return error_response(request, exc.status_code, str(exc.detail), headers=exc.headers)

    app.include_router(api.router)
    app.include_router(resolver.router)
    app.include_router(pages.router)
    return app


async def _unavailable_db(request: Request, exc: Exception) -> Response:
    return service_unavailable(request)


def domain_error_response(request: Request, exc: PidkitError) -> Response:
    """The answer to a domain error: :func:`http_status`, naming the input and the position."""
    return error_response(request, http_status(exc), str(exc), input=exc.text, position=exc.position)


def service_unavailable(request: Request) -> Response:
    """503 with ``Retry-After``: the store cannot be reached now."""
    return error_response(request, 503, "the store is unavailable; try again shortly",
                          headers={"Retry-After": str(RETRY_AFTER)})


def app_from_env() -> FastAPI:
    """The app configured from the environment (``uvicorn pidkit.web.app:app_from_env --factory``).

    >>> app_from_env().title
    'pidkit'
    """
    return create_app(settings=Settings.from_env())


def store_of(request: Request) -> Store:
    """The request's store (raises :class:`StoreUnavailableError` → 503)."""
    holder: StoreHolder = request.app.state.stores
    return holder.get()


def settings_of(request: Request) -> Settings:
    """The app's settings."""
    settings: Settings = request.app.state.settings
    return settings


def text_response(text: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A ``text/plain; charset=utf-8`` response."""
    return PlainTextResponse(text, status_code=status, headers=headers)
