"""The records a store hands out: bindings and their ERC metadata, NAANs, minters, API keys, reports.

Immutable dataclasses; they know nothing of SQL.  A binding's ``?info`` text is written by the ANVL
format (:mod:`pidkit.anvl`), its redirect location is checked by :mod:`pidkit.store.redirects`.

>>> Erc(who="Austin, Larry", what="A Study of Rhythm", when="1952").who
'Austin, Larry'
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, get_args

from ..anvl import UNAVAILABLE, anvl_line, erc_segment
from ..codecs import iso_z
from ..errors import ConflictError, StoreError
from .redirects import UnsafeLocationError, stays_under

__all__ = [
    "ERC_ELEMENTS",
    "ERC_UNAVAILABLE",
    "KINDS",
    "STATUSES",
    "UNPUBLISHED",
    "AlreadyBoundError",
    "ApiKey",
    "Binding",
    "ChangedMeanwhileError",
    "Erc",
    "ErcChange",
    "HistoryEntry",
    "ImportRejectedError",
    "ImportReport",
    "Kind",
    "MinterInfo",
    "Naan",
    "NotOwnerError",
    "Override",
    "Principal",
    "Recorded",
    "ReservedAgainError",
    "Resolution",
    "RestoreReport",
    "Scope",
    "SessionInfo",
    "Status",
    "User",
    "WritesInFlightError",
    "binding_version",
    "check_extra_name",
    "check_text",
    "erc_changes",
    "published",
    "refuse_reserving_again",
]

#: The id kinds a binding can hold (the ``kind`` column).
Kind = Literal["ark", "xarkid", "tid", "gedcom-uid", "llid", "uuid"]
KINDS: Final[tuple[str, ...]] = get_args(Kind)

#: Binding status.  ``public``: resolves to its target; ``reserved``: assigned, not yet public (no
#: redirect); ``unavailable``: withdrawn with a reason, reversible (EZID's meaning: 410 with the reason,
#: ``?info`` still answers, it can be made public again); ``tombstoned``: withdrawn for good, never
#: rebound nor reissued (draft-kunze-ark-40 §2).
Status = Literal["public", "reserved", "unavailable", "tombstoned"]
STATUSES: Final[tuple[str, ...]] = get_args(Status)
#: The one status that is not published: a ``reserved`` binding, and its history, are shown only to a
#: key or user that covers it.
UNPUBLISHED: Final = "reserved"


def published(status: str) -> bool:
    """True if a binding of ``status`` is published: the resolver answers for it to anyone (a redirect,
    410 with the reason, a tombstone) and its history is public.  A held ARK — deleted while reserved,
    or held from minting — was never given out, so it is never bound published.

    >>> [s for s in STATUSES if published(s)]
    ['public', 'unavailable', 'tombstoned']
    """
    return status != UNPUBLISHED


def refuse_reserving_again(before: str | None, after: str, text: str) -> None:
    """Refuse (:class:`ReservedAgainError`, a :class:`~pidkit.errors.ConflictError`, naming ``text``)
    a change of a binding of status ``before`` (``None``: not bound yet) to ``after`` that would make a
    published id reserved again.
    Once an id has been given out it answers for ever — with its target, or 410 with a reason — and a
    reserved one answers 404, as if it had never existed (EZID: "a status of reserved may be specified
    only at identifier creation time"; withdrawing it is ``unavailable``, with a reason).

    >>> refuse_reserving_again("reserved", "public", "ark:99999/fk4x")
    >>> refuse_reserving_again("public", "reserved", "ark:99999/fk4x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pidkit.store.records.ReservedAgainError: an identifier made public is never reserved again ...
    """
    if before is not None and published(before) and not published(after):
        raise ReservedAgainError(
            "an identifier made public is never reserved again (withdraw it: unavailable, with a reason)",
            text=text,
        )

#: ERC "value unavailable" code, shown for an empty element.
ERC_UNAVAILABLE: Final = UNAVAILABLE

#: Characters no binding stores: NUL and lone surrogates (neither survives a UTF-8 round trip).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(value: str) -> bool:
    """True if ``value`` holds a character :func:`check_text` refuses (the quick test of many strings
    joined: ASCII text holds no surrogate, so only NUL is looked for there, 20 times faster than the
    pattern).

    >>> unstorable("Austin, Larry"), unstorable("a" + chr(0)), unstorable("é" + chr(0xD800)), unstorable("é")
    (False, True, True, False)
    """
    return ("\x00" in value) if value.isascii() else _UNSTORABLE.search(value) is not None


def check_text(value: str, field: str) -> str:
    """Return ``value`` if it can be stored; refuse NUL and unpaired surrogates (neither survives a
    UTF-8 database round trip) with :class:`~pidkit.errors.StoreError` naming ``field`` and the
    1-based position.  Every string written to a binding passes through here.

    >>> check_text("Austin, Larry", "erc.who")
    'Austin, Larry'
    >>> check_text("a" + chr(0xDC00), "erc.who")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: erc.who: character U+DC00 not allowed in 'a\\udc00' at position 2
    """
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        raise StoreError(
            f"{field}: character U+{ord(bad[0]):04X} not allowed", text=value, position=bad.start() + 1
        )
    return value


@dataclass(frozen=True, slots=True)
class Erc:
    """One ERC segment: who / what / when / where (draft-kunze-ark-40 §5.3, "The Electronic Resource
    Citation").  For the object (``erc:``) it tells the story of an expression of the object; for the
    commitment (``erc-support:``) who made the commitment, what it is, when and where it is explained.

    >>> Erc(what="Permanent: Stable Content:").when
    ''
    >>> Erc().is_empty()
    True
    """

    who: str = ""
    what: str = ""
    when: str = ""
    where: str = ""

    def is_empty(self) -> bool:
        """True if every element is empty.

        >>> Erc(who="x").is_empty()
        False
        """
        return not (self.who or self.what or self.when or self.where)

    def to_dict(self) -> dict[str, str]:
        """The four elements as a dict (for JSON).

        >>> Erc(who="a").to_dict()
        {'who': 'a', 'what': '', 'when': '', 'where': ''}
        """
        return {"who": self.who, "what": self.what, "when": self.when, "where": self.where}


#: What a change does to an ERC segment: an :class:`Erc` replaces all four elements, a mapping changes
#: the elements it names (``{"who": "Austin, Larry"}``; ``""`` clears one).
ErcChange: TypeAlias = Erc | Mapping[str, str]

#: The ERC element names, in ANVL order.
ERC_ELEMENTS: Final = ("who", "what", "when", "where")


def erc_changes(change: ErcChange | None) -> dict[str, str]:
    """The elements ``change`` sets, by name (empty for ``None``); unknown names are refused.

    >>> erc_changes({"who": "x"}), erc_changes(None)
    ({'who': 'x'}, {})
    >>> erc_changes(Erc(what="w"))
    {'who': '', 'what': 'w', 'when': '', 'where': ''}
    >>> erc_changes({"how": "x"})
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: not an ERC element (who, what, when, where) in 'how'
    """
    if change is None:
        return {}
    if isinstance(change, Erc):
        return change.to_dict()
    out: dict[str, str] = {}
    for name, value in change.items():
        if name not in ERC_ELEMENTS:
            raise StoreError(f"not an ERC element ({', '.join(ERC_ELEMENTS)})", text=name)
        if not isinstance(value, str):
            raise StoreError(f"ERC {name} must be a string", text=repr(value))
        out[name] = value
    return out


#: Longest extra element name.
MAX_EXTRA_NAME: Final = 255
#: Names the ``?info`` record writes itself: an extra element may not take them.
_RESERVED_EXTRA: Final = frozenset(
    {"erc", "erc-support", "status", "reason", "created", "updated", *ERC_ELEMENTS}
)


def check_extra_name(name: str) -> str:
    """Return ``name`` if it can name an extra metadata element, else raise
    :class:`~pidkit.errors.StoreError` naming it: the one rule for extra element names.

    EZID's rule (API, "Internal metadata"): names beginning with ``_`` are reserved for the service
    (``_status``, ``_target``, ``_created`` …).  Beyond it: a name is 1 to 255 characters without
    whitespace or control characters (``?info`` writes it as one ANVL line), and not a name the ``?info``
    record writes itself (``erc``, ``erc-support``, ``who``/``what``/``when``/``where``, ``status``,
    ``reason``, ``created``, ``updated``) nor an ``erc.`` or ``erc-support.`` element (the ERC and the
    commitment have their own fields; EZID's view writes them by those names).  Colons are allowed (ANVL
    %-encodes them in names).

    >>> check_extra_name("dc.title")
    'dc.title'
    >>> check_extra_name("erc-support.who")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: the ?info record writes this name itself (the ERC and the commitment ...
    >>> check_extra_name("_status")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: extra element names beginning with '_' are reserved (EZID) in '_status' ...
    """
    check_text(name, "extra element name")
    if not name or len(name) > MAX_EXTRA_NAME:
        raise StoreError(f"an extra element name is 1 to {MAX_EXTRA_NAME} characters", text=name)
    if name.startswith("_"):
        raise StoreError("extra element names beginning with '_' are reserved (EZID)", text=name, position=1)
    for i, c in enumerate(name if " " in name or not name.isprintable() else "", 1):  # (space: printable)
        if c.isspace() or not c.isprintable():
            raise StoreError("no whitespace or control character in an extra element name", text=name,
                             position=i)
    if name in _RESERVED_EXTRA or name.startswith(("erc.", "erc-support.")):
        raise StoreError("the ?info record writes this name itself (the ERC and the commitment have their "
                         "own fields)", text=name)
    return name


@dataclass(frozen=True, slots=True)
class Principal:
    """Who makes a change (written to the history): an API key, a local command, or a signed-in user —
    one type the web service and the CLI pass in.  ``str()`` is the history's ``principal`` column.

    >>> str(Principal.api_key("a1b2c3d4e5f60718")), str(Principal("cli", "ann@host"))
    ('apikey:a1b2c3d4e5f60718', 'cli:ann@host')
    >>> Principal.parse("user:ann") == Principal.user("ann")
    True
    """

    kind: Literal["apikey", "cli", "user", "system"]
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    @classmethod
    def api_key(cls, key_id: str) -> Principal:
        """A change made with the API key ``key_id``."""
        return cls("apikey", key_id)

    @classmethod
    def user(cls, name: str) -> Principal:
        """A change made by a signed-in user."""
        return cls("user", name)

    @classmethod
    def local(cls) -> Principal:
        """A change made by a local command (or a library call in this process):
        ``cli:<user>@<host>``."""
        import getpass
        import socket

        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no name for this uid (a container)
            user = "unknown"
        return cls("cli", f"{user}@{socket.gethostname()}")

    @classmethod
    def parse(cls, text: str) -> Principal:
        """The principal a history row names."""
        kind, sep, name = text.partition(":")
        if not sep or kind not in ("apikey", "cli", "user", "system"):
            raise StoreError("not a principal (apikey:, cli:, user: or system:)", text=text)
        return cls(kind, name)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Recorded:
    """A binding with the time this store recorded its last change (``at``: the datestamp a harvester
    sees, whatever ``updated`` the binding was given) and its place in the order of recorded changes
    (``position``: pass it as ``after`` to :meth:`~pidkit.store.Store.list_recorded` to go on).

    >>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/")
    >>> Recorded(b, _dt.datetime(2024, 5, 1, tzinfo=_dt.UTC), "b/3kz").position
    'b/3kz'
    """

    binding: Binding
    at: _dt.datetime
    position: str


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change, as the append-only history keeps it: when, who, which operation on which id or
    record (``kind``, ``key``), and the fields it changed, before and after (``None``: the record did
    not exist before / does not exist after).

    >>> HistoryEntry("3k", None, "cli:a@h", "create", "ark", "ark:1/x", None, {"status": "public"}).after
    {'status': 'public'}
    """

    id: str
    at: _dt.datetime | None
    principal: str
    operation: str
    kind: str
    key: str
    before: Mapping[str, object] | None
    after: Mapping[str, object] | None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict.

        >>> HistoryEntry("3k", None, "cli:a@h", "hold", "ark", "ark:1/x", None, None).to_dict()["operation"]
        'hold'
        """
        return {
            "id": self.id, "at": _iso(self.at), "principal": self.principal, "operation": self.operation,
            "kind": self.kind, "key": self.key,
            "before": None if self.before is None else dict(self.before),
            "after": None if self.after is None else dict(self.after),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Override:
    """A binding made with ``force``: which id, when, and the rule it overrode.

    >>> Override("ark", "ark:12345/x", "NAAN 12345 is not registered in this store").kind
    'ark'
    """

    kind: str
    key: str
    reason: str
    at: _dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class Naan:
    """A Name Assigning Authority Number held in the store, with its shoulders (NAANs stay strings).

    >>> Naan("99999", "test", ("fk4",)).shoulders
    ('fk4',)
    """

    naan: str
    name: str = ""
    shoulders: tuple[str, ...] = ()
    created: _dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class MinterInfo:
    """A named NOID minter and its state ``(template, naan, seed, counter)``: ``counter`` is the next
    position the minter will mint from (every position below it has been used or skipped).

    >>> MinterInfo("m", "99999", "fk4.reedeedk", 7, 0).template
    'fk4.reedeedk'
    """

    name: str
    naan: str
    template: str
    seed: int
    counter: int
    created: _dt.datetime | None = None

    @property
    def left(self) -> int | None:
        """How many ids the minter can still mint (``None``: its template never runs out).

        >>> MinterInfo("m", "99999", "fk4.sdd", 7, 30).left, MinterInfo("m", "99999", "fk4.zd", 7, 3).left
        (70, None)
        """
        from ..ark.noid import Template

        capacity = Template.parse(self.template).capacity
        return None if capacity is None else max(0, capacity - self.counter)


@dataclass(frozen=True, slots=True)
class Binding:
    """An id bound in the store.

    ``key`` is the canonical form (ARKs: normalized, ``ark:NAAN/Name…``) and ``text`` the id as first
    given.  ``erc`` describes the object, ``support`` the commitment (``erc-support:``).  ``shoulder`` is
    set for ARKs only; ``naan`` is an ARK's NAAN, and for another kind the owning NAAN when the
    binding was created through the web API (``import_jsonl(owner=…)``), else ``None``.

    >>> b = Binding(kind="ark", key="ark:99999/fk4x", text="ark:/99999/fk4-x", target="https://e.org/")
    >>> print(b.to_anvl(), end="")
    erc:
    who: (:unav)
    what: (:unav)
    when: (:unav)
    where: ark:99999/fk4x
    erc-support:
    who: (:unav)
    what: (:unav)
    when: (:unav)
    where: (:unav)
    """

    kind: str
    key: str
    text: str
    target: str | None
    erc: Erc = field(default_factory=Erc)
    support: Erc = field(default_factory=Erc)
    passthrough: bool = False
    status: str = "public"
    naan: str | None = None
    shoulder: str | None = None
    tombstone_reason: str | None = None
    tombstoned_at: _dt.datetime | None = None
    created: _dt.datetime | None = None
    updated: _dt.datetime | None = None
    #: Why the binding is ``unavailable`` (EZID's ``unavailable | reason``); ``None`` otherwise.
    reason: str | None = None
    #: Extra metadata elements beside the ERC (``dc.title``, an application's own), sorted by name.
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def extra_dict(self) -> dict[str, str]:
        """The extra metadata elements as a dict.

        >>> Binding("ark", "ark:1/x", "ark:1/x", None, extra=(("dc.title", "T"),)).extra_dict
        {'dc.title': 'T'}
        """
        return dict(self.extra)

    @property
    def is_tombstoned(self) -> bool:
        """True once the id is withdrawn for good.

        >>> Binding("ark", "ark:1/x", "ark:1/x", None, status="tombstoned").is_tombstoned
        True
        """
        return self.status == "tombstoned"

    def object_erc(self) -> Erc:
        """The object's ERC, with ``where`` defaulting to the id itself (§5.2: "where" is preferably
        the persistent identifier, not a transient redirect target).

        >>> Binding("ark", "ark:1/x", "ark:1/x", None).object_erc().where
        'ark:1/x'
        """
        e = self.erc
        return e if e.where.strip() else Erc(who=e.who, what=e.what, when=e.when, where=self.key)

    def to_anvl(self) -> str:
        """The ERC record as ANVL text (:mod:`pidkit.anvl`), as the ``?info`` inflection returns it
        (draft-kunze-ark-40 §5.2): ``erc:`` (the object) then ``erc-support:`` (the commitment); a
        tombstone or a withdrawal adds ``status`` and ``reason`` lines, and ``created`` / ``updated``
        (ISO 8601 UTC) close it where the store knows them.  Ends with a newline.

        >>> b = Binding("ark", "ark:1/x", "ark:1/x", None, status="tombstoned", tombstone_reason="gone")
        >>> b.to_anvl().splitlines()[-2:]
        ['status: tombstoned', 'reason: gone']
        >>> b = Binding("ark", "ark:1/x", "ark:1/x", None, erc=Erc(who="Line 1\\nLine 2"))
        >>> b.to_anvl().splitlines()[1]
        'who: Line 1%0ALine 2'
        >>> when = _dt.datetime(2024, 5, 1, 12, 0, tzinfo=_dt.UTC)
        >>> Binding("ark", "ark:1/x", "ark:1/x", None, created=when, updated=when).to_anvl().splitlines()[-1]
        'updated: 2024-05-01T12:00:00.000000Z'
        """
        lines = [*erc_segment("erc", self.object_erc().to_dict()),
                 *erc_segment("erc-support", self.support.to_dict())]
        lines += [anvl_line(name, value) for name, value in self.extra]
        if self.is_tombstoned:
            lines.append(anvl_line("status", "tombstoned"))
            lines.append(anvl_line("reason", self.tombstone_reason or ""))
        elif self.status == "unavailable":
            lines.append(anvl_line("status", "unavailable"))
            lines.append(anvl_line("reason", self.reason or ""))
        # issue 13: when the binding was created and last changed (ISO 8601 UTC), where the store knows it
        times = (("created", self.created), ("updated", self.updated))
        lines += [anvl_line(name, iso_z(when)) for name, when in times if when is not None]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (the JSON Lines export format; timestamps ISO 8601 UTC with ``Z``).

        >>> Binding("uuid", "k", "k", "https://e.org/").to_dict()["target"]
        'https://e.org/'
        """
        return {
            "kind": self.kind,
            "key": self.key,
            "text": self.text,
            "target": self.target,
            "erc": self.erc.to_dict(),
            "support": self.support.to_dict(),
            "passthrough": self.passthrough,
            "status": self.status,
            "tombstone_reason": self.tombstone_reason,
            "tombstoned_at": _iso(self.tombstoned_at),
            "created": _iso(self.created),
            "updated": _iso(self.updated),
            "reason": self.reason,
            "extra": self.extra_dict,
        }


def _iso(when: _dt.datetime | None) -> str | None:
    return None if when is None else iso_z(when)


@dataclass(frozen=True, slots=True)
class Resolution:
    """What an ARK resolves to: the ``binding`` found and the ``suffix`` (the rest of the ARK after the
    bound one, as the request spelled it where that normalizes the same; empty for an exact match) to
    pass through to its target.

    >>> b = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/", passthrough=True)
    >>> r = Resolution(b, "/p1")
    >>> r.exact, r.location
    (False, 'https://e.org/p1')
    """

    binding: Binding
    suffix: str = ""

    @property
    def exact(self) -> bool:
        """True when the ARK asked for is itself bound."""
        return not self.suffix

    @property
    def location(self) -> str | None:
        """Where to redirect: the target with the suffix appended (``None`` if not public or no target).

        >>> Resolution(Binding("ark", "ark:1/x", "ark:1/x", None, status="reserved")).location is None
        True
        """
        b = self.binding
        if b.status != "public" or b.target is None:
            return None
        suffix = self.suffix
        if not suffix:
            return b.target
        target = b.target
        bound = urllib.parse.urlsplit(target)
        if not bound.path:
            # "https://example.org" + ".evil.com" must not become the host "example.org.evil.com"
            target = urllib.parse.urlunsplit(bound._replace(path="/"))
            bound = urllib.parse.urlsplit(target)
        if target.endswith("/") and suffix.startswith("/"):
            suffix = suffix[1:]  # a '/' ending the target and one starting the suffix are not doubled
        location = target + suffix
        if not stays_under(target, location):
            raise UnsafeLocationError(
                f"the passthrough suffix would redirect outside the bound target {b.target}", text=location
            )
        return location


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key record (never the secret).  ``shoulder=None`` allows every shoulder of the NAAN.

    >>> k = ApiKey("a1b2c3d4e5f6", "99999", "fk4", "ci")
    >>> k.allows("99999", "fk4"), k.allows("99999", "b5"), k.allows("12345", "fk4")
    (True, False, False)
    """

    key_id: str
    naan: str
    shoulder: str | None = None
    label: str = ""
    created: _dt.datetime | None = None
    revoked_at: _dt.datetime | None = None

    @property
    def revoked(self) -> bool:
        """True once the key is revoked."""
        return self.revoked_at is not None

    #: The signed-in user who created the key (``None``: made by a local command).
    owner: str | None = None

    @property
    def scope(self) -> Scope:
        """The key's :class:`Scope` (a key is never an administrator)."""
        return Scope(self.naan, self.shoulder)

    def allows(self, naan: str, shoulder: str | None = None) -> bool:
        """True if this (unrevoked) key may write ids under ``naan`` / ``shoulder`` (:meth:`Scope.allows`).

        >>> ApiKey("k", "99999").allows("99999", "anything")
        True
        """
        return not self.revoked and self.scope.allows(naan, shoulder)


@dataclass(frozen=True, slots=True)
class Scope:
    """What a principal may read and change: a NAAN, optionally one shoulder of it, or everything
    (``admin``).  API keys and signed-in users both have one, and :meth:`allows` is the one rule that
    decides for both (DESIGN.md, "Principals").

    >>> Scope("99999", "fk4").allows("99999", "fk4"), Scope("99999", "fk4").allows("99999", "b5")
    (True, False)
    >>> Scope("99999").allows("12345", None), Scope("99999", admin=True).allows("12345", None)
    (False, True)
    """

    naan: str
    shoulder: str | None = None
    admin: bool = False

    def allows(self, naan: str | None, shoulder: str | None = None) -> bool:
        """True if ids under ``naan`` / ``shoulder`` are within this scope: an administrator's are all;
        otherwise the NAAN must be this scope's, and the shoulder too when the scope names one.

        >>> Scope("99999").allows(None)
        False
        """
        if self.admin:
            return True
        if naan is None or naan != self.naan:
            return False
        return self.shoulder is None or shoulder == self.shoulder

    def narrowest(self) -> tuple[str | None, str | None]:
        """The NAAN and shoulder that hold everything this scope allows (``None``: any), for a search
        to narrow by before :meth:`allows` judges each result.

        >>> Scope("99999", "fk4").narrowest(), Scope("99999", admin=True).narrowest()
        (('99999', 'fk4'), (None, None))
        """
        return (None, None) if self.admin else (self.naan, self.shoulder)

    def __str__(self) -> str:
        return "everything (administrator)" if self.admin else self.naan + (
            f"/{self.shoulder}" if self.shoulder else "")


@dataclass(frozen=True, slots=True)
class User:
    """A person who signs in to the back office (never the password: only its Argon2id hash is kept,
    and never handed out).

    >>> User("ann", "99999", "fk4").scope.allows("99999", "fk4")
    True
    >>> User("ann", "99999", disabled_at=_dt.datetime(2024, 1, 1, tzinfo=_dt.UTC)).active
    False
    """

    name: str
    naan: str
    shoulder: str | None = None
    admin: bool = False
    created: _dt.datetime | None = None
    disabled_at: _dt.datetime | None = None

    @property
    def active(self) -> bool:
        """True until the user is disabled."""
        return self.disabled_at is None

    @property
    def scope(self) -> Scope:
        """The user's :class:`Scope`."""
        return Scope(self.naan, self.shoulder, self.admin)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A signed-in session (never its token: the store keeps the token's SHA-256): whose, its CSRF
    token, when it began and ends.

    >>> SessionInfo("3k", "ann", "c", None, None).csrf
    'c'
    """

    id: str
    user: str
    csrf: str
    created: _dt.datetime | None
    expires: _dt.datetime | None


@dataclass(frozen=True, slots=True)
class ImportReport:
    """Result of :meth:`Store.import_jsonl`: lines read, bindings created, bindings updated.

    >>> ImportReport(3, 2, 1).written
    3
    """

    lines: int
    created: int
    updated: int

    @property
    def written(self) -> int:
        """Bindings written (created + updated)."""
        return self.created + self.updated


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """Result of :meth:`Store.restore`: rows restored and rows skipped (``merge``: already there, kept
    as they were; and the dump's history and overrides of a binding already there), per table.

    >>> RestoreReport({"naans": 1}, {"naans": 0}).total
    1
    """

    restored: Mapping[str, int]
    skipped: Mapping[str, int]

    @property
    def total(self) -> int:
        """Rows restored in all."""
        return sum(self.restored.values())


class ImportRejectedError(StoreError):
    """An import refused as a whole (nothing written); ``problems`` lists ``(line number, message)``
    for every bad line — or the first of them, where the import was asked to list at most so many —
    and ``line`` is the first one; ``count`` is how many lines were bad; ``overridable`` the lines
    refused only by the rule ``force`` overrides (an unregistered NAAN, a wrong check character).

    >>> e = ImportRejectedError([(2, "not JSON"), (5, "bad target")])
    >>> str(e), e.count
    ('2 bad lines, nothing imported; first: not JSON on line 2', 2)
    >>> str(ImportRejectedError([(2, "not JSON")], count=7))
    '7 bad lines, nothing imported; first: not JSON on line 2'
    """

    def __init__(
        self, problems: Iterable[tuple[int, str]], *, overridable: Iterable[int] = (),
        count: int | None = None,
    ) -> None:
        self.problems: tuple[tuple[int, str], ...] = tuple(problems)
        self.overridable: frozenset[int] = frozenset(overridable)
        first_line, first_msg = self.problems[0]
        self.count: int = len(self.problems) if count is None else count
        count = self.count
        plural = "line" if count == 1 else "lines"
        super().__init__(f"{count} bad {plural}, nothing imported; first: {first_msg}", line=first_line)


class AlreadyBoundError(ConflictError):
    """A create (:meth:`Store.change` with ``only_new``) of an id that is bound already: nothing written.

    >>> isinstance(AlreadyBoundError("already bound"), ConflictError)
    True
    """


class ChangedMeanwhileError(ConflictError):
    """A change made on condition that the binding is still as it was read (:meth:`Store.change`'s
    ``if_version``) found it changed since, or gone: nothing written.

    >>> isinstance(ChangedMeanwhileError("changed meanwhile"), ConflictError)
    True
    """


def binding_version(b: Binding) -> str:
    """A digest of every field of ``b``: the same for the same stored binding, another after any change
    of it (the condition of an edit made from what a person saw: :meth:`Store.change`'s ``if_version``).

    >>> b = Binding("ark", "ark:99999/x", "ark:99999/x", "https://e.org/")
    >>> binding_version(b) == binding_version(dataclasses.replace(b))
    True
    >>> binding_version(b) == binding_version(dataclasses.replace(b, erc=Erc(who="W")))
    False
    """
    return hashlib.sha256(repr(dataclasses.astuple(b)).encode()).hexdigest()[:32]


class ReservedAgainError(ConflictError):
    """A change that would make a published binding reserved again
    (:func:`refuse_reserving_again`): nothing written.

    >>> isinstance(ReservedAgainError("never reserved again"), ConflictError)
    True
    """


class WritesInFlightError(Exception):
    """Writes stamped before now were still running when :meth:`Store.settled_time` stopped waiting
    for them (a long import, a merge): ask again later.  Not a :class:`StoreError` — nothing asked for
    was wrong; the web service answers 503 with ``Retry-After``.

    >>> str(WritesInFlightError("an import is running"))
    'an import is running'
    """


class NotOwnerError(StoreError):
    """A write to a binding that belongs to another NAAN (answered 403 by the web service).

    >>> str(NotOwnerError("tid 3jzfcijpj2z2a belongs to another NAAN", line=2))
    'tid 3jzfcijpj2z2a belongs to another NAAN on line 2'
    """
