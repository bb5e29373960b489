"""The back office's sessions: the session cookie, the CSRF rules, the security headers of every
back-office answer, and reading a posted form.

* The session cookie ``pidkit_session`` carries the token :meth:`~pidkit.store.Store.sign_in` returned,
  signed (HMAC-SHA256 with :meth:`~pidkit.store.Store.cookie_key`, kept in the store so every worker
  agrees): a cookie whose signature fails is refused before any session is looked up, and the store
  keeps only the token's SHA-256, so a copy of the database opens no session.  It is ``HttpOnly``,
  ``SameSite=Lax``, limited to ``/office``, lasts as long as the session, and is ``Secure`` when the
  request came over HTTPS or ``PIDKIT_SECURE_COOKIES=1`` says the service is behind an HTTPS proxy.
* CSRF: every form carries a token.  Signed in, it is the session's own (kept in the store: bound to the
  session, never in a cookie); the sign-in form uses a double-submit token (a cookie and a hidden field
  that must match).  A ``POST`` whose token does not match changes nothing (403); ``GET`` never changes
  anything.
* Every answer carries a strict Content-Security-Policy (scripts from this site only — the back office's
  ``/static/office.js`` — never inline, the one inline style sheet
  allowed by its hash, ``frame-ancestors 'none'``, forms posting only here), ``X-Frame-Options: DENY``,
  ``nosniff``, ``Referrer-Policy: same-origin`` and ``Cache-Control: no-store``.

>>> "frame-ancestors 'none'" in security_headers("body{}")["Content-Security-Policy"]
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import urllib.parse
from dataclasses import dataclass
from typing import Final

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..store import SessionInfo, User
from .stores import settings_of, store_of

__all__ = [
    "SESSION_COOKIE",
    "SIGNIN_COOKIE",
    "FormError",
    "Signed",
    "cookie_value",
    "csrf_ok",
    "read_form",
    "secure_cookie",
    "security_headers",
    "signed_in",
    "to_signin",
    "with_headers",
]

#: The session cookie (its value: the session's token).
SESSION_COOKIE: Final = "pidkit_session"
#: The sign-in form's double-submit CSRF cookie.
SIGNIN_COOKIE: Final = "pidkit_signin"
#: Where the back office lives (the cookies' path).
OFFICE: Final = "/office"
#: Most fields a form may post.
_MAX_FIELDS: Final = 200


@dataclass(frozen=True, slots=True)
class Signed:
    """The signed-in user of a request, their session and its token."""

    user: User
    session: SessionInfo
    token: str


class FormError(ValueError):
    """A posted body that is not a form this service reads (answered 400 or 415)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def security_headers(css: str) -> dict[str, str]:
    """The headers of every back-office answer; ``css`` is the page's inline style sheet, allowed by its
    SHA-256 (no other inline style, no inline script); scripts and their reads (``connect-src``: a page of
    work in progress reads itself again) from this site only.

    >>> security_headers("")["X-Frame-Options"]
    'DENY'
    """
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'sha256-{digest}'; "
              "img-src 'self'; form-action 'self'; "
              "frame-ancestors 'none'; base-uri 'none'")  # fmt: skip
    return {
        "Content-Security-Policy": policy,
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
    }


def with_headers(response: Response, css: str) -> Response:
    """``response`` with :func:`security_headers`."""
    response.headers.update(security_headers(css))
    return response


def secure_cookie(request: Request) -> bool:
    """Whether cookies get ``Secure``: the setting when given, else whether the request used HTTPS."""
    setting = settings_of(request).secure_cookies
    return request.url.scheme == "https" if setting is None else setting


def _signature(key: bytes, token: str) -> str:
    digest = hmac.new(key, token.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def cookie_value(key: bytes, token: str) -> str:
    """The session cookie's value: the token and its HMAC-SHA256 signature under ``key``.

    >>> cookie_value(b"k", "tok")
    'tok.N5wGwLT14AJHYm0KYn_uSHfXO8u_S7Kws5mn9jj0cNc'
    """
    return f"{token}.{_signature(key, token)}"


def token_of(key: bytes, value: str) -> str | None:
    """The token of a session cookie whose signature is right, else ``None``.

    >>> token_of(b"k", cookie_value(b"k", "tok")), token_of(b"k", "tok.forged"), token_of(b"k", "tok")
    ('tok', None, None)
    """
    token, dot, signature = value.rpartition(".")
    if not dot or not token or not hmac.compare_digest(signature.encode(), _signature(key, token).encode()):
        return None
    return token


def signed_in(request: Request) -> Signed | None:
    """The request's live session (signed cookie → store), or ``None``."""
    value = request.cookies.get(SESSION_COOKIE, "")
    if not value or len(value) > 300:
        return None
    store = store_of(request)
    token = token_of(store.cookie_key(), value)
    if token is None:
        return None
    found = store.session(token)
    return None if found is None else Signed(found[0], found[1], token)


def to_signin(request: Request) -> Response:
    """A redirect to the sign-in page that comes back here afterwards (a path of this site only)."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"{OFFICE}/signin?" + urllib.parse.urlencode({"next": back}), status_code=303)


def safe_next(value: str) -> str:
    """Where to go after signing in: a back-office path, never another site.

    >>> safe_next("/office/id?ark=x"), safe_next("//evil.example/"), safe_next("https://evil.example/")
    ('/office/id?ark=x', '/office', '/office')
    """
    here = value.startswith(f"{OFFICE}/") or value == OFFICE
    clean = "//" not in value and "\\" not in value and not any(ord(c) < 0x21 for c in value)
    return value if here and clean else OFFICE


def csrf_ok(expected: str, form: dict[str, str]) -> bool:
    """True if the form's ``csrf`` field equals ``expected`` (constant time; an empty one never does).

    >>> csrf_ok("abc", {"csrf": "abc"}), csrf_ok("abc", {"csrf": "abd"}), csrf_ok("", {"csrf": ""})
    (True, False, False)
    """
    given = form.get("csrf", "")
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


def new_csrf() -> str:
    """A fresh double-submit token (the sign-in form's)."""
    return secrets.token_urlsafe(32)


async def read_form(request: Request) -> dict[str, str]:
    """The posted ``application/x-www-form-urlencoded`` form, first value of each field
    (:class:`FormError` for another type, bad UTF-8 or too many fields)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormError(415, "a form is posted as application/x-www-form-urlencoded")
    body = await request.body()
    try:
        text = body.decode("utf-8")
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True, max_num_fields=_MAX_FIELDS,
                                       errors="strict")  # fmt: skip
    except (UnicodeDecodeError, ValueError):
        raise FormError(400, "the form is not UTF-8 text, or has too many fields") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        form.setdefault(name, value.replace("\r\n", "\n"))
    return form


def html(body: str, css: str, status: int = 200) -> Response:
    """An HTML page with the back office's headers."""
    return with_headers(HTMLResponse(body, status_code=status), css)
