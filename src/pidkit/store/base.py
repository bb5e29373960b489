"""The store interface: NAANs and shoulders, NOID minters and their state, holds, bindings, API keys.

One abstract class, :class:`Store`, and the immutable records it hands out.  Two backends implement it
(``pidkit.store.sqlite`` — the embedded default — and ``pidkit.store.postgres``); get one with
:func:`pidkit.store.open_store`.

Design decisions (documented here once):

* **Bindings are generic.**  A binding is ``(kind, key) → target`` where ``kind`` is one of
  :data:`KINDS` and ``key`` is the canonical form of the id: for ARKs the draft-kunze-ark-40 §3.2
  normalized form ``str(Ark.parse(text).normalize())`` (so hyphenated or ``ark:/`` spellings find the
  same binding); the text as given is kept in ``Binding.text``.  :meth:`Store.bind` is for ARKs,
  :meth:`Store.bind_id` for the other kinds (XarkId, TID, GEDCOM UID, Library.Link id, UUID);
  :meth:`Store.find_ids` looks a bare value up under every kind it can be read as (the resolver's
  ``/id/{value}``).
* **Minting never issues an id twice.**  Each batch reserves a counter range and records the minted ids
  in a ``minted`` table (UNIQUE per NAAN) in ONE transaction; ids that are held, already minted (by any
  minter on the NAAN) or bound in any status — including tombstoned ARKs — are skipped.  Minted ids are
  *not* written as ``reserved`` bindings (the ``minted`` table is the record; bind them when ready);
  :meth:`Store.bind` with ``status="reserved"`` is there for explicit reservations.
* **Tombstones are final.**  :meth:`Store.bind` refuses to change a tombstoned ARK
  (:class:`~pidkit.errors.ConflictError`); a tombstoned ARK is never minted again ("ARKs are never
  reissued", draft-kunze-ark-40 §2).
* **Targets** are absolute ``http``/``https`` URLs without whitespace or control characters
  (:func:`validate_target`): the resolver only ever redirects to a bound target.
* **API keys**: the secret ``pk_<keyid>_<random>`` (32 bytes from :mod:`secrets`) is shown once and
  stored as its SHA-256 hash — enough for a high-entropy random secret (no password stretching needed);
  verification looks the key up by id and compares hashes with :func:`hmac.compare_digest`.
* Timestamps are timezone-aware UTC :class:`~datetime.datetime` values.

>>> Erc(who="Austin, Larry", what="A Study of Rhythm", when="1952").who
'Austin, Larry'
>>> validate_target("https://example.org/x?y=1")
'https://example.org/x?y=1'
"""

from __future__ import annotations

import abc
import datetime as _dt
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Final, Literal, TypeAlias, get_args

from ..codecs import iso_z
from ..errors import StoreError

__all__ = [
    "DEFAULT_BATCH",
    "ERC_ELEMENTS",
    "KINDS",
    "STATUSES",
    "ApiKey",
    "Binding",
    "Erc",
    "ErcChange",
    "ImportRejectedError",
    "ImportReport",
    "Kind",
    "MinterInfo",
    "Naan",
    "NotOwnerError",
    "Override",
    "Resolution",
    "RestoreReport",
    "Status",
    "Store",
    "UnsafeLocationError",
    "check_text",
    "erc_changes",
    "validate_target",
]

#: The id kinds a binding can hold (the ``kind`` column).
Kind = Literal["ark", "xarkid", "tid", "gedcom-uid", "llid", "uuid"]
KINDS: Final[tuple[str, ...]] = get_args(Kind)

#: Binding status.  ``public``: resolves to its target; ``reserved``: assigned, not yet public (no
#: redirect); ``tombstoned``: withdrawn for good, never rebound nor reissued (draft-kunze-ark-40 §2).
Status = Literal["public", "reserved", "tombstoned"]
STATUSES: Final[tuple[str, ...]] = get_args(Status)

#: Ids minted per transaction when minting in bulk.
DEFAULT_BATCH: Final = 10_000

#: ERC "value unavailable" code, shown for an empty element.
ERC_UNAVAILABLE: Final = "(:unav)"  # ERC "value unavailable" (used by store.anvl)

_TARGET_SCHEMES: Final = frozenset({"http", "https"})
_MAX_TARGET: Final = 4096
#: Characters no binding stores: NUL and lone surrogates (neither survives a UTF-8 round trip).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_BAD_TARGET_CHAR = re.compile(r"[\x00-\x20\x7f-\x9f\s]")


def validate_target(url: str) -> str:
    """Return ``url`` if it is an absolute ``http``/``https`` URL with a host and no whitespace or
    control characters; raise :class:`~pidkit.errors.StoreError` naming the input otherwise.

    >>> validate_target("http://example.org/")
    'http://example.org/'
    >>> validate_target("javascript:alert(1)")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: target must be an http or https URL in 'javascript:alert(1)'
    >>> validate_target("https://e.org/a b")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: whitespace or control character in target in 'https://e.org/a b' at position 16
    """
    bad = _BAD_TARGET_CHAR.search(url)
    if bad is not None:
        raise StoreError("whitespace or control character in target", text=url, position=bad.start() + 1)
    if len(url) > _MAX_TARGET:
        raise StoreError(f"target longer than {_MAX_TARGET} characters", text=url)
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        raise StoreError(f"target is not a URL ({exc})", text=url) from None
    if parts.scheme.lower() not in _TARGET_SCHEMES:
        raise StoreError("target must be an http or https URL", text=url)
    if not parts.hostname:
        raise StoreError("target URL has no host", text=url)
    return url


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


class UnsafeLocationError(StoreError):
    """A passthrough suffix would make the redirect leave its bound target (another host, port,
    scheme or path): the resolver refuses it instead of redirecting.

    >>> b = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org/a", passthrough=True)
    >>> Resolution(b, ".evil.com").location
    'https://e.org/a.evil.com'
    >>> root = Binding("ark", "ark:1/x", "ark:1/x", "https://e.org", passthrough=True)
    >>> Resolution(root, ".evil.com").location
    'https://e.org/.evil.com'
    """


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

    @property
    def is_tombstoned(self) -> bool:
        """True once the id is withdrawn for good.

        >>> Binding("ark", "ark:1/x", "ark:1/x", None, status="tombstoned").is_tombstoned
        True
        """
        return self.status == "tombstoned"

    def to_anvl(self) -> str:
        """The ERC record as ANVL text (``erc:`` then ``erc-support:``), as the ``?info`` inflection
        returns it (draft-kunze-ark-40 §5.2); see :func:`pidkit.store.anvl.erc_anvl`.
        """
        from .anvl import erc_anvl  # the one ANVL encoder (anvl imports this module)

        return erc_anvl(self)

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
        if not _same_place(bound, location):
            raise UnsafeLocationError(
                f"the passthrough suffix would redirect outside the bound target {b.target}", text=location
            )
        return location


def _same_place(bound: urllib.parse.SplitResult, location: str) -> bool:
    """True if ``location`` keeps the scheme, host and port of ``bound`` and stays under its path
    (the query and fragment of the target are not part of the comparison: a suffix after them stays
    inside them)."""
    try:
        composed = urllib.parse.urlsplit(location)
        ports = (composed.port, bound.port)
    except ValueError:
        return False
    return (
        composed.scheme.lower() == bound.scheme.lower()
        and composed.hostname == bound.hostname
        and ports[0] == ports[1]
        and composed.netloc == bound.netloc
        and composed.path.startswith(bound.path)
    )


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

    def allows(self, naan: str, shoulder: str | None = None) -> bool:
        """True if this (unrevoked) key may write ids under ``naan`` / ``shoulder``.

        >>> ApiKey("k", "99999").allows("99999", "anything")
        True
        """
        if self.revoked or naan != self.naan:
            return False
        return self.shoulder is None or shoulder == self.shoulder


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
    as they were), per table.

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
    for every bad line, and ``line`` is the first one.

    >>> e = ImportRejectedError([(2, "not JSON"), (5, "bad target")])
    >>> str(e)
    '2 bad lines, nothing imported; first: not JSON on line 2'
    """

    def __init__(self, problems: Iterable[tuple[int, str]]) -> None:
        self.problems: tuple[tuple[int, str], ...] = tuple(problems)
        first_line, first_msg = self.problems[0]
        count = len(self.problems)
        plural = "line" if count == 1 else "lines"
        super().__init__(f"{count} bad {plural}, nothing imported; first: {first_msg}", line=first_line)


class NotOwnerError(StoreError):
    """A write to a binding that belongs to another NAAN (answered 403 by the web service).

    >>> str(NotOwnerError("tid 3jzfcijpj2z2a belongs to another NAAN", line=2))
    'tid 3jzfcijpj2z2a belongs to another NAAN on line 2'
    """


class Store(abc.ABC):
    """The store interface; every write is one transaction.  Use as a context manager or call
    :meth:`close`.

    >>> from pidkit.store import open_store
    >>> with open_store("sqlite:///:memory:") as store:
    ...     _ = store.add_naan("99999", "test", shoulders=["fk4"])
    ...     b = store.bind("ark:/99999/fk4-x1", "https://example.org/x1", erc=Erc(what="X one"))
    ...     store.get_binding("ark:99999/fk4x1") == b
    True
    """

    # -- life cycle ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection(s)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @abc.abstractmethod
    def schema_version(self) -> int:
        """The highest schema migration applied (migrations run when the store is opened)."""

    # -- NAANs and shoulders ------------------------------------------------------------------------
    @abc.abstractmethod
    def add_naan(self, naan: str, name: str = "", *, shoulders: Iterable[str] = ()) -> Naan:
        """Register ``naan`` (a string, e.g. ``"99999"``) with its shoulders.
        :class:`~pidkit.errors.ConflictError` if it exists."""

    @abc.abstractmethod
    def add_shoulder(self, naan: str, shoulder: str) -> Naan:
        """Add a shoulder to a NAAN (no-op if present).  :class:`~pidkit.errors.NotFoundError` for an
        unknown NAAN."""

    @abc.abstractmethod
    def get_naan(self, naan: str) -> Naan:
        """The NAAN record; :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def list_naans(self) -> list[Naan]:
        """Every NAAN, in string order."""

    # -- minters ------------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_minter(self, name: str, *, naan: str, template: str, seed: int | None = None) -> MinterInfo:
        """Create a named minter on a registered NAAN.  ``template`` is a NOID template such as
        ``fk4.reedeedk`` (its prefix is added as a shoulder of the NAAN); ``seed`` (random if ``None``)
        fixes the order of random (``r``) templates.  :class:`~pidkit.errors.NoidError` for a bad
        template, :class:`~pidkit.errors.ConflictError` for a taken name,
        :class:`~pidkit.errors.NotFoundError` for an unknown NAAN."""

    @abc.abstractmethod
    def get_minter(self, name: str) -> MinterInfo:
        """The minter's state; :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def list_minters(self) -> list[MinterInfo]:
        """Every minter, by name."""

    @abc.abstractmethod
    def mint_batches(self, minter: str, n: int, *, batch_size: int = DEFAULT_BATCH) -> Iterator[list[str]]:
        """Mint ``n`` ids, yielding each committed batch as a list of compact ARKs (``ark:NAAN/id``).

        Each batch is one transaction (counter range reserved + ids recorded as minted); ids that are
        held, minted before or bound are skipped.  Raises :class:`~pidkit.errors.ExhaustedError` when a
        bounded template runs out (that batch is rolled back; earlier batches stay minted)."""

    def mint(self, minter: str, n: int = 1, *, batch_size: int = DEFAULT_BATCH) -> list[str]:
        """Mint ``n`` ids (see :meth:`mint_batches`) and return them as compact ARKs, in minting order."""
        out: list[str] = []
        for batch in self.mint_batches(minter, n, batch_size=batch_size):
            out.extend(batch)
        return out

    @abc.abstractmethod
    def add_hold(self, minter_or_naan: str, *ids: str) -> int:
        """Hold ids so they are never minted: ``minter_or_naan`` is a minter name or a NAAN; each id is
        a blade (``fk4x8d9m2q``) or an ARK under that NAAN.  Returns how many were newly held."""

    @abc.abstractmethod
    def minted_count(self, minter: str | None = None) -> int:
        """How many ids were minted (by ``minter``, or in total)."""

    # -- bindings -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def bind(
        self,
        ark: str,
        target: str | None = None,
        *,
        erc: ErcChange | None = None,
        support: ErcChange | None = None,
        passthrough: bool | None = None,
        status: Status | None = None,
        force: bool = False,
    ) -> Binding:
        """Create or update the binding of ``ark`` (any spelling; stored normalized).

        An update changes only what it names (DESIGN.md, "updates are partial"): an argument left
        ``None`` keeps the stored value, and a new binding gets the default (no target, empty ERC, no
        passthrough, ``public``).  ``target=""`` clears the target (reserved bindings only); ``erc`` and
        ``support`` are an :class:`Erc` (all four elements replaced) or a mapping naming some of
        ``who``/``what``/``when``/``where`` (just those changed; ``""`` clears one).  A public binding
        needs a target.  Updating keeps ``created`` and ``text``.

        The ARK's NAAN must be registered in the store, and an ARK on a shoulder that a minter with a
        NOID ``k`` template mints must carry the right check character; ``force=True`` binds anyway and
        records the override (:meth:`list_overrides`).  :class:`~pidkit.errors.ConflictError` if the ARK
        is tombstoned; :class:`~pidkit.errors.ArkError` for a bad ARK;
        :class:`~pidkit.errors.StoreError` for a bad target or a refused ARK."""

    @abc.abstractmethod
    def bind_id(
        self,
        kind: str,
        value: str,
        target: str | None = None,
        *,
        erc: ErcChange | None = None,
        support: ErcChange | None = None,
        status: Status | None = None,
    ) -> Binding:
        """Create or update the binding of a non-ARK id (``kind`` in :data:`KINDS`, e.g. ``"xarkid"``,
        ``"uuid"``); ``value`` is parsed by its scheme and stored in canonical form.  Partial, as
        :meth:`bind`."""

    @abc.abstractmethod
    def list_overrides(self, ark: str | None = None) -> list[Override]:
        """The bindings made with ``force=True`` (of ``ark``, or all), oldest first, with the rule each
        one overrode."""

    @abc.abstractmethod
    def get_binding(self, ark: str) -> Binding | None:
        """The binding of ``ark`` (any spelling that normalizes to the same ARK), or ``None``."""

    @abc.abstractmethod
    def get_id(self, kind: str, value: str) -> Binding | None:
        """The binding of ``value`` read as ``kind``, or ``None``."""

    @abc.abstractmethod
    def find_ids(self, value: str) -> list[Binding]:
        """Every binding ``value`` names under any kind it parses as (one query), e.g. for ``/id/{value}``."""

    @abc.abstractmethod
    def resolve(self, ark: str) -> Resolution | None:
        """The exact binding of ``ark``, else its longest bound public ancestor that allows suffix
        passthrough with the rest of the (normalized) ARK as suffix, else ``None``.  A tombstoned or
        reserved exact match is returned as is (the resolver shows it, it does not redirect)."""

    def resolve_many(self, arks: Sequence[str]) -> list[Resolution | None]:
        """:meth:`resolve` of each ARK, in order — one query for all of them where the backend can (the
        resolver batches the lookups of concurrent requests through this).  A malformed ARK raises as
        :meth:`resolve` would, for the whole call.

        >>> from pidkit.store import open_store
        >>> s = open_store("sqlite:///:memory:")
        >>> _ = s.add_naan("99999")
        >>> _ = s.bind("ark:99999/fk4x", "https://e.org/x")
        >>> [r and r.location for r in s.resolve_many(["ark:/99999/fk4-x", "ark:99999/fk4y"])]
        ['https://e.org/x', None]
        >>> s.close()
        """
        return [self.resolve(ark) for ark in arks]

    @abc.abstractmethod
    def tombstone(self, ark: str, reason: str) -> Binding:
        """Withdraw ``ark`` for good (also one never bound: it will then never be minted or bound).
        Idempotent for an already tombstoned ARK (the first reason and time stay)."""

    @abc.abstractmethod
    def list_bindings(
        self,
        naan: str | None = None,
        *,
        shoulder: str | None = None,
        kind: str = "ark",
        after: str | None = None,
        limit: int = 100,
    ) -> list[Binding]:
        """Bindings of ``kind`` (optionally under ``naan`` / ``shoulder``) ordered by key, the first
        ``limit`` with key greater than ``after`` (keyset pagination: pass the last key seen)."""

    @abc.abstractmethod
    def export_jsonl(self, fp: IO[str]) -> int:
        """Write every binding as JSON Lines (:meth:`Binding.to_dict`); return the count."""

    @abc.abstractmethod
    def import_jsonl(self, fp: Iterable[str], *, owner: str | None = None) -> ImportReport:
        """Read bindings written by :meth:`export_jsonl` and write them in ONE transaction.  Any bad
        line (not JSON, bad id, bad target, would rebind a tombstone) rejects the whole import with
        :class:`ImportRejectedError` naming every bad line's number — nothing is written.

        ``owner`` (a NAAN; the web API passes its key's) makes the import a tenant's: every non-ARK
        binding written records ``owner`` as its NAAN, and a line that would change a non-ARK binding
        owned by another NAAN — or by none (written by an administrator) — raises
        :class:`NotOwnerError`, nothing written."""

    # -- API keys -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def dump(self, fp: IO[str]) -> Mapping[str, int]:
        """Write everything the store holds to ``fp`` in the dump format (:mod:`pidkit.store.dump`),
        from one consistent snapshot, streamed (memory does not grow with the store); return the row
        count of each table."""

    @abc.abstractmethod
    def restore(self, lines: Iterable[str], *, merge: bool = False) -> RestoreReport:
        """Restore a dump (its lines, header first), all or nothing in one transaction.  The store must
        be empty unless ``merge``; then rows already there are kept as they are (never overwritten) and
        counted as skipped.  A bad line raises :class:`~pidkit.errors.StoreError` naming its number, and
        a dump whose rows do not match its header's counts (cut short) is refused."""

    @abc.abstractmethod
    def create_api_key(
        self, naan: str, shoulder: str | None = None, *, label: str = ""
    ) -> tuple[ApiKey, str]:
        """Create a key scoped to ``naan`` (and ``shoulder``, or all shoulders); return the record and
        the secret ``pk_<keyid>_<random>`` — shown this once, only its SHA-256 hash is stored."""

    @abc.abstractmethod
    def verify_api_key(self, secret: str) -> ApiKey | None:
        """The key for ``secret`` if it exists, matches and is not revoked; else ``None``."""

    @abc.abstractmethod
    def revoke_api_key(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent); :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def list_api_keys(self) -> list[ApiKey]:
        """Every key record (never secrets), by creation time."""
