"""Importers: move an archive's ids from EZID, arklet or a NOID minter into a pidkit store.

Each importer reads its source into pidkit's dump format and the store takes it with its one
all-or-nothing restore in merge mode (:mod:`pidkit.importers.common`): nothing is written if any record
is refused, a row already in the store is never overwritten, and a run after an interruption imports
what is missing.  Every id the old system issued lands in the minted log (or, if it was only held or
queued there, among the holds), so no pidkit minter ever issues it again.  ``docs/migrating.md`` says
what each source's fields become.

>>> from pidkit.store import open_store
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "dl.txt").write_text(":: ark:/99999/fk4gt78tq\\n_status: public\\n_target: http://e.org/x\\n")
>>> with open_store("sqlite:///:memory:") as store:
...     print(run("ezid", d / "dl.txt", store).summary())  # doctest: +ELLIPSIS
ezid from .../dl.txt: 1 imported, 0 skipped, 0 refused, 0 kept as they were
"""

from __future__ import annotations

import os
from typing import Final, Literal, get_args

from ..errors import StoreError
from ..store import Principal, Store
from .common import ImportRefusedError, ImportReport, Outcome, Progress, SourceError

__all__ = ["KINDS", "ImportRefusedError", "ImportReport", "Kind", "Outcome", "SourceError", "run"]

#: The sources ``pidkit import --from`` reads.
Kind = Literal["ezid", "arklet", "noid"]
KINDS: Final[tuple[str, ...]] = get_args(Kind)


def run(
    kind: str,
    source: str | os.PathLike[str],
    store: Store,
    *,
    progress: Progress | None = None,
    drop_extra: bool = False,
    principal: Principal | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import ``source`` of ``kind`` (``ezid``: a batch download file; ``arklet``: a database URL or
    SQLite file; ``noid``: a ``noid.bdb`` file or the ``NOID`` directory holding it) into ``store``.

    Metadata beside the ERC becomes the binding's extra metadata.  ``drop_extra`` imports records
    with elements that still have no place in the store — a name the store's one rule refuses
    (:func:`~pidkit.store.check_extra_name`), a NOID rule-based binding — leaving them out (each
    record's report line names what); without it such records are refused.  All or nothing:
    raises :class:`ImportRefusedError` (with the report) when a record is refused,
    :class:`SourceError` when the source cannot be read.

    ``principal`` is who the history names for the change (the back office passes its signed-in user:
    the restore's ``merge`` row per binding added, and rows for the NAANs, shoulders and minters added);
    without it the merge rows name the local user.  ``dry_run`` writes nothing:
    it returns the report the import would give — refused records included, never raised — with a note
    counting the rows the source maps to (the back office's preview).

    >>> run("dspace", "x", None)  # type: ignore[arg-type]
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: unknown import source (one of ezid, arklet, noid) in 'dspace'
    """
    if kind == "ezid":
        from .ezid import import_ezid

        return import_ezid(source, store, drop_extra=drop_extra, progress=progress, principal=principal,
                           dry_run=dry_run)
    if kind == "arklet":
        from .arklet import import_arklet

        return import_arklet(os.fspath(source), store, progress=progress, principal=principal,
                             dry_run=dry_run)
    if kind == "noid":
        from .noid import import_noid

        return import_noid(source, store, drop_extra=drop_extra, progress=progress, principal=principal,
                           dry_run=dry_run)
    raise StoreError(f"unknown import source (one of {', '.join(KINDS)})", text=kind)
