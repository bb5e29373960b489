"""Registry records: one immutable value per NAAN or shoulder, validated field by field.

The record format is the California Digital Library's public NAAN registry (``naan_records.json`` in
CDLUC3/naan_reg_public; its JSON schema is ``schema/public/naan_schema.json`` there): a top-level object
``{"metadata": {...}, "data": [record, ...]}`` whose records are of two kinds, told apart by ``rtype``:

* ``PublicNAAN``: ``what`` (the NAAN), ``where``, ``target`` (``url`` template and ``http_code``),
  ``when``, ``who`` (``name``, ``name_native``, ``acronym``), ``na_policy`` (``orgtype``, ``policy``,
  ``tenure``, ``policy_url``), ``test_identifier``, ``service_provider``, ``purpose``;
* ``PublicNAANShoulder``: the same without ``service_provider`` and ``purpose``, plus ``naan`` and
  ``shoulder`` (``what`` is ``NAAN/shoulder``).

Every field is kept (:meth:`Record.to_json` gives back the source object, key for key, fields this
module does not know included), and a record with a malformed field is refused by
:func:`parse_record` with an error naming the record (its index in ``data`` and its ``what``) and the
field.

>>> r = parse_record({"what": "12148", "where": "http://ark.bnf.fr",
...     "target": {"url": "http://ark.bnf.fr/ark:/${content}", "http_code": 302},
...     "when": "2005-07-17T00:00:00+00:00",
...     "who": {"name": "National Library of France", "name_native": "Bibliothèque nationale de France",
...             "acronym": "BNF"},
...     "na_policy": {"orgtype": "NP", "policy": "NR, OP, CC", "tenure": "2005", "policy_url": None},
...     "test_identifier": None, "service_provider": None, "purpose": "unspecified",
...     "rtype": "PublicNAAN"}, 0)
>>> r.naan, r.shoulder, r.is_shoulder, r.who.acronym, r.target.http_code
('12148', '', False, 'BNF', 302)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..ark import Ark
from ..ark.chars import check_naan
from ..errors import PidkitError
from .templates import check_template

__all__ = [
    "NAAN_RTYPE",
    "REDIRECT_CODES",
    "SHOULDER_RTYPE",
    "Policy",
    "Record",
    "RegistryError",
    "Target",
    "Who",
    "parse_record",
]

#: The two kinds of record (``rtype``).
NAAN_RTYPE: Final = "PublicNAAN"
SHOULDER_RTYPE: Final = "PublicNAANShoulder"
#: The HTTP redirect codes a target may use (RFC 9110 §15.4; 300 and 304/305 are not redirects to a
#: target).
REDIRECT_CODES: Final = frozenset({301, 302, 303, 307, 308})

# The fields each kind of record must have (in the source's order).
_NAAN_FIELDS: Final = (
    "what", "where", "target", "when", "who", "na_policy", "test_identifier", "service_provider",
    "purpose", "rtype",
)  # fmt: skip
_SHOULDER_FIELDS: Final = (
    "shoulder", "naan", "what", "who", "where", "target", "when", "na_policy", "test_identifier", "rtype",
)  # fmt: skip


class RegistryError(PidkitError):
    """A registry (or one of its records) that cannot be used: not JSON, a malformed record, a source
    that cannot be read.  ``text`` names the source (file or URL), the message the record and field.

    >>> str(RegistryError("data[3] (what '12345'): who.name: missing", text="x.json"))
    "data[3] (what '12345'): who.name: missing in 'x.json'"
    """


@dataclass(frozen=True, slots=True)
class Who:
    """The organization: ``name``, ``name_native`` (its own language, or ``None``), ``acronym``."""

    name: str
    name_native: str | None
    acronym: str | None


@dataclass(frozen=True, slots=True)
class Target:
    """The target URL template (``${content}``, ``${value}``, ``${pid}``, ``${suffix}``) and the HTTP code
    of the redirect."""

    url: str
    http_code: int


@dataclass(frozen=True, slots=True)
class Policy:
    """``na_policy``: organization type (``NP`` not for profit, ``FP`` for profit), naming policy
    (e.g. ``NR, OP, CC``), tenure (``YYYY[-YYYY]``) and the URL of a policy statement (or ``None``)."""

    orgtype: str
    policy: str
    tenure: str
    policy_url: str | None


@dataclass(frozen=True, slots=True)
class Record:
    """One registry record: a NAAN (``shoulder == ""``) or a shoulder of a NAAN.

    ``naan`` and ``shoulder`` are set for both kinds (for a NAAN record, from ``what``); the source's
    own fields are kept as they were (``purpose`` and ``service_provider`` are ``None`` for shoulders,
    which do not have them), and :meth:`to_json` gives back the source object.
    """

    rtype: str
    what: str
    naan: str
    shoulder: str
    where: str
    when: str
    who: Who
    target: Target
    na_policy: Policy
    test_identifier: str | None
    service_provider: str | None
    purpose: str | None
    #: The source object exactly as read (every field, including any this module does not know).
    source: Mapping[str, Any] = field(compare=False, hash=False, repr=False)

    @property
    def is_shoulder(self) -> bool:
        """True for a shoulder record, False for a NAAN record."""
        return self.rtype == SHOULDER_RTYPE

    def to_json(self) -> dict[str, Any]:
        """The record as the registry's JSON object (the source object, every field kept).

        >>> from pidkit.registry import default
        >>> default().naan("12148").to_json()["who"]["acronym"]
        'BNF'
        """
        copied: dict[str, Any] = _copy(self.source)
        return copied


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class _Fields:
    """Reads one record's fields, raising RegistryError naming the record and the field."""

    __slots__ = ("index", "obj", "what")

    def __init__(self, obj: dict[str, Any], index: int) -> None:
        self.obj = obj
        self.index = index
        what = obj.get("what")
        self.what = what if isinstance(what, str) else None

    def fail(self, path: str, problem: str) -> RegistryError:
        who = f"data[{self.index}]" + (f" (what {self.what!r})" if self.what is not None else "")
        return RegistryError(f"{who}: {path}: {problem}")

    def get(self, path: str) -> Any:
        obj: Any = self.obj
        for key in path.split("."):
            if not isinstance(obj, dict):
                raise self.fail(path, f"expected an object, got {_kind(obj)}")
            try:
                obj = obj[key]
            except KeyError:
                raise self.fail(path, "missing") from None
        return obj

    def text(self, path: str, *, empty: bool = True) -> str:
        value = self.get(path)
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_kind(value)}")
        if not empty and not value.strip():
            raise self.fail(path, "empty")
        return value

    def optional_text(self, path: str) -> str | None:
        value = self.get(path)
        if value is not None and not isinstance(value, str):
            raise self.fail(path, f"expected a string or null, got {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "an array"
    return "an object"


def parse_record(obj: Any, index: int) -> Record:
    """Validate one source record (``obj``, the ``index``-th of ``data``) and build its :class:`Record`.

    Rules (each refusal names ``data[index]``, the record's ``what`` and the field):

    * ``rtype`` is ``PublicNAAN`` or ``PublicNAANShoulder``; the fields of that kind are all present;
    * ``what``, ``where``, ``when``, ``who.name``, ``na_policy.orgtype``/``policy``/``tenure`` and
      ``target.url`` are strings (``what``, ``who.name`` and ``target.url`` not empty); the other text
      fields are strings or null;
    * a NAAN (``what`` of a NAAN record, ``naan`` of a shoulder) is a normalized NAAN: betanumeric
      (draft-kunze-ark-40 §2.3); a shoulder is non-empty, its ``what`` is ``NAAN/shoulder``, and
      ``ark:NAAN/shoulder`` is a valid ARK already in its §3.2 normalized form (so an ARK can start with
      it);
    * ``when`` is an ISO 8601 date-time; ``target.http_code`` an integer redirect code (301, 302, 303,
      307, 308); ``target.url`` an http(s) URL whose template uses only the known variables
      (:func:`pidkit.registry.templates.check_template`);
    * ``test_identifier``, when set, is an ARK under this record's NAAN (and shoulder).

    >>> parse_record({"rtype": "PublicNAAN", "what": "12 48"}, 7)
    Traceback (most recent call last):
    ...
    pidkit.registry.records.RegistryError: data[7] (what '12 48'): what: NAAN must be betanumeric (0-9 and bcdfghjkmnpqrstvwxz) at position 3
    """  # noqa: E501
    if not isinstance(obj, dict):
        raise RegistryError(f"data[{index}]: expected an object, got {_kind(obj)}")
    f = _Fields(obj, index)
    rtype = f.text("rtype")
    if rtype not in (NAAN_RTYPE, SHOULDER_RTYPE):
        raise f.fail("rtype", f"expected {NAAN_RTYPE!r} or {SHOULDER_RTYPE!r}, got {rtype!r}")
    what = f.text("what", empty=False)
    if rtype == NAAN_RTYPE:
        naan = _naan(f, "what")
    for name in _NAAN_FIELDS if rtype == NAAN_RTYPE else _SHOULDER_FIELDS:
        f.get(name)
    if rtype == NAAN_RTYPE:
        shoulder = ""
    else:
        naan = _naan(f, "naan")
        shoulder = _shoulder(f, naan)
        if what != f"{naan}/{shoulder}":
            raise f.fail("what", f"expected {naan + '/' + shoulder!r} (naan/shoulder), got {what!r}")
    url = f.text("target.url", empty=False)
    problem = check_template(url)
    if problem is not None:
        raise f.fail("target.url", problem)
    code = f.get("target.http_code")
    if isinstance(code, bool) or not isinstance(code, int) or code not in REDIRECT_CODES:
        raise f.fail("target.http_code", f"expected one of {sorted(REDIRECT_CODES)}, got {_kind(code)}")
    when = f.text("when")
    try:
        dt.datetime.fromisoformat(when)
    except ValueError:
        raise f.fail("when", f"expected an ISO 8601 date-time, got {when!r}") from None
    test_identifier = f.optional_text("test_identifier")
    if test_identifier:
        _check_test_identifier(f, test_identifier, naan, shoulder)
    is_naan = rtype == NAAN_RTYPE
    return Record(
        rtype=rtype,
        what=what,
        naan=naan,
        shoulder=shoulder,
        where=f.text("where"),
        when=when,
        who=Who(
            name=f.text("who.name", empty=False),
            name_native=f.optional_text("who.name_native"),
            acronym=f.optional_text("who.acronym"),
        ),
        target=Target(url=url, http_code=code),
        na_policy=Policy(
            orgtype=f.text("na_policy.orgtype"),
            policy=f.text("na_policy.policy"),
            tenure=f.text("na_policy.tenure"),
            policy_url=f.optional_text("na_policy.policy_url"),
        ),
        test_identifier=test_identifier,
        service_provider=f.optional_text("service_provider") if is_naan else None,
        purpose=f.optional_text("purpose") if is_naan else None,
        source=obj,
    )


def _naan(f: _Fields, path: str) -> str:
    naan = f.text(path)
    try:
        return check_naan(naan)
    except PidkitError as exc:
        where = f" at position {exc.position}" if exc.position is not None else ""
        raise f.fail(path, exc.message + where) from None


def _shoulder(f: _Fields, naan: str) -> str:
    shoulder = f.text("shoulder", empty=False)
    compact = f"ark:{naan}/{shoulder}"
    try:
        normalized = Ark.parse(compact).normalized
    except PidkitError as exc:
        raise f.fail("shoulder", f"{shoulder!r} cannot start an ARK Name: {exc.message}") from None
    if normalized != compact:
        raise f.fail("shoulder", f"{shoulder!r} is not in normalized form ({normalized!r})")
    return shoulder


def _check_test_identifier(f: _Fields, text: str, naan: str, shoulder: str) -> None:
    try:
        ark = Ark.parse(text).normalize()
    except PidkitError as exc:
        raise f.fail("test_identifier", f"not an ARK: {exc}") from None
    if ark.naan != naan:
        raise f.fail("test_identifier", f"{text!r} is not under NAAN {naan!r}")
    if shoulder and not ark.normalized.startswith(f"ark:{naan}/{shoulder}"):
        raise f.fail("test_identifier", f"{text!r} is not under shoulder {naan}/{shoulder}")
