"""ARK resolution (draft-kunze-ark-40 §3.3–§5), ``?info``, ``/.well-known/ark`` and ``/id/{value}``.

``GET``/``HEAD /ark:NAAN/Name…`` (either label form).  The ARK is read from the **raw** request path
(ASGI servers percent-decode ``path``; §3.2 normalization needs ``%xx`` as sent) and normalized by the
store's lookup, so hyphens, the old label, NAAN case and ``%xx`` case do not matter.

================================================  ==========================================
the ARK is …                                      answer
================================================  ==========================================
bound (public)                                    302 to its target
not bound, an ancestor with passthrough is        302 to that target + the rest of the ARK
tombstoned, or unavailable (withdrawn, reversibly)  410 page saying so, with the reason
reserved, or unknown under a NAAN served here     404 page
under a NAAN or shoulder of the public NAAN       the registry record's HTTP code (302, 303 …)
registry (the most specific record wins)          to the URL its target template gives
under a NAAN neither serves nor registers         302 to ``https://n2t.net/`` + the ARK (§3.3);
                                                  offline (``PIDKIT_OFFLINE``): 404 saying so
not an ARK                                        400 page naming the position
================================================  ==========================================

The registry (:mod:`pidkit.registry`, docs/registry.md) is read from memory
(:class:`~pidkit.web.lookups.RegistryHolder`); a registry target obeys the same redirect-safety rules as
the others (:func:`registry_redirect`).

``?info`` (and the older ``??``) returns the ERC record (``erc:`` + ``erc-support:``) — ANVL
``text/plain`` by default, HTML for ``Accept: text/html``, JSON for ``Accept: application/json``
(:mod:`pidkit.web.negotiation`) — with ``Link: </ark:…>; rel="describes"`` (§5.2, THUMP).  The bare
``?`` inflection cannot be told apart from no query at all by an ASGI server (both give an empty
``query_string``), so it resolves like a plain ARK.  ``?info`` of an ARK the registry resolves, of a
registered shoulder (``/ark:19156/tkt42?info``) or of a bare NAAN (``/ark:12148?info``,
``/ark:/12148?info``) is the ERC built from the registry record (:mod:`pidkit.web.directory`).

One resolution flow, :func:`decide` (parse, look up, answer), serves the route below and the raw-ASGI
fast path (:mod:`pidkit.web.fastpath`) alike; both render its :class:`Decision` with :func:`render`.

>>> from fastapi.testclient import TestClient
>>> from pidkit.web import create_app
>>> with TestClient(create_app("sqlite:///:memory:"), follow_redirects=False) as client:
...     client.get("/ark:12148/btv1b8449691v").headers["location"]
'http://ark.bnf.fr/ark:/12148/btv1b8449691v'
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..ark import Ark
from ..ark.chars import check_naan
from ..codecs import iso_z
from ..errors import ArkError, PidkitError, StoreError
from ..registry import Registry, RegistryMatch, naan_line
from ..settings import SERVICE_PATH
from ..store import Binding, Resolution, published
from ..store.redirects import stays_under, validate_target
from .convertors import ARK_PATH, PID
from .directory import RegistryInfo, registry_info_response, registry_of
from .errors import error_response, error_type
from .lookups import Lookup
from .negotiation import negotiate, text_response, wants_info
from .stores import settings_of, store_of
from .templates import esc, page, rows

router = APIRouter(include_in_schema=False)

#: §5.2 (THUMP): the version and status header of a THUMP response.
THUMP_STATUS: Final = "0.6 200 OK"


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


@router.api_route("/.well-known/ark", methods=["GET", "HEAD"])
def well_known_ark() -> Response:
    """§5 (IANA Considerations): the ARK Resolver Service path, ending in '/', as plain text."""
    return text_response(SERVICE_PATH + "\n")


@dataclass(frozen=True, slots=True)
class Decision:
    """What the resolver answers for an ARK, before it is rendered for a client (:func:`render`).

    ``status`` is a redirect (``location`` set: 302, or the registry record's code), 200 (``?info`` of
    ``binding``, or of a registry record: ``registered``), 410 (``binding`` tombstoned or unavailable)
    or an error status with ``message`` and the page ``title``.

    >>> Decision(302, location="https://e.org/").location
    'https://e.org/'
    """

    status: int
    location: str | None = None
    binding: Binding | None = None
    message: str = ""
    title: str | None = None
    registered: RegistryInfo | None = None


async def decide(text: str, lookup: Lookup, *, fallback: str | None, info: bool = False,
                 registry: Registry | None = None) -> Decision:
    """The one resolution flow for the ARK ``text`` (as sent, without the leading '/'): the table in
    the module docstring — a binding in the store, then a NAAN the store serves, then ``registry``'s
    most specific shoulder, then its NAAN record (:func:`foreign`), then ``fallback``, the resolver
    unknown NAANs go to (§3.3; ``None`` offline: 404).  ``lookup`` is read only once ``text`` parses as
    an ARK (a malformed ARK is a 400 even while the store is unreachable); the registry is in memory.

    >>> import asyncio
    >>> from pidkit.store import open_store
    >>> from pidkit.web.batch import LookupBatcher, in_thread
    >>> from pidkit.web.lookups import StoreLookup
    >>> from pidkit.web.stores import StoreHolder
    >>> s = open_store("sqlite:///:memory:")
    >>> _ = s.add_naan("99999", "test", shoulders=["fk4"])
    >>> _ = s.bind("ark:99999/fk4x", "https://e.org/x")
    >>> holder = StoreHolder(lambda: s, owned=False)
    >>> lookup = StoreLookup(holder, LookupBatcher(in_thread(holder.get)))
    >>> def d(text: str) -> Decision:
    ...     return asyncio.run(decide(text, lookup, fallback="https://n2t.net/"))
    >>> d("ark:/99999/fk4-x").location, d("ark:12345/y").location
    ('https://e.org/x', 'https://n2t.net/ark:12345/y')
    >>> d("ark:99999/fk4nope").status, d("ark:").status
    (404, 400)
    >>> from pidkit.registry import default
    >>> r = asyncio.run(decide("ark:/b6071/m3z07d", lookup, fallback=None, registry=default()))
    >>> r.status, r.location
    (302, 'https://doi.org/10.6071/m3z07d')
    >>> s.close()
    """
    parsed = parse_request(text)
    if isinstance(parsed, Decision):
        if info and registry is not None:
            naan = bare_naan(text)
            if naan is not None:
                return naan_info(naan, registry, fallback=fallback)
        return parsed
    norm = parsed.normalize()
    if await lookup.may_be_bound(norm.naan):  # else no binding can match: the store is not read
        found = await lookup.resolve(text)
        if found is not None:
            return bound(found, info=info)
    if await lookup.naan_served(norm.naan):
        return unbound(parsed, served=True, fallback=fallback, info=info)
    return foreign(parsed, registry, fallback=fallback, info=info)


#: A bare NAAN after the label, either form, with an optional final '/' (``ark:12148``, ``ark:/12148/``).
_BARE_NAAN: Final = re.compile(r"[aA][rR][kK]:/?([^/]+)/?")


def bare_naan(text: str) -> str | None:
    """The NAAN (normalized: §3.2 step 4, lowercase) of ``text`` if it is a bare NAAN, else ``None``.

    >>> bare_naan("ark:12148"), bare_naan("ARK:/B6071/"), bare_naan("ark:12148/x"), bare_naan("ark:1 2")
    ('12148', 'b6071', None, None)
    """
    m = _BARE_NAAN.fullmatch(text)
    if m is None:
        return None
    try:
        return check_naan(m.group(1).lower())
    except PidkitError:
        return None


def naan_info(naan: str, registry: Registry, *, fallback: str | None) -> Decision:
    """``?info`` of a bare NAAN (step of :func:`decide`; reads nothing): the registry record's ERC; an
    unregistered NAAN goes to ``fallback`` (with ``?info``), or offline is a 404 saying so.

    >>> from pidkit.registry import default
    >>> naan_info("12148", default(), fallback=None).registered.record.who.acronym
    'BNF'
    >>> naan_info("00000", default(), fallback=None).message
    'NAAN 00000: not in the public NAAN registry'
    """
    record = registry.naan(naan)
    if record is not None:
        return Decision(200, registered=RegistryInfo(record, f"ark:{naan}", None, registry.date))
    if fallback is None:
        return Decision(404, message=naan_line(naan, registry), title="Unknown NAAN")
    return Decision(302, location=f"{fallback}ark:{naan}?info")


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


def unbound(parsed: Ark, *, served: bool, fallback: str | None, info: bool = False,
            registry: Registry | None = None) -> Decision:
    """The answer for an ARK nothing resolves (step of :func:`decide`; reads nothing): 404 under a NAAN
    this resolver serves, else the redirect to ``fallback`` (§3.3) — unless that would climb out of it;
    offline (``fallback`` ``None``) a 404 with the registry's word on the NAAN.

    >>> unbound(Ark.parse("ark:12345/x"), served=False, fallback="https://n2t.net/").location
    'https://n2t.net/ark:12345/x'
    >>> unbound(Ark.parse("ark:12345/x"), served=True, fallback="https://n2t.net/").status
    404
    >>> unbound(Ark.parse("ark:00000/x"), served=False, fallback=None).message
    'ark:00000/x is not resolved here, and this resolver is offline: NAAN 00000: not in the public NAAN registry'
    """  # noqa: E501
    if served:
        return Decision(404, message=f"{parsed.normalized} is not bound on this resolver",
                        title="Unknown ARK")
    if fallback is None:
        naan = parsed.normalize().naan
        word = (naan_line(naan, registry) if registry is not None
                else f"NAAN {naan}: not in the public NAAN registry")
        message = f"{parsed.normalized} is not resolved here, and this resolver is offline: {word}"
        return Decision(404, message=message, title="Unknown NAAN")
    # §3.3: a resolver that knows nothing about a NAAN redirects the request to N2T.
    location = fallback + parsed.compact + ("?info" if info else "")
    if not stays_under(fallback, location):  # dot segments would climb out of the resolver's path
        return Decision(404, message=f"{parsed.compact} would leave the resolver {fallback}",
                        title="Unsafe redirect refused")
    return Decision(302, location=location)


def foreign(parsed: Ark, registry: Registry | None, *, fallback: str | None, info: bool = False) -> Decision:
    """The answer for an ARK under a NAAN the store does not serve (step of :func:`decide`; reads only
    the in-memory ``registry``): the most specific registry record — a shoulder beats its NAAN — gives
    the redirect (:func:`registry_redirect`) or, for ``?info``, the ERC of that record; without one,
    :func:`unbound` (the fallback resolver, or offline a 404).

    >>> from pidkit.registry import default
    >>> foreign(Ark.parse("ark:99166/w6zz1"), default(), fallback=None).status
    303
    >>> foreign(Ark.parse("ark:19156/tkt42"), default(), fallback=None, info=True).registered.record.what
    '19156/tkt42'
    """
    match = registry.resolve(parsed) if registry is not None else None
    if match is None:
        return unbound(parsed, served=False, fallback=fallback, info=info, registry=registry)
    if info:
        date = registry.date if registry is not None else None
        return Decision(200, registered=RegistryInfo(match.record, match.ark.normalized, match.target, date))
    return registry_redirect(match)


def registry_redirect(match: RegistryMatch) -> Decision:
    """The redirect a registry record gives (its HTTP code), under the redirect-safety rules of every
    target (:mod:`pidkit.store.redirects`): an http(s) URL with a host, that keeps the scheme, host, port
    and path of the template's fixed part (what precedes its first ``$``) as a browser resolves it — so
    no ARK can choose the host or climb out of the path with dot segments.

    >>> from pidkit.registry import default
    >>> registry_redirect(default().resolve("ark:12148/btv1b8449691v")).location
    'http://ark.bnf.fr/ark:/12148/btv1b8449691v'
    >>> registry_redirect(default().resolve("ark:12148/%2e%2e/%2e%2e/x")).status
    404
    """
    fixed = match.record.target.url.partition("$")[0]
    try:
        location = validate_target(match.target)
    except StoreError:
        return Decision(404, message=f"{match.ark.normalized}: the registry's target is not usable",
                        title="Unsafe redirect refused")
    if not stays_under(fixed, location):
        return Decision(404, message=f"{match.ark.normalized} would leave the registered target {fixed}",
                        title="Unsafe redirect refused")
    return Decision(match.http_code, location=location)


def bound(found: Resolution, *, info: bool = False) -> Decision:
    """The answer for an ARK the store resolves (step of :func:`decide`; reads nothing): the redirect,
    its ``?info``, 410 for a tombstone or an unavailable binding (withdrawn with a reason: its ``?info``
    still answers), 404 for a reserved ARK or an unusable target.

    >>> from pidkit.store import Binding
    >>> bound(Resolution(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"))).location
    'https://e.org/'
    """
    b = found.binding
    if b.status == "reserved":
        return Decision(404, message=f"{b.key} is reserved and not yet public", title="Unknown ARK")
    if info:
        return Decision(200, binding=b)
    if is_gone(b):
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


def is_gone(b: Binding) -> bool:
    """True when ``b`` answers 410: tombstoned (for good) or unavailable (withdrawn with a reason, until
    it is made public again) — the one rule both resolvers (ARKs, ``/id/…``) follow.

    >>> is_gone(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/", status="unavailable", reason="r"))
    True
    """
    return b.status in ("tombstoned", "unavailable")


def render(request: Request, decision: Decision) -> Response:
    """The response for a :class:`Decision`: a bare redirect, the ``?info`` record (of a binding or a
    registry record), the 410 page, or an error in the negotiated type
    (:func:`~pidkit.web.errors.error_response`)."""
    if decision.location is not None:
        return RedirectResponse(decision.location, status_code=decision.status)
    if decision.registered is not None:
        return registry_info_response(request, decision.registered)
    if decision.binding is not None:
        if decision.status == 410:
            return tombstone_response(request, decision.binding)
        return info_response(request, decision.binding)
    return error_response(request, decision.status, decision.message, title=decision.title)


@router.api_route(f"/{{ark:{ARK_PATH}}}", methods=["GET", "HEAD"])
async def resolve_ark(request: Request, ark: str) -> Response:
    """Resolve an ARK: redirect, passthrough, tombstone, 404, the NAAN registry, N2T forwarding or
    ``?info``.

    Plain ``GET``/``HEAD`` without a query is answered before FastAPI by :mod:`pidkit.web.fastpath`
    with the same flow (:func:`decide`, the app's lookup) and rendering; this route serves the rest
    (``?info``, queries).
    """
    lookup: Lookup = request.app.state.lookup
    decision = await decide(raw_ark(request.scope), lookup, fallback=settings_of(request).forward_to,
                            info=wants_info(request.scope), registry=registry_of(request))
    return render(request, decision)


@router.api_route(f"/id/{{value:{PID}}}", methods=["GET", "HEAD"])
def resolve_id(request: Request, value: str) -> Response:
    """Resolve any other id bound in the store (XarkId, TID, GEDCOM UID, Library.Link id, UUID)."""
    found = [b for b in store_of(request).find_ids(value) if published(b.status)]
    if not found:
        return error_response(request, 404, f"{value!r} is not bound on this resolver", title="Unknown id")
    if len(found) > 1:
        return choices_response(request, value, found)
    b = found[0]
    if wants_info(request.scope):
        return info_response(request, b)
    if is_gone(b):
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
    """The ``?info`` record as JSON: the id, its status (and the reason of an unavailable one) and target,
    ``erc`` and ``erc-support``, the extra metadata elements, and when the binding was created and last
    changed.

    >>> info_dict(Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/"))["erc"]["where"]
    'ark:1/x'
    """
    d = b.to_dict()
    return {
        "id": b.key,
        "kind": b.kind,
        "status": b.status,
        "target": None if b.is_tombstoned else b.target,
        "erc": b.object_erc().to_dict(),
        "erc-support": b.support.to_dict(),
        "tombstone_reason": b.tombstone_reason,
        "reason": b.reason,
        "extra": b.extra_dict,
        "created": d["created"],
        "updated": d["updated"],
    }


def _last_modified(b: Binding) -> dict[str, str]:
    """``Last-Modified`` (RFC 9110 §8.8.2): when the binding last changed — the ANVL record carries only
    the ERC (draft-kunze-ark-40 §5.2), the header says when."""
    if b.updated is None:
        return {}
    return {"Last-Modified": email.utils.format_datetime(b.updated.astimezone(_dt.UTC), usegmt=True)}


def info_response(request: Request, b: Binding) -> Response:
    """The description service (§5.1, §5.2): the ERC record in the negotiated representation."""
    headers = {"Link": _describes(b), "THUMP-Status": THUMP_STATUS, "Vary": "Accept", **_last_modified(b)}
    kind = negotiate(request.headers.get("accept", "*/*"))
    if kind == "application/json":
        return JSONResponse(info_dict(b), headers=headers)
    if kind == "text/html":
        return HTMLResponse(info_page(b), headers=headers)
    return text_response(b.to_anvl(), headers=headers)


def info_page(b: Binding) -> str:
    """The HTML ``?info`` page (every value escaped)."""
    erc = b.object_erc()
    status = (f'<span class="badge bad">{esc(b.status)}</span>' if is_gone(b)
              else f'<span class="badge ok">{esc(b.status)}</span>')
    target = ""
    if b.target and b.status == "public":
        link = esc(b.target)
        target = f'<p>Resolves to <a class="mono" href="{link}" rel="nofollow">{link}</a></p>'
    reason = ""
    if b.is_tombstoned:
        reason = f'<p class="bad">Withdrawn for good: {esc(b.tombstone_reason or "")}</p>'
    elif b.status == "unavailable":
        reason = f'<p class="bad">Unavailable: {esc(b.reason or "")}</p>'
    d = b.to_dict()
    times = rows([("created", str(d["created"] or "")), ("last changed", str(d["updated"] or ""))])
    extra = (f'<h2>More metadata</h2><section class="card">{rows(list(b.extra))}</section>'
             if b.extra else "")
    anvl = esc(b.to_anvl())
    body = (
        f'<section class="card"><p class="mono">{esc(b.key)} {status}</p>{target}{reason}</section>'
        f'<h2>The object <span class="muted">(erc)</span></h2><section class="card">'
        f'{rows(list(erc.to_dict().items()))}</section>'
        f'<h2>The commitment <span class="muted">(erc-support)</span></h2><section class="card">'
        f'{rows(list(b.support.to_dict().items()))}</section>{extra}'
        f'<section class="card">{times}</section>'
        f'<details class="card"><summary>As ANVL text</summary><pre>{anvl}</pre></details>'
    )
    title = erc.what.strip() or b.key
    return page(title, body)


def tombstone_response(request: Request, b: Binding) -> Response:
    """410 Gone with the reason: the id was withdrawn for good (never reissued), or is unavailable
    (withdrawn, EZID's meaning: it may be made public again)."""
    if b.is_tombstoned:
        when = iso_z(b.tombstoned_at, "auto") if b.tombstoned_at else "(:unav)"
        message = f"{b.key} was withdrawn ({b.tombstone_reason or 'no reason given'}); it is never reissued"
        said = "This identifier was withdrawn for good and will never be reissued."
        facts = [("id", b.key), ("reason", b.tombstone_reason or ""), ("withdrawn", when)]
    else:
        when = iso_z(b.updated, "auto") if b.updated else "(:unav)"
        message = f"{b.key} is unavailable ({b.reason or 'no reason given'})"
        said = "The object this identifier names is not available."
        facts = [("id", b.key), ("reason", b.reason or ""), ("since", when)]
    if error_type(request) != "text/html":
        return error_response(request, 410, message)
    body = (
        f'<section class="card"><p class="bad">{esc(said)}</p>{rows(facts)}'
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
        + (f'<a href="{esc(b.target)}" rel="nofollow">{esc(b.target)}</a>' if b.target and not is_gone(b)
           else esc(b.status))
        + "</li>"
        for b in found
    )
    body = f'<section class="card"><ul>{items}</ul></section>'
    return HTMLResponse(page(f"{value} names {len(found)} ids", body), status_code=300)
