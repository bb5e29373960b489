"""ARK resolution (draft-kunze-ark-40 §3.3–§5), ``?info``, ``/.well-known/ark`` and ``/id/{value}``.

``GET``/``HEAD /ark:NAAN/Name…`` (either label form).  The ARK is read from the **raw** request path
(ASGI servers percent-decode ``path``; §3.2 normalization needs ``%xx`` as sent) and normalized by the
store's lookup, so hyphens, the old label, NAAN case and ``%xx`` case do not matter.

================================================  ==========================================
the ARK is …                                      answer
================================================  ==========================================
bound (public)                                    302 to its target
not bound, an ancestor with passthrough is        302 to that target + the rest of the ARK
tombstoned                                        410 page saying so
reserved, or unknown under a NAAN served here     404 page
under a NAAN this resolver does not know          302 to ``https://n2t.net/`` + the ARK (§3.3)
not an ARK                                        400 page naming the position
================================================  ==========================================

``?info`` (and the older ``??``) returns the ERC record (``erc:`` + ``erc-support:``) — ANVL
``text/plain`` by default, HTML for ``Accept: text/html``, JSON for ``Accept: application/json`` — with
``Link: </ark:…>; rel="describes"`` (§5.2, THUMP).  The bare ``?`` inflection cannot be told apart from
no query at all by an ASGI server (both give an empty ``query_string``), so it resolves like a plain ARK.

>>> negotiate("text/html,application/xhtml+xml,*/*;q=0.8"), negotiate("*/*"), negotiate("application/json")
('text/html', 'text/plain', 'application/json')
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..ark import Ark
from ..errors import ArkError, NotFoundError, StoreError
from ..store import Binding, Resolution, Store, validate_target
from ..store.anvl import erc_anvl, object_erc
from .app import error_response, error_type, settings_of, store_of, text_response
from .settings import SERVICE_PATH
from .templates import esc, page, rows

router = APIRouter(include_in_schema=False)

#: §5.2 (THUMP): query strings that ask for the description.  "?info" arrives as ``info`` and "??" as
#: ``?``; a lone "?" is indistinguishable from no query in ASGI.
INFO_QUERIES: Final = frozenset({"info", "?"})
#: The representations ``?info`` offers, the default first.
INFO_TYPES: Final = ("text/plain", "text/html", "application/json")
#: §5.2 (THUMP): the version and status header of a THUMP response.
THUMP_STATUS: Final = "0.6 200 OK"


def negotiate(accept: str, offers: tuple[str, ...] = INFO_TYPES) -> str:
    """The best of ``offers`` for an ``Accept`` header: highest q, then the most specific match, then
    the order of ``offers`` (so ``*/*`` gets the first, ANVL text).

    >>> negotiate("application/json;q=0.5, text/html;q=0.9")
    'text/html'
    >>> negotiate("image/png")
    'text/plain'
    """
    best = (0.0, -1, -len(offers))
    choice = offers[0]
    for item in accept.split(","):
        mtype, _, params = item.strip().partition(";")
        mtype = mtype.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        for rank, offer in enumerate(offers):
            if mtype == offer:
                specific = 2
            elif mtype == offer.split("/")[0] + "/*":
                specific = 1
            elif mtype == "*/*":
                specific = 0
            else:
                continue
            score = (q, specific, -rank)
            if score > best:
                best, choice = score, offer
    return choice


def raw_ark(scope: Mapping[str, Any]) -> str:
    """The ARK as sent: the raw path (not percent-decoded) without its leading '/'.

    >>> raw_ark({"raw_path": b"/ark:99999/a%2Fb", "path": "/ark:99999/a/b"})
    'ark:99999/a%2Fb'
    """
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else str(scope["path"])
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path[1:] if path.startswith("/") else path


def wants_info(request: Request) -> bool:
    """True if the query asks for the description (``?info`` or ``??``, §5.2)."""
    query = request.scope.get("query_string", b"")
    return isinstance(query, bytes) and query.decode("latin-1") in INFO_QUERIES


@router.api_route("/.well-known/ark", methods=["GET", "HEAD"])
def well_known_ark() -> Response:
    """§5 (IANA Considerations): the ARK Resolver Service path, ending in '/', as plain text."""
    return text_response(SERVICE_PATH + "\n")


@dataclass(frozen=True, slots=True)
class Decision:
    """What the resolver answers for an ARK, before it is rendered for a client (:func:`render`).

    ``status`` is 302 (``location`` set), 200 (``?info`` of ``binding``), 410 (``binding`` tombstoned)
    or an error status with ``message`` and the page ``title``.

    >>> Decision(302, location="https://e.org/").location
    'https://e.org/'
    """

    status: int
    location: str | None = None
    binding: Binding | None = None
    message: str = ""
    title: str | None = None


def decide(store: Callable[[], Store], text: str, *, fallback: str, info: bool = False) -> Decision:
    """The one resolution rule for the ARK ``text`` (as sent, without the leading '/'): the table in
    the module docstring.  ``store`` is called only once ``text`` parses as an ARK (a malformed ARK is
    a 400 even while the store is unreachable); ``fallback`` is the resolver unknown NAANs go to (§3.3).

    >>> from pidkit.store import open_store
    >>> s = open_store("sqlite:///:memory:")
    >>> _ = s.add_naan("99999", "test", shoulders=["fk4"])
    >>> _ = s.bind("ark:99999/fk4x", "https://e.org/x")
    >>> decide(lambda: s, "ark:/99999/fk4-x", fallback="https://n2t.net/").location
    'https://e.org/x'
    >>> decide(lambda: s, "ark:12345/y", fallback="https://n2t.net/").location
    'https://n2t.net/ark:12345/y'
    >>> decide(lambda: s, "ark:99999/fk4nope", fallback="https://n2t.net/").status
    404
    >>> decide(lambda: s, "ark:", fallback="https://n2t.net/").status
    400
    >>> s.close()
    """
    parsed = parse_request(text)
    if isinstance(parsed, Decision):
        return parsed
    opened = store()
    found = opened.resolve(text)
    if found is None:
        return unbound(opened, parsed, fallback=fallback, info=info)
    return bound(found, info=info)


def parse_request(text: str) -> Ark | Decision:
    """The requested ARK, or the 400 :class:`Decision` naming what is wrong with it (first step of
    :func:`decide`).

    >>> parse_request("ark:12345/x").naan, parse_request("ark:").status
    ('12345', 400)
    """
    try:
        return Ark.parse(text)
    except ArkError as exc:
        return Decision(400, message=str(exc), title="Not a valid ARK")


def unbound(store: Store, parsed: Ark, *, fallback: str, info: bool = False) -> Decision:
    """The answer for an ARK nothing in ``store`` resolves (step of :func:`decide`): 404 under a NAAN
    this resolver serves, else the redirect to ``fallback`` (§3.3).  Reads the store (the NAAN).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as s:
    ...     unbound(s, Ark.parse("ark:12345/x"), fallback="https://n2t.net/").location
    'https://n2t.net/ark:12345/x'
    """
    try:
        store.get_naan(parsed.normalize().naan)
    except NotFoundError:
        # §3.3: a resolver that knows nothing about a NAAN redirects the request to N2T.
        return Decision(302, location=fallback + parsed.compact + ("?info" if info else ""))
    return Decision(404, message=f"{parsed.normalized} is not bound on this resolver", title="Unknown ARK")


def bound(found: Resolution, *, info: bool = False) -> Decision:
    """The answer for an ARK the store resolves (step of :func:`decide`; reads nothing): the redirect,
    its ``?info``, 410 for a tombstone, 404 for a reserved ARK or an unusable target.

    >>> from pidkit.store import Binding
    >>> bound(Resolution(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"))).location
    'https://e.org/'
    """
    b = found.binding
    if b.status == "reserved":
        return Decision(404, message=f"{b.key} is reserved and not yet public", title="Unknown ARK")
    if info:
        return Decision(200, binding=b)
    if b.is_tombstoned:
        return Decision(410, binding=b)
    try:
        location = found.location
    except StoreError as exc:  # the passthrough suffix would leave the bound target: never redirect
        return Decision(404, message=str(exc), title="Unsafe redirect refused")
    if location is None:
        return Decision(404, message=f"{b.key} has no target", title="Unknown ARK")
    try:
        validate_target(location)  # redirects go only to http(s) targets, even for imported data
    except StoreError:
        return Decision(404, message=f"{b.key} has no usable target", title="Unknown ARK")
    return Decision(302, location=location)


def render(request: Request, decision: Decision) -> Response:
    """The response for a :class:`Decision`: a bare 302, the ``?info`` record, the 410 page, or an error
    in the negotiated type (:func:`~pidkit.web.app.error_response`)."""
    if decision.status == 302 and decision.location is not None:
        return RedirectResponse(decision.location, status_code=302)
    if decision.binding is not None:
        if decision.status == 410:
            return tombstone_response(request, decision.binding)
        return info_response(request, decision.binding)
    return error_response(request, decision.status, decision.message, title=decision.title)


@router.api_route("/{ark:arkpath}", methods=["GET", "HEAD"])
def resolve_ark(request: Request, ark: str) -> Response:
    """Resolve an ARK: redirect, passthrough, tombstone, 404, N2T forwarding or ``?info``.

    Plain ``GET``/``HEAD`` without a query is answered before FastAPI by :mod:`pidkit.web.fastpath`
    with the same rule (:func:`decide` or its steps) and rendering; this route serves the rest
    (``?info``, queries).
    """
    decision = decide(lambda: store_of(request), raw_ark(request.scope),
                      fallback=settings_of(request).fallback_resolver, info=wants_info(request))
    return render(request, decision)


@router.api_route("/id/{value:pid}", methods=["GET", "HEAD"])
def resolve_id(request: Request, value: str) -> Response:
    """Resolve any other id bound in the store (XarkId, TID, GEDCOM UID, Library.Link id, UUID)."""
    found = [b for b in store_of(request).find_ids(value) if b.status != "reserved"]
    if not found:
        return error_response(request, 404, f"{value!r} is not bound on this resolver", title="Unknown id")
    if len(found) > 1:
        return choices_response(request, value, found)
    b = found[0]
    if wants_info(request):
        return info_response(request, b)
    if b.is_tombstoned:
        return tombstone_response(request, b)
    if b.target is None:
        return error_response(request, 404, f"{value!r} has no target", title="Unknown id")
    return RedirectResponse(validate_target(b.target), status_code=302)


def id_path(b: Binding) -> str:
    """The path of a bound id on this resolver (ARKs at the service path, other ids under ``id/``).

    >>> id_path(Binding("ark", "ark:1/x", "ark:1/x", None))
    '/ark:1/x'
    >>> id_path(Binding("tid", "3jzfcijpj2z2a", "", None))
    '/id/3jzfcijpj2z2a'

    Percent-encoded (RFC 3986 §2.1), so it is safe in a ``Link`` header and an ``href``; an ARK keeps
    its own ``%xx`` escapes, any other id is one path segment:

    >>> id_path(Binding("gedcom-uid", "€1 b/c", "", None))
    '/id/%E2%82%AC1%20b%2Fc'
    """
    if b.kind == "ark":
        return SERVICE_PATH + urllib.parse.quote(b.key, safe=_ARK_SAFE)
    return f"{SERVICE_PATH}id/" + urllib.parse.quote(b.key, safe="")


#: Characters an ARK keeps unencoded in a URL path (RFC 3986 pchar, '/' and its own '%xx').
_ARK_SAFE: Final = "/:@!$&'()*+,;=-._~%"


def _describes(b: Binding) -> str:
    return f'<{id_path(b)}>; rel="describes"'


def info_dict(b: Binding) -> dict[str, object]:
    """The ``?info`` record as JSON: the id, its status and target, ``erc`` and ``erc-support``.

    >>> info_dict(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"))["erc"]["where"]
    'ark:1/x'
    """
    return {
        "id": b.key,
        "kind": b.kind,
        "status": b.status,
        "target": None if b.is_tombstoned else b.target,
        "erc": object_erc(b).to_dict(),
        "erc-support": b.support.to_dict(),
        "tombstone_reason": b.tombstone_reason,
    }


def info_response(request: Request, b: Binding) -> Response:
    """The description service (§5.1, §5.2): the ERC record in the negotiated representation."""
    headers = {"Link": _describes(b), "THUMP-Status": THUMP_STATUS, "Vary": "Accept"}
    kind = negotiate(request.headers.get("accept", "*/*"))
    if kind == "application/json":
        return JSONResponse(info_dict(b), headers=headers)
    if kind == "text/html":
        return HTMLResponse(info_page(b), headers=headers)
    return text_response(erc_anvl(b), headers=headers)


def info_page(b: Binding) -> str:
    """The HTML ``?info`` page (every value escaped)."""
    erc = object_erc(b)
    status = ('<span class="badge bad">tombstoned</span>' if b.is_tombstoned
              else '<span class="badge ok">public</span>')
    target = ""
    if b.target and not b.is_tombstoned:
        link = esc(b.target)
        target = f'<p>Resolves to <a class="mono" href="{link}" rel="nofollow">{link}</a></p>'
    reason = f'<p class="bad">Withdrawn: {esc(b.tombstone_reason or "")}</p>' if b.is_tombstoned else ""
    anvl = esc(erc_anvl(b))
    body = (
        f'<section class="card"><p class="mono">{esc(b.key)} {status}</p>{target}{reason}</section>'
        f'<h2>The object <span class="muted">(erc)</span></h2><section class="card">'
        f'{rows(list(erc.to_dict().items()))}</section>'
        f'<h2>The commitment <span class="muted">(erc-support)</span></h2><section class="card">'
        f'{rows(list(b.support.to_dict().items()))}</section>'
        f'<details class="card"><summary>As ANVL text</summary><pre>{anvl}</pre></details>'
    )
    title = erc.what.strip() or b.key
    return page(title, body)


def tombstone_response(request: Request, b: Binding) -> Response:
    """410 Gone: the id was withdrawn for good (and is never reissued)."""
    when = b.tombstoned_at.isoformat().replace("+00:00", "Z") if b.tombstoned_at else "(:unav)"
    message = f"{b.key} was withdrawn ({b.tombstone_reason or 'no reason given'}); it is never reissued"
    if error_type(request) != "text/html":
        return error_response(request, 410, message)
    body = (
        f'<section class="card"><p class="bad">This identifier was withdrawn for good and will never be '
        f'reissued.</p>{rows([("id", b.key), ("reason", b.tombstone_reason or ""), ("withdrawn", when)])}'
        f'<p><a href="{esc(id_path(b))}?info">Its description (?info)</a></p></section>'
    )
    return HTMLResponse(page("410 Gone", body), status_code=410)


def choices_response(request: Request, value: str, found: list[Binding]) -> Response:
    """300 Multiple Choices: ``value`` names ids of several kinds."""
    kind = negotiate(request.headers.get("accept", "*/*"), ("text/html", "application/json"))
    if kind == "application/json":
        return JSONResponse({"id": value, "choices": [info_dict(b) for b in found]}, status_code=300)
    items = "".join(
        f'<li>{esc(b.kind)}: <span class="mono">{esc(b.key)}</span> → '
        + (f'<a href="{esc(b.target)}" rel="nofollow">{esc(b.target)}</a>' if b.target and not b.is_tombstoned
           else esc(b.status))
        + "</li>"
        for b in found
    )
    body = f'<section class="card"><ul>{items}</ul></section>'
    return HTMLResponse(page(f"{value} names {len(found)} ids", body), status_code=300)
