"""What every importer shares: the report, the errors, and the dump an import is written as.

An importer never writes SQL.  It reads a foreign source record by record, decides for each one
(imported, skipped, refused — with the reason), and collects the rows it maps to in a
:class:`DumpBuilder`: NAANs, shoulders, minters, the minted log (every id the old system issued),
holds and bindings.  :func:`apply` then hands the builder's dump (:mod:`pidkit.store.dump`) to the
store's own :meth:`~pidkit.store.Store.restore` in merge mode: one transaction, all or nothing, and a
row already in the store is kept as it is (never overwritten).  That makes every import resumable: a
run that was interrupted wrote nothing, and a second run of a finished import writes nothing new.

If any record is refused, nothing is written: :class:`ImportRefusedError` carries the whole report.
``apply(..., dry_run=True)`` is the preview: the same report (refused records included, bindings
already in the store marked ``kept``) and a note counting the rows the source maps to, with nothing
written.  ``apply(..., principal=...)`` records the change in the history as that principal (the
restore's ``merge`` row for each binding it adds, ``naan.add`` / ``shoulder.add`` / ``minter.create``
rows for what the import adds); without one, the merge rows name the local user (as the CLI's other
changes do) and the NAANs, shoulders and minters added get none.

>>> from pidkit.store import open_store
>>> b = DumpBuilder("example")
>>> b.add_ark("ark:/99999/fk4x1", target="https://example.org/1", where="line 1")
'ark:99999/fk4x1'
>>> with open_store("sqlite:///:memory:") as store:
...     done = (Outcome("line 1", "ark:/99999/fk4x1", "imported"),)
...     report = apply(b, store, ImportReport("example", "memory", done))
...     store.get_binding("ark:99999/fk4x1").target, store.minted_count()
('https://example.org/1', 1)
>>> report.summary()
'example from memory: 1 imported, 0 skipped, 0 refused, 0 kept as they were'
>>> b = DumpBuilder("example")
>>> b.add_ark("ark:/99999/fk4x2", target="https://example.org/2", where="line 1")
'ark:99999/fk4x2'
>>> with open_store("sqlite:///:memory:") as store:
...     done = (Outcome("line 1", "ark:/99999/fk4x2", "imported"),)
...     preview = apply(b, store, ImportReport("example", "memory", done), dry_run=True)
...     store.get_binding("ark:99999/fk4x2"), preview.notes[0][:43]
(None, 'a preview: nothing written; the source maps')
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from ..ark import Ark
from ..errors import ArkError, StoreError
from ..store import Binding, Erc, Principal, Store, check_extra_name, validate_target
from ..store.base import IMPORTED
from ..store.dump import DumpHeader, header_line, row_line
from ..store.keys import blade
from ..store.rows import TABLES, binding_values, history_id, history_json, stored_time

__all__ = [
    "Action",
    "DumpBuilder",
    "ImportRefusedError",
    "ImportReport",
    "Outcome",
    "Progress",
    "SourceError",
    "apply",
    "ark_id",
    "extra_elements",
    "minted_label",
]

#: What became of one record of the source.
Action = Literal["imported", "skipped", "refused", "kept"]

#: ``progress(records_read)``: called as the source is read (the CLI draws its bar with it).
Progress = Callable[[int], None]

_BY_NAME: Final = {t.name: t for t in TABLES}


def minted_label(kind: str) -> str:
    """The ``minter`` column of the minted-log rows an import writes: the ids were issued by the old
    system, not by a pidkit minter (``pidkit check``'s counter rule applies to pidkit's own minters).

    >>> minted_label("noid")
    'import:noid'
    """
    return f"{IMPORTED}{kind}"


class SourceError(StoreError):
    """A source that cannot be read as the format it should be: names the source and the record.

    >>> str(SourceError("no '_id' column", text="dl.csv", line=1))
    "no '_id' column in 'dl.csv' on line 1"
    """


@dataclass(frozen=True, slots=True)
class Outcome:
    """One record's fate: ``where`` it is in the source (``line 12``, ``record 3``, ``ark 12345/x``),
    the ``id`` it names, the ``action`` and why; ``dropped`` names the source elements that have no
    place in the store and were left out (only ever with the importer's explicit consent).

    >>> str(Outcome("line 3", "doi:10.5072/FK2", "skipped", "not an ARK"))
    'line 3: doi:10.5072/FK2 skipped (not an ARK)'
    """

    where: str
    id: str
    action: Action
    reason: str = ""
    dropped: tuple[str, ...] = ()

    def __str__(self) -> str:
        out = f"{self.where}: {self.id} {self.action}"
        if self.reason:
            out += f" ({self.reason})"
        if self.dropped:
            out += f"; dropped: {', '.join(self.dropped)}"
        return out


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did, record by record (:class:`Outcome`), and the rows the store took and kept
    per table (``restored`` / ``kept``, from :class:`~pidkit.store.RestoreReport`).

    >>> r = ImportReport("ezid", "dl.txt", (Outcome("line 1", "ark:/1/x", "imported"),))
    >>> r.count("imported"), r.summary()
    (1, 'ezid from dl.txt: 1 imported, 0 skipped, 0 refused, 0 kept as they were')
    """

    kind: str
    source: str
    outcomes: tuple[Outcome, ...]
    restored: Mapping[str, int] = field(default_factory=dict)
    kept: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def count(self, action: Action) -> int:
        """How many records had ``action``."""
        return sum(1 for o in self.outcomes if o.action == action)

    def by_action(self, action: Action) -> list[Outcome]:
        """The outcomes with ``action``, in source order.

        >>> ImportReport("x", "y", (Outcome("line 1", "a", "kept"),)).by_action("kept")[0].id
        'a'
        """
        return [o for o in self.outcomes if o.action == action]

    def summary(self) -> str:
        """One line: counts per action."""
        return (
            f"{self.kind} from {self.source}: {self.count('imported')} imported, {self.count('skipped')} "
            f"skipped, {self.count('refused')} refused, {self.count('kept')} kept as they were"
        )

    def lines(self) -> list[str]:
        """The report as text: the summary, the notes, then one line per record that was not simply
        imported (skipped, refused, kept, or imported with dropped elements).

        >>> r = ImportReport("x", "y", (Outcome("line 2", "doi:1", "skipped", "not an ARK"),))
        >>> for line in r.lines():
        ...     print(line)
        x from y: 0 imported, 1 skipped, 0 refused, 0 kept as they were
        line 2: doi:1 skipped (not an ARK)
        """
        out = [self.summary(), *self.notes]
        out += [str(o) for o in self.outcomes if o.action != "imported" or o.dropped]
        return out


class ImportRefusedError(StoreError):
    """An import refused as a whole (nothing written) because some records were refused; ``report``
    lists every record and why.

    >>> bad = (Outcome("line 4", "ark:/1/x", "refused", "bad"),)
    >>> e = ImportRefusedError(ImportReport("ezid", "dl.txt", bad))
    >>> str(e)
    "1 record refused, nothing imported; first: line 4: ark:/1/x refused (bad) in 'dl.txt'"
    """

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        refused = report.by_action("refused")
        n = len(refused)
        first = f"; first: {refused[0]}" if refused else ""
        super().__init__(
            f"{n} record{'' if n == 1 else 's'} refused, nothing imported{first}", text=report.source
        )


def extra_elements(elements: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split a record's extra metadata elements into those the store takes (its one name rule,
    :func:`~pidkit.store.check_extra_name`) and those it refuses, each with the rule's reason.

    >>> kept, refused = extra_elements({"dc.title": "T", "erc": "who: x", "my element": "v"})
    >>> kept, sorted(refused)
    ({'dc.title': 'T'}, ['erc', 'my element'])
    """
    kept: dict[str, str] = {}
    refused: dict[str, str] = {}
    for name, value in elements.items():
        try:
            kept[check_extra_name(name)] = value
        except StoreError as exc:
            refused[name] = str(exc)
    return kept, refused


def refused_names(refused: Mapping[str, str]) -> str:
    """Why a record with elements the store refuses is refused (without ``drop_extra``).

    >>> refused_names({"erc": "reserved"})
    'element names the store refuses: erc (reserved); drop_extra / --drop-extra leaves them out'
    """
    said = "; ".join(f"{name} ({why})" for name, why in refused.items())
    return f"element names the store refuses: {said}; drop_extra / --drop-extra leaves them out"


def ark_id(text: str) -> Ark:
    """``text`` as a normalized ARK (draft-kunze-ark-40 §3.2), with or without ``ark:`` and NMA.

    >>> str(ark_id("https://n2t.net/ark:/99999/fk4-x1")), str(ark_id("99999/tst50f"))
    ('ark:99999/fk4x1', 'ark:99999/tst50f')
    """
    if "ark:" not in text.lower():
        text = f"ark:{text}"
    return Ark.parse(text).normalize()


def _blade(naan: str, key: str) -> str | None:
    """The mintable id of a normalized ARK (its Name when it has no qualifiers: the store's rule,
    :func:`pidkit.store.keys.blade`), or ``None``.

    >>> _blade("99999", "ark:99999/fk4x1"), _blade("99999", "ark:99999/fk4x1/c")
    ('fk4x1', None)
    """
    try:
        return blade(naan, key)
    except StoreError:
        return None


class DumpBuilder:
    """The rows an import maps its source to, written as a dump for
    :meth:`~pidkit.store.Store.restore`.  Every ARK added is also recorded in the minted log (under
    :func:`minted_label`) when it is a mintable id, so no minter ever issues it again.

    >>> b = DumpBuilder("ezid")
    >>> b.add_ark("ark:/99999/fk4x1", target=None, status="reserved", where="line 1")
    'ark:99999/fk4x1'
    >>> b.add_ark("ark:99999/fk4-x1", target=None, status="reserved", where="line 9")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: ark:99999/fk4x1 is in the source twice (first at line 1) in 'ark:99999/fk4-x1'
    """

    def __init__(self, kind: str, *, now: _dt.datetime | None = None) -> None:
        self.kind = kind
        self.now = now or _dt.datetime.now(_dt.UTC)
        self._stamp = stored_time(self.now)
        self.rows: dict[str, dict[tuple[Any, ...], tuple[Any, ...]]] = {t.name: {} for t in TABLES}
        self._where: dict[str, str] = {}
        self._position = 0

    # -- rows ----------------------------------------------------------------------------------------
    def _put(self, table: str, values: tuple[Any, ...]) -> bool:
        t = _BY_NAME[table]
        key = tuple(values[t.columns.index(c)] for c in t.order)
        if key in self.rows[table]:
            return False
        self.rows[table][key] = values
        return True

    def add_naan(self, naan: str, name: str = "") -> None:
        """A NAAN (kept as the store has it if it is there already)."""
        self._put("naans", (naan, name, self._stamp))

    def add_shoulder(self, naan: str, shoulder: str) -> None:
        """A shoulder of ``naan`` (its NAAN is added too)."""
        self.add_naan(naan)
        self._put("shoulders", (naan, shoulder, self._stamp))

    def add_minter(self, name: str, *, naan: str, template: str, seed: int, counter: int) -> None:
        """A pidkit minter with its state; its NAAN and the template's shoulder are added too."""
        from .. import noid

        prefix = noid.Template.parse(template).prefix
        self.add_naan(naan)
        if prefix:
            self.add_shoulder(naan, prefix)
        self._put("minters", (name, naan, template, seed, counter, self._stamp))

    def add_minted(self, naan: str, blade: str) -> None:
        """An id the old system issued: in the minted log, so no minter issues it again."""
        self.add_naan(naan)
        if self._put("minted", (naan, blade, minted_label(self.kind), self._position, self._stamp)):
            self._position += 1

    def add_hold(self, naan: str, blade: str) -> None:
        """An id never to be minted (held, or queued, in the old system)."""
        self.add_naan(naan)
        self._put("holds", (naan, blade, self._stamp))

    def add_ark(
        self,
        text: str,
        *,
        target: str | None,
        where: str,
        erc: Erc | None = None,
        support: Erc | None = None,
        status: str = "public",
        reason: str | None = None,
        extra: Mapping[str, str] | None = None,
        created: _dt.datetime | None = None,
        updated: _dt.datetime | None = None,
    ) -> str:
        """The binding of the ARK ``text`` (any spelling; checked and normalized as the store does),
        its NAAN and shoulder, and its minted-log row.  Returns the binding's key.  ``reason`` is an
        ``unavailable`` binding's (required there), ``extra`` its extra metadata elements.  Raises
        :class:`~pidkit.errors.StoreError` (or :class:`~pidkit.errors.ArkError`) naming ``text`` for
        anything the store would refuse: a bad ARK or target, a public binding without a target, an
        unavailable one without a reason, an extra element name the store refuses
        (:func:`~pidkit.store.check_extra_name`), an ARK the source holds twice."""
        ark = ark_id(text)
        key = str(ark)
        if target is not None:
            validate_target(target)
        if status == "public" and not target:
            raise StoreError("a public binding needs a target URL", text=text)
        if status == "unavailable" and not reason:
            raise StoreError("an unavailable binding needs a reason", text=text)
        pairs = tuple(sorted((check_extra_name(name), value) for name, value in (extra or {}).items()))
        naan, shoulder = str(ark.naan), ark.shoulder or None
        created = created or self.now
        binding = Binding(
            "ark", key, text, target, erc or Erc(), support or Erc(), False, status, naan, shoulder,
            created=created, updated=updated or created, reason=reason if status == "unavailable" else None,
            extra=pairs,
        )  # fmt: skip
        values = binding_values(binding)  # the store's own text checks, naming the column
        if key in self._where:
            raise StoreError(f"{key} is in the source twice (first at {self._where[key]})", text=text)
        self._where[key] = where
        self._put("bindings", values)
        if shoulder:
            self.add_shoulder(naan, shoulder)
        else:
            self.add_naan(naan)
        minted = _blade(naan, key)
        if minted is not None:
            self.add_minted(naan, minted)
        return key

    def add_history(
        self, principal: Principal, operation: str, kind: str, key: str, after: Mapping[str, Any] | str
    ) -> None:
        """A history row: ``principal`` made the change ``operation`` to ``kind`` ``key`` (created: no
        ``before``; ``after`` as fields, or as the JSON text the store writes), at the import's time."""
        text = after if isinstance(after, str) else history_json(after)
        self._put("history", (history_id(), self._stamp, str(principal), operation, kind, key, None, text))

    def binding_keys(self) -> list[str]:
        """Keys of the bindings collected, in the order added."""
        return [k[1] for k in self.rows["bindings"]]

    def binding(self, key: str) -> tuple[Any, ...]:
        """The ``bindings`` row collected for ``key``."""
        return self.rows["bindings"][("ark", key)]

    # -- the dump ------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {name: len(rows) for name, rows in self.rows.items()}

    def lines(self, schema: int) -> Iterator[str]:
        """The dump: its header (``backend`` ``import:KIND``), then every table's rows in order."""
        yield header_line(DumpHeader(minted_label(self.kind), schema, self.counts()))
        for table in TABLES:
            for key in sorted(self.rows[table.name], key=_sort_key):
                yield row_line(table, self.rows[table.name][key])


def _sort_key(key: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(str(k) for k in key)


def _same_binding(stored: Binding, row: tuple[Any, ...]) -> bool:
    """Whether the store's binding says what the source's row says (times aside)."""
    mine = binding_values(stored)
    return mine[:-2] == row[:-2]


def apply(
    builder: DumpBuilder,
    store: Store,
    report: ImportReport,
    *,
    principal: Principal | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Write what ``builder`` collected into ``store`` (one :meth:`~pidkit.store.Store.restore` in
    merge mode: all or nothing, never overwriting) and return ``report`` completed: imported bindings
    already in the store become ``kept`` (with what differs), and the per-table counts are filled in.
    A report with refused records writes nothing and raises :class:`ImportRefusedError`.

    ``principal`` names who makes the change in the history (see the module text; ``None``: the local
    user, on the restore's ``merge`` rows alone).  ``dry_run`` writes nothing and raises nothing for
    refused records: it returns the report as it stands (refused records included, bindings already in
    the store ``kept``) with a note counting the rows the source maps to — the preview of an import.
    Only the restore itself can tell what the store refuses beyond that (a held id bound public): the
    import then raises, writing nothing."""
    if report.count("refused") and not dry_run:
        raise ImportRefusedError(report)
    before: dict[str, Binding] = {}
    for key in builder.binding_keys():
        found = store.get_binding(key)
        if found is not None:
            before[key] = found
    outcomes: list[Outcome] = []
    for o in report.outcomes:
        found_key = _key_of(o)
        if o.action == "imported" and found_key is not None and found_key in before:
            key = found_key
            same = _same_binding(before[key], builder.binding(key))
            why = "already in the store" + ("" if same else ", differing from the source: not overwritten")
            o = replace(o, action="kept", reason=why)
        outcomes.append(o)
    twice = _issued_twice(builder, store)
    if twice:
        report = replace(report, notes=(*report.notes, twice))
    if dry_run:
        return replace(report, outcomes=tuple(outcomes), notes=(*report.notes, _preview_note(builder)))
    if principal is not None:
        _history(builder, store, principal)
    try:
        result = store.restore(builder.lines(store.schema_version()), merge=True, principal=principal)
    except StoreError as exc:  # its line is one of the dump made here, not of the source: not named
        if exc.line is None:
            raise
        raise StoreError(f"the store refused the import, nothing was written: {exc.message}",
                         text=exc.text, position=exc.position) from None  # fmt: skip
    return replace(report, outcomes=tuple(outcomes), restored=result.restored, kept=result.skipped)


#: How many ids given out twice a note names (it counts them all).
_NAMED_TWICE: Final = 10


def _issued_twice(builder: DumpBuilder, store: Store) -> str | None:
    """A note naming the ids the source issued that a minter of this store minted too — each was given
    out by both systems before this import, which keeps it once in the minted log and cannot undo that
    — or ``None``.  (Ids an earlier import brought are not counted: a rerun finds its own.)"""
    by_naan: dict[str, list[str]] = {}
    for naan, ident, *_ in builder.rows["minted"].values():
        by_naan.setdefault(naan, []).append(ident)
    twice = sorted(
        f"ark:{naan}/{ident} ({minter})"
        for naan, ids in by_naan.items()
        for ident, minter in store.minters_of(naan, ids).items()
        if not minter.startswith(IMPORTED)
    )
    if not twice:
        return None
    named = ", ".join(twice[:_NAMED_TWICE]) + (", …" if len(twice) > _NAMED_TWICE else "")
    return (f"given out twice: {plural(len(twice), 'id')} issued by the source and minted here too, by "
            f"this store's minters, before this import: {named}")  # fmt: skip


#: How a preview names the tables a source maps to.
_TABLE_WORDS: Final = {"naans": "NAAN", "shoulders": "shoulder", "minters": "minter",
                       "minted": "minted-log row", "holds": "hold", "bindings": "binding"}  # fmt: skip


def _preview_note(builder: DumpBuilder) -> str:
    """What a dry run says it would merge.

    >>> _preview_note(DumpBuilder("x")).split("; ")[1][:46]
    'the source maps to 0 NAANs, 0 shoulders, 0 min'
    """
    counts = builder.counts()
    said = ", ".join(plural(counts[table], word) for table, word in _TABLE_WORDS.items())
    kept = "a row already in the store is kept as it is"
    return f"a preview: nothing written; the source maps to {said} ({kept})"


def _history(builder: DumpBuilder, store: Store, principal: Principal) -> None:
    """Add to ``builder`` the history rows naming ``principal``: ``naan.add`` / ``shoulder.add`` /
    ``minter.create`` rows for each NAAN, shoulder and minter the store does not have — the rows the
    store's own operations write.  (Each binding added gets the merge's own row, by the same principal:
    :meth:`~pidkit.store.Store.restore`.  The minted log and holds get none, as a restore's do not.
    A ``naan.add``, ``shoulder.add`` or ``minter.create`` row may name a change made between this look
    and the restore by someone else: a race of the same order as two people adding one NAAN at once.)"""
    naans = {n.naan: set(n.shoulders) for n in store.list_naans()}
    for naan, name, _created in builder.rows["naans"].values():
        if naan not in naans:
            builder.add_history(principal, "naan.add", "naan", naan, {"name": name})
    for naan, shoulder, _created in builder.rows["shoulders"].values():
        if shoulder not in naans.get(naan, set()):
            builder.add_history(principal, "shoulder.add", "naan", naan, {"shoulder": shoulder})
    minters = {m.name for m in store.list_minters()}
    for name, naan, template, seed, counter, _created in builder.rows["minters"].values():
        if name not in minters:
            after = {"naan": naan, "template": template, "seed": seed, "counter": counter}
            builder.add_history(principal, "minter.create", "minter", name, after)


def _key_of(outcome: Outcome) -> str | None:
    try:
        return str(ark_id(outcome.id))
    except ArkError:
        return None


def source_name(source: str | os.PathLike[str]) -> str:
    """How a report and an error name a source (a URL's password is never shown).

    >>> source_name("postgresql://u:pw@h/db")
    'postgresql://u:***@h/db'
    """
    from ..store import redact_url

    return redact_url(os.fspath(source))


def progress_every(progress: Progress | None, n: int, every: int = 1000, *, last: bool = False) -> None:
    """Call ``progress(n)`` every ``every`` records and for the ``last`` one (never without a callback).

    >>> seen = []
    >>> for n in range(1, 2502):
    ...     progress_every(seen.append, n, last=n == 2501)
    >>> seen
    [1000, 2000, 2501]
    """
    if progress is not None and (last or n % every == 0):
        progress(n)


def plural(n: int, word: str) -> str:
    """``n word`` or ``n words``.

    >>> plural(1, "record"), plural(2, "record")
    ('1 record', '2 records')
    """
    return f"{n} {word}{'' if n == 1 else 's'}"


def note_dropped(outcomes: Sequence[Outcome]) -> tuple[str, ...]:
    """A note counting the records imported without some of their elements (the names dropped).

    >>> note_dropped([Outcome("l1", "a", "imported", dropped=("dc.title",))])
    ('1 record imported without elements that have no place in the store: dc.title',)
    """
    dropped = [o for o in outcomes if o.dropped]
    if not dropped:
        return ()
    names = sorted({n for o in dropped for n in o.dropped})
    return (
        f"{plural(len(dropped), 'record')} imported without elements that have no place in the store: "
        + ", ".join(names),
    )
