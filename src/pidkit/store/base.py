"""The store interface: NAANs and shoulders, NOID minters and their state, holds, bindings, API keys.

One abstract class, :class:`Store`; the immutable records it hands out are in
:mod:`pidkit.store.records`, the redirect rules in :mod:`pidkit.store.redirects`.  Two backends implement it
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

>>> from pidkit.store import open_store
>>> with open_store("sqlite:///:memory:") as s:
...     isinstance(s, Store), s.backend
(True, 'sqlite')
"""

from __future__ import annotations

import abc
import datetime as _dt
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING, Final, Literal

from .records import (
    STATUSES,
    ApiKey,
    Binding,
    ErcChange,
    HistoryEntry,
    ImportReport,
    MinterInfo,
    Naan,
    Override,
    Principal,
    Recorded,
    Resolution,
    RestoreReport,
    Scope,
    SessionInfo,
    Status,
    User,
)

if TYPE_CHECKING:
    import datetime as _dt

    from .changes import BindingChange
    from .search import FoundPage, Search

__all__ = ["DEFAULT_BATCH", "IMPORTED", "SETTLE_WAIT", "LookupMode", "Store"]

#: The ``minter`` of a minted-log row written by an import (``import:ezid`` …): the id was issued by
#: the system it came from, not by a pidkit minter (:meth:`Store.check`'s counter rules are for
#: pidkit's own minters).
IMPORTED: Final = "import:"

#: Ids minted per transaction when minting in bulk.
DEFAULT_BATCH: Final = 10_000

#: Seconds :meth:`Store.settled_time` waits by default for the writes in flight (a bind or a mint
#: batch ends well within it; an import or a merge may not).
SETTLE_WAIT: Final = 1.0

#: Where a server runs a store's lookups (:attr:`Store.lookup_mode`).
LookupMode = Literal["inline", "batched", "thread"]
#: :attr:`Store.lookup_mode` by backend name (until each backend class says it itself).
_LOOKUP_MODES: Final[Mapping[str, LookupMode]] = {"sqlite": "inline", "postgresql": "batched"}


class Store(abc.ABC):
    """The store interface; every write is one transaction.  Use as a context manager or call
    :meth:`close`.

    >>> from pidkit.store import Erc, open_store
    >>> with open_store("sqlite:///:memory:") as store:
    ...     _ = store.add_naan("99999", "test", shoulders=["fk4"])
    ...     b = store.bind("ark:/99999/fk4-x1", "https://example.org/x1", erc=Erc(what="X one"))
    ...     store.get_binding("ark:99999/fk4x1") == b
    True
    """

    #: The backend's name (the backends set it; a dump header names it).
    backend: str = "store"
    #: The schema version the store had when it was opened, before the migrations it lacked ran.
    migrated_from: int = 0

    @property
    def lookup_mode(self) -> LookupMode:
        """How a server should run this store's lookups: ``inline`` — cheap and in-process (SQLite: tens
        of µs, less than a hand-off to a thread), run them where the request is; ``batched`` — each
        lookup is a round trip to a server (PostgreSQL), gather concurrent ones into one
        :meth:`resolve_many`; ``thread`` — anything else, run each in a worker thread.  The web layer asks
        this, never which backend it has.

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     s.lookup_mode
        'inline'
        """
        return _LOOKUP_MODES.get(self.backend, "thread")

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
    def add_naan(
        self, naan: str, name: str = "", *, shoulders: Iterable[str] = (), principal: Principal | None = None
    ) -> Naan:
        """Register ``naan`` (a string, e.g. ``"99999"``) with its shoulders.
        :class:`~pidkit.errors.ConflictError` if it exists."""

    @abc.abstractmethod
    def add_shoulder(self, naan: str, shoulder: str, *, principal: Principal | None = None) -> Naan:
        """Add a shoulder to a NAAN (no-op if present).  :class:`~pidkit.errors.NotFoundError` for an
        unknown NAAN."""

    @abc.abstractmethod
    def get_naan(self, naan: str) -> Naan:
        """The NAAN record; :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def list_naans(self) -> list[Naan]:
        """Every NAAN, in string order."""

    def naan_names(self) -> frozenset[str]:
        """The NAANs this store serves, without their shoulders (one read: what a resolver keeps in
        memory to tell a NAAN of its own from a foreign one).

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     _ = s.add_naan("99999", shoulders=["fk4"])
        ...     sorted(s.naan_names())
        ['99999']
        """
        return frozenset(n.naan for n in self.list_naans())

    def bound_naans(self) -> frozenset[str] | None:
        """The NAANs under which this store holds an ARK binding of any status, served or not (one read;
        ``None``: this store cannot say).  The set only grows.  With :meth:`naan_names` and
        :meth:`naans_token`, what lets a resolver answer an ARK of any other NAAN from the NAAN registry
        without reading the store: none of its bindings can match it.

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     _ = s.add_naan("99999")
        ...     _ = s.bind("ark:12345/x", "https://e.org/", force=True)
        ...     sorted(s.naan_names()), sorted(s.bound_naans() or ())
        (['99999'], ['12345'])
        """
        return None

    def naans_token(self) -> Hashable | None:
        """A value that changes whenever :meth:`naan_names` or :meth:`bound_naans` may have changed, as
        the calling thread's next read would see it (it may also change when they did not); cheap enough
        to ask on every request — in memory, or a local pragma, never a round trip.  A copy of the two
        sets read after the token was taken is still exact while the token is the same.  ``None``: this
        store cannot tell (read the sets again, or do without them).

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     s.naans_token() is None  # a private in-memory store: no other connection to watch
        True
        """
        return None

    def files(self) -> tuple[str, ...]:
        """The files this store keeps its data in, as absolute paths — what nothing may be written over
        while it is in use (an export, a dump): none for a store on a server.

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     s.files()
        ()
        """
        return ()

    def changes_token(self) -> Hashable | None:
        """A value that changes whenever anything this store holds may have changed — a binding, a NAAN,
        a hold — as the calling thread's next read would see it; as cheap as :meth:`naans_token`.  An
        answer read after the token was taken is still exact while the token is the same: what lets a
        resolver keep its answers in memory.  ``None``: this store cannot promise that at once (a
        PostgreSQL store hears of other instances' writes only when a notification arrives).

        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     s.changes_token() is None
        True
        """
        return None

    def bindings_token(self) -> Hashable | None:
        """A value that changes once any change to this store's bindings has committed, as soon as this
        store can know of it — at once where :meth:`changes_token` can say (so here, by default), else
        when the change's notification arrives (PostgreSQL: a few milliseconds after the commit).  What a
        watcher that polls (``pidkit edge nginx --watch``) compares: it may see a change a moment late,
        never miss one.  ``None``: this store cannot tell now.

        >>> import tempfile
        >>> from pidkit.store import open_store
        >>> with open_store(f"sqlite:///{tempfile.mkdtemp()}/t.db") as s:
        ...     _ = s.add_naan("99999")
        ...     before = s.bindings_token()
        ...     _ = s.bind("ark:99999/x", "https://e.org/", force=True)
        ...     before != s.bindings_token()
        True
        """
        return self.changes_token()

    # -- minters ------------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_minter(
        self, name: str, *, naan: str, template: str, seed: int | None = None,
        principal: Principal | None = None,
    ) -> MinterInfo:
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
    def mint_batches(
        self, minter: str, n: int, *, batch_size: int = DEFAULT_BATCH, principal: Principal | None = None
    ) -> Iterator[list[str]]:
        """Mint ``n`` ids, yielding each committed batch as a list of compact ARKs (``ark:NAAN/id``).

        Each batch is one transaction (counter range reserved + ids recorded as minted); ids that are
        held, minted before or bound are skipped.  Raises :class:`~pidkit.errors.ExhaustedError` when a
        bounded template runs out (that batch is rolled back; earlier batches stay minted).  Each batch
        writes one history row (``mint``, the minter's counter before and after) naming ``principal``
        (every write method takes one: an API key, a signed-in user; default: this process's
        ``cli:user@host``)."""

    def mint(
        self, minter: str, n: int = 1, *, batch_size: int = DEFAULT_BATCH, principal: Principal | None = None
    ) -> list[str]:
        """Mint ``n`` ids (see :meth:`mint_batches`) and return them as compact ARKs, in minting order."""
        out: list[str] = []
        for batch in self.mint_batches(minter, n, batch_size=batch_size, principal=principal):
            out.extend(batch)
        return out

    @abc.abstractmethod
    def add_hold(self, minter_or_naan: str, *ids: str, principal: Principal | None = None) -> int:
        """Hold ids so they are never minted nor published: ``minter_or_naan`` is a minter name or a NAAN;
        each id is a blade (``fk4x8d9m2q``) or an ARK under that NAAN.  Returns how many were newly held.
        An id bound published (:func:`~pidkit.store.records.published`) was given out and is not held
        (:class:`~pidkit.errors.StoreError`; nothing is held)."""

    @abc.abstractmethod
    def minted_count(self, minter: str | None = None) -> int:
        """How many ids were minted (by ``minter``, or in total)."""

    @abc.abstractmethod
    def minters_of(self, naan: str, ids: Sequence[str]) -> dict[str, str]:
        """Which of ``ids`` (blades) the minted log holds under ``naan``, each with the minter that
        minted it (or the :data:`IMPORTED` label of the system an import brought it from)."""

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
        reason: str | None = None,
        extra: Mapping[str, str | None] | None = None,
        principal: Principal | None = None,
    ) -> Binding:
        """Create or update the binding of ``ark`` (any spelling; stored normalized).

        An update changes only what it names (DESIGN.md, "updates are partial"): an argument left
        ``None`` keeps the stored value, and a new binding gets the default (no target, empty ERC, no
        passthrough, ``public``).  ``target=""`` clears the target (reserved bindings only); ``erc`` and
        ``support`` are an :class:`Erc` (all four elements replaced) or a mapping naming some of
        ``who``/``what``/``when``/``where`` (just those changed; ``""`` clears one).  A public binding
        needs a target.  ``status`` is ``public``, ``reserved`` or ``unavailable`` (withdrawn, reversibly:
        it needs a ``reason``, which any other status drops); ``extra`` sets extra metadata elements
        (:func:`check_extra_name`), ``None`` removing one.  Updating keeps ``created`` and ``text``; an
        update that changes nothing writes nothing.  A held ARK (deleted while reserved, or held from
        minting) is bound only ``reserved``: never public nor unavailable.  Every change writes one
        history row naming ``principal`` (:meth:`history`).

        The ARK's NAAN must be registered in the store, and an ARK on a shoulder that a minter with a
        NOID ``k`` template mints must carry the right check character; ``force=True`` binds anyway and
        records the override (:meth:`list_overrides`).  :class:`~pidkit.errors.ConflictError` if the ARK
        is tombstoned, :class:`~pidkit.store.records.ReservedAgainError` (one) if a published binding
        (public, unavailable) would be made ``reserved`` again; :class:`~pidkit.errors.ArkError` for a
        bad ARK;
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
        reason: str | None = None,
        extra: Mapping[str, str | None] | None = None,
        principal: Principal | None = None,
    ) -> Binding:
        """Create or update the binding of a non-ARK id (``kind`` in :data:`KINDS`, e.g. ``"xarkid"``,
        ``"uuid"``); ``value`` is parsed by its scheme and stored in canonical form.  Partial, as
        :meth:`bind`."""

    @abc.abstractmethod
    def change(
        self, kind: str, value: str, change: BindingChange, *, force: bool = False,
        principal: Principal | None = None, only_new: bool = False, if_version: str | None = None,
    ) -> Binding:
        """Apply a partial change (:class:`~pidkit.store.changes.BindingChange`, e.g. from a JSON merge
        patch) to the binding of ``value`` read as ``kind`` — what :meth:`bind` and :meth:`bind_id` do.
        ``only_new``: create only — :class:`~pidkit.errors.ConflictError` if the id is bound already,
        decided inside the write transaction (two concurrent creates: one wins, the other is refused).
        ``if_version``: change only if the binding is still the one whose
        :func:`~pidkit.store.records.binding_version` that is (decided under the id's lock), else
        :class:`~pidkit.store.records.ChangedMeanwhileError` — an edit made from what a person saw never
        writes over a change made since.
        A change that would make a published binding reserved again is a
        :class:`~pidkit.errors.ConflictError` (:func:`~pidkit.store.records.refuse_reserving_again`,
        decided on the stored row), whatever the caller."""

    @abc.abstractmethod
    def delete(self, kind: str, value: str, *, principal: Principal | None = None) -> Binding:
        """Delete a reserved binding that was never published (EZID: a reserved identifier may be deleted)
        and return it; an ARK stays held, so it is never minted again (nor published).
        :class:`~pidkit.errors.ConflictError` for any other binding (make it ``unavailable``, or
        tombstone it), and for one whose id an ARK qualifying it gives out, bound published (a hold is
        for an id never given out); :class:`~pidkit.errors.NotFoundError` if not bound."""

    @abc.abstractmethod
    def history(self, kind: str, value: str) -> list[HistoryEntry]:
        """The history of an id (``kind`` in :data:`KINDS`, ``value`` any spelling), or of a record of
        kind ``naan``, ``minter`` or ``api_key`` named ``value``, oldest first.  The history is
        append-only: every change writes one row in its own transaction, and nothing changes or deletes
        a row (the database refuses it)."""

    @abc.abstractmethod
    def check(self, *, limit: int = 1000) -> list[str]:
        """The store's integrity problems, one line each (none: ``[]``): a minter's counter not past
        every position in its minted log, minted ids of no minter (but an import's, :data:`IMPORTED`), a
        published binding (public, unavailable, tombstoned) of a held id, a binding reserved again after
        it was published (earlier builds allowed it), an API key hash that is not a SHA-256 hex digest,
        a binding without history, a status without its target or reason, malformed extra metadata."""

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
    def tombstone(self, ark: str, reason: str, *, principal: Principal | None = None) -> Binding:
        """Withdraw ``ark`` for good (also one never bound: it will then never be minted or bound).
        Idempotent for an already tombstoned ARK (the first reason and time stay).  A held ARK was never
        given out, so it is not tombstoned (:class:`~pidkit.errors.StoreError`): it is never minted nor
        published already."""

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
        """Bindings of ``kind`` (optionally under ``naan`` / ``shoulder``) ordered by key in code point
        order (on every backend, whatever a database's collation), the first ``limit`` with key greater
        than ``after`` (keyset pagination: pass the last key seen)."""

    @abc.abstractmethod
    def list_changed(
        self,
        *,
        naan: str | None = None,
        shoulder: str | None = None,
        since: _dt.datetime | None = None,
        until: _dt.datetime | None = None,
        after: tuple[_dt.datetime, str] | None = None,
        statuses: Sequence[str] = STATUSES,
        limit: int = 100,
    ) -> list[Binding]:
        """ARK bindings in the order of their last change: by ``(updated, key)`` (keys in code point
        order, as :meth:`list_bindings`), the first ``limit`` past
        ``after`` (keyset pagination: pass the ``(updated, key)`` of the last one seen — a binding
        changed meanwhile moves past the end, so a walk never skips one), optionally under ``naan`` /
        ``shoulder``, changed in ``since`` … ``until`` (both inclusive), with a status in ``statuses``.
        What an incremental harvester reads (OAI-PMH, :mod:`pidkit.web.oai`).

        >>> import datetime as dt
        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     _ = s.add_naan("99999")
        ...     a = s.bind("ark:99999/b", "https://e.org/b")
        ...     b = s.bind("ark:99999/a", "https://e.org/a")
        ...     first = s.list_changed(limit=1)
        ...     [x.key for x in s.list_changed(after=(first[0].updated, first[0].key))]
        ['ark:99999/a']
        """

    @abc.abstractmethod
    def list_recorded(
        self,
        *,
        naan: str | None = None,
        shoulder: str | None = None,
        since: _dt.datetime | None = None,
        until: _dt.datetime | None = None,
        after: str | None = None,
        statuses: Sequence[str] = STATUSES,
        limit: int = 100,
    ) -> list[Recorded]:
        """ARK bindings in the order this store recorded their last change (their newest history row),
        each with that time (:class:`~pidkit.store.records.Recorded`): the first ``limit`` past the
        position ``after`` (a :attr:`Recorded.position` seen; a binding changed meanwhile moves past the
        end, so a walk never skips one), optionally under ``naan`` / ``shoulder``, recorded in
        ``since`` … ``until`` (both inclusive), with a status in ``statuses``.  What an incremental
        harvester reads (OAI-PMH, :mod:`pidkit.web.oai`): unlike ``updated``, which an import or a merge
        keeps as the source gave it, the recorded time is when the change reached this store.

        >>> import datetime as dt
        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     _ = s.add_naan("99999")
        ...     a = s.bind("ark:99999/b", "https://e.org/b")
        ...     b = s.bind("ark:99999/a", "https://e.org/a")
        ...     first = s.list_recorded(limit=1)
        ...     [x.binding.key for x in s.list_recorded(after=first[0].position)]
        ['ark:99999/a']
        """

    @abc.abstractmethod
    def earliest_recorded(self) -> _dt.datetime | None:
        """A time no ARK binding's recorded change (:meth:`list_recorded`) is earlier than — the first
        change the history records, read in constant time (so not always the earliest of an ARK
        binding's last change, which may be later) — or ``None`` when the history is empty: what
        OAI-PMH's ``earliestDatestamp`` promises."""

    @abc.abstractmethod
    def settled_time(self, wait: float = SETTLE_WAIT) -> _dt.datetime:
        """A time by which this store's changes have settled: every change stamped at or before it has
        committed, so a read begun after this call sees it, and every change not yet stamped will be
        stamped later.  It waits up to ``wait`` seconds for the writes already stamped (or about to be)
        to end, then raises :class:`~pidkit.store.records.WritesInFlightError`.  What an incremental
        harvest's window must end at (OAI-PMH, :mod:`pidkit.web.oai`): a change stamped before the
        harvest's ``responseDate`` but committed after its reads would otherwise be missed by the next
        harvest, which starts from that ``responseDate``.  The time is this machine's clock, as the
        stamps are.

        >>> import datetime as dt
        >>> from pidkit.store import open_store
        >>> with open_store("sqlite:///:memory:") as s:
        ...     _ = s.add_naan("99999")
        ...     b = s.bind("ark:99999/x", "https://e.org/x")
        ...     s.recorded_at(b) <= s.settled_time()
        True
        """

    @abc.abstractmethod
    def recorded_at(self, binding: Binding) -> _dt.datetime | None:
        """When this store recorded the last change of ``binding`` (its time in
        :meth:`list_recorded`), or ``None`` if it has no history."""

    @abc.abstractmethod
    def export_jsonl(self, fp: IO[str]) -> int:
        """Write every binding as JSON Lines (:meth:`Binding.to_dict`); return the count."""

    @abc.abstractmethod
    def import_jsonl(
        self,
        fp: Iterable[str],
        *,
        owner: str | None = None,
        update: bool = False,
        principal: Principal | None = None,
        dry_run: bool = False,
        force: bool = False,
        max_problems: int | None = None,
    ) -> ImportReport:
        """Read bindings written by :meth:`export_jsonl` and write them in ONE transaction.  Any bad
        line (not JSON, bad id, bad target, would rebind a tombstone, a field an export line does not
        have) rejects the whole import with :class:`ImportRejectedError` naming every bad line's
        number — or the first ``max_problems`` of them, and how many there were: what it keeps then
        stays bounded however bad the input — nothing is written.

        A line that creates an ARK binding passes the rule :meth:`bind` applies: its NAAN is
        registered in this store and its NOID check character is right for a ``k`` minter of its
        shoulder; ``force=True`` imports it anyway and records the override (:meth:`list_overrides`).
        (An existing binding updated by a line was admitted when it was made.)

        ``owner`` (a NAAN; the web API passes its key's) makes the import a tenant's: every non-ARK
        binding written records ``owner`` as its NAAN, and a line that would change a non-ARK binding
        owned by another NAAN — or by none (written by an administrator) — raises
        :class:`NotOwnerError`, nothing written.

        ``update`` makes each line a partial change (:func:`pidkit.store.jsonl.parse_update_line`: the id
        and the fields to change, JSON merge patch), applied as :meth:`bind` applies one.  Every binding
        written gets one ``import`` history row.

        ``dry_run`` checks everything an import checks (in its transaction, then rolled back) and
        returns the report of what it would write; nothing is written (the back office's preview)."""

    # -- API keys -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def dump(self, fp: IO[str]) -> Mapping[str, int]:
        """Write everything the store holds to ``fp`` in the dump format (:mod:`pidkit.store.dump`),
        from one consistent snapshot, streamed (memory does not grow with the store); return the row
        count of each table."""

    @abc.abstractmethod
    def restore(
        self, lines: Iterable[str], *, merge: bool = False, principal: Principal | None = None
    ) -> RestoreReport:
        """Restore a dump (its lines, header first), all or nothing in one transaction.  The store must
        be empty unless ``merge``; then rows already there are kept as they are (never overwritten) and
        counted as skipped, and so are the dump's history and overrides of a binding the store has (they
        tell of another binding of the id, in another store; a dump binding one id twice is refused).
        A merge records each binding it adds in the history (a ``merge`` row by ``principal``, after the
        dump's own rows of it): the binding reached this store now, whatever its times say.  A
        restore into an empty store moves a store: it adds no history but an ``adopt`` row to a binding
        the dump gives none (a dump of an older schema, or another tool's).  A bad line raises
        :class:`~pidkit.errors.StoreError` naming its number, and a dump whose rows do not match its
        header's counts (cut short) is refused."""

    @abc.abstractmethod
    def create_api_key(
        self, naan: str, shoulder: str | None = None, *, label: str = "", principal: Principal | None = None,
        owner: str | None = None,
    ) -> tuple[ApiKey, str]:
        """Create a key scoped to ``naan`` (and ``shoulder``, or all shoulders); return the record and
        the secret ``pk_<keyid>_<random>`` — shown this once, only its SHA-256 hash is stored.  ``owner``
        names the signed-in user who creates it (the back office lists and revokes a user's own keys)."""

    @abc.abstractmethod
    def verify_api_key(self, secret: str) -> ApiKey | None:
        """The key for ``secret`` if it exists, matches and is not revoked; else ``None``."""

    @abc.abstractmethod
    def revoke_api_key(self, key_id: str, *, principal: Principal | None = None) -> ApiKey:
        """Revoke a key (idempotent); :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def list_api_keys(self) -> list[ApiKey]:
        """Every key record (never secrets), by creation time."""

    # -- accounts (the back office; implemented in :mod:`pidkit.store.accounts`) ---------------------
    @abc.abstractmethod
    def add_user(
        self, name: str, password: str, *, naan: str, shoulder: str | None = None, admin: bool = False,
        principal: Principal | None = None,
    ) -> User:
        """Create a user scoped to ``naan`` (and ``shoulder``; ``admin``: everything); the password is
        kept only as its Argon2id hash.  :class:`~pidkit.errors.ConflictError` if the name is taken."""

    @abc.abstractmethod
    def get_user(self, name: str) -> User:
        """The user ``name``; :class:`~pidkit.errors.NotFoundError` if there is none."""

    @abc.abstractmethod
    def list_users(self) -> list[User]:
        """Every user, by name."""

    @abc.abstractmethod
    def disable_user(self, name: str, *, principal: Principal | None = None) -> User:
        """Disable a user (idempotent); their sessions end."""

    @abc.abstractmethod
    def enable_user(self, name: str, *, principal: Principal | None = None) -> User:
        """Enable a disabled user again (idempotent).  :class:`~pidkit.errors.NotFoundError` if unknown."""

    @abc.abstractmethod
    def set_user_scope(
        self, name: str, *, naan: str, shoulder: str | None = None, admin: bool = False,
        principal: Principal | None = None,
    ) -> User:
        """Change a user's scope; a change ends their sessions.  :class:`~pidkit.errors.NotFoundError`
        if unknown."""

    @abc.abstractmethod
    def set_password(self, name: str, password: str, *, principal: Principal | None = None) -> User:
        """Set a user's password; their sessions end."""

    @abc.abstractmethod
    def authenticate(self, name: str, password: str, *, address: str) -> User:
        """Check ``name`` and ``password`` (rate limited as :meth:`sign_in`) without opening a session:
        the user, for HTTP Basic authentication (EZID's API)."""

    @abc.abstractmethod
    def sign_in(
        self, name: str, password: str, *, address: str, lifetime: _dt.timedelta = ...,
    ) -> tuple[User, SessionInfo, str]:
        """Open a session for ``name`` with ``password`` from ``address`` (rate limited per account and
        per address); return the user, the session and its token (shown once, for the cookie)."""

    @abc.abstractmethod
    def cookie_key(self) -> bytes:
        """The key that signs the back office's session cookies (made once, kept in the store)."""

    @abc.abstractmethod
    def session(self, token: str) -> tuple[User, SessionInfo] | None:
        """The live session of ``token`` and its user, or ``None``."""

    @abc.abstractmethod
    def end_session(self, token: str) -> None:
        """Revoke the session of ``token`` (sign-out)."""

    @abc.abstractmethod
    def end_sessions(self, name: str) -> int:
        """Revoke every session of user ``name`` (sign out everywhere); return how many."""

    @abc.abstractmethod
    def claim_form(self, name: str, token: str, *, keep: _dt.timedelta = ...) -> str | None:
        """Claim the one-time ``token`` of a form user ``name`` sends: ``None`` the first time, then what
        :meth:`settle_form` recorded (``""`` until it did); the user's tokens older than ``keep`` are
        forgotten."""

    @abc.abstractmethod
    def settle_form(self, name: str, token: str, result: str | None) -> None:
        """Record the result of the form token ``name`` claimed, or forget the token (``None``)."""

    # -- the back office's search (:mod:`pidkit.store.search`) and dashboard (:mod:`.overview`) ------
    @abc.abstractmethod
    def find_bindings(self, scope: Scope, search: Search) -> FoundPage:
        """One page of the ARK bindings ``scope`` allows that ``search`` finds (ARK prefix in any
        spelling, target substring, metadata words, status, date range; sorted; keyset pages), with the
        count of all of them (exact up to :data:`~pidkit.store.search.COUNT_CAP`)."""

    @abc.abstractmethod
    def status_counts(self, naan: str) -> dict[tuple[str | None, str], int]:
        """ARK bindings under ``naan`` counted by ``(shoulder, status)``."""

    @abc.abstractmethod
    def recent_changes(
        self, naan: str, shoulder: str | None = None, *, limit: int = 20
    ) -> list[HistoryEntry]:
        """The latest history rows of ARKs under ``naan`` (and ``shoulder``), newest first."""
