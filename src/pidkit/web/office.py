"""The back office's pages: the dashboard, an ARK's page with its history, create (mint one, bind a given
ARK, mint N reserved), edit with a preview, withdraw / reinstate, tombstone (reason and a confirmation
step) and delete a reserved id.

Every page needs a session (:mod:`pidkit.web.sessions`); every ``POST`` carries the session's CSRF token;
no ``GET`` changes anything.  What a user may see or change is decided by the one scope rule
(:meth:`pidkit.store.Scope.allows`, as for API keys): an ARK outside the user's scope is "not found",
whatever its status.  Every change is the store's, made as ``user:NAME`` (the history names the user).
"""

from __future__ import annotations

import datetime as _dt
import secrets
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ..anvl import ezid_lines
from ..errors import PidkitError
from ..store import (
    AlreadyBoundError,
    Binding,
    BindingChange,
    ChangedMeanwhileError,
    HistoryEntry,
    MinterInfo,
    Principal,
    Search,
    Status,
    Store,
    User,
    binding_version,
)
from ..store.accounts import FORM_TOKEN_LIFETIME
from ..store.keys import ark_key, template_shoulder
from ..store.rows import check_new
from .auth import form_post
from .officeviews import (
    OFFICE_CSS,
    badge,
    csrf_field,
    field,
    ids_left,
    message,
    office_page,
    select,
    textarea,
    when,
)
from .sessions import Signed, signed_in, to_signin, with_headers
from .stores import settings_of, store_of
from .templates import esc

__all__ = ["ERC_LABELS", "FIND_FIELDS", "router"]

router = APIRouter(include_in_schema=False)

#: ERC elements as people read them.
ERC_LABELS: Final = {"who": "Who (creator)", "what": "What (title)", "when": "When (date)",
                     "where": "Where (location)"}  # fmt: skip
#: Most ids minted at once as reserved.
MAX_RESERVE: Final = 100
#: Recent changes on the dashboard, per NAAN.
RECENT: Final = 10


def _user(request: Request) -> Signed | Response:
    signed = signed_in(request)
    return to_signin(request) if signed is None else signed


def _in_scope(user: User, b: Binding | None) -> Binding | None:
    """``b`` if the user may see it (the one scope rule), else ``None`` (answered "not found")."""
    if b is None or b.kind != "ark" or not user.scope.allows(b.naan, b.shoulder):
        return None
    return b


def _find(store: Store, user: User, ark: str) -> Binding | None:
    try:
        return _in_scope(user, store.get_binding(ark))
    except PidkitError:
        return None


def _not_found(signed: Signed, ark: str) -> Response:
    text = message(f"No ARK {ark} within your scope ({signed.user.scope}).", bad=True)
    return office_page("Not found", text + '<p><a href="/office">Back to the dashboard</a></p>', signed,
                       status=404)


def _id_url(key: str) -> str:
    return "/office/id?" + urllib.parse.urlencode({"ark": key})


def _done(key: str) -> Response:
    return with_headers(RedirectResponse(_id_url(key), status_code=303), OFFICE_CSS)


def _minters(store: Store, user: User) -> list[tuple[MinterInfo, str | None]]:
    """The minters the user may mint with, each with the shoulder it mints on."""
    out = []
    for m in store.list_minters():
        shoulder = template_shoulder(m.template, m.naan)
        if user.scope.allows(m.naan, shoulder):
            out.append((m, shoulder))
    return out


# -- dashboard -------------------------------------------------------------------------------------
@router.get("/office")
def dashboard(request: Request) -> Response:
    """Per NAAN and shoulder of the user's scope: bindings by status, ids left in each minter, recent
    changes."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    store, user = store_of(request), signed.user
    naans = [n for n in store.list_naans() if user.admin or n.naan == user.naan]
    statuses = ("public", "reserved", "unavailable", "tombstoned")
    minters = _minters(store, user)
    sections = []
    for n in naans:
        counts = store.status_counts(n.naan)
        shoulders = sorted({s for s, _ in counts} | set(n.shoulders), key=lambda s: s or "")
        shoulders = [s for s in shoulders if user.scope.allows(n.naan, s)]
        head = "".join(f'<th scope="col" class="num">{badge(s)}</th>' for s in statuses)
        body = "".join(
            f'<tr><th scope="row" class="mono">{esc(s or "(none)")}</th>'
            + "".join(f'<td class="num">{counts.get((s, st), 0)}</td>' for st in statuses) + "</tr>"
            for s in shoulders
        )
        table = ('<table class="grid"><caption class="muted">ARKs by shoulder and status</caption><thead><tr>'
                 f'<th scope="col">Shoulder</th>{head}</tr></thead>'
                 f"<tbody>{body}</tbody></table>")
        mine = [(m, s) for m, s in minters if m.naan == n.naan]
        mint_rows = "".join(
            f'<tr><th scope="row" class="mono">{esc(m.name)}</th><td class="mono">{esc(m.template)}</td>'
            f'<td class="num">{m.counter}</td><td class="num">{ids_left(m)}</td></tr>'
            for m, _ in mine
        )
        minter_table = (
            '<table class="grid"><caption class="muted">Minters</caption><thead><tr>'
            '<th scope="col">Minter</th>'
            '<th scope="col">Template</th><th scope="col" class="num">Minted</th>'
            f'<th scope="col" class="num">Ids left</th></tr></thead><tbody>{mint_rows}</tbody></table>'
            if mine else '<p class="muted">No minter you may use on this NAAN.</p>'
        )
        recent = store.recent_changes(n.naan, None if user.admin else user.shoulder, limit=RECENT)
        changes = "".join(
            f'<li>{when(h.at)} <a class="mono" href="{esc(_id_url(h.key))}">{esc(h.key)}</a> '
            f'{esc(_operation(h))} <span class="who">by {esc(h.principal)}</span></li>'
            for h in recent
        ) or '<li class="muted">No change yet.</li>'
        sections.append(
            f'<section class="card"><h2>NAAN <span class="mono">{esc(n.naan)}</span> {esc(n.name)}</h2>'
            f'{table}{minter_table}<h3>Recent changes</h3><ul>{changes}</ul></section>'
        )
    body = "".join(sections) or message("No NAAN within your scope is registered in this store.")
    body = ('<section class="card"><form class="box" method="get" action="/office/id">'
            '<label for="f-ark">Open an ARK</label><input type="text" id="f-ark" name="ark" required '
            'autocomplete="off" spellcheck="false"><button type="submit">Open</button></form></section>'
            + body)
    return office_page("Dashboard", body, signed)


def _operation(h: HistoryEntry) -> str:
    after = h.after or {}
    if h.operation == "status" and "status" in after:
        return f"status → {after['status']}"
    return {"create": "created", "update": "updated", "tombstone": "tombstoned", "delete": "deleted",
            "import": "imported"}.get(h.operation, h.operation)  # fmt: skip


# -- find ------------------------------------------------------------------------------------------
_STATUSES: Final = [("", "Any status"), ("public", "Public"), ("reserved", "Reserved"),
                    ("unavailable", "Withdrawn"), ("tombstoned", "Tombstoned")]  # fmt: skip
_DATE_FIELDS: Final = [("updated", "Last updated"), ("created", "Created")]
_SORTS: Final = [("key", "ARK"), ("updated", "Last updated"), ("created", "Created")]
_ORDERS: Final = [("asc", "Ascending"), ("desc", "Descending")]


def _find_form(q: Mapping[str, str]) -> str:
    """The search form, filled in with the query ``q`` (every value escaped by the field helpers)."""
    return (
        '<section class="card"><form method="get" action="/office/find" role="search">'
        + field("ark", "ARK or its beginning", q.get("ark", ""),
                hint="Any spelling: ark:/99999/fk4…, ark:99999/fk4-…, https://n2t.net/ark:/99999/…")
        + field("target", "Target contains", q.get("target", ""), hint="Any part of the URL, any case")
        + field("text", "Metadata words", q.get("text", ""),
                hint="Words in the ERC, the extra metadata, the ARK or the target; all must be there, "
                     "the last may be the beginning of a word")
        + select("status", "Status", _STATUSES, q.get("status", ""))
        + select("on", "Dates are", _DATE_FIELDS, q.get("on", "") or "updated")
        + field("from", "From (UTC, YYYY-MM-DD)", q.get("from", ""), kind="date")
        + field("until", "Until (UTC, YYYY-MM-DD, included)", q.get("until", ""), kind="date")
        + select("sort", "Sort by", _SORTS, q.get("sort", "") or "key")
        + select("order", "Order", _ORDERS, q.get("order", "") or "asc")
        + '<button type="submit">Find</button></form></section>'
    )  # fmt: skip


def _find_url(search: Search, **page: str) -> str:
    return "/office/find?" + urllib.parse.urlencode({**search.fields(), **page} or {"ark": ""})


@router.get("/office/find")
def find(request: Request) -> Response:
    """Search the ARKs of the user's scope: ARK prefix (any spelling), target substring, metadata
    words, status, a date range on creation or update; sorted; pages of 50 (keyset); the URL is the
    search (shareable).  A wrong field is named in the page (400), never an error page."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    q = {k: v for k, v in request.query_params.items() if k in FIND_FIELDS}
    form = _find_form(q)
    if not request.query_params:
        return office_page("Find", form, signed)
    try:
        search = Search.from_fields(q)
        found = store_of(request).find_bindings(signed.user.scope, search)
    except PidkitError as exc:
        return office_page("Find", message(str(exc), bad=True) + form, signed, status=400)
    shown = "updated" if search.sort != "created" and search.on != "created" else "created"
    rows = "".join(
        f'<tr><td><a class="mono" href="{esc(_id_url(b.key))}">{esc(b.key)}</a></td>'
        f"<td>{badge(b.status)}</td><td>{esc(b.target or '—')}</td><td>{esc(b.erc.what or '—')}</td>"
        f"<td>{esc(b.erc.who or '—')}</td><td>{when(getattr(b, shown))}</td></tr>"
        for b in found.bindings
    )
    table = (
        '<table class="grid"><thead><tr><th scope="col">ARK</th><th scope="col">Status</th>'
        '<th scope="col">Target</th><th scope="col">What</th><th scope="col">Who</th>'
        f'<th scope="col">{"Created" if shown == "created" else "Last updated"}</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    ) if found.bindings else "<p>No ARK matches.</p>"  # fmt: skip
    links = []
    if found.earlier:
        links.append(f'<a href="{esc(_find_url(search))}">First page</a>')
        if found.bindings:
            links.append(f'<a href="{esc(_find_url(search, before=found.bindings[0].key))}" rel="prev">'
                         "Previous page</a>")  # fmt: skip
    if found.later and found.bindings:
        links.append(f'<a href="{esc(_find_url(search, after=found.bindings[-1].key))}" rel="next">'
                     "Next page</a>")  # fmt: skip
    nav = f'<nav aria-label="Pages"><p>{" · ".join(links)}</p></nav>' if links else ""
    if found.bindings:
        query = urllib.parse.urlencode(search.fields())
        nav += ('<p>Download every result: '
                f'<a href="{esc("/office/export/search?" + query + "&format=jsonl")}">JSON Lines</a> · '
                f'<a href="{esc("/office/export/search?" + query + "&format=csv")}">CSV</a></p>')  # fmt: skip
    one = found.total == 1
    count = (f"More than {found.total:,} ARKs match" if found.capped
             else f"{found.total:,} ARK{'' if one else 's'} match{'es' if one else ''}")
    count += f"; {len(found.bindings)} on this page." if found.total else "."
    body = form + (f'<section class="card"><h2>Results</h2><p class="muted" role="status">{esc(count)}</p>'
                   f"{table}{nav}</section>")  # fmt: skip
    return office_page("Find", body, signed)


#: The query string fields of a search (others are ignored).
FIND_FIELDS: Final = frozenset({"ark", "target", "text", "status", "on", "from", "until", "sort", "order",
                                 "after", "before"})  # fmt: skip


# -- an ARK's page ---------------------------------------------------------------------------------
@router.get("/office/id")
def ark_page(request: Request, ark: str = "") -> Response:
    """An ARK: target, status, ERC and extra metadata, resolution and ``?info`` URLs, actions, history."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    b = _find(store_of(request), signed.user, ark)
    if b is None:
        return _not_found(signed, ark)
    base = str(request.base_url).rstrip("/")
    target = (f'<a href="{esc(b.target)}" rel="noopener noreferrer">{esc(b.target)}</a>'
              if b.target else '<span class="muted">none</span>')  # fmt: skip
    facts = [("Status", badge(b.status)), ("Target", target), ("Created", when(b.created)),
             ("Updated", when(b.updated))]  # fmt: skip
    if b.status == "unavailable":
        facts.append(("Reason withdrawn", esc(b.reason or "")))
    if b.is_tombstoned:
        facts += [("Tombstoned", when(b.tombstoned_at)), ("Reason", esc(b.tombstone_reason or ""))]
    facts += [("Resolves at", f'<a class="mono" href="/{esc(b.key)}">{esc(base)}/{esc(b.key)}</a>'),
              ("Description (?info)",
               f'<a class="mono" href="/{esc(b.key)}?info">{esc(base)}/{esc(b.key)}?info</a>')]
    erc = [(ERC_LABELS[k], esc(v) or '<span class="muted">—</span>') for k, v in b.erc.to_dict().items()]
    extra = [(esc(k), esc(v)) for k, v in b.extra] or [("", '<span class="muted">none</span>')]
    body = (
        f'<section class="card">{_table(facts)}</section>'
        + _share(b.key, base)
        + f'<section class="card"><h2>Description (ERC)</h2>{_table(erc)}'
        f'<h2>Other metadata</h2>{_table(extra)}</section>'
        f'{_actions(signed, b)}'
        '<section class="card"><h2>History</h2>'
        f'{_timeline(store_of(request).history("ark", b.key))}</section>'
    )
    return office_page(b.key, body, signed)


def _share(key: str, base: str) -> str:
    """The ARK, its resolution URL and its ``?info`` URL as read-only, selectable values (the script
    ``/static/office.js`` adds a Copy button to each)."""
    values = [("share-ark", "ARK", key), ("share-url", "Resolution URL", f"{base}/{key}"),
              ("share-info", "Description URL (?info)", f"{base}/{key}?info")]  # fmt: skip
    fields = "".join(
        f'<p class="field copyable"><label for="{fid}">{esc(label)}</label>'
        f'<input type="text" id="{fid}" class="mono" readonly value="{esc(value)}"></p>'
        for fid, label, value in values
    )
    return f'<section class="card"><h2>Share</h2>{fields}</section>'


def _table(pairs: list[tuple[str, str]]) -> str:
    """Rows of (label HTML, value HTML), both already escaped."""
    cells = "".join(f'<tr><th scope="row">{k}</th><td>{v}</td></tr>' for k, v in pairs)
    return f"<table>{cells}</table>"


def _post_button(action: str, signed: Signed, key: str, label: str, *, fields: str = "",
                 style: str = "quiet") -> str:
    return (f'<form method="post" action="{esc(action)}">{csrf_field(signed)}'
            f'<input type="hidden" name="ark" value="{esc(key)}">{fields}'
            f'<button type="submit" class="{style}">{esc(label)}</button></form>')


def _actions(signed: Signed, b: Binding) -> str:
    if b.is_tombstoned:
        return ""
    parts = [f'<a href="/office/edit?{urllib.parse.urlencode({"ark": b.key})}">Edit</a>']
    if b.status == "unavailable" and b.target:
        parts.append(_post_button("/office/reinstate", signed, b.key, "Reinstate (make public)"))
    if b.status == "reserved":
        parts.append(_post_button("/office/delete", signed, b.key, "Delete this reserved id", style="danger"))
    parts.append(f'<a href="/office/tombstone?{urllib.parse.urlencode({"ark": b.key})}">Tombstone…</a>')
    withdraw = ""
    if b.status == "public":
        withdraw = ('<h3>Withdraw</h3>' + _post_button(
            "/office/withdraw", signed, b.key, "Withdraw",
            fields=field("reason", "Reason for withdrawing", required=True,
                         hint="Shown to visitors; the id can be reinstated later.")))
    return (f'<section class="card"><h2>Actions</h2><div class="actions">{"".join(parts)}</div>'
            f"{withdraw}</section>")


def _show(value: object) -> str:
    """A history value for people.

    >>> _show(None), _show(""), _show(False), _show({"who": "", "what": "T"})
    ('—', '—', 'no', 'what: T')
    """
    if value is None or value == "" or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):  # an ERC: the elements that have a value
        return "; ".join(f"{k}: {v}" for k, v in value.items() if v not in ("", None)) or "—"
    return str(value)


def _timeline(entries: list[HistoryEntry]) -> str:
    items = []
    for h in reversed(entries):
        before, after = h.before or {}, h.after or {}
        names = [n for n in dict.fromkeys([*before, *after])  # a field empty before and after says nothing
                 if _show(before.get(n)) != "—" or _show(after.get(n)) != "—"]
        changes = "".join(
            f'<tr><th scope="row">{esc(_label(n))}</th><td>{esc(_show(before.get(n)))}</td>'
            f"<td>{esc(_show(after.get(n)))}</td></tr>"
            for n in names
        )
        table = (f'<table class="grid"><thead><tr><th scope="col">Field</th><th scope="col">Before</th>'
                 f'<th scope="col">After</th></tr></thead><tbody>{changes}</tbody></table>' if names else "")
        items.append(f"<li><p>{when(h.at)} — <strong>{esc(_operation(h))}</strong> "
                     f'<span class="who">by {esc(h.principal)}</span></p>{table}</li>')
    return f'<ol class="timeline">{"".join(items)}</ol>'


def _label(name: str) -> str:
    """A field name in words.

    >>> _label("erc"), _label("tombstone_reason")
    ('description (ERC)', 'tombstone reason')
    """
    return {"erc": "description (ERC)", "support": "commitment (ERC support)",
            "extra": "other metadata"}.get(name, name.replace("_", " "))  # fmt: skip


# -- create ----------------------------------------------------------------------------------------
def _describe_fields(values: Mapping[str, str], form: str = "f") -> str:
    return (field("target", "Target URL", values.get("target", ""), form=form, hint="Where the ARK resolves "
                  "to (http or https); may be empty for a reserved id.")
            + "".join(field(k, label, values.get(k, ""), form=form) for k, label in ERC_LABELS.items())
            + textarea("extra", "Other metadata", values.get("extra", ""), form=form,
                       hint="One element per line as name: value, e.g. dc.title: A title."))  # fmt: skip


def _status_field(chosen: str = "public", form: str = "f") -> str:
    options = [("public", "Public (resolves)"), ("reserved", "Reserved (not yet public)")]
    return select("status", "Status", options, chosen, form=form)


@router.get("/office/create")
def create_form(request: Request) -> Response:
    """Mint one on a shoulder the user may use, bind a given ARK, or mint several reserved ids."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    return _create_page(request, signed)


def _create_page(request: Request, signed: Signed, values: Mapping[str, str] | None = None, *,
                 problem: str = "", status: int = 200) -> Response:
    values = values or {}
    minters = _minters(store_of(request), signed.user)
    options = [(m.name, f"{m.name} — shoulder {s or '(none)'} of NAAN {m.naan}") for m, s in minters]
    if minters:
        mint = ('<section class="card"><h2>Mint a new ARK</h2><form method="post" action="/office/mint">'
                + csrf_field(signed) + _once_field()
                + select("minter", "Minter", options, values.get("minter", ""))
                + _describe_fields(values) + _status_field(values.get("status", "public"))
                + '<button type="submit">Mint</button></form></section>'
                '<section class="card"><h2>Mint reserved ids for later</h2>'
                '<form method="post" action="/office/reserve">' + csrf_field(signed) + _once_field()
                + select("minter", "Minter", options, values.get("minter", ""), form="r")
                + field("count", "How many", values.get("count", "10"), kind="number",
                        extra=f' min="1" max="{MAX_RESERVE}"', hint=f"1 to {MAX_RESERVE}.")
                + '<button type="submit">Mint reserved ids</button></form></section>')  # fmt: skip
    else:
        mint = message("No minter within your scope: ask an administrator to create one.")
    bind = ('<section class="card"><h2>Bind a given ARK</h2><form method="post" action="/office/bind">'
            + csrf_field(signed)
            + field("ark", "ARK", values.get("ark", ""), required=True, hint="For example ark:99999/fk4abc.",
                    form="b")
            + _describe_fields({}, form="b") + _status_field(form="b")
            + '<button type="submit">Bind</button></form></section>')  # fmt: skip
    body = (message(problem, bad=True) if problem else "") + mint + bind
    return office_page("Create", body, signed, status=status)


def _extra(text: str) -> dict[str, str]:
    """``name: value`` lines → extra elements (the store checks the names).

    >>> _extra("dc.title: A title\\n\\napp:x: y")
    {'dc.title': 'A title', 'app:x': 'y'}
    """
    out: dict[str, str] = {}
    for number, line in enumerate(ezid_lines(text), 1):
        if not line.strip():
            continue
        name, sep, value = line.partition(": ")
        if not sep:
            name, sep, value = line.rstrip().partition(":")
            if not sep or value:
                raise PidkitError(f"other metadata, line {number}: write name: value", text=line)
        out[name.strip()] = value.strip()
    return out


def _erc(form: Mapping[str, str]) -> dict[str, str]:
    return {k: form.get(k, "").strip() for k in ERC_LABELS}


def _once_field() -> str:
    """The hidden one-time token of a form that mints (:func:`_at_most_once`)."""
    return f'<input type="hidden" name="once" value="{secrets.token_urlsafe(16)}">'


class _Spent:
    """A minting form refused after it minted (a bind refused, another writer first): its answer, and
    the form's token stays claimed — the ids are used up, so the same form sent again mints nothing
    more and says so (:func:`_at_most_once`)."""

    __slots__ = ("page",)

    def __init__(self, page: Response) -> None:
        self.page = page


def _at_most_once(
    request: Request, signed: Signed, form: Mapping[str, str], work: Callable[[], str | Response | _Spent]
) -> Response:
    """Do a minting form's ``work`` once for the one-time token the form carries (``once``, made with
    the form: :func:`_once_field`).  ``work`` returns the page its answer redirects to, kept with the
    token; or a page of its own, a refusal before anything was minted, which lets the token go (the form
    corrected and sent again is a new try); or a :class:`_Spent` refusal, which keeps it.  The same form
    sent again — a double click, a request retried, the browser's "send again" — is answered with the
    first one's page (303) instead of minting as many more ids; while the first is at work, or if it
    stopped or was refused after minting, with a page saying so (409).  The token is remembered as long
    as a session lasts (the form can be sent as long as its session lives), at least a day.  A form
    without a token (made before the office gave them) is done as it comes."""
    store, name, once = store_of(request), signed.user.name, form.get("once", "")
    if once:
        keep = max(FORM_TOKEN_LIFETIME, _dt.timedelta(hours=settings_of(request).session_hours))
        try:
            done = store.claim_form(name, once, keep=keep)
        except PidkitError as exc:
            return _create_page(request, signed, form, problem=str(exc), status=400)
        if done:
            return with_headers(RedirectResponse(done, status_code=303), OFFICE_CSS)
        if done is not None:
            text = message("This form was sent already, and what it did is not recorded yet: it may still be "
                           "at work, or it stopped before it ended. Look for the ids in Find before you "
                           "send a new form.", bad=True)  # fmt: skip
            links = '<p><a href="/office/find">Find</a> · <a href="/office/create">Create</a></p>'
            return office_page("Sent already", text + links, signed, status=409)
    outcome = work()  # an error (the store unavailable …) leaves the token claimed: whether an id was
    # minted before it is not known here, so the form sent again says so rather than mint again
    if isinstance(outcome, _Spent):
        return outcome.page
    if isinstance(outcome, Response):
        if once:
            store.settle_form(name, once, None)
        return outcome
    if once:
        store.settle_form(name, once, outcome)
    return with_headers(RedirectResponse(outcome, status_code=303), OFFICE_CSS)


@form_post(router, "/office/mint")
def mint_one(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Mint one ARK with a minter of the user's scope and bind it, at most once per form sent; the
    binding is checked first, so a refused one uses no id."""
    store, who = store_of(request), Principal.user(signed.user.name)

    def work() -> str | Response | _Spent:
        allowed = {m.name: f"ark:{m.naan}/{template_shoulder(m.template, m.naan)}"  # its ids' beginning
                   for m, _ in _minters(store, signed.user)}  # fmt: skip
        if form.get("minter") not in allowed:
            return _create_page(request, signed, form, problem="Choose a minter of your scope.", status=403)
        status: Status = "reserved" if form.get("status") == "reserved" else "public"
        try:
            extra = _extra(form.get("extra", ""))
            target = form.get("target", "").strip() or None
            change = BindingChange(target=target, erc=_erc(form), status=status, extra=extra or None)
            check_new(change, allowed[form["minter"]])  # refused before an id is minted: none is used up
            ark = store.mint(form["minter"], 1, principal=who)[0]
        except PidkitError as exc:
            return _create_page(request, signed, form, problem=str(exc), status=400)
        try:
            b = store.change("ark", ark, change, principal=who, only_new=True)  # a new id: never merged
        except PidkitError as exc:
            return _Spent(_create_page(request, signed, form, status=400,
                                       problem=f"{ark} was minted but not bound: {exc}"))
        return _id_url(b.key)

    return _at_most_once(request, signed, form, work)


@form_post(router, "/office/reserve")
def reserve(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Mint N ids and bind each as reserved, at most once per form sent."""
    store, who = store_of(request), Principal.user(signed.user.name)

    def work() -> str | Response | _Spent:
        if form.get("minter") not in {m.name for m, _ in _minters(store, signed.user)}:
            return _create_page(request, signed, form, problem="Choose a minter of your scope.", status=403)
        count = form.get("count", "")
        if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= MAX_RESERVE:
            return _create_page(request, signed, form, problem=f"How many: 1 to {MAX_RESERVE}.", status=400)
        try:
            minted = store.mint(form["minter"], int(count), principal=who)
        except PidkitError as exc:
            return _create_page(request, signed, form, problem=str(exc), status=400)
        arks: list[str] = []
        try:
            for a in minted:
                arks.append(store.bind(a, None, status="reserved", principal=who).key)
        except PidkitError as exc:
            said = f"{len(minted)} ids were minted, {len(arks)} bound reserved; then: {exc}"
            return _Spent(_create_page(request, signed, form, problem=said, status=400))
        # answered by a page of its own (POST, redirect, GET): reloading it lists the same ids, it never
        # submits the form again
        return "/office/reserved?" + urllib.parse.urlencode([("ark", a) for a in arks])

    return _at_most_once(request, signed, form, work)


@router.get("/office/reserved")
def reserved(request: Request) -> Response:
    """The ids a reserve form just minted (named in the URL, at most as many as one form mints): each
    ARK within the user's scope, with its status now; one that is not is left out."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    asked = request.query_params.getlist("ark")
    if len(asked) > MAX_RESERVE:
        too_many = message(f"At most {MAX_RESERVE} ids.", bad=True)
        return office_page("Reserved ids", too_many, signed, status=400)
    store = store_of(request)
    found = [b for b in (_find(store, signed.user, a) for a in dict.fromkeys(asked)) if b is not None]
    items = "".join(f'<li><a class="mono" href="{esc(_id_url(b.key))}">{esc(b.key)}</a> '
                    f"{badge(b.status)}</li>" for b in found)  # fmt: skip
    body = message(f"{len(found)} ids minted by a reserve form, each with its status now.")
    return office_page("Reserved ids", body + f'<section class="card"><ul>{items}</ul></section>', signed)


@form_post(router, "/office/bind")
def bind_given(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Bind a given ARK of the user's scope (a new binding: an existing one is edited instead)."""
    store, who = store_of(request), Principal.user(signed.user.name)
    text = form.get("ark", "").strip()
    status: Status = "reserved" if form.get("status") == "reserved" else "public"
    try:
        k = ark_key(text)
        if not signed.user.scope.allows(k.naan, k.shoulder):
            return _create_page(request, signed, form, status=403,
                                problem=f"{k.key} is outside your scope ({signed.user.scope}).")
        if store.get_binding(k.key) is not None:
            raise _already_bound(k.key)
        target = form.get("target", "").strip() or None
        extra = _extra(form.get("extra", "")) or None
        change = BindingChange(target=target, erc=_erc(form), status=status, extra=extra)
        try:  # a create: one bound meanwhile (another user, a second submission) is refused, not changed
            b = store.change("ark", text, change, principal=who, only_new=True)
        except AlreadyBoundError:
            raise _already_bound(k.key) from None
    except PidkitError as exc:
        return _create_page(request, signed, form, problem=str(exc), status=400)
    return _done(b.key)


def _already_bound(key: str) -> PidkitError:
    return PidkitError("already bound: open it and edit it", text=key)


# -- edit with a preview ---------------------------------------------------------------------------
def _current_values(b: Binding) -> dict[str, str]:
    values = {"target": b.target or "", **b.erc.to_dict()}
    values["extra"] = "\n".join(f"{k}: {v}" for k, v in b.extra)
    return values


@router.get("/office/edit")
def edit_form(request: Request, ark: str = "") -> Response:
    """The edit form, filled with the binding's values."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    b = _find(store_of(request), signed.user, ark)
    if b is None or b.is_tombstoned:
        return _not_found(signed, ark)
    return _edit_page(signed, b, _current_values(b))


def _edit_page(signed: Signed, b: Binding, values: Mapping[str, str], *, preview: str = "",
               problem: str = "", status: int = 200) -> Response:
    """The edit form of ``b``, filled with ``values``; it carries ``b``'s version (``base``), so what it
    sends is compared with the record as it was shown."""
    form = (f'<section class="card"><form method="post" action="/office/edit">{csrf_field(signed)}'
            f'<input type="hidden" name="ark" value="{esc(b.key)}">{_base_field(b)}{_describe_fields(values)}'
            '<button type="submit">Preview the changes</button></form></section>')  # fmt: skip
    body = (message(problem, bad=True) if problem else "") + preview + form
    return office_page(f"Edit {b.key}", body, signed, status=status)


def _base_field(b: Binding) -> str:
    return f'<input type="hidden" name="base" value="{esc(binding_version(b))}">'


def _edit_changes(b: Binding, form: Mapping[str, str]) -> tuple[BindingChange, list[tuple[str, str, str]]]:
    """What the edit form ``form`` changes of ``b``: the change (only the fields that differ) and its rows
    for the preview (field, now, after).  :class:`~pidkit.errors.PidkitError` for bad other metadata."""
    extra = _extra(form.get("extra", ""))
    target = form.get("target", "").strip()
    erc = {k: v for k, v in _erc(form).items() if v != getattr(b.erc, k)}
    extra_change: dict[str, str | None] = {k: v for k, v in extra.items() if b.extra_dict.get(k) != v}
    extra_change |= {k: None for k in b.extra_dict if k not in extra}
    changes = ([("Target URL", b.target or "", target)] if target != (b.target or "") else [])
    changes += [(ERC_LABELS[k], getattr(b.erc, k), v) for k, v in erc.items()]
    changes += [(f"other metadata: {k}", b.extra_dict.get(k, ""), v or "(removed)")
                for k, v in extra_change.items()]  # fmt: skip
    change = BindingChange(target=target if target != (b.target or "") else None, erc=erc or None,
                           extra=extra_change or None)  # fmt: skip
    return change, changes


#: Said above a preview made again because the record changed since the form or the preview was shown.
_CHANGED_MEANWHILE: Final = ("This record was changed by someone else since you opened it: the changes below "
                             "are against it as it is now. Check them, then apply them.")


@form_post(router, "/office/edit")
def edit(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """First a preview of what changes (field, now, after); applied only when confirmed, and only if the
    record is still the one previewed (its version, ``base``): a change made meanwhile is never written
    over — the preview is shown again against the record as it is now."""
    store = store_of(request)
    b = _find(store, signed.user, form.get("ark", ""))
    if b is None or b.is_tombstoned:
        return _not_found(signed, form.get("ark", ""))
    try:
        change, changes = _edit_changes(b, form)
    except PidkitError as exc:
        return _edit_page(signed, b, form, problem=str(exc), status=400)
    stale = form.get("base") != binding_version(b)
    if form.get("confirm") == "yes" and not stale and changes:
        try:
            store.change("ark", b.key, change, principal=Principal.user(signed.user.name),
                         if_version=form["base"])  # fmt: skip
            return _done(b.key)
        except ChangedMeanwhileError:  # changed between this request's read and its write
            b = _find(store, signed.user, b.key)
            if b is None or b.is_tombstoned:
                return _not_found(signed, form.get("ark", ""))
            change, changes = _edit_changes(b, form)
            stale = True
        except PidkitError as exc:
            return _edit_page(signed, b, form, problem=str(exc), status=400)
    note = message(_CHANGED_MEANWHILE, bad=True) if stale and "base" in form else ""
    if not changes:
        return _edit_page(signed, b, form, preview=note + message("Nothing changes."))
    rows = "".join(f'<tr><th scope="row">{esc(n)}</th><td>{esc(old or "—")}</td>'
                   f'<td>{esc(new or "—")}</td></tr>' for n, old, new in changes)
    hidden = "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in form.items()
                     if k not in ("csrf", "confirm", "base"))  # fmt: skip
    preview = ('<section class="card"><h2>These fields change</h2><table class="grid"><thead><tr>'
               '<th scope="col">Field</th><th scope="col">Now</th><th scope="col">After</th></tr></thead>'
               f"<tbody>{rows}</tbody></table>"
               f'<form method="post" action="/office/edit">{csrf_field(signed)}{hidden}{_base_field(b)}'
               '<input type="hidden" name="confirm" value="yes">'
               '<button type="submit">Apply these changes</button></form></section>')  # fmt: skip
    return _edit_page(signed, b, form, preview=note + preview)


# -- status changes --------------------------------------------------------------------------------
def _scoped(request: Request, signed: Signed, form: dict[str, str]) -> Binding | Response:
    """The posted form's ARK if it is within the user's scope, else the "not found" answer."""
    b = _find(store_of(request), signed.user, form.get("ark", ""))
    return _not_found(signed, form.get("ark", "")) if b is None else b


def _refused(signed: Signed, b: Binding, problem: str) -> Response:
    back = f'<p><a href="{esc(_id_url(b.key))}">Back to {esc(b.key)}</a></p>'
    return office_page(b.key, message(problem, bad=True) + back, signed, status=409)


@form_post(router, "/office/withdraw")
def withdraw(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Make a public ARK unavailable, with a reason (reversible)."""
    b = _scoped(request, signed, form)
    if isinstance(b, Response):
        return b
    try:
        store_of(request).bind(b.key, status="unavailable", reason=form.get("reason", "").strip() or None,
                               principal=Principal.user(signed.user.name))
    except PidkitError as exc:
        return _refused(signed, b, str(exc))
    return _done(b.key)


@form_post(router, "/office/reinstate")
def reinstate(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Make a withdrawn ARK public again."""
    b = _scoped(request, signed, form)
    if isinstance(b, Response):
        return b
    try:
        store_of(request).bind(b.key, status="public", principal=Principal.user(signed.user.name))
    except PidkitError as exc:
        return _refused(signed, b, str(exc))
    return _done(b.key)


@form_post(router, "/office/delete")
def delete(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Delete a reserved id that was never published (it stays held: never minted again)."""
    b = _scoped(request, signed, form)
    if isinstance(b, Response):
        return b
    try:
        store_of(request).delete("ark", b.key, principal=Principal.user(signed.user.name))
    except PidkitError as exc:
        return _refused(signed, b, str(exc))
    body = message(f"{b.key} deleted; it stays held and is never minted again.")
    return office_page("Deleted", body + '<p><a href="/office">Back to the dashboard</a></p>', signed)


@router.get("/office/tombstone")
def tombstone_form(request: Request, ark: str = "") -> Response:
    """The confirmation step of a tombstone: a reason and an explicit confirmation."""
    signed = _user(request)
    if isinstance(signed, Response):
        return signed
    b = _find(store_of(request), signed.user, ark)
    if b is None or b.is_tombstoned:
        return _not_found(signed, ark)
    body = (message("A tombstone is permanent: the ARK never resolves again and is never reissued.", bad=True)
            + f'<section class="card"><form method="post" action="/office/tombstone">{csrf_field(signed)}'
            f'<input type="hidden" name="ark" value="{esc(b.key)}">'
            + field("reason", "Reason", required=True, hint="Shown to visitors of the ARK.")
            + '<p class="field check">'
            '<input type="checkbox" id="f-confirm" name="confirm" value="yes" required>'
            f' <label for="f-confirm">I understand that {esc(b.key)} is withdrawn for good</label></p>'
            '<button type="submit" class="danger">Tombstone</button></form></section>')
    return office_page(f"Tombstone {b.key}", body, signed)


@form_post(router, "/office/tombstone")
def tombstone(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Tombstone an ARK: needs the reason and the confirmation box."""
    b = _scoped(request, signed, form)
    if isinstance(b, Response):
        return b
    reason = form.get("reason", "").strip()
    if form.get("confirm") != "yes" or not reason:
        return _refused(signed, b, "A tombstone needs a reason and the confirmation box ticked: "
                        "nothing changed.")
    if not b.is_tombstoned:
        b = store_of(request).tombstone(b.key, reason, principal=Principal.user(signed.user.name))
        if b.tombstone_reason == reason:
            return _done(b.key)
    # tombstoned before this request (another user, the form sent twice): its reason stays, not this one
    return _refused(signed, b, f"{b.key} was already tombstoned (reason: {b.tombstone_reason}): "
                    "your reason was not recorded.")


