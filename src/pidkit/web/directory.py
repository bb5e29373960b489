"""The public NAAN registry on the web: the directory pages and the ``?info`` of registry records.

* ``GET /directory?q=…``: search the registry's NAANs and shoulders by number, name (English or native)
  or acronym (:meth:`pidkit.registry.Registry.search`);
* ``GET /directory/{naan}``: one NAAN's record and its shoulders;
* :func:`registry_info_response`: the ``?info`` of an ARK the registry resolves, of a bare NAAN
  (``/ark:12148?info``) or of a registered shoulder — the ERC built from the registry record
  (:func:`pidkit.registry.erc`) in ANVL, HTML or JSON, as the resolver answers for its own ARKs.

Server-rendered with the pages' layout (:mod:`pidkit.web.templates`); every registry value passes
through :func:`~pidkit.web.templates.esc` — a registry is data from elsewhere, and its text never
becomes markup.  The registry comes from the app's :class:`~pidkit.web.lookups.RegistryHolder`.

>>> from fastapi.testclient import TestClient
>>> from pidkit.web import create_app
>>> with TestClient(create_app("sqlite:///:memory:")) as client:
...     "Bibliothèque nationale de France" in client.get("/directory", params={"q": "BNF"}).text
True
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ..anvl import anvl_line, erc_segment
from ..registry import Record, Registry, erc, organization
from .errors import error_response
from .lookups import RegistryHolder
from .negotiation import negotiate, text_response
from .templates import esc, form, page, rows

__all__ = ["MAX_RESULTS", "RegistryInfo", "registry_info_response", "registry_of", "router"]

router = APIRouter(include_in_schema=False)

#: The most search results one page lists (the rest: refine the search).
MAX_RESULTS: Final = 200
#: Longest search text accepted.
MAX_QUERY: Final = 200
#: §5.2 (THUMP): the version and status header of a THUMP response.
_THUMP_STATUS: Final = "0.6 200 OK"
_HINT: Final = "A NAAN (12148), part of a name (Bibliothèque nationale) or an acronym (BNF)."


def registry_of(request: Request) -> Registry:
    """The registry in force for this request's app (:class:`~pidkit.web.lookups.RegistryHolder`)."""
    holder: RegistryHolder = request.app.state.registry
    return holder.get()


def naan_path(naan: str) -> str:
    """The directory page of ``naan``.

    >>> naan_path("b6071")
    '/directory/b6071'
    """
    return "/directory/" + urllib.parse.quote(naan, safe="")


@dataclass(frozen=True, slots=True)
class RegistryInfo:
    """What ``?info`` describes from the registry: ``record`` (a NAAN or shoulder), the id asked about
    (``subject``: the normalized ARK, or ``ark:NAAN`` for a bare NAAN), the URL the registry sends that
    ARK to (``target``, ``None`` for a bare NAAN) and the registry's date.

    >>> from pidkit.registry import default
    >>> RegistryInfo(default().naan("12148"), "ark:12148", None, "2024-11-07").kind
    'naan'
    """

    record: Record
    subject: str
    target: str | None
    date: str | None

    @property
    def kind(self) -> str:
        """``ark`` for an ARK under the record, else ``naan`` or ``shoulder`` (the record itself)."""
        if self.target is not None:
            return "ark"
        return "shoulder" if self.record.is_shoulder else "naan"

    def to_dict(self) -> dict[str, object]:
        """The JSON ``?info`` record: the id, its kind, the target, ``erc`` and ``erc-support``, and the
        registry record itself (every field, as the registry has it).

        >>> from pidkit.registry import default
        >>> d = RegistryInfo(default().naan("12148"), "ark:12148", None, "2024-11-07").to_dict()
        >>> d["erc"]["what"], d["registry"]["what"]
        ('NAAN 12148', '12148')
        """
        e = erc(self.record)
        return {
            "id": self.subject,
            "kind": self.kind,
            "status": "registered",
            "target": self.target,
            "http_code": self.record.target.http_code if self.target is not None else None,
            "erc": e["erc"],
            "erc-support": e["erc-support"],
            "registry": {"what": self.record.what, "date": self.date, "record": self.record.to_json()},
        }

    def to_anvl(self) -> str:
        """The ANVL ``?info`` record: ``erc:`` and ``erc-support:`` from the registry record, then the id
        asked about, where it resolves and the registry it comes from.  Ends with a newline.

        >>> from pidkit.registry import default
        >>> print(RegistryInfo(default().naan("12148"), "ark:12148", None, "2024-11-07").to_anvl(), end="")
        erc:
        who: National Library of France = Bibliothèque nationale de France (BNF)
        what: NAAN 12148
        when: 2005-07-17
        where: http://ark.bnf.fr
        erc-support:
        who: National Library of France = Bibliothèque nationale de France (BNF)
        what: NR, OP, CC (organization type NP)
        when: 2005
        where: http://ark.bnf.fr/ark:/12148/bpt6k2102478.policy
        id: ark:12148
        registry: public NAAN registry 2024-11-07, record 12148
        """
        e = erc(self.record)
        lines = [*erc_segment("erc", e["erc"]), *erc_segment("erc-support", e["erc-support"])]
        lines.append(anvl_line("id", self.subject))
        if self.target is not None:
            lines.append(anvl_line("target", self.target))
        source = f"public NAAN registry {self.date or ''}, record {self.record.what}"
        lines.append(anvl_line("registry", source))
        return "\n".join(lines) + "\n"


def registry_info_response(request: Request, info: RegistryInfo) -> Response:
    """The description service (draft-kunze-ark-40 §5.1, §5.2) for a registry record, in the negotiated
    representation; an ARK gets ``Link: </ark:…>; rel="describes"`` like the resolver's own."""
    headers = {"THUMP-Status": _THUMP_STATUS, "Vary": "Accept"}
    if info.target is not None:
        headers["Link"] = f'</{urllib.parse.quote(info.subject, safe=_ARK_SAFE)}>; rel="describes"'
    kind = negotiate(request.headers.get("accept", "*/*"))
    if kind == "application/json":
        return JSONResponse(info.to_dict(), headers=headers)
    if kind == "text/html":
        return HTMLResponse(_info_page(info), headers=headers)
    return text_response(info.to_anvl(), headers=headers)


#: Characters an ARK keeps unencoded in a URL path (RFC 3986 pchar, '/' and its own '%xx').
_ARK_SAFE: Final = "/:@!$&'()*+,;=-._~%"


def _info_page(info: RegistryInfo) -> str:
    e = erc(info.record)
    r = info.record
    target = ""
    if info.target is not None:
        link = esc(info.target)
        target = (f'<p>Resolves, by the registry\'s template (HTTP {esc(r.target.http_code)}), to '
                  f'<a class="mono" href="{link}" rel="nofollow">{link}</a></p>')
    body = (
        f'<section class="card"><p><span class="mono">{esc(info.subject)}</span> '
        f'<span class="badge ok">registered</span></p>{target}'
        f'<p>From the public NAAN registry ({esc(info.date or "undated")}): '
        f'<a href="{esc(naan_path(r.naan))}">{esc(_kind_word(r))} {esc(r.what)}</a>, '
        f"{esc(organization(r))}.</p></section>"
        f'<h2>The {esc(_kind_word(r))} <span class="muted">(erc)</span></h2><section class="card">'
        f'{rows(list(e["erc"].items()))}</section>'
        f'<h2>The commitment <span class="muted">(erc-support)</span></h2><section class="card">'
        f'{rows(list(e["erc-support"].items()))}</section>'
        f'<details class="card"><summary>As ANVL text</summary><pre>{esc(info.to_anvl())}</pre></details>'
    )
    return page(info.subject, body)


def _names(r: Record) -> str:
    """The organization's name, and its name in its own language when the registry has another one."""
    native = r.who.name_native
    return f"{r.who.name} = {native}" if native and native != r.who.name else r.who.name


def _kind_word(r: Record) -> str:
    return "shoulder" if r.is_shoulder else "NAAN"


def search_form(value: str = "") -> str:
    """The directory's search box."""
    return form("/directory", "q", "Search the NAAN registry", value=value, button="Search", hint=_HINT,
                anchor="directory")


@router.get("/directory", response_class=HTMLResponse)
def directory(request: Request, q: str = "") -> Response:
    """The directory: the search box and the records whose NAAN, name or acronym contains ``q``."""
    reg = registry_of(request)
    text = q.strip()
    if len(text) > MAX_QUERY:
        return error_response(request, 400, f"longer than {MAX_QUERY} characters")
    intro = (f'<p class="hint">{len(reg.naans())} NAANs and {len(reg) - len(reg.naans())} shoulders in the '
             f"public NAAN registry of {esc(reg.date or 'unknown date')}.</p>")
    if not text:
        return HTMLResponse(page("NAAN directory", search_form() + intro))
    found = reg.search(text)
    shown = found[:MAX_RESULTS]
    if not found:
        result = f'<section class="card"><p>No NAAN or shoulder matches “{esc(text)}”.</p></section>'
    else:
        more = (f'<p class="hint">{len(found) - len(shown)} more not shown: refine the search.</p>'
                if len(found) > len(shown) else "")
        result = (f'<section class="card">{_records_table(shown, f"{len(found)} matching “{text}”")}'
                  f"{more}</section>")
    return HTMLResponse(page(f"NAAN directory: {text}", search_form(text) + result + intro))


def _records_table(records: list[Record], caption: str) -> str:
    body = "".join(
        f'<tr><td><a class="mono" href="{esc(naan_path(r.naan))}">{esc(r.what)}</a></td>'
        f"<td>{esc(_kind_word(r))}</td><td>{esc(r.who.acronym or '')}</td>"
        f"<td>{esc(_names(r))}</td></tr>"
        for r in records
    )
    return (f"<table><caption>{esc(caption)}</caption><thead><tr><th scope=\"col\">NAAN</th>"
            f'<th scope="col">kind</th><th scope="col">acronym</th><th scope="col">organization</th>'
            f"</tr></thead><tbody>{body}</tbody></table>")


@router.get("/directory/{naan}", response_class=HTMLResponse)
def naan_page(request: Request, naan: str) -> Response:
    """One NAAN's page: its registry record (every field) and its shoulders."""
    reg = registry_of(request)
    record = reg.naan(naan)
    if record is None:
        return error_response(request, 404, f"NAAN {naan!r} is not in the public NAAN registry",
                              title="Unknown NAAN")
    shoulders = reg.shoulders_of(record.naan)
    body = (
        f'<section class="card">{rows(_record_rows(record))}'
        f'<p><a href="/ark:{esc(urllib.parse.quote(record.naan))}?info">Its description (?info)</a> · '
        f'<a href="/directory">Search the directory</a></p></section>'
        f"<h2>Shoulders</h2>"
    )
    if shoulders:
        body += "".join(
            f'<section class="card" aria-label="shoulder {esc(s.what)}"><h3 class="mono">{esc(s.what)}</h3>'
            f"{rows(_record_rows(s))}</section>"
            for s in shoulders
        )
    else:
        body += '<p class="muted">No shoulder of this NAAN is registered.</p>'
    return HTMLResponse(page(f"NAAN {record.naan}: {organization(record)}", body))


def _record_rows(r: Record) -> list[tuple[str, str]]:
    """Every field of a record, as the registry has it (``—`` for null)."""
    pairs = [
        ("what", r.what),
        ("who", r.who.name),
        ("who (native)", r.who.name_native or "—"),
        ("acronym", r.who.acronym or "—"),
        ("where", r.where),
        ("when", r.when),
        ("target", r.target.url),
        ("HTTP code", str(r.target.http_code)),
        ("organization type", r.na_policy.orgtype),
        ("policy", r.na_policy.policy),
        ("tenure", r.na_policy.tenure),
        ("policy URL", r.na_policy.policy_url or "—"),
        ("test identifier", r.test_identifier or "—"),
    ]
    if not r.is_shoulder:
        pairs += [("service provider", r.service_provider or "—"), ("purpose", r.purpose or "—")]
    return pairs
