"""EZID's API, version 2, for ARKs, below one base path (``Settings.ezid_base``, default ``/ezid``): an
EZID client changes only its base URL (docs/ezid.md; EZID API v2 documentation in
``specs/ezid/apidoc.2.rst``).

=========================================  ==============================================================
request                                    what it does
=========================================  ==============================================================
``GET {base}/id/{id}``                     view (``?prefix_match=yes``: the longest bound ancestor)
``PUT {base}/id/{id}``                     create (201; ``?update_if_exists=yes``: update, 200)
``POST {base}/id/{id}``                    update (an empty value deletes the element)
``DELETE {base}/id/{id}``                  delete a reserved id (it stays held: never minted again)
``POST {base}/shoulder/{shoulder}``        mint on the shoulder's minter, then create (201)
``GET {base}/login`` / ``logout``          open (HTTP Basic) / end a session cookie
``GET {base}/status`` / ``version``        ``success: EZID is up`` / pidkit's version
=========================================  ==============================================================

Bodies are EZID's ANVL (:func:`pidkit.anvl.ezid_record`, :func:`pidkit.anvl.read_ezid_record`), the
elements mapped to bindings by :mod:`pidkit.store.ezid` (the mapping the EZID importer uses too), errors
EZID's ``error: …`` lines (:func:`pidkit.web.errors.ezid_error`).  Users are the back office's
(:meth:`~pidkit.store.Store.authenticate`, rate limited), by HTTP Basic (realm ``EZID``) or the session
cookie of ``login`` (a back-office session, its cookie limited to the base path, ``SameSite=Strict``);
what a user may touch is :meth:`~pidkit.store.Scope.allows`; every change is recorded as
``user:<name>``.  Writes from another site's page (``Sec-Fetch-Site`` cross-site, or an ``Origin``
that is not this service) are refused: a browser may hold Basic credentials or the cookie.

>>> from fastapi.testclient import TestClient
>>> from pidkit.web import create_app
>>> with TestClient(create_app("sqlite:///:memory:")) as client:
...     client.get("/ezid/status").text, client.get("/ezid/id/ark:/99999/bogus").text
('success: EZID is up\\n', 'error: bad request - no such identifier\\n')
"""

from __future__ import annotations

import base64
import binascii
import codecs
import datetime as _dt
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..anvl import AnvlError, ezid_record, read_ezid_record
from ..ark import Ark
from ..errors import PidkitError
from ..store import AlreadyBoundError, Binding, Principal, ReservedAgainError, Store, User
from ..store.accounts import SignInRefusedError, TooManySignInsError
from ..store.changes import BindingChange
from ..store.ezid import binding_elements, ezid_change, ezid_id, reserved_again
from ..store.keys import minter_on, template_shoulder
from ..store.rows import check_new
from .errors import EZID_TYPE, RETRY_AFTER, UNAVAILABLE, ezid_error
from .sessions import cookie_value, secure_cookie, token_of
from .stores import settings_of, store_of

__all__ = ["EZID_COOKIE", "ezid_router"]

#: The session cookie of ``login`` (the name of EZID's own example).
EZID_COOKIE: Final = "sessionid"
#: HTTP Basic's challenge ("Authentication": the realm is "EZID").
CHALLENGE: Final = {"WWW-Authenticate": 'Basic realm="EZID"'}
#: Query values EZID reads as yes.
_YES: Final = "yes"


class EzidRefusalError(Exception):
    """An EZID error answer: the status, the message and any headers."""

    def __init__(self, status: int, message: str = "", headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def _success(line: str, elements: list[tuple[str, str]] | None = None, status: int = 200) -> Response:
    return PlainTextResponse(ezid_record([("success", line), *(elements or [])]), status_code=status,
                             media_type=EZID_TYPE)


def _answer(work: Callable[[], Response]) -> Response:
    """Run ``work``; a refusal, a domain error (400, naming the input) or an unreachable store (503) is
    answered in EZID's form — never a 500."""
    try:
        return work()
    except EzidRefusalError as exc:
        return ezid_error(exc.status, exc.message, exc.headers)
    except PidkitError as exc:
        return ezid_error(400, str(exc))
    except UNAVAILABLE:
        return ezid_error(503, "the store is unavailable; try again shortly",
                          {"Retry-After": str(RETRY_AFTER)})


# -- who is asking ------------------------------------------------------------------------------------
def _basic(header: str) -> tuple[str, str]:
    """User name and password of an ``Authorization: Basic …`` header (RFC 7617), or a 401."""
    scheme, _, data = header.strip().partition(" ")
    if scheme.lower() != "basic":
        raise EzidRefusalError(401, "HTTP Basic authentication", CHALLENGE)
    try:
        decoded = base64.b64decode(data.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise EzidRefusalError(401, "malformed Basic credentials", CHALLENGE) from None
    name, colon, password = decoded.partition(":")
    if not colon:
        raise EzidRefusalError(401, "malformed Basic credentials", CHALLENGE)
    return name, password


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _session_token(request: Request, store: Store) -> str | None:
    value = request.cookies.get(EZID_COOKIE, "")
    return token_of(store.cookie_key(), value) if value and len(value) <= 300 else None


def _user(request: Request, *, required: bool) -> User | None:
    """The requesting user: HTTP Basic credentials (checked, rate limited), else the session cookie of
    ``login``; ``None`` for nobody, or a 401 with the challenge when ``required``.  Wrong credentials are
    a 401 even where none are needed (EZID: "credentials are either missing or invalid")."""
    store = store_of(request)
    header = request.headers.get("authorization")
    if header is not None:
        name, password = _basic(header)
        try:
            return store.authenticate(name, password, address=_address(request))
        except TooManySignInsError as exc:
            raise EzidRefusalError(429, str(exc), {"Retry-After": str(exc.retry_after)}) from None
        except SignInRefusedError:
            raise EzidRefusalError(401, "", CHALLENGE) from None
    token = _session_token(request, store)
    found = store.session(token) if token else None
    if found is not None:
        return found[0]
    if required:
        raise EzidRefusalError(401, "", CHALLENGE)
    return None


def _signed(request: Request) -> User:
    """The requesting user, or a 401 with the challenge."""
    user = _user(request, required=True)
    if user is None:  # pragma: no cover - required=True raises instead
        raise EzidRefusalError(401, "", CHALLENGE)
    return user


def _same_site(request: Request) -> None:
    """Refuse a write another site's page sent (a browser attaches cached Basic credentials)."""
    if request.headers.get("sec-fetch-site", "") in ("cross-site", "same-site"):
        raise EzidRefusalError(403, "cross-site request")
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin.rstrip("/").lower() != own.lower():
            raise EzidRefusalError(403, "cross-site request")


# -- identifiers --------------------------------------------------------------------------------------
def _scheme(text: str) -> str:
    return text.partition(":")[0].lower() if ":" in text else ""


def _ark(identifier: str) -> Ark:
    """The normalized ARK of an EZID identifier; a DOI, UUID or other scheme EZID hosts is a 400."""
    scheme = _scheme(identifier)
    if scheme != "ark":
        kind = f"{scheme}: identifiers" if scheme else "identifiers without a scheme"
        raise EzidRefusalError(400, f"unsupported identifier type: pidkit serves ARKs only, not {kind} "
                      f"({identifier!r})")  # fmt: skip
    try:
        return Ark.parse(identifier).normalize()
    except PidkitError as exc:
        raise EzidRefusalError(400, f"invalid identifier: {exc}") from None


def _allowed(user: User, ark: Ark) -> bool:
    return user.scope.allows(str(ark.naan), ark.shoulder or None)


def _own_url(request: Request, key: str) -> str:
    """The identifier's EZID URL: its target when none is given (EZID "Internal metadata", ``_target``)."""
    base = settings_of(request).ezid_base
    return f"{str(request.base_url).rstrip('/')}{base}/id/{urllib.parse.quote(ezid_id(key), safe=':/')}"


def _owner(store: Store, key: str) -> str | None:
    """``_owner``: who created the id — the principal of its first history row (a user by name)."""
    entries = store.history("ark", key)
    if not entries:
        return None
    principal = Principal.parse(entries[0].principal)
    return principal.name if principal.kind == "user" else str(principal)


async def _elements(request: Request) -> dict[str, str]:
    """The request body's elements (EZID ANVL; UTF-8 unless the ``Content-Type`` names a charset)."""
    body = await request.body()
    charset = "utf-8"
    for param in request.headers.get("content-type", "").split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"') or charset
    try:
        text = body.decode(codecs.lookup(charset).name)
    except LookupError:
        raise EzidRefusalError(400, f"unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start + 1}"
        raise EzidRefusalError(400, f"the request body is not {charset} text ({where})") from None
    except UnicodeError:  # a codec that decodes nothing (e.g. "undefined")
        raise EzidRefusalError(400, f"the request body cannot be read as {charset!r}") from None
    try:
        return read_ezid_record(text)
    except AnvlError as exc:
        raise EzidRefusalError(400, f"ANVL parse error ({exc})") from None


# -- operations -----------------------------------------------------------------------------------------
def view(request: Request, identifier: str, prefix_match: bool) -> Response:
    """EZID "get identifier metadata": no authentication for public ids; a reserved one only for a user
    whose scope covers it (401 asking for credentials, 403 for another user)."""
    if _scheme(identifier) != "ark":
        raise EzidRefusalError(400, "no such identifier")
    ark = _ark(identifier)
    store = store_of(request)
    user = _user(request, required=False)
    found: Binding | None = store.get_binding(str(ark))
    if found is None and prefix_match:
        found = next((b for a in ark.ancestors() if (b := store.get_binding(str(a))) is not None), None)
    if found is None:
        raise EzidRefusalError(400, "no such identifier")
    if found.status == "reserved":
        if user is None:
            raise EzidRefusalError(401, "", CHALLENGE)
        if not user.scope.allows(found.naan, found.shoulder):
            raise EzidRefusalError(403)
    line = ezid_id(found.key)
    if found.key != str(ark):
        line += f" in_lieu_of {ezid_id(str(ark))}"
    return _success(line, binding_elements(found, _owner(store, found.key)))


def _write_target(request: Request, identifier: str) -> tuple[User, Ark]:
    """The user (401), the ARK (400) and the scope check (403) every write starts with."""
    _same_site(request)
    user = _signed(request)
    ark = _ark(identifier)
    if not _allowed(user, ark):
        raise EzidRefusalError(403)
    return user, ark


def create(
    request: Request, identifier: str, elements: Mapping[str, str], update_if_exists: bool
) -> Response:
    """EZID "create identifier" (201), or with ``update_if_exists`` an update of an existing one (200)."""
    user, ark = _write_target(request, identifier)
    store = store_of(request)
    key = str(ark)
    before = store.get_binding(key)
    if before is not None and not update_if_exists:
        raise EzidRefusalError(400, "identifier already exists")
    change = ezid_change(elements, before, owner=user.name, default_target=_own_url(request, key))
    try:  # a create stays a create: another one that won meanwhile is not overwritten
        b = store.change("ark", identifier if before is None else key, change,
                         principal=Principal.user(user.name), only_new=before is None)  # fmt: skip
    except ReservedAgainError:
        raise reserved_again() from None
    except AlreadyBoundError:
        raise EzidRefusalError(400, "identifier already exists") from None
    return _success(ezid_id(b.key), status=201 if before is None else 200)


def update(request: Request, identifier: str, elements: Mapping[str, str]) -> Response:
    """EZID "update identifier": the elements named change, an empty value deletes one (200)."""
    user, ark = _write_target(request, identifier)
    store = store_of(request)
    key = str(ark)
    before = store.get_binding(key)
    if before is None:
        raise EzidRefusalError(400, "no such identifier")
    change = ezid_change(elements, before, owner=user.name, default_target=_own_url(request, key))
    try:
        b = store.change("ark", key, change, principal=Principal.user(user.name))
    except ReservedAgainError:
        raise reserved_again() from None
    return _success(ezid_id(b.key))


def delete(request: Request, identifier: str) -> Response:
    """EZID "delete identifier": only a reserved id (it stays held, never minted again)."""
    user, ark = _write_target(request, identifier)
    store = store_of(request)
    before = store.get_binding(str(ark))
    if before is None:
        raise EzidRefusalError(400, "no such identifier")
    if before.status != "reserved":
        raise EzidRefusalError(400, "identifier status does not support deletion")
    store.delete("ark", str(ark), principal=Principal.user(user.name))
    return _success(ezid_id(before.key))


def mint(request: Request, shoulder: str, elements: Mapping[str, str]) -> Response:
    """EZID "mint identifier": the next id of the minter on ``shoulder`` (``ark:/NAAN/prefix``), created
    with the elements (``${identifier}`` in ``_target`` replaced by the new id).  The elements are checked
    before an id is minted, so a refused request uses none."""
    _same_site(request)
    user = _signed(request)
    if _scheme(shoulder) != "ark":
        _ark(shoulder)  # the 400 naming the unsupported type
    naan, _, prefix = shoulder[len("ark:"):].lstrip("/").partition("/")
    store = store_of(request)
    minter = minter_on(store.list_minters(), naan, prefix)
    if minter is None:
        if not (user.scope.admin or user.scope.naan == naan):
            raise EzidRefusalError(403)
        raise EzidRefusalError(400, f"no minter mints on shoulder {shoulder!r}")
    if not user.scope.allows(naan, template_shoulder(minter.template, minter.naan)):
        raise EzidRefusalError(403)

    def change_for(key: str) -> BindingChange:
        named = {n: (v.replace("${identifier}", ezid_id(key)) if n == "_target" else v)
                 for n, v in elements.items()}
        return ezid_change(named, None, owner=user.name, default_target=_own_url(request, key))

    sample = f"ark:{naan}/{prefix}"
    check_new(change_for(sample), sample)
    (minted,) = store.mint(minter.name, 1, principal=Principal.user(user.name))
    # a minted id is new: a binding someone made of it meanwhile (by hand) is never merged into
    b = store.change("ark", minted, change_for(minted), principal=Principal.user(user.name), only_new=True)
    return _success(ezid_id(b.key), status=201)


def login(request: Request) -> Response:
    """EZID "one-time login": HTTP Basic credentials open a session; its cookie comes back."""
    store = store_of(request)
    header = request.headers.get("authorization")
    if header is None:
        raise EzidRefusalError(401, "", CHALLENGE)
    name, password = _basic(header)
    hours = settings_of(request).session_hours
    try:
        _, _, token = store.sign_in(name, password, address=_address(request),
                                    lifetime=_dt.timedelta(hours=hours))
    except TooManySignInsError as exc:
        raise EzidRefusalError(429, str(exc), {"Retry-After": str(exc.retry_after)}) from None
    except SignInRefusedError:
        raise EzidRefusalError(401, "", CHALLENGE) from None
    response = _success("session cookie returned")
    response.set_cookie(EZID_COOKIE, cookie_value(store.cookie_key(), token),
                        path=settings_of(request).ezid_base, httponly=True, samesite="strict",
                        secure=secure_cookie(request), max_age=hours * 3600)  # fmt: skip
    return response


def logout(request: Request) -> Response:
    """EZID's logout: the session of the cookie ends (it opens nothing again) and the cookie is cleared."""
    store = store_of(request)
    token = _session_token(request, store)
    if token is not None:
        store.end_session(token)
    response = _success("authentication credentials flushed")
    response.delete_cookie(EZID_COOKIE, path=settings_of(request).ezid_base)
    return response


def status(request: Request) -> Response:
    """EZID "Server status": up when the store answers."""
    store_of(request).schema_version()
    return _success("EZID is up")


def ezid_router(base: str) -> APIRouter:
    """EZID's API as a router whose paths start with ``base`` (``Settings.ezid_base``).

    >>> sorted({r.path for r in ezid_router("/ezid").routes})[:2]
    ['/ezid/id/{identifier:path}', '/ezid/login']
    """
    router = APIRouter(prefix=base, include_in_schema=False)

    def query_yes(request: Request, name: str) -> bool:
        return request.query_params.get(name, "").lower() == _YES

    @router.get("/id/{identifier:path}")
    async def get_id(request: Request, identifier: str) -> Response:
        prefix = query_yes(request, "prefix_match")
        return await run_in_threadpool(_answer, lambda: view(request, identifier, prefix))

    @router.put("/id/{identifier:path}")
    async def put_id(request: Request, identifier: str) -> Response:
        try:
            elements = await _elements(request)
        except EzidRefusalError as exc:
            return ezid_error(exc.status, exc.message, exc.headers)
        again = query_yes(request, "update_if_exists")
        return await run_in_threadpool(_answer, lambda: create(request, identifier, elements, again))

    @router.post("/id/{identifier:path}")
    async def post_id(request: Request, identifier: str) -> Response:
        try:
            elements = await _elements(request)
        except EzidRefusalError as exc:
            return ezid_error(exc.status, exc.message, exc.headers)
        return await run_in_threadpool(_answer, lambda: update(request, identifier, elements))

    @router.delete("/id/{identifier:path}")
    async def delete_id(request: Request, identifier: str) -> Response:
        return await run_in_threadpool(_answer, lambda: delete(request, identifier))

    @router.post("/shoulder/{shoulder:path}")
    async def post_shoulder(request: Request, shoulder: str) -> Response:
        try:
            elements = await _elements(request)
        except EzidRefusalError as exc:
            return ezid_error(exc.status, exc.message, exc.headers)
        return await run_in_threadpool(_answer, lambda: mint(request, shoulder, elements))

    @router.get("/login")
    async def get_login(request: Request) -> Response:
        return await run_in_threadpool(_answer, lambda: login(request))

    @router.get("/logout")
    async def get_logout(request: Request) -> Response:
        return await run_in_threadpool(_answer, lambda: logout(request))

    @router.get("/status")
    async def get_status(request: Request) -> Response:
        return await run_in_threadpool(_answer, lambda: status(request))

    @router.get("/version")
    def get_version() -> Response:
        return _success(f"pidkit {__version__} (EZID API version 2, ARKs)")

    return router
