"""The back office's sign-in, sign-out ("here" and "everywhere") and a user's own API keys.

The rules are the store's (:mod:`pidkit.store.accounts`: passwords, sessions, the rate limit) and
:mod:`pidkit.web.sessions`' (cookies, CSRF); this module answers the forms.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..errors import PidkitError
from ..store import Principal
from ..store.accounts import SignInRefusedError, TooManySignInsError
from .officeviews import OFFICE_CSS, csrf_field, field, message, office_page, when
from .sessions import (
    SESSION_COOKIE,
    SIGNIN_COOKIE,
    FormError,
    Signed,
    cookie_value,
    csrf_ok,
    new_csrf,
    read_form,
    safe_next,
    secure_cookie,
    signed_in,
    to_signin,
    with_headers,
)
from .stores import settings_of, store_of
from .templates import esc

__all__ = ["FormHandler", "csrf_refused", "form_post", "posted", "router"]

router = APIRouter(include_in_schema=False)


def _signin_page(request: Request, next_path: str, *, problem: str = "", status: int = 200,
                 name: str = "", headers: dict[str, str] | None = None) -> Response:
    token = new_csrf()
    body = (
        (message(problem, bad=True) if problem else "")
        + '<section class="card"><form method="post" action="/office/signin">'
        f'<input type="hidden" name="csrf" value="{esc(token)}">'
        f'<input type="hidden" name="next" value="{esc(safe_next(next_path))}">'
        + field("name", "User name", name, required=True, extra=' autocomplete="username"')
        + field("password", "Password", kind="password", required=True,
                extra=' autocomplete="current-password"')
        + '<button type="submit">Sign in</button></form></section>'
    )
    response = office_page("Sign in", body, None, status=status)
    response.set_cookie(SIGNIN_COOKIE, token, path="/office/signin", httponly=True, samesite="lax",
                        secure=secure_cookie(request), max_age=3600)  # fmt: skip
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


@router.get("/office/signin")
def signin_form(request: Request, next: str = "/office") -> Response:
    """The sign-in page (a signed-in user goes to the dashboard)."""
    if signed_in(request) is not None:
        return with_headers(RedirectResponse(safe_next(next), status_code=303), OFFICE_CSS)
    return _signin_page(request, next)


@router.post("/office/signin")
async def signin(request: Request) -> Response:
    """Check the name and password (rate limited per account and address), open a session, set its
    cookie and go on."""
    try:
        form = await read_form(request)
    except FormError as exc:
        return office_page("Sign in", message(str(exc), bad=True), None, status=exc.status)
    name, next_path = form.get("name", ""), form.get("next", "/office")
    if not csrf_ok(request.cookies.get(SIGNIN_COOKIE, ""), form):
        return _signin_page(request, next_path, name=name, status=403,
                            problem="The form expired or was not sent from this site: please sign in again.")
    address = request.client.host if request.client else "unknown"
    hours = settings_of(request).session_hours
    try:
        _, _, token = await run_in_threadpool(  # Argon2id takes a while: not on the event loop
            store_of(request).sign_in, name, form.get("password", ""), address=address,
            lifetime=_dt.timedelta(hours=hours))
    except TooManySignInsError as exc:
        return _signin_page(request, next_path, name=name, status=429, problem=str(exc),
                            headers={"Retry-After": str(exc.retry_after)})  # fmt: skip
    except SignInRefusedError as exc:
        return _signin_page(request, next_path, name=name, status=401, problem=str(exc))
    response = with_headers(RedirectResponse(safe_next(next_path), status_code=303), OFFICE_CSS)
    value = cookie_value(store_of(request).cookie_key(), token)
    response.set_cookie(SESSION_COOKIE, value, path="/office", httponly=True, samesite="lax",
                        secure=secure_cookie(request), max_age=hours * 3600)  # fmt: skip
    response.delete_cookie(SIGNIN_COOKIE, path="/office/signin")
    return response


async def posted(request: Request) -> tuple[Signed, dict[str, str]] | Response:
    """The signed-in user and the posted form, or the answer refusing the request (not signed in: to the
    sign-in page; a bad form: 400/415; a CSRF token that does not match: 403, nothing changed)."""
    signed = await run_in_threadpool(signed_in, request)
    if signed is None:
        return to_signin(request)
    try:
        form = await read_form(request)
    except FormError as exc:
        return office_page("Not a form", message(str(exc), bad=True), signed, status=exc.status)
    if not csrf_ok(signed.session.csrf, form):
        return csrf_refused(signed)
    return signed, form


def csrf_refused(signed: Signed) -> Response:
    """The answer to a form whose CSRF token does not match the session: 403, nothing changed."""
    refusal = ("The form's security token does not match this session: nothing was changed. "
               "Reload the page and try again.")
    return office_page("Refused", message(refusal, bad=True), signed, status=403)


#: A form's handler: the request, its signed-in user and the posted form (CSRF already checked).
FormHandler = Callable[[Request, Signed, dict[str, str]], Response]


def form_post(router: APIRouter, path: str) -> Callable[[FormHandler], FormHandler]:
    """Register ``POST path`` on ``router``: the session and the form are checked by :func:`posted`
    (nothing runs for a request refused there), then the handler runs in a worker thread (it calls the
    store, which may block)."""

    def decorate(handler: FormHandler) -> FormHandler:
        async def endpoint(request: Request) -> Response:
            got = await posted(request)
            if isinstance(got, Response):
                return got
            return await run_in_threadpool(handler, request, *got)

        endpoint.__name__, endpoint.__doc__ = handler.__name__, handler.__doc__
        router.add_api_route(path, endpoint, methods=["POST"])
        return handler

    return decorate


def _signed_out() -> Response:
    response = with_headers(RedirectResponse("/office/signin", status_code=303), OFFICE_CSS)
    response.delete_cookie(SESSION_COOKIE, path="/office")
    return response


@form_post(router, "/office/signout")
def signout(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """End this session."""
    store_of(request).end_session(signed.token)
    return _signed_out()


@form_post(router, "/office/signout-everywhere")
def signout_everywhere(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """End every session of the user."""
    store_of(request).end_sessions(signed.user.name)
    return _signed_out()


def _keys_page(request: Request, signed: Signed, notice: str = "", *, problem: str = "",
               status: int = 200) -> Response:
    user = signed.user
    own = [k for k in store_of(request).list_api_keys() if k.owner == user.name]
    rows = "".join(
        f'<tr><td class="mono">{esc(k.key_id)}</td><td>{esc(k.label)}</td>'
        f'<td class="mono">{esc(k.naan)}/{esc(k.shoulder or "*")}</td><td>{when(k.created)}</td>'
        f"<td>{when(k.revoked_at) if k.revoked else 'in use'}</td><td>"
        + ("" if k.revoked else (
            f'<form method="post" action="/office/keys/revoke">{csrf_field(signed)}'
            f'<input type="hidden" name="key_id" value="{esc(k.key_id)}">'
            f'<button type="submit" class="quiet" aria-label="Revoke key {esc(k.key_id)}">Revoke</button>'
            "</form>"))
        + "</td></tr>"
        for k in own
    )
    table = (
        '<table class="grid"><thead><tr><th scope="col">Key</th><th scope="col">Label</th>'
        '<th scope="col">Scope</th>'
        f'<th scope="col">Created</th><th scope="col">Revoked</th><th scope="col">Action</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>" if own else '<p class="muted">You have no API key yet.</p>'
    )
    scope_hint = ("any NAAN" if user.admin else f"NAAN {user.naan}"
                  + (f", shoulder {user.shoulder}" if user.shoulder else ""))  # fmt: skip
    body = (
        (message(problem, bad=True) if problem else "") + notice
        + f'<section class="card"><h2>Your keys</h2>{table}</section>'
        '<section class="card"><h2>New key</h2><form method="post" action="/office/keys">'
        + csrf_field(signed)
        + field("label", "Label", hint="What the key is for, e.g. the catalogue's nightly job.")
        + field("naan", "NAAN", user.naan, required=True, hint=f"Your scope: {scope_hint}.")
        + field("shoulder", "Shoulder (optional)", user.shoulder or "",
                hint="Limit the key to one shoulder; empty: every shoulder you may use.")
        + '<button type="submit">Create key</button></form></section>'
        '<section class="card"><h2>Sessions</h2><form method="post" action="/office/signout-everywhere">'
        + csrf_field(signed)
        + '<button type="submit" class="quiet">Sign out everywhere</button></form></section>'
    )
    return office_page("API keys", body, signed, status=status)


@router.get("/office/keys")
def keys(request: Request) -> Response:
    """The user's own API keys, the form for a new one, and "sign out everywhere"."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    return _keys_page(request, signed)


@form_post(router, "/office/keys")
def create_key(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Create a key within the user's scope; its secret is shown on this answer only."""
    naan = form.get("naan", "").strip()
    shoulder = form.get("shoulder", "").strip() or None
    scope = signed.user.scope
    if not scope.allows(naan, shoulder):  # the one scope rule: a key never reaches past its maker's
        outside = f"A key for {naan}/{shoulder or '*'} is outside your scope ({scope})."
        return _keys_page(request, signed, problem=outside, status=403)
    try:
        key, secret = store_of(request).create_api_key(
            naan, shoulder, label=form.get("label", ""), owner=signed.user.name,
            principal=Principal.user(signed.user.name))
    except PidkitError as exc:
        return _keys_page(request, signed, problem=str(exc), status=400)
    notice = (
        '<section class="card notice" role="status"><h2>Your new key</h2>'
        f'<p>Key <span class="mono">{esc(key.key_id)}</span> — copy the secret now: '
        "it is not shown again.</p>"
        f'<p class="secret mono">{esc(secret)}</p></section>'
    )
    return _keys_page(request, signed, notice)


@form_post(router, "/office/keys/revoke")
def revoke_key(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Revoke one of the user's own keys (another's is not found)."""
    key_id = form.get("key_id", "")
    own = {k.key_id for k in store_of(request).list_api_keys() if k.owner == signed.user.name}
    if key_id not in own:
        return _keys_page(request, signed, problem="No such key of yours.", status=404)
    store_of(request).revoke_api_key(key_id, principal=Principal.user(signed.user.name))
    return _keys_page(request, signed, message(f"Key {key_id} revoked."))
