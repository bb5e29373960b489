"""HTML building blocks of the back office: its page (navigation naming the user, the sign-out form),
labelled form fields, times in UTC, status badges, and the answer with its security headers.

Every value passes through :func:`~pidkit.web.templates.esc`; every field has a ``<label>``; times are
shown as ``25 Nov 2026, 09:02 UTC`` with the ISO value in ``<time datetime>``.

>>> when(None)
'—'
>>> field("target", "Target URL", "<x>")  # doctest: +ELLIPSIS
'<p class="field"><label for="f-target">Target URL</label><input type="text" ... value="&lt;x&gt;"...'
"""

from __future__ import annotations

import datetime as _dt
from typing import Final

from fastapi.responses import Response

from ..codecs import iso_z
from ..store import MinterInfo
from .assets import OFFICE_JS_PATH
from .sessions import Signed, html
from .templates import CSS, esc, page

__all__ = [
    "OFFICE_CSS", "badge", "csrf_field", "field", "ids_left", "message", "office_page", "select", "textarea",
    "when",
]

#: The back office's additions to the site's style sheet.
OFFICE_EXTRA: Final = """
.field{margin:.75rem 0}.field label{display:block;font-weight:600;margin-bottom:.25rem}
.field input[type=text],.field input[type=password],.field input[type=number],.field select,
.field textarea{width:100%;font:inherit;padding:.55rem .65rem;border:1px solid #6b7385;
  border-radius:.375rem;background:#fff;color:var(--fg)}
.field textarea{min-height:6rem}
select:focus-visible,textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.check label{font-weight:600}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.actions form{margin:0}
button.quiet{background:#fff;color:var(--accent);border:1px solid var(--accent)}
button.danger{background:var(--bad)}
nav{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem}nav a{margin-right:0}
nav form{display:inline;margin:0}
nav button{padding:.2rem .6rem;font-size:.9rem}
.who{color:var(--muted)}
ol.timeline{list-style:none;padding:0}ol.timeline li{border-left:3px solid var(--line);
  padding:.25rem 0 .75rem 1rem;margin-left:.25rem}
.copyable{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:center}
.copyable label{flex:1 1 100%}.copyable input{flex:1 1 16rem;min-width:0}
button.copy{padding:.45rem .8rem}
.secret{font-size:1.05rem;background:#fff7d6;padding:.75rem;border-radius:.375rem}
.notice{border-color:var(--ok)}.problem{border-color:var(--bad)}
td.num,th.num{text-align:right;width:auto}
table.grid th{width:auto}
caption{text-align:left;padding:.25rem 0}
@media (max-width:40rem){table.grid{display:block;overflow-x:auto}table.grid tr{display:table-row}
  table.grid th,table.grid td{display:table-cell;border-bottom:1px solid var(--line);padding:.3rem .35rem}
  table.grid caption{display:table-caption}}
"""
#: The whole inline style sheet of a back-office page (allowed by its hash in the CSP).
OFFICE_CSS: Final = CSS + OFFICE_EXTRA


def when(at: _dt.datetime | None) -> str:
    """A time in UTC for people, with the ISO 8601 value in ``<time datetime>``.

    >>> when(_dt.datetime(2026, 11, 25, 9, 2, 7, tzinfo=_dt.UTC))
    '<time datetime="2026-11-25T09:02:07.000000Z">25 Nov 2026, 09:02 UTC</time>'
    """
    if at is None:
        return "—"
    utc = at.astimezone(_dt.UTC)
    return f'<time datetime="{esc(iso_z(utc))}">{utc:%d %b %Y, %H:%M} UTC</time>'


def ids_left(m: MinterInfo) -> str:
    """How many ids minter ``m`` has left, in words (:attr:`~pidkit.store.MinterInfo.left`).

    >>> sdd, zd = MinterInfo("m", "99999", "fk4.sdd", 7, 7), MinterInfo("m", "99999", "fk4.zd", 7, 7)
    >>> ids_left(sdd), ids_left(zd)
    ('93', 'unlimited')
    """
    return "unlimited" if m.left is None else str(m.left)


def badge(status: str) -> str:
    """A status shown as a badge (words, not codes).

    >>> badge("unavailable")
    '<span class="badge bad">withdrawn</span>'
    """
    label = {"public": "public", "reserved": "reserved", "unavailable": "withdrawn",
             "tombstoned": "tombstoned"}.get(status, status)  # fmt: skip
    tone = "ok" if status == "public" else "muted" if status == "reserved" else "bad"
    return f'<span class="badge {tone}">{esc(label)}</span>'


def field(name: str, label: str, value: str = "", *, kind: str = "text", hint: str = "",
          required: bool = False, extra: str = "", form: str = "f") -> str:
    """A labelled ``<input>`` (with a hint tied to it by ``aria-describedby``); its id is
    ``FORM-NAME`` (``form`` tells two forms' fields of one name apart on a page)."""
    fid = f"{form}-{name}"
    described = f' aria-describedby="{fid}-hint"' if hint else ""
    hint_html = f'<span class="hint" id="{fid}-hint">{esc(hint)}</span>' if hint else ""
    req = " required" if required else ""
    value_attr = "" if kind == "password" else f' value="{esc(value)}"'
    return (f'<p class="field"><label for="{fid}">{esc(label)}</label><input type="{kind}" id="{fid}" '
            f'name="{esc(name)}"{value_attr}{req}{described}{extra}>{hint_html}</p>')


def textarea(name: str, label: str, value: str = "", *, hint: str = "", form: str = "f") -> str:
    """A labelled ``<textarea>``."""
    fid = f"{form}-{name}"
    described = f' aria-describedby="{fid}-hint"' if hint else ""
    hint_html = f'<span class="hint" id="{fid}-hint">{esc(hint)}</span>' if hint else ""
    return (f'<p class="field"><label for="{fid}">{esc(label)}</label><textarea id="{fid}" '
            f'name="{esc(name)}"{described}>{esc(value)}</textarea>{hint_html}</p>')


def select(
    name: str, label: str, options: list[tuple[str, str]], chosen: str = "", *, form: str = "f"
) -> str:
    """A labelled ``<select>`` of ``(value, text)`` options."""
    fid = f"{form}-{name}"
    opts = "".join(f'<option value="{esc(v)}"{" selected" if v == chosen else ""}>{esc(t)}</option>'
                   for v, t in options)  # fmt: skip
    return (f'<p class="field"><label for="{fid}">{esc(label)}</label>'
            f'<select id="{fid}" name="{esc(name)}">{opts}</select></p>')


def csrf_field(signed: Signed) -> str:
    """The hidden CSRF field of a signed-in form."""
    return f'<input type="hidden" name="csrf" value="{esc(signed.session.csrf)}">'


def _nav(signed: Signed | None) -> str:
    if signed is None:
        return '<nav aria-label="main"><a href="/">Resolver</a><a href="/office/signin">Sign in</a></nav>'
    return (
        '<nav aria-label="main"><a href="/office">Dashboard</a><a href="/office/find">Find</a>'
        '<a href="/office/create">Create</a><a href="/office/import">Import</a>'
        '<a href="/office/export">Export</a><a href="/office/keys">API keys</a>'
        + ('<a href="/office/admin">Admin</a>' if signed.user.admin else "")
        + '<a href="/api/docs">API</a>'
        f'<span class="who">{esc(signed.user.name)}</span> '
        f'<form method="post" action="/office/signout">{csrf_field(signed)}'
        '<button type="submit" class="quiet">Sign out</button></form></nav>'
    )


def office_page(title: str, body: str, signed: Signed | None, *, status: int = 200) -> Response:
    """A back-office page: the site's layout with the back office's navigation and style, answered with
    the security headers.  No page reloads itself (a timed reload restarts a screen reader at the top,
    WCAG 2.2.1): work in progress is followed by a link, and by ``office.js`` in place."""
    head = f'<script src="{OFFICE_JS_PATH}" defer></script>\n'
    return html(page(title, body, nav=_nav(signed), css=OFFICE_CSS, head=head), OFFICE_CSS, status)


def message(text: str, *, bad: bool = False) -> str:
    """A notice or a problem, in a card (``role=alert`` for a problem).

    >>> message("<done>")
    '<section class="card notice" role="status"><p>&lt;done&gt;</p></section>'
    """
    kind, role = ("problem", "alert") if bad else ("notice", "status")
    return f'<section class="card {kind}" role="{role}"><p>{esc(text)}</p></section>'
