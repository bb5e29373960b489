"""The HTML pages: home (resolver box and inspector), ``/resolve`` and ``/inspect``.

Server-rendered, no JavaScript, no external assets; every value passes through
:func:`~pidkit.web.templates.esc`.  Forms are plain ``GET`` forms, so Enter submits them and the
result has a URL one can share.
"""

from __future__ import annotations

import json
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..ark import Ark
from ..errors import ArkError
from ..inspect import Reading, inspect
from .errors import error_response
from .stores import store_of
from .templates import esc, form, page, rows

router = APIRouter(include_in_schema=False)

#: Longest text the inspector page accepts (the inspector itself stops at 8192).
MAX_INSPECT: Final = 4096

_RESOLVE_HINT: Final = "An ARK in any spelling: ark:99999/fk4…, ark:/99999/…, or a full https://…/ark:… URL."
_INSPECT_HINT: Final = "Any identifier: ARK, XarkId, TID, record key, GEDCOM _UID, UUID, Library.Link id."


def resolve_form(value: str = "") -> str:
    """The resolver box."""
    return form("/resolve", "ark", "Resolve an ARK", value=value, button="Resolve", hint=_RESOLVE_HINT,
                anchor="resolve")


def inspect_form(value: str = "") -> str:
    """The inspector box."""
    return form("/inspect", "id", "Inspect any identifier", value=value, button="Inspect", hint=_INSPECT_HINT,
                anchor="inspect")


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    """Home page: the resolver box, the inspector box and the NAANs this resolver serves."""
    naans = store_of(request).list_naans()
    if naans:
        items = "".join(
            f'<li><span class="mono">{esc(n.naan)}</span> {esc(n.name)}'
            + (f' — shoulders <span class="mono">{esc(", ".join(n.shoulders))}</span>' if n.shoulders else "")
            + "</li>"
            for n in naans
        )
        served = f'<section class="card"><h2>NAANs served here</h2><ul>{items}</ul></section>'
    else:
        served = '<p class="muted">No NAAN is registered on this resolver yet.</p>'
    body = (
        resolve_form()
        + inspect_form()
        + served
        + '<p class="hint">Add <code>?info</code> to an ARK for its description (ERC); ARKs of other NAANs '
        'resolve through the public NAAN registry (<a href="/directory">search the NAAN directory</a>), '
        'or are forwarded to <a href="https://n2t.net/">n2t.net</a>.</p>'
    )
    return HTMLResponse(page("ARK resolver", body))


@router.get("/resolve", response_class=HTMLResponse)
def resolve_box(request: Request, ark: str = "") -> Response:
    """The resolver box's target: clean up the pasted text, then send the browser to ``/ark:…``."""
    text = ark.strip()
    try:
        parsed = Ark.parse(text)
    except ArkError as exc:
        body = f'<section class="card"><p class="bad">{esc(exc)}</p></section>{resolve_form(text)}'
        return HTMLResponse(page("Not a valid ARK", body), status_code=400)
    return RedirectResponse("/" + parsed.compact + parsed.inflection, status_code=303)


@router.get("/inspect", response_class=HTMLResponse)
def inspect_page(request: Request, id: str = "") -> Response:
    """The inspector: every reading of the pasted id, its parts and its time in UTC."""
    text = id.strip()
    if not text:
        return HTMLResponse(page("Inspect an identifier", inspect_form()))
    if len(text) > MAX_INSPECT:
        return error_response(request, 400, f"longer than {MAX_INSPECT} characters")
    report = inspect(text)
    if not report.candidates:
        reasons = rows(sorted(report.errors.items()))
        body = (f'{inspect_form(text)}<section class="card">'
                f'<p class="bad">Not an identifier pidkit knows.</p>{reasons}</section>')
        return HTMLResponse(page(f"Inspect: {text}", body))
    cards = "".join(_reading_card(r, i == 0) for i, r in enumerate(report.candidates))
    return HTMLResponse(page(f"Inspect: {text}", inspect_form(text) + cards))


def _reading_card(r: Reading, best: bool) -> str:
    data = r.to_json()
    badge = ('<span class="badge ok">valid</span>' if r.valid else '<span class="badge bad">not valid</span>')
    label = " (best reading)" if best else ""
    pairs: list[tuple[str, str]] = [
        ("normalized", r.normalized or "—"),
        ("time (UTC)", data["timestamp"] or "—"),
    ]
    pairs += [(str(k), _show(v)) for k, v in r.parts.items()]
    pairs += [("note", n) for n in r.notes]
    return (f'<section class="card"><h2>{esc(r.scheme)}{esc(label)} {badge}</h2>'
            f"{rows(pairs)}</section>")


def _show(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    return json.dumps(value, ensure_ascii=False, default=str)
