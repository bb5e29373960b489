"""Errors and their HTTP answers — in one place for the whole service.

* :func:`http_status` maps the :mod:`pidkit.errors` tree to 4xx statuses (no catch-all);
* a store that cannot be reached (:data:`UNAVAILABLE`) is a 503 with ``Retry-After``;
* API paths (``/api/…``) get JSON errors; elsewhere the error takes the negotiated type
  (:func:`error_type`): for ``?info`` ANVL text by default (``error:`` / ``message:``), HTML or JSON on
  request; otherwise an HTML page, or JSON for a client that prefers ``application/json``;
* EZID's API (below ``Settings.ezid_base``) gets EZID's error bodies: ``text/plain; charset=UTF-8``, one
  line ``error: <reason>`` (:func:`ezid_error`, EZID API v2 "Error reporting");
* a 405 names every method the path allows (:func:`allowed_methods`);
* :func:`install_error_handlers` registers all of it on an application.

>>> error_body(404, "not bound", field="ark")
{'error': {'status': 404, 'message': 'not bound', 'field': 'ark'}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from ..anvl import anvl_record, ezid_record
from ..errors import ConflictError, ExhaustedError, NotFoundError, PidkitError
from ..store import ImportRejectedError, NotOwnerError
from .batch import LookupTimeoutError
from .negotiation import negotiate, wants_info
from .stores import UNAVAILABLE_ERRORS, StoreUnavailableError
from .templates import esc, page

__all__ = [
    "API_PREFIX",
    "RETRY_AFTER",
    "UNAVAILABLE",
    "ApiError",
    "allowed_methods",
    "domain_error_response",
    "error_body",
    "error_response",
    "error_type",
    "ezid_error",
    "http_status",
    "install_error_handlers",
    "is_ezid",
    "service_unavailable",
]

#: Seconds a client is told to wait after a 503.
RETRY_AFTER: Final = 5
API_PREFIX: Final = "/api/"
#: What is answered 503 (try again): the store cannot be opened or reached, a lookup missed its deadline.
UNAVAILABLE: Final[tuple[type[Exception], ...]] = (
    StoreUnavailableError, LookupTimeoutError, *UNAVAILABLE_ERRORS
)


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


#: EZID's media type for every body ("Request & response bodies").
EZID_TYPE: Final = "text/plain; charset=UTF-8"
#: EZID's reasons that stand alone ("Authentication": ``error: unauthorized``, ``error: forbidden``).
_EZID_BARE: Final = {401: "unauthorized", 403: "forbidden", 405: "method not allowed"}


def under(path: str, base: str) -> bool:
    """True if ``path`` is ``base`` or below it.

    >>> under("/ezid/id/ark:/1/x", "/ezid"), under("/ezidx", "/ezid"), under("/ezid", "/ezid")
    (True, False, True)
    """
    return path == base or path.startswith(base + "/")


def is_ezid(request: Request) -> bool:
    """True for a request to EZID's API (below ``Settings.ezid_base``; an app without settings — or the
    resolver's fast path, which answers ``/ark:…`` before the app — has none)."""
    app = request.scope.get("app")
    settings = getattr(app.state, "settings", None) if app is not None else None
    return settings is not None and under(request.url.path, settings.ezid_base)


def ezid_reason(status: int, message: str) -> str:
    """The reason of EZID's ``error:`` line for ``status``: ``bad request - <message>`` for a 400,
    ``unauthorized`` / ``forbidden`` / ``method not allowed`` as they are, else the status's title and
    the message.

    >>> ezid_reason(400, "no such identifier"), ezid_reason(401, "x"), ezid_reason(503, "try again")
    ('bad request - no such identifier', 'unauthorized', 'service unavailable - try again')
    """
    if status in _EZID_BARE:
        return _EZID_BARE[status]
    return f"{_TITLES.get(status, 'error').lower()} - {message}"


def ezid_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """EZID's error answer: ``error: <reason>`` (:func:`ezid_reason`) as EZID's ANVL, ``status``.

    >>> r = ezid_error(400, "no such identifier")
    >>> r.status_code, r.body, r.headers["content-type"]
    (400, b'error: bad request - no such identifier\\n', 'text/plain; charset=UTF-8')
    """
    return PlainTextResponse(ezid_record([("error", ezid_reason(status, message))]), status_code=status,
                             headers=headers, media_type=EZID_TYPE)


def error_type(request: Request) -> str:
    """The media type of an error answer to ``request``: JSON on API paths; for ``?info`` the
    negotiated description type (ANVL ``text/plain`` by default); otherwise HTML unless the client
    prefers ``application/json``."""
    if _wants_api(request):
        return "application/json"
    accept = request.headers.get("accept", "*/*")
    if wants_info(request.scope):
        return negotiate(accept)
    return negotiate(accept, ("text/html", "application/json"))


def encodable(value: object) -> object:
    r"""``value`` with every string in it (in lists and dict keys and values too) encodable as UTF-8: a
    lone surrogate — which a JSON text may carry, even in an object key, and no response can — becomes
    its escape (``\udXXX``), so an error naming such an input is still answered.

    >>> encodable({"input": "a\ud800", "n": [1, "\udfff"]})
    {'input': 'a\\ud800', 'n': [1, '\\udfff']}
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, list | tuple):
        return [encodable(v) for v in value]
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    return value


def error_response(request: Request, status: int, message: str, *, title: str | None = None,
                   headers: Mapping[str, str] | None = None, **extra: object) -> Response:
    """An error in the type :func:`error_type` negotiates: JSON, ANVL text or an HTML page (EZID's
    ``error:`` line below EZID's base path).  Every string in it is :func:`encodable`."""
    message = str(encodable(message))
    extra = {k: encodable(v) for k, v in extra.items()}
    if is_ezid(request):
        return ezid_error(status, message, headers)
    kind = error_type(request)
    if kind == "application/json":
        return JSONResponse(error_body(status, message, **extra), status_code=status, headers=headers)
    heading = title or _TITLES.get(status, "Error")
    if kind == "text/plain":  # ANVL (draft-kunze-ark-40 §5.2): one element per line, no raw newlines
        anvl = anvl_record([("error", f"{status} {heading}"), ("message", message)])
        return PlainTextResponse(anvl, status_code=status, headers=headers)
    body = (f'<section class="card"><p class="bad">{esc(message)}</p>'
            '<p><a href="/">Back to the resolver</a></p></section>')
    return HTMLResponse(page(f"{status} {heading}", body), status_code=status, headers=headers)


_TITLES: Final = {
    400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
    409: "Conflict", 410: "Gone", 413: "Request body too large", 422: "Unprocessable request",
    429: "Too many requests", 503: "Service unavailable",
}


def allowed_methods(request: Request) -> str:
    """The ``Allow`` header for ``request``'s path: the methods of every route whose path matches it
    (several routes may serve one path, e.g. ``GET`` and ``PUT /api/v1/bindings``).

    >>> from fastapi.testclient import TestClient
    >>> from pidkit.web import create_app
    >>> TestClient(create_app("sqlite:///:memory:")).options("/api/v1/bindings").headers["allow"]
    'GET, PATCH, PUT'
    """
    routes = request.app.router.routes
    scope = dict(request.scope)
    allowed = [m for m in _METHODS if any(r.matches({**scope, "method": m})[0] is Match.FULL for r in routes)]
    return ", ".join(allowed)


#: The methods :func:`allowed_methods` tries.
_METHODS: Final = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


def domain_error_response(request: Request, exc: PidkitError) -> Response:
    """The answer to a domain error: :func:`http_status`, naming the input and the position."""
    return error_response(request, http_status(exc), str(exc), input=exc.text, position=exc.position)


def service_unavailable(request: Request) -> Response:
    """503 with ``Retry-After``: the store cannot be reached now."""
    return error_response(request, 503, "the store is unavailable; try again shortly",
                          headers={"Retry-After": str(RETRY_AFTER)})


def install_error_handlers(app: FastAPI) -> None:
    """Register the answers to every error the service knows on ``app`` (the one place they are made).

    >>> from fastapi import FastAPI
    >>> app = FastAPI()
    >>> install_error_handlers(app)
    >>> ApiError in app.exception_handlers and PidkitError in app.exception_handlers
    True
    """

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return error_response(request, exc.status, exc.message, headers=exc.headers, field=exc.field)

    @app.exception_handler(ImportRejectedError)
    async def _import_rejected(request: Request, exc: ImportRejectedError) -> Response:
        problems = [{"line": n, "message": m} for n, m in exc.problems]
        return error_response(request, 422, str(exc), field="body", problems=problems, count=exc.count)

    @app.exception_handler(PidkitError)
    async def _domain_error(request: Request, exc: PidkitError) -> Response:
        return domain_error_response(request, exc)

    for exc_type in UNAVAILABLE:
        app.add_exception_handler(exc_type, _unavailable)

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
        headers = exc.headers
        if exc.status_code == 405:  # Starlette names the methods of the first route only
            headers = {**(headers or {}), "Allow": allowed_methods(request)}
        return error_response(request, exc.status_code, str(exc.detail), headers=headers)


async def _unavailable(request: Request, exc: Exception) -> Response:
    return service_unavailable(request)
