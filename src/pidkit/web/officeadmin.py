"""The back office's administration pages (administrators only; anyone else gets a 403 page): NAANs and
their shoulders, minters (created from a template, with their counters and ids left), users (add with a
password, disable / enable, scope, reset the password) and every API key (revoke).

The rules are the store's, as the CLI calls them (``pidkit naan``, ``pidkit minter``, ``pidkit user``,
``pidkit apikey``); every form posts with the session's CSRF token and every change is recorded in the
history as ``user:NAME`` (the administrator).
"""

from __future__ import annotations

import urllib.parse
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ..errors import PidkitError
from ..store import Principal, Store, User
from ..store.keys import template_shoulder
from .auth import form_post
from .officeviews import OFFICE_CSS, csrf_field, field, ids_left, message, office_page, select, when
from .sessions import Signed, signed_in, to_signin, with_headers
from .stores import store_of
from .templates import esc

__all__ = ["MASKS", "router"]

router = APIRouter(include_in_schema=False)

#: The NOID masks offered when creating a minter (the part of a template after the shoulder's ``.``).
MASKS: Final = (
    ("reedeedk", "reedeedk — random order, 70,728,100 ids, check character"),
    ("reeedeeedk", "reeedeeedk — random order, about 59 billion ids, check character"),
    ("zeedk", "zeedk — in order, never runs out, check character"),
    ("sddddk", "sddddk — in order, 10,000 ids, check character"),
)


def _forbidden(signed: Signed) -> Response:
    text = message("This page is for administrators only.", bad=True)
    return office_page("Administrators only", text + '<p><a href="/office">Back to the dashboard</a></p>',
                       signed, status=403)


def _admin(request: Request) -> Signed | Response:
    """The signed-in administrator, else the answer: to the sign-in page, or 403."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    return signed if signed.user.admin else _forbidden(signed)


def _back(path: str) -> Response:
    return with_headers(RedirectResponse(path, status_code=303), OFFICE_CSS)


def _who(signed: Signed) -> Principal:
    return Principal.user(signed.user.name)


def _grid(caption: str, heads: list[str], rows: list[str], empty: str) -> str:
    if not rows:
        return f'<p class="muted">{esc(empty)}</p>'
    th = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    return (f'<table class="grid"><caption class="muted">{esc(caption)}</caption><thead><tr>{th}</tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table>')


def _problem(problem: str) -> str:
    return message(problem, bad=True) if problem else ""


# -- the index -------------------------------------------------------------------------------------
@router.get("/office/admin")
def admin_index(request: Request) -> Response:
    """Links to each administration page, with counts."""
    signed = _admin(request)
    if isinstance(signed, Response):
        return signed
    store = store_of(request)
    counts = [("/office/admin/naans", "NAANs and shoulders", len(store.list_naans())),
              ("/office/admin/minters", "Minters", len(store.list_minters())),
              ("/office/admin/users", "Users", len(store.list_users())),
              ("/office/admin/keys", "API keys", len(store.list_api_keys()))]  # fmt: skip
    items = "".join(f'<li><a href="{href}">{esc(label)}</a> <span class="muted">({n})</span></li>'
                    for href, label, n in counts)  # fmt: skip
    return office_page("Administration", f'<section class="card"><ul>{items}</ul></section>', signed)


# -- NAANs and shoulders ---------------------------------------------------------------------------
def _naans_page(request: Request, signed: Signed, *, problem: str = "", status: int = 200) -> Response:
    naans = store_of(request).list_naans()
    rows = [f'<tr><th scope="row" class="mono">{esc(n.naan)}</th><td>{esc(n.name) or "—"}</td>'
            f'<td class="mono">{esc(", ".join(n.shoulders) or "—")}</td><td>{when(n.created)}</td></tr>'
            for n in naans]  # fmt: skip
    table = _grid("Every NAAN this service names under", ["NAAN", "Name", "Shoulders", "Added"], rows,
                  "No NAAN yet.")
    add = ('<section class="card"><h2>Add a NAAN</h2><form method="post" action="/office/admin/naans">'
           + csrf_field(signed)
           + field("naan", "NAAN", required=True, hint="Five or more digits, e.g. 12345.", form="n")
           + field("name", "Name of the organisation", form="n")
           + field("shoulders", "Shoulders (optional)", form="n", hint="Separated by spaces, e.g. fk4 b5.")
           + '<button type="submit">Add the NAAN</button></form></section>')
    shoulder = ""
    if naans:
        options = [(n.naan, f"{n.naan} {n.name}".strip()) for n in naans]
        shoulder = ('<section class="card"><h2>Add a shoulder</h2>'
                    '<form method="post" action="/office/admin/shoulders">' + csrf_field(signed)
                    + select("naan", "NAAN", options, form="s")
                    + field("shoulder", "Shoulder", required=True, form="s",
                            hint="Letters then a digit, e.g. b5 (draft-kunze-ark-40 §2.4.1).")
                    + '<button type="submit">Add the shoulder</button></form></section>')  # fmt: skip
    body = _problem(problem) + f'<section class="card">{table}</section>' + add + shoulder
    return office_page("NAANs and shoulders", body, signed, status=status)


@router.get("/office/admin/naans")
def naans(request: Request) -> Response:
    """Every NAAN with its shoulders; forms to add a NAAN and a shoulder."""
    signed = _admin(request)
    return signed if isinstance(signed, Response) else _naans_page(request, signed)


@form_post(router, "/office/admin/naans")
def add_naan(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Add a NAAN (with its shoulders)."""
    if not signed.user.admin:
        return _forbidden(signed)
    try:
        store_of(request).add_naan(form.get("naan", "").strip(), form.get("name", "").strip(),
                                   shoulders=form.get("shoulders", "").split(), principal=_who(signed))
    except PidkitError as exc:
        return _naans_page(request, signed, problem=str(exc), status=400)
    return _back("/office/admin/naans")


@form_post(router, "/office/admin/shoulders")
def add_shoulder(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Add a shoulder to a NAAN."""
    if not signed.user.admin:
        return _forbidden(signed)
    try:
        store_of(request).add_shoulder(form.get("naan", ""), form.get("shoulder", "").strip(),
                                       principal=_who(signed))  # fmt: skip
    except PidkitError as exc:
        return _naans_page(request, signed, problem=str(exc), status=400)
    return _back("/office/admin/naans")


# -- minters ---------------------------------------------------------------------------------------
def _minters_page(request: Request, signed: Signed, values: dict[str, str] | None = None, *,
                  problem: str = "", status: int = 200) -> Response:
    values = values or {}
    store = store_of(request)
    rows = [f'<tr><th scope="row" class="mono">{esc(m.name)}</th><td class="mono">{esc(m.naan)}</td>'
            f'<td class="mono">{esc(m.template)}</td>'
            f'<td class="mono">{esc(template_shoulder(m.template, m.naan) or "(none)")}</td>'
            f'<td class="num">{m.counter}</td><td class="num">{ids_left(m)}</td>'
            f"<td>{when(m.created)}</td></tr>" for m in store.list_minters()]  # fmt: skip
    table = _grid("Every minter", ["Minter", "NAAN", "Template", "Shoulder", "Counter (minted)", "Ids left",
                                   "Created"], rows, "No minter yet.")
    naans = [(n.naan, f"{n.naan} {n.name}".strip()) for n in store.list_naans()]
    create = message("Add a NAAN first: a minter mints under one.") if not naans else (
        '<section class="card"><h2>Create a minter from a template</h2>'
        '<form method="post" action="/office/admin/minters">' + csrf_field(signed)
        + field("name", "Minter name", values.get("name", ""), required=True, form="m",
                hint="How people and the API name it, e.g. fk4-main.")
        + select("naan", "NAAN", naans, values.get("naan", ""), form="m")
        + field("shoulder", "Shoulder", values.get("shoulder", ""), form="m",
                hint="The ids begin with it, e.g. fk4; it is added to the NAAN's shoulders.")
        + select("mask", "Template", list(MASKS), values.get("mask", MASKS[0][0]), form="m")
        + field("template", "Or a whole NOID template (optional)", values.get("template", ""), form="m",
                hint="Replaces the shoulder and template above, e.g. fk4.reedeedk.")
        + '<button type="submit">Create the minter</button></form></section>')  # fmt: skip
    body = _problem(problem) + f'<section class="card">{table}</section>' + create
    return office_page("Minters", body, signed, status=status)


@router.get("/office/admin/minters")
def minters(request: Request) -> Response:
    """Every minter with its counter and ids left; the form to create one from a template."""
    signed = _admin(request)
    return signed if isinstance(signed, Response) else _minters_page(request, signed)


@form_post(router, "/office/admin/minters")
def create_minter(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Create a minter: a whole template, or a shoulder and one of :data:`MASKS`."""
    if not signed.user.admin:
        return _forbidden(signed)
    template = form.get("template", "").strip()
    if not template:
        mask = form.get("mask", "")
        if mask not in dict(MASKS):
            return _minters_page(request, signed, form, problem="Choose one of the templates.", status=400)
        template = f"{form.get('shoulder', '').strip()}.{mask}"
    try:
        store_of(request).create_minter(form.get("name", "").strip(), naan=form.get("naan", ""),
                                        template=template, principal=_who(signed))  # fmt: skip
    except PidkitError as exc:
        return _minters_page(request, signed, form, problem=str(exc), status=400)
    return _back("/office/admin/minters")


# -- users -----------------------------------------------------------------------------------------
def _user_url(name: str) -> str:
    return "/office/admin/user?" + urllib.parse.urlencode({"name": name})


def _scope_words(u: User) -> str:
    return "every NAAN (administrator)" if u.admin else f"NAAN {u.naan}, " + (
        f"shoulder {u.shoulder}" if u.shoulder else "every shoulder")


def _users_page(request: Request, signed: Signed, values: dict[str, str] | None = None, *,
                problem: str = "", status: int = 200) -> Response:
    values = values or {}
    rows = [f'<tr><th scope="row"><a href="{esc(_user_url(u.name))}">{esc(u.name)}</a></th>'
            f"<td>{esc(_scope_words(u))}</td><td>{when(u.created)}</td>"
            f"<td>{'active' if u.active else 'disabled ' + when(u.disabled_at)}</td></tr>"
            for u in store_of(request).list_users()]  # fmt: skip
    table = _grid("Every user", ["Name", "Scope", "Created", "State"], rows, "No user yet.")
    add = ('<section class="card"><h2>Add a user</h2><form method="post" action="/office/admin/users">'
           + csrf_field(signed)
           + field("name", "User name", values.get("name", ""), required=True, form="u",
                   extra=' autocomplete="off"', hint="Letters, digits, '.', '_', '@' or '-'.")
           + field("password", "Password", kind="password", required=True, form="u",
                   extra=' autocomplete="new-password"', hint="10 characters or more; tell it to the user.")
           + _scope_fields(values, "u")
           + '<button type="submit">Add the user</button></form></section>')  # fmt: skip
    body = _problem(problem) + f'<section class="card">{table}</section>' + add
    return office_page("Users", body, signed, status=status)


def _scope_fields(values: dict[str, str], form: str) -> str:
    checked = " checked" if values.get("admin") == "yes" else ""
    return (field("naan", "NAAN", values.get("naan", ""), required=True, form=form,
                  hint="The NAAN the user works on.")
            + field("shoulder", "Shoulder (optional)", values.get("shoulder", ""), form=form,
                    hint="Limit the user to one shoulder; empty: every shoulder of the NAAN.")
            + f'<p class="field check"><input type="checkbox" id="{form}-admin" name="admin" value="yes"'
            f'{checked}> <label for="{form}-admin">Administrator (every NAAN, and these pages)</label></p>')


@router.get("/office/admin/users")
def users(request: Request) -> Response:
    """Every user with scope and state; the form to add one."""
    signed = _admin(request)
    return signed if isinstance(signed, Response) else _users_page(request, signed)


def _scope_of(form: dict[str, str]) -> tuple[str, str | None, bool]:
    return form.get("naan", "").strip(), form.get("shoulder", "").strip() or None, form.get("admin") == "yes"


@form_post(router, "/office/admin/users")
def add_user(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Add a user with a password and a scope."""
    if not signed.user.admin:
        return _forbidden(signed)
    naan, shoulder, admin = _scope_of(form)
    values = {k: v for k, v in form.items() if k != "password"}  # a password is never sent back
    try:
        store_of(request).add_user(form.get("name", "").strip(), form.get("password", ""), naan=naan,
                                   shoulder=shoulder, admin=admin, principal=_who(signed))  # fmt: skip
    except PidkitError as exc:
        return _users_page(request, signed, values, problem=str(exc), status=400)
    return _back(_user_url(form.get("name", "").strip()))


def _user_page(request: Request, signed: Signed, u: User, *, notice: str = "", problem: str = "",
               status: int = 200) -> Response:
    name = f'<input type="hidden" name="name" value="{esc(u.name)}">'
    state_words = "active" if u.active else "disabled " + when(u.disabled_at)
    facts = ('<section class="card"><table>'
             f'<tr><th scope="row">Scope</th><td>{esc(_scope_words(u))}</td></tr>'
             f'<tr><th scope="row">Created</th><td>{when(u.created)}</td></tr>'
             f'<tr><th scope="row">State</th><td>{state_words}</td></tr></table></section>')  # fmt: skip
    values = {"naan": u.naan, "shoulder": u.shoulder or "", "admin": "yes" if u.admin else ""}
    scope = ('<section class="card"><h2>Scope</h2><form method="post" action="/office/admin/user/scope">'
             + csrf_field(signed) + name + _scope_fields(values, "s")
             + '<button type="submit">Save the scope</button>'
             '<p class="hint">A changed scope ends the user\'s sessions.</p></form></section>')
    password = ('<section class="card"><h2>Reset the password</h2>'
                '<form method="post" action="/office/admin/user/password">' + csrf_field(signed) + name
                + field("password", "New password", kind="password", required=True, form="p",
                        extra=' autocomplete="new-password"', hint="10 characters or more; sessions end.")
                + '<button type="submit">Set the password</button></form></section>')  # fmt: skip
    action, label = ("disable", "Disable the user") if u.active else ("enable", "Enable the user")
    state = ('<section class="card"><h2>Sign-in</h2>'
             f'<form method="post" action="/office/admin/user/{action}">' + csrf_field(signed) + name
             + f'<button type="submit" class="{"danger" if u.active else "quiet"}">{label}</button>'
             "</form></section>")  # fmt: skip
    back = '<p><a href="/office/admin/users">All users</a></p>'
    body = _problem(problem) + notice + facts + scope + password + state + back
    return office_page(f"User {u.name}", body, signed, status=status)


def _named_user(store: Store, name: str) -> User | None:
    try:
        return store.get_user(name)
    except PidkitError:
        return None


def _no_user(signed: Signed, name: str) -> Response:
    return office_page("Not found", message(f"No user {name}.", bad=True)
                       + '<p><a href="/office/admin/users">All users</a></p>', signed, status=404)


@router.get("/office/admin/user")
def user_page(request: Request, name: str = "") -> Response:
    """One user: scope, password reset, disable / enable."""
    signed = _admin(request)
    if isinstance(signed, Response):
        return signed
    u = _named_user(store_of(request), name)
    return _no_user(signed, name) if u is None else _user_page(request, signed, u)


def _user_change(request: Request, signed: Signed, form: dict[str, str], action: str) -> Response:
    if not signed.user.admin:
        return _forbidden(signed)
    store, who = store_of(request), _who(signed)
    u = _named_user(store, form.get("name", ""))
    if u is None:
        return _no_user(signed, form.get("name", ""))
    try:
        if action == "disable":
            if u.name == signed.user.name:
                raise PidkitError("you cannot disable yourself")
            u, done = store.disable_user(u.name, principal=who), "disabled"
        elif action == "enable":
            u, done = store.enable_user(u.name, principal=who), "enabled"
        elif action == "password":
            u, done = store.set_password(u.name, form.get("password", ""), principal=who), "password set"
        else:
            naan, shoulder, admin = _scope_of(form)
            if u.name == signed.user.name and not admin:
                raise PidkitError("you cannot take away your own administrator role")
            u = store.set_user_scope(u.name, naan=naan, shoulder=shoulder, admin=admin, principal=who)
            done = "scope saved"
    except PidkitError as exc:
        return _user_page(request, signed, u, problem=str(exc), status=400)
    return _user_page(request, signed, u, notice=message(f"User {u.name}: {done}."))


@form_post(router, "/office/admin/user/disable")
def disable_user(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Disable a user (their sessions end)."""
    return _user_change(request, signed, form, "disable")


@form_post(router, "/office/admin/user/enable")
def enable_user(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Enable a disabled user."""
    return _user_change(request, signed, form, "enable")


@form_post(router, "/office/admin/user/password")
def reset_password(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Set a user's password (their sessions end)."""
    return _user_change(request, signed, form, "password")


@form_post(router, "/office/admin/user/scope")
def set_scope(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Change a user's NAAN, shoulder and administrator role (their sessions end)."""
    return _user_change(request, signed, form, "scope")


# -- every API key ---------------------------------------------------------------------------------
def _keys_page(request: Request, signed: Signed, *, notice: str = "", problem: str = "",
               status: int = 200) -> Response:
    rows = [
        f'<tr><th scope="row" class="mono">{esc(k.key_id)}</th><td>{esc(k.label) or "—"}</td>'
        f'<td>{esc(k.owner or "(command line)")}</td>'
        f'<td class="mono">{esc(k.naan)}/{esc(k.shoulder or "*")}</td>'
        f"<td>{when(k.created)}</td><td>{when(k.revoked_at) if k.revoked else 'in use'}</td><td>"
        + ("" if k.revoked else (
            f'<form method="post" action="/office/admin/keys/revoke">{csrf_field(signed)}'
            f'<input type="hidden" name="key_id" value="{esc(k.key_id)}">'
            f'<button type="submit" class="quiet" aria-label="Revoke key {esc(k.key_id)}">Revoke</button>'
            "</form>"))
        + "</td></tr>"
        for k in store_of(request).list_api_keys()
    ]  # fmt: skip
    table = _grid("Every API key (never the secrets)", ["Key", "Label", "Made by", "Scope", "Created",
                                                        "Revoked", "Action"], rows, "No API key yet.")
    body = _problem(problem) + notice + f'<section class="card">{table}</section>'
    return office_page("All API keys", body, signed, status=status)


@router.get("/office/admin/keys")
def all_keys(request: Request) -> Response:
    """Every API key (never a secret), with a revoke button each."""
    signed = _admin(request)
    return signed if isinstance(signed, Response) else _keys_page(request, signed)


@form_post(router, "/office/admin/keys/revoke")
def revoke_key(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Revoke any API key."""
    if not signed.user.admin:
        return _forbidden(signed)
    key_id = form.get("key_id", "")
    try:
        store_of(request).revoke_api_key(key_id, principal=_who(signed))
    except PidkitError as exc:
        return _keys_page(request, signed, problem=str(exc), status=404)
    return _keys_page(request, signed, notice=message(f"Key {key_id} revoked."))
