"""OAI-PMH 2.0 at ``/oai``: the store's ARK bindings for harvesters (``docs/oai.md``).

The Open Archives Initiative Protocol for Metadata Harvesting, version 2.0 (the protocol text of
2002-06-14, document version 2015-01-08; section numbers below are its own).  An adapter over the store
(DESIGN.md, "other protocols"): it reads bindings through :meth:`~pidkit.store.Store.list_recorded`,
:meth:`~pidkit.store.Store.recorded_at` and :meth:`~pidkit.store.Store.get_binding` and holds no rule of
its own about them.

What this repository declares (``Identify``):

* **items** are the ARK bindings; an item's identifier is its ARK, normalized (``ark:99999/fk4x1``);
  reserved ids are never exposed (``idDoesNotExist``, and absent from every list);
* **datestamps** are when the store recorded the binding's last change (its newest history row,
  :meth:`~pidkit.store.Store.list_recorded`) — not its ``updated``, which an import or a merge keeps as
  the source gave it and which an incremental harvest could therefore have passed already; granularity
  ``YYYY-MM-DDThh:mm:ssZ`` (§3.3); ``from``/``until`` take either granularity (both the same, §3.3.1)
  and are inclusive;
* **deleted records**: ``persistent`` (§2.5.1): a tombstoned id (withdrawn for good) and an
  ``unavailable`` one (withdrawn, reversibly — made public again it comes back as a record with a new
  datestamp) are listed with ``status="deleted"`` and no metadata, for as long as the store keeps them
  (for ever: no id is ever deleted from a store);
* **sets** (§2.6): one per NAAN (``99999``) and one per shoulder below it (``99999:fk4``);
* **formats** (§3.4): ``oai_dc`` (:func:`dublin_core`) and ``erc`` (:func:`erc_record`, the whole ERC
  record with the commitment and the extra elements; its schema is served at ``/oai/erc.xsd``).

A list's window ends when its first request is answered, once the writes stamped before then have
committed (:meth:`~pidkit.store.Store.settled_time`); while a long write (an import) holds the store,
that request is answered 503 with ``Retry-After`` (§3.1.2.2), never without the write's records and a
``responseDate`` past their datestamps (which the next incremental harvest, starting there, would skip).

Resumption tokens (§3.5) are stateless: each one carries the request's arguments, the end of the
harvest's time window (fixed by its first request: what changes later is for the next incremental
harvest), and the position reached — the last record sent (its place in the order of recorded changes,
and its ARK) — so a record changed during a harvest moves past that position and is never skipped.  A
token is checked whole (its own digest, then every field); anything else is ``badResumptionToken``,
never a server error.

>>> tok = Token("ListRecords", "oai_dc", None, None, "2024-05-01T12:00:00.000000Z", None, 0)
>>> Token.parse(tok.encode(), "ListRecords") == tok
True
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import hmac
import json
import re
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ..codecs import iso_z
from ..errors import PidkitError
from ..settings import DEFAULT_OAI_ADMIN_EMAIL
from ..store import Binding, Naan, Store, WritesInFlightError, check_text
from ..store.keys import ark_key
from ..store.rows import is_stored_time, parse_recorded_position, stored_time
from .errors import RETRY_AFTER
from .stores import settings_of, store_of

__all__ = [
    "DELETED_STATUSES",
    "ERC_XSD",
    "FORMATS",
    "PAGE",
    "OaiError",
    "Token",
    "datestamp",
    "dublin_core",
    "erc_record",
    "parse_bound",
    "respond",
    "router",
]

router = APIRouter(include_in_schema=False)

OAI: Final = "http://www.openarchives.org/OAI/2.0/"
OAI_SCHEMA: Final = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
OAI_DC: Final = "http://www.openarchives.org/OAI/2.0/oai_dc/"
OAI_DC_SCHEMA: Final = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
DC: Final = "http://purl.org/dc/elements/1.1/"
XSI: Final = "http://www.w3.org/2001/XMLSchema-instance"
#: The ``erc`` format's namespace (pidkit's own; the schema is :data:`ERC_XSD`, served at ``/oai/erc.xsd``).
ERC_NS: Final = "urn:pidkit:erc:1"

#: Records (or headers) per page of a list.
PAGE: Final = 100
#: Statuses a harvester sees as records (``public``) and as deleted records (§2.5.1).
DELETED_STATUSES: Final = ("unavailable", "tombstoned")
_EXPOSED: Final = ("public", *DELETED_STATUSES)

#: metadataPrefix → (schema URL or ``None`` for the one served here, namespace).
FORMATS: Final[Mapping[str, tuple[str | None, str]]] = {
    "oai_dc": (OAI_DC_SCHEMA, OAI_DC),
    "erc": (None, ERC_NS),
}

#: The 15 elements of the Dublin Core Metadata Element Set 1.1, in the order ``oai_dc`` lists them.
DC_ELEMENTS: Final = (
    "title", "creator", "subject", "description", "publisher", "contributor", "date", "type", "format",
    "identifier", "source", "language", "relation", "coverage", "rights",
)  # fmt: skip

#: §4: the verbs and their arguments (required, optional); ``resumptionToken`` is exclusive (§3.5).
_VERBS: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "Identify": (frozenset(), frozenset()),
    "ListMetadataFormats": (frozenset(), frozenset({"identifier"})),
    "ListSets": (frozenset(), frozenset()),
    "GetRecord": (frozenset({"identifier", "metadataPrefix"}), frozenset()),
    "ListIdentifiers": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"})),
    "ListRecords": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"})),
}
_PAGED: Final = frozenset({"ListSets", "ListIdentifiers", "ListRecords"})

# §3.3.1: a day, or a time in seconds with Z.
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_SECOND = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
# OAI-PMH.xsd setSpecType
_SET_SPEC = re.compile(r"[A-Za-z0-9\-_.!~*'()]+(:[A-Za-z0-9\-_.!~*'()]+)*")
# Characters XML 1.0 cannot carry (§2.2 of XML 1.0: Char), replaced by U+FFFD in values.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

ERC_XSD: Final = """<?xml version="1.0" encoding="UTF-8"?>
<!-- pidkit's erc metadata format for OAI-PMH: a binding's ERC record (draft-kunze-ark-40 section 5.3). -->
<schema xmlns="http://www.w3.org/2001/XMLSchema" xmlns:erc="urn:pidkit:erc:1"
        targetNamespace="urn:pidkit:erc:1" elementFormDefault="qualified" attributeFormDefault="unqualified">
  <complexType name="segmentType">
    <sequence>
      <element name="who" type="string" minOccurs="0"/>
      <element name="what" type="string" minOccurs="0"/>
      <element name="when" type="string" minOccurs="0"/>
      <element name="where" type="string" minOccurs="0"/>
    </sequence>
  </complexType>
  <complexType name="elementType">
    <simpleContent>
      <extension base="string">
        <attribute name="name" type="string" use="required"/>
      </extension>
    </simpleContent>
  </complexType>
  <element name="erc">
    <complexType>
      <sequence>
        <element name="identifier" type="string"/>
        <element name="target" type="anyURI" minOccurs="0"/>
        <element name="object" type="erc:segmentType"/>
        <element name="support" type="erc:segmentType"/>
        <element name="element" type="erc:elementType" minOccurs="0" maxOccurs="unbounded"/>
      </sequence>
    </complexType>
  </element>
</schema>
"""


class OaiError(PidkitError):
    """One OAI-PMH error condition (§3.6): ``code`` and the message shown to the harvester.

    >>> OaiError("badVerb", "no verb").code
    'badVerb'
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- time ---------------------------------------------------------------------------------------------
def datestamp(when: _dt.datetime | None) -> str:
    """A UTCdatetime at this repository's granularity, seconds (§3.3.2).

    >>> datestamp(_dt.datetime(2024, 5, 1, 12, 0, 7, 999, tzinfo=_dt.UTC))
    '2024-05-01T12:00:07Z'
    """
    return iso_z(when or _dt.datetime.now(_dt.UTC), "seconds")


def parse_bound(text: str, name: str, *, end: bool) -> tuple[_dt.datetime, str]:
    """A ``from`` (``end=False``) or ``until`` (``end=True``) argument as the first / last microsecond
    it covers (both bounds are inclusive, §2.7.1), and its granularity.

    >>> parse_bound("2024-05-01", "until", end=True)[0].isoformat()
    '2024-05-01T23:59:59.999999+00:00'
    >>> parse_bound("9999-12-31", "until", end=True)[1]
    'day'
    >>> parse_bound("2024-05-01T12:00:00", "from", end=False)
    Traceback (most recent call last):
    ...
    pidkit.web.oai.OaiError: from: not YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ: '2024-05-01T12:00:00'
    """
    try:
        if _DAY.fullmatch(text):
            day = _dt.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=_dt.UTC)
            return (day.replace(hour=23, minute=59, second=59, microsecond=999_999) if end else day), "day"
        if _SECOND.fullmatch(text):
            second = _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.UTC)
            return (second + _dt.timedelta(microseconds=999_999) if end else second), "second"
    except (ValueError, OverflowError):
        pass
    raise OaiError("badArgument", f"{name}: not YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ: {text!r}")


# -- resumption tokens --------------------------------------------------------------------------------
#: v2: positions in the order of recorded changes (v1 carried ``(updated, key)``: refused as not ours).
_TOKEN_KEY: Final = b"pidkit OAI-PMH resumption token v2"


@dataclass(frozen=True, slots=True)
class Token:
    """The state of a list request, carried by the harvester (§3.5): the verb and the request's
    arguments, the window's end (``until``: stored time), the position reached (``after``: the last
    record's :attr:`~pidkit.store.Recorded.position` and ARK, or ``None`` before the first) and how
    many were sent (``cursor``).  :meth:`encode` adds a digest so a token altered in transit, cut short
    or made up is refused whole; its fields are checked again when read, so even a well-formed made-up
    token can only ask for what a plain request could."""

    verb: str
    prefix: str
    set_spec: str | None
    since: str | None
    until: str
    after: tuple[str, str] | None
    cursor: int

    def encode(self) -> str:
        """The token's text: base64url of its JSON, a dot, and a digest of it.

        >>> t = Token("ListIdentifiers", "erc", "99999", None, "2024-05-01T12:00:00.000000Z", None, 0)
        >>> t.encode()[:8]
        'WyJMaXN0'
        """
        fields = [self.verb, self.prefix, self.set_spec, self.since, self.until,
                  list(self.after) if self.after else None, self.cursor]  # fmt: skip
        body = base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode()
        return f"{body.rstrip('=')}.{_digest(body.rstrip('='))}"

    @classmethod
    def parse(cls, text: str, verb: str) -> Token:
        """The token ``text`` given with ``verb``; :class:`OaiError` ``badResumptionToken`` for anything
        that is not a token this service wrote for that verb.

        >>> Token.parse("forged", "ListRecords")
        Traceback (most recent call last):
        ...
        pidkit.web.oai.OaiError: the resumptionToken is not one this repository issued
        """
        bad = OaiError("badResumptionToken", "the resumptionToken is not one this repository issued")
        body, dot, digest = text.partition(".")
        if not dot or len(text) > 4096 or not hmac.compare_digest(digest, _digest(body)):
            raise bad
        try:
            fields = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            t_verb, prefix, set_spec, since, until, after, cursor = fields
            position = None if after is None else (after[0], after[1])
            token = cls(t_verb, prefix, set_spec, since, until, position, cursor)
            token._check(verb)
        except (ValueError, TypeError, KeyError, IndexError, OaiError):
            raise bad from None
        return token

    def _check(self, verb: str) -> None:
        """Every field as a request would have it (else :class:`ValueError`)."""
        texts = [self.verb, self.prefix, self.until]
        optional = [self.set_spec, self.since, *(self.after or ())]
        if not all(isinstance(v, str) for v in (*texts, *(v for v in optional if v is not None))):
            raise ValueError("a field is not text")
        if self.verb != verb or self.prefix not in FORMATS or type(self.cursor) is not int or self.cursor < 0:
            raise ValueError("not this verb's token")
        if self.set_spec is not None and not _SET_SPEC.fullmatch(self.set_spec):
            raise ValueError("not a setSpec")
        for stamp in (self.since, self.until):
            if stamp is not None and not is_stored_time(stamp):
                raise ValueError("not a stored time")
        if self.after is not None:
            try:
                parse_recorded_position(self.after[0])
                ark_key(check_text(self.after[1], "after"))
            except PidkitError as exc:
                raise ValueError(str(exc)) from None


def _digest(body: str) -> str:
    return hmac.new(_TOKEN_KEY, body.encode(), hashlib.sha256).hexdigest()[:24]


# -- metadata -----------------------------------------------------------------------------------------
def _text(value: str) -> str:
    """``value`` as XML 1.0 can carry it (a character it cannot becomes U+FFFD)."""
    return _NOT_XML.sub("\ufffd", value)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrs)
    if text is not None:
        el.text = _text(text)
    return el


def dublin_core(b: Binding) -> ET.Element:
    """The ``oai_dc`` record of a binding (the mapping ``docs/oai.md`` documents): ERC ``who`` →
    ``dc:creator``, ``what`` → ``dc:title``, ``when`` → ``dc:date``, ``where`` → ``dc:identifier`` (when
    it is not the ARK itself); the ARK and the target → ``dc:identifier``; each extra element
    ``dc.ELEMENT`` of the 15 Dublin Core elements → ``dc:ELEMENT``.  Empty values are left out.

    >>> from pidkit.store import Erc
    >>> b = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/x", Erc(who="Austin, Larry"),
    ...             extra=(("dc.subject", "Rhythm"),))
    >>> [(e.tag.split("}")[1], e.text) for e in dublin_core(b)]  # doctest: +NORMALIZE_WHITESPACE
    [('title', 'ark:1/x'), ('creator', 'Austin, Larry'), ('subject', 'Rhythm'), ('identifier', 'ark:1/x'),
     ('identifier', 'https://e.org/x')]
    """
    values: dict[str, list[str]] = {name: [] for name in DC_ELEMENTS}
    erc = b.erc
    values["title"].append(erc.what)
    values["creator"].append(erc.who)
    values["date"].append(erc.when)
    values["identifier"] += [b.key, b.target or ""]
    if erc.where.strip() and erc.where != b.key:
        values["identifier"].append(erc.where)
    for name, value in b.extra:
        element = name[3:] if name.startswith("dc.") else ""
        if element in values:
            values[element].append(value)
    if not any(v.strip() for v in values["title"]):
        values["title"] = [b.key]  # a record with no title is of little use to a harvester's index
    root = ET.Element(f"{{{OAI_DC}}}dc")
    root.set(f"{{{XSI}}}schemaLocation", f"{OAI_DC} {OAI_DC_SCHEMA}")
    for name in DC_ELEMENTS:
        for value in values[name]:
            if value.strip():
                _sub(root, f"{{{DC}}}{name}", value)
    return root


def erc_record(b: Binding) -> ET.Element:
    """The ``erc`` record of a binding: the ARK, its target, the object's ERC, the commitment's
    (``erc-support``) and every extra element, by name (schema :data:`ERC_XSD`).

    >>> [e.tag.split("}")[1] for e in erc_record(Binding("ark", "ark:1/x", "ark:1/x", None))]
    ['identifier', 'object', 'support']
    """
    root = ET.Element(f"{{{ERC_NS}}}erc")
    _sub(root, f"{{{ERC_NS}}}identifier", b.key)
    if b.target:
        _sub(root, f"{{{ERC_NS}}}target", b.target)
    for tag, segment in (("object", b.erc), ("support", b.support)):
        el = _sub(root, f"{{{ERC_NS}}}{tag}")
        for name, value in segment.to_dict().items():
            if value:
                _sub(el, f"{{{ERC_NS}}}{name}", value)
    for name, value in b.extra:
        _sub(root, f"{{{ERC_NS}}}element", value, name=_text(name))
    return root


_METADATA: Final = {"oai_dc": dublin_core, "erc": erc_record}


# -- the response -------------------------------------------------------------------------------------
# The prefixes the responses use (ElementTree's registry is process-wide; these are the conventional ones,
# and the OAI namespace is the default one, as in the protocol's examples).
ET.register_namespace("", OAI)
ET.register_namespace("oai_dc", OAI_DC)
ET.register_namespace("dc", DC)
ET.register_namespace("xsi", XSI)
ET.register_namespace("erc", ERC_NS)


def _envelope(base_url: str, args: Mapping[str, str] | None) -> ET.Element:
    """``<OAI-PMH>`` with ``responseDate`` and ``request`` (§3.2; the arguments are echoed unless the
    request was a ``badVerb`` or ``badArgument``)."""
    root = ET.Element(f"{{{OAI}}}OAI-PMH")
    root.set(f"{{{XSI}}}schemaLocation", f"{OAI} {OAI_SCHEMA}")
    _sub(root, f"{{{OAI}}}responseDate", datestamp(None))
    request = _sub(root, f"{{{OAI}}}request", base_url)
    for name, value in (args or {}).items():
        request.set(name, _text(value))
    return root


def _xml(root: ET.Element) -> Response:
    xml = ET.tostring(root, encoding="unicode")
    body = b'<?xml version="1.0" encoding="UTF-8"?>\n' + xml.encode()
    return Response(body, media_type="text/xml; charset=utf-8")


def _sets_of(store: Store) -> dict[str, str]:
    """setSpec → setName: each NAAN, and each shoulder under it."""
    out: dict[str, str] = {}
    for n in store.list_naans():
        out[n.naan] = n.name or f"NAAN {n.naan}"
        for shoulder in n.shoulders:
            out[f"{n.naan}:{shoulder}"] = f"{_naan_name(n)} shoulder {shoulder}"
    return out


def _naan_name(n: Naan) -> str:
    return f"{n.name} ({n.naan})" if n.name else f"NAAN {n.naan}"


def _header(parent: ET.Element, b: Binding, at: _dt.datetime | None, sets: Mapping[str, str]) -> None:
    """A record's header; ``at``: when the store recorded its last change (its datestamp)."""
    header = _sub(parent, f"{{{OAI}}}header")
    if b.status in DELETED_STATUSES:
        header.set("status", "deleted")
    _sub(header, f"{{{OAI}}}identifier", b.key)
    _sub(header, f"{{{OAI}}}datestamp", datestamp(at or b.updated))
    if b.naan is not None and b.naan in sets:
        _sub(header, f"{{{OAI}}}setSpec", b.naan)
        if b.shoulder and f"{b.naan}:{b.shoulder}" in sets:
            _sub(header, f"{{{OAI}}}setSpec", f"{b.naan}:{b.shoulder}")


def _record(
    parent: ET.Element, b: Binding, at: _dt.datetime | None, prefix: str, sets: Mapping[str, str]
) -> None:
    record = _sub(parent, f"{{{OAI}}}record")
    _header(record, b, at, sets)
    if b.status not in DELETED_STATUSES:  # §2.5.1: a deleted record has no metadata part
        _sub(record, f"{{{OAI}}}metadata").append(_METADATA[prefix](b))


def _exposed(store: Store, identifier: str) -> Binding:
    """The binding an OAI identifier names, if a harvester may see it (never a reserved one)."""
    b = None
    if identifier.lower().startswith("ark:"):
        try:
            b = store.get_binding(identifier)
        except PidkitError:
            b = None
    if b is None or b.status not in _EXPOSED:
        raise OaiError("idDoesNotExist", f"no item {identifier!r} in this repository")
    return b


# -- verbs ----------------------------------------------------------------------------------------------
def _identify(root: ET.Element, store: Store, base_url: str, admin_email: str) -> None:
    el = _sub(root, f"{{{OAI}}}Identify")
    _sub(el, f"{{{OAI}}}repositoryName", "pidkit")
    _sub(el, f"{{{OAI}}}baseURL", base_url)
    _sub(el, f"{{{OAI}}}protocolVersion", "2.0")
    _sub(el, f"{{{OAI}}}adminEmail", admin_email)
    earliest = store.earliest_recorded()
    _sub(el, f"{{{OAI}}}earliestDatestamp", datestamp(earliest) if earliest else "1970-01-01T00:00:00Z")
    _sub(el, f"{{{OAI}}}deletedRecord", "persistent")
    _sub(el, f"{{{OAI}}}granularity", "YYYY-MM-DDThh:mm:ssZ")


def _list_formats(root: ET.Element, store: Store, args: Mapping[str, str], base_url: str) -> None:
    if "identifier" in args:
        b = _exposed(store, args["identifier"])
        if b.status in DELETED_STATUSES:
            raise OaiError("noMetadataFormats", f"{b.key} is withdrawn: no metadata is disseminated for it")
    el = _sub(root, f"{{{OAI}}}ListMetadataFormats")
    for prefix, (schema, namespace) in FORMATS.items():
        fmt = _sub(el, f"{{{OAI}}}metadataFormat")
        _sub(fmt, f"{{{OAI}}}metadataPrefix", prefix)
        _sub(fmt, f"{{{OAI}}}schema", schema or f"{base_url}/erc.xsd")
        _sub(fmt, f"{{{OAI}}}metadataNamespace", namespace)


def _list_sets(root: ET.Element, store: Store, args: Mapping[str, str]) -> None:
    if "resumptionToken" in args:  # the sets come in one response: this repository issues no token here
        raise OaiError("badResumptionToken", "ListSets is answered whole: there is no resumptionToken to use")
    sets = _sets_of(store)
    if not sets:
        raise OaiError("noSetHierarchy", "no NAAN is registered here yet, so there are no sets")
    el = _sub(root, f"{{{OAI}}}ListSets")
    for spec, name in sets.items():
        s = _sub(el, f"{{{OAI}}}set")
        _sub(s, f"{{{OAI}}}setSpec", spec)
        _sub(s, f"{{{OAI}}}setName", name)


def _get_record(root: ET.Element, store: Store, args: Mapping[str, str]) -> None:
    prefix = _prefix(args["metadataPrefix"])
    b = _exposed(store, args["identifier"])
    _record(_sub(root, f"{{{OAI}}}GetRecord"), b, store.recorded_at(b), prefix, _sets_of(store))


#: OAI-PMH.xsd metadataPrefixType
_PREFIX = re.compile(r"[A-Za-z0-9\-_.!~*'()]+")


def _prefix(prefix: str) -> str:
    if not _PREFIX.fullmatch(prefix):
        raise OaiError("badArgument", f"not a metadataPrefix: {prefix!r}")
    if prefix not in FORMATS:
        raise OaiError("cannotDisseminateFormat", f"no metadata format {prefix!r} here (oai_dc, erc)")
    return prefix


def _first_token(verb: str, store: Store, args: Mapping[str, str]) -> Token:
    """The state of a list request without a token (its arguments checked)."""
    prefix = _prefix(args["metadataPrefix"])
    since = until = None
    grains: set[str] = set()
    if "from" in args:
        start, grain = parse_bound(args["from"], "from", end=False)
        since = stored_time(start)
        grains.add(grain)
    if "until" in args:
        stop, grain = parse_bound(args["until"], "until", end=True)
        until = stored_time(stop)
        grains.add(grain)
    if len(grains) > 1:
        raise OaiError("badArgument", "from and until must have the same granularity")
    if since is not None and until is not None and since > until:
        raise OaiError("badArgument", "from is later than until")
    set_spec = args.get("set")
    if set_spec is not None:
        if not _sets_of(store):
            raise OaiError("noSetHierarchy", "no NAAN is registered here yet, so there are no sets")
        if not _SET_SPEC.fullmatch(set_spec):
            raise OaiError("badArgument", f"not a setSpec: {set_spec!r}")
    # The window ends now, at this second's end: what changes later is for the next incremental harvest.
    # "Now" once the writes stamped before it have committed (Store.settled_time): a change stamped
    # before this response's responseDate is in this harvest, never only after the next one began.
    now = stored_time(store.settled_time().replace(microsecond=999_999)) or ""
    return Token(verb, prefix, set_spec, since, min(until, now) if until else now, None, 0)


def _list(root: ET.Element, verb: str, store: Store, args: Mapping[str, str]) -> None:
    token = Token.parse(args["resumptionToken"], verb) if "resumptionToken" in args else _first_token(
        verb, store, args
    )
    sets = _sets_of(store)
    naan = shoulder = None
    if token.set_spec is not None:
        naan, _, shoulder_part = token.set_spec.partition(":")
        shoulder = shoulder_part or None
    page: list[tuple[Binding, _dt.datetime | None]] = []
    if token.set_spec is None or token.set_spec in sets:
        found = store.list_recorded(
            naan=naan, shoulder=shoulder, since=None if token.since is None else _stamp(token.since),
            until=_stamp(token.until), after=None if token.after is None else token.after[0],
            statuses=_EXPOSED, limit=PAGE + 1,
        )  # fmt: skip
        page = [(r.binding, r.at) for r in found]
    if not page and token.after is not None:
        # The records that followed when the token was issued were all changed since, past the window's
        # end (they are for the next incremental harvest).  A list part has at least one record (the
        # schema), so the last one sent is sent again, as it is now, closing the list.
        try:
            again = _exposed(store, token.after[1])
            page = [(again, store.recorded_at(again))]
        except OaiError:  # no longer harvestable (or never was, in a made-up token)
            page = []
    if not page:
        raise OaiError("noRecordsMatch", "no record matches these arguments")
    more, page = len(page) > PAGE, page[:PAGE]
    el = _sub(root, f"{{{OAI}}}{verb}")
    for b, at in page:
        if verb == "ListRecords":
            _record(el, b, at, token.prefix, sets)
        else:
            _header(el, b, at, sets)
    attrs = {"cursor": str(token.cursor)}
    if more:
        after_last = (found[PAGE - 1].position, found[PAGE - 1].binding.key)
        nxt = Token(verb, token.prefix, token.set_spec, token.since, token.until, after_last,
                    token.cursor + len(page))  # fmt: skip
        _sub(el, f"{{{OAI}}}resumptionToken", nxt.encode(), **attrs)
    elif token.after is not None:
        _sub(el, f"{{{OAI}}}resumptionToken", "", **attrs)  # §3.5: the last part of an incomplete list


def _stamp(stored: str) -> _dt.datetime:
    """A stored time of a token (checked by :meth:`Token.parse`, or written by :func:`stored_time`)."""
    return _dt.datetime.fromisoformat(stored)


# -- the request --------------------------------------------------------------------------------------
def _arguments(pairs: Sequence[tuple[str, str]]) -> tuple[str, dict[str, str]]:
    """The verb and the other arguments of a request (§3.1.1), checked against the verb (§4)."""
    verbs = [v for k, v in pairs if k == "verb"]
    if len(verbs) != 1 or verbs[0] not in _VERBS:
        said = (
            "no verb" if not verbs else "the verb is repeated" if len(verbs) > 1 else f"no verb {verbs[0]!r}"
        )
        raise OaiError("badVerb", f"{said} (Identify, ListMetadataFormats, ListSets, GetRecord, "
                       "ListIdentifiers, ListRecords)")  # fmt: skip
    verb = verbs[0]
    args: dict[str, str] = {}
    for name, value in pairs:
        if name == "verb":
            continue
        if name in args:
            raise OaiError("badArgument", f"the argument {name} is repeated")
        args[name] = value
    required, optional = _VERBS[verb]
    if "resumptionToken" in args and verb in _PAGED:
        if len(args) > 1:
            raise OaiError("badArgument", "resumptionToken is an exclusive argument")
        return verb, args
    unknown = sorted(set(args) - required - optional)
    if unknown:
        raise OaiError("badArgument", f"{verb} does not take {', '.join(unknown)}")
    missing = sorted(required - set(args))
    if missing:
        raise OaiError("badArgument", f"{verb} needs {', '.join(missing)}")
    return verb, args


def respond(store: Store, base_url: str, pairs: Sequence[tuple[str, str]], *,
            admin_email: str = DEFAULT_OAI_ADMIN_EMAIL) -> Response:
    """The OAI-PMH response to a request's arguments (``pairs``, in order, repeats kept);
    ``admin_email`` is Identify's ``adminEmail`` (``Settings.oai_admin_email``).

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as s:
    ...     b"badVerb" in respond(s, "http://h/oai", [("verb", "Dance")]).body
    True
    """
    try:
        verb, args = _arguments(pairs)
    except OaiError as exc:
        root = _envelope(base_url, None)  # §3.2: no attributes after badVerb or badArgument
        _sub(root, f"{{{OAI}}}error", exc.message, code=exc.code)
        return _xml(root)
    root = _envelope(base_url, {"verb": verb, **args})  # its responseDate before the list's window ends
    try:
        if verb == "Identify":
            _identify(root, store, base_url, admin_email)
        elif verb == "ListMetadataFormats":
            _list_formats(root, store, args, base_url)
        elif verb == "ListSets":
            _list_sets(root, store, args)
        elif verb == "GetRecord":
            _get_record(root, store, args)
        else:
            _list(root, verb, store, args)
    except OaiError as exc:
        if exc.code == "badArgument":
            root = _envelope(base_url, None)
        else:
            for child in list(root)[2:]:
                root.remove(child)
        _sub(root, f"{{{OAI}}}error", exc.message, code=exc.code)
    except WritesInFlightError as exc:  # §3.1.2.2: 503, "a Retry-After period is specified"
        return Response(f"{exc}\n", status_code=503, media_type="text/plain; charset=utf-8",
                        headers={"Retry-After": str(RETRY_AFTER)})  # fmt: skip
    return _xml(root)


def _base_url(request: Request) -> str:
    return str(request.url.replace(query="", fragment="")).rstrip("?")


@router.get("/oai")
def oai_get(request: Request) -> Response:
    """OAI-PMH over GET (§3.1.1.1)."""
    return respond(store_of(request), _base_url(request), list(request.query_params.multi_items()),
                   admin_email=settings_of(request).oai_admin_email)


@router.post("/oai")
async def oai_post(request: Request) -> Response:
    """OAI-PMH over POST, ``application/x-www-form-urlencoded`` (§3.1.1.2)."""
    body = (await request.body()).decode("utf-8", "replace")
    pairs = urllib.parse.parse_qsl(body, keep_blank_values=True)
    return await run_in_threadpool(respond, store_of(request), _base_url(request), pairs,
                                   admin_email=settings_of(request).oai_admin_email)


@router.get("/oai/erc.xsd")
def erc_schema() -> Response:
    """The XML Schema of the ``erc`` metadata format."""
    return Response(ERC_XSD, media_type="application/xml; charset=utf-8")
