"""Import an EZID batch download (``anvl``, ``csv`` or ``xml``; plain, gzip or ZIP) — EZID API v2
documentation, "Batch download" and "Internal metadata".

How each element of a record is carried (decided once, here):

* ``_target`` → the binding's target; ``_created`` / ``_updated`` (Unix seconds, or ISO 8601 with
  ``convertTimestamps=yes``) → its times.
* ``_status``: ``public`` → public, ``reserved`` → reserved, ``unavailable | reason`` → unavailable
  with that reason (EZID's meaning: withdrawn, reversible; an ``unavailable`` without a reason gets
  :data:`NO_REASON`, as the store keeps a reason with every withdrawal).  Never tombstoned.
* ``erc.who`` / ``erc.what`` / ``erc.when`` / ``erc.where`` and the whole-ERC element ``erc`` (one
  ANVL document) → the ERC (``erc-support.*`` → the commitment's ERC); a record whose ``erc`` and
  ``erc.*`` disagree is refused.
* ``_profile`` / ``_export`` → kept, as the extra elements ``ezid.profile`` / ``ezid.export``.
* ``_owner`` / ``_ownergroup`` → kept, as the extra elements ``ezid.owner`` / ``ezid.ownergroup``:
  EZID's API below ``/ezid`` then answers the imported id's ``_owner`` as EZID did.

The element names, the ``_status`` reading and the places kept are :mod:`pidkit.store.ezid`'s — the
mapping EZID's API (:mod:`pidkit.web.ezid`) speaks too.

* Every other citation element (``dc.*``, ``datacite``, ``datacite.*``, ``crossref``, an application's
  own) → the binding's extra metadata, under its EZID name.  The store's one name rule
  (:func:`~pidkit.store.check_extra_name`) decides: an element it refuses (a name with a space …)
  makes the record **refused**, the report naming the element and the rule, unless the import is told
  ``drop_extra=True``; then the record's report line names the elements left out.
* EZID's other administrative elements (``_datacenter``, ``_crossref``, ``_shadowedby``,
  ``_shadows``, ``_coowners``, …) and the CSV-only derived columns (``_mapped*``) are not the record's
  metadata and have no place here: they are left out and named on the record's report line.
* Identifiers that are not ARKs (DOIs, UUIDs — EZID hosts them, pidkit's bindings of ``doi:`` do not
  exist) are **skipped**, each one on the report with the reason, and counted.

Every imported ARK is written to the minted log too, so a minter created on its shoulder later never
issues it (:mod:`pidkit.importers.common`).

>>> read_anvl(["::  ark:/99999/fk4x", "erc.what: A %25 B%0Aline 2", ""])[0].elements
{'erc.what': 'A % B\\nline 2'}
"""

from __future__ import annotations

import csv
import datetime as _dt
import gzip
import io
import os
import xml.etree.ElementTree as ET
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import IO, Any, Final

from ..anvl import ezid_lines, ezid_unescape
from ..errors import PidkitError
from ..store import Binding, Principal, Store
from ..store.ezid import ERC_NAMES, IMPORTED, KEPT, NO_REASON, SUPPORT_NAMES, WHOLE_ERC, erc_of, read_status
from ..store.rows import binding_from_row
from .common import (
    DumpBuilder,
    ImportReport,
    Outcome,
    Progress,
    SourceError,
    apply,
    ark_id,
    extra_elements,
    note_dropped,
    plural,
    progress_every,
    refused_names,
    source_name,
)

__all__ = [
    "EzidRecord",
    "import_ezid",
    "read_anvl",
    "read_csv",
    "read_download",
    "read_download_bytes",
    "read_xml",
    "unescape",
    "upload_bindings",
]

#: The internal elements the store has a place for.
_CARRIED: Final = frozenset({"_id", "_target", "_status", "_created", "_updated"})
_ISO: Final = "%Y-%m-%dT%H:%M:%SZ"



@dataclass(frozen=True, slots=True)
class EzidRecord:
    """One identifier of a download: ``where`` it is (``line N`` / ``row N`` / ``record N``), the
    identifier as EZID wrote it, and its elements (``_target``, ``erc.who``, …) in order."""

    where: str
    identifier: str
    elements: Mapping[str, str]


#: Undo EZID's ANVL %-encoding (``%XX``): :func:`pidkit.anvl.ezid_unescape`, the one reader of it.
unescape = ezid_unescape


# -- readers ------------------------------------------------------------------------------------------
def read_anvl(lines: Iterable[str], source: str = "<anvl>") -> list[EzidRecord]:
    """Records of the ``anvl`` format: a ``:: identifier`` header line, then ``name: value`` lines
    (%-encoded), blocks separated by blank lines.

    >>> [r.identifier for r in read_anvl([":: ark:/1/a", "_status: public", "", ":: ark:/1/b"])]
    ['ark:/1/a', 'ark:/1/b']
    >>> read_anvl(["_status: public"], "dl.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.importers.common.SourceError: an element before the first ':: identifier' line in 'dl.txt' on...
    """
    out: list[EzidRecord] = []
    current: tuple[str, str, dict[str, str]] | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("::"):
            if current is not None:
                out.append(EzidRecord(*current))
            current = (f"line {number}", unescape(line[2:].strip()), {})
            continue
        if current is None:
            raise SourceError("an element before the first ':: identifier' line", text=source, line=number)
        name, colon, value = line.partition(":")
        if not colon:
            raise SourceError("not an ANVL 'name: value' line", text=source, line=number)
        name = unescape(name.strip())
        if why := _twice(current[2], name):
            raise SourceError(why, text=source, line=number)
        current[2][name] = unescape(value.strip())
    if current is not None:
        out.append(EzidRecord(*current))
    return out


def _twice(elements: Mapping[str, str], name: str) -> str | None:
    """Why ``name`` cannot be added to a record's ``elements``: it is there already (EZID keeps one value
    per name, so which one would be the record's is not for an importer to guess).

    >>> _twice({"dc.title": "A"}, "dc.title"), _twice({}, "dc.title")
    ("the element 'dc.title' twice in one record", None)
    """
    return f"the element {name!r} twice in one record" if name in elements else None


def read_csv(text: str, source: str = "<csv>") -> list[EzidRecord]:
    """Records of the ``csv`` format: a header row naming the columns (``_id`` required), one row per
    identifier; an empty cell is an element EZID did not have.

    >>> read_csv("_id,_owner,erc.when\\nark:/99999/fk4gt78tq,apitest,1922\\n")[0].elements
    {'_owner': 'apitest', 'erc.when': '1922'}
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return _csv_records(reader, source)
    except csv.Error as exc:  # e.g. a cell longer than the csv module's field limit
        raise SourceError(f"not CSV ({exc})", text=source, line=reader.line_num) from None


def _csv_records(reader: Any, source: str) -> list[EzidRecord]:
    header = next(reader, None)
    if header is None or "_id" not in header:
        raise SourceError("a CSV download needs an '_id' column", text=source, line=1)
    if len(set(header)) != len(header):
        raise SourceError("a column is named twice in the header", text=source, line=1)
    out: list[EzidRecord] = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            where = f"has {len(row)} cells for {len(header)} columns"
            raise SourceError(f"row {where}", text=source, line=reader.line_num)
        cells = dict(zip(header, row, strict=True))
        identifier = cells.pop("_id").strip()
        out.append(EzidRecord(f"line {reader.line_num}", identifier, {k: v for k, v in cells.items() if v}))
    return out


def read_xml(data: bytes, source: str = "<xml>") -> list[EzidRecord]:
    """Records of the ``xml`` format: ``<records><record identifier="…"><element name="…">value``;
    an element holding XML (``datacite``, ``crossref``) keeps that XML as its value.

    >>> x = (b'<records><record identifier="ark:/1/a"><element name="_status">public</element>'
    ...      b'</record></records>')
    >>> read_xml(x)[0].elements
    {'_status': 'public'}
    """
    try:
        # the user's own download; expat >= 2.4.1 refuses entity expansion bombs, fetches no external entity
        root = ET.fromstring(data)  # noqa: S314
    except ET.ParseError as exc:
        line, _column = exc.position
        raise SourceError(f"not XML ({exc.msg})", text=source, line=line) from None
    if root.tag != "records":
        raise SourceError(f"the root element is <{root.tag}>, not <records>", text=source)
    out: list[EzidRecord] = []
    for number, record in enumerate(root, 1):
        identifier = record.get("identifier")
        if record.tag != "record" or identifier is None:
            raise SourceError(f"record {number}: not a <record identifier=…> element", text=source)
        elements: dict[str, str] = {}
        for element in record:
            name = element.get("name")
            if element.tag != "element" or name is None:
                raise SourceError(f"record {number}: not an <element name=…> element", text=source)
            if len(element):
                value = "".join(ET.tostring(child, encoding="unicode") for child in element).strip()
            else:
                value = (element.text or "").strip()
            if why := _twice(elements, name):
                raise SourceError(f"record {number}: {why}", text=source)
            elements[name] = value
        out.append(EzidRecord(f"record {number}", identifier.strip(), elements))
    return out


def _decompress(data: bytes, source: str, limit: int | None = None) -> bytes:
    """``data`` unpacked if it is gzip or a one-file ZIP; ``limit``: the most bytes it may unpack to
    (a small upload can expand to gigabytes), ``None`` for no limit.

    >>> _decompress(gzip.compress(b"x" * 100), "dl.txt.gz", limit=10)
    Traceback (most recent call last):
    ...
    pidkit.importers.common.SourceError: the download unpacks to more than 10 bytes in 'dl.txt.gz'
    """

    def capped(f: IO[bytes] | gzip.GzipFile) -> bytes:
        out = f.read() if limit is None else f.read(limit + 1)
        if limit is not None and len(out) > limit:
            raise SourceError(f"the download unpacks to more than {limit:,} bytes", text=source)
        return out

    broken = (OSError, EOFError, zlib.error, RuntimeError, NotImplementedError, zipfile.BadZipFile)
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                return capped(g)
        except broken as exc:
            raise SourceError(f"a broken gzip file ({exc})", text=source) from None
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                files = [i for i in archive.infolist() if not i.is_dir()]
                if len(files) != 1:
                    raise SourceError(f"a ZIP download holds one file, this one {len(files)}", text=source)
                with archive.open(files[0]) as f:
                    return capped(f)
        except broken as exc:  # encrypted (RuntimeError), an unknown method (NotImplementedError), ...
            raise SourceError(f"a broken or unreadable ZIP file ({exc})", text=source) from None
    return data


def read_download(path: str | os.PathLike[str]) -> list[EzidRecord]:
    """Every record of a download file, whatever its compression (gzip, ZIP or none) and format: named
    by the file's extension under the compression's, as EZID names its downloads (``.txt`` ANVL,
    ``.csv``, ``.xml``), else found from the content (``<`` XML, ``::`` ANVL, else CSV)."""
    source = source_name(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise SourceError(f"cannot read the download: {exc.strerror}", text=source) from None
    return read_download_bytes(raw, os.fspath(path), source)


def read_download_bytes(raw: bytes, name: str, source: str | None = None, *,
                        limit: int | None = None) -> list[EzidRecord]:
    """Every record of a download's bytes (:func:`read_download`; ``name``, the file's name, tells the
    format as its extension does, ``source`` names it in messages, ``limit`` bounds what a compressed
    download may unpack to).

    >>> data = b"_id,_target\\r\\nark:/99999/fk4x,https://e.org/\\r\\n"
    >>> [r.identifier for r in read_download_bytes(data, "dl.csv")]
    ['ark:/99999/fk4x']
    """
    source = source or name
    data = _decompress(raw, source, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 (byte {exc.start + 1})", text=source) from None
    kind = _format(name, text)
    if kind == "xml":
        return read_xml(data, source)
    if kind == "anvl":
        return read_anvl(ezid_lines(text), source)
    return read_csv(text, source)


def _format(name: str, text: str) -> str:
    """``anvl``, ``csv`` or ``xml``: from the file name, else from the content.

    >>> _format("da543b91a0.xml.gz", ""), _format("9c02f494ab.txt.gz", ""), _format("x", "_id,_target")
    ('xml', 'anvl', 'csv')
    """
    stem = name.lower()
    for suffix in (".gz", ".zip"):
        stem = stem.removesuffix(suffix)
    for suffix, kind in ((".txt", "anvl"), (".anvl", "anvl"), (".csv", "csv"), (".xml", "xml")):
        if stem.endswith(suffix):
            return kind
    head = text.lstrip()
    return "xml" if head.startswith("<") else "anvl" if head.startswith("::") else "csv"


# -- records → bindings -------------------------------------------------------------------------------
def _time(value: str | None, name: str) -> _dt.datetime | None:
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # (str.isdigit alone takes "²", which int() does not)
        try:
            return _dt.datetime.fromtimestamp(int(value), _dt.UTC)
        except (OverflowError, OSError, ValueError):  # past year 9999, or past what the platform has
            raise PidkitError(f"{name} is out of range (Unix seconds up to year 9999)", text=value) from None
    try:
        return _dt.datetime.strptime(value, _ISO).replace(tzinfo=_dt.UTC)
    except ValueError:
        raise PidkitError(f"{name} is neither Unix seconds nor YYYY-MM-DDTHH:MM:SSZ", text=value) from None


def _scheme(identifier: str) -> str:
    return identifier.partition(":")[0].lower() if ":" in identifier else ""


def _record(b: DumpBuilder, rec: EzidRecord, *, drop_extra: bool) -> Outcome:
    """Add one record to ``b``; its outcome."""
    ident, el = rec.identifier, rec.elements
    if _scheme(ident) != "ark":
        kind = _scheme(ident) or "no scheme"
        return Outcome(rec.where, ident, "skipped", f"not an ARK ({kind}): pidkit imports ARKs only")
    mapped = {*_CARRIED, *ERC_NAMES, *SUPPORT_NAMES, WHOLE_ERC}
    citation = {n: v for n, v in el.items() if n not in mapped and not n.startswith("_")}
    extra, refused = extra_elements(citation)
    kept = {**KEPT, **IMPORTED}
    reserved = {v: n for n, v in kept.items()}
    if own := sorted(n for n in el if n in reserved):  # the name pidkit keeps one of EZID's elements as
        name = own[0]
        return Outcome(rec.where, ident, "refused",
                       f"an element of its own named {name}, the name EZID's {reserved[name]} is kept under")
    extra.update({kept[n]: v.strip() for n, v in el.items() if n in kept and v.strip()})
    if refused and not drop_extra:
        return Outcome(rec.where, ident, "refused", refused_names(refused))
    admin = [n for n in el if n.startswith("_") and n not in _CARRIED and n not in kept]
    status_text = el.get("_status", "public").strip()
    try:
        status, reason = read_status(status_text)
    except PidkitError:
        return Outcome(rec.where, ident, "refused", f"unknown _status {status_text!r}")
    try:
        created = _time(el.get("_created"), "_created")
        updated = _time(el.get("_updated"), "_updated")
        erc = erc_of(el)
        support = erc_of({f"erc.{SUPPORT_NAMES[n]}": v for n, v in el.items() if n in SUPPORT_NAMES})
        b.add_ark(
            ident, target=el.get("_target") or None, where=rec.where, erc=erc, support=support, status=status,
            reason=(reason or NO_REASON) if status == "unavailable" else None, extra=extra,
            created=created, updated=updated or created,
        )  # fmt: skip
    except PidkitError as exc:
        return Outcome(rec.where, ident, "refused", str(exc))
    return Outcome(rec.where, ident, "imported", dropped=(*admin, *refused))


def records_report(
    records: Iterable[EzidRecord],
    builder: DumpBuilder,
    source: str,
    *,
    drop_extra: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Map ``records`` into ``builder``; the report (not yet applied).

    >>> b = DumpBuilder("ezid")
    >>> recs = [EzidRecord("line 1", "doi:10.5072/FK2", {}), EzidRecord("line 3", "ark:/99999/fk4x",
    ...         {"_status": "reserved", "dc.title": "T", "dc title": "x"})]
    >>> for o in records_report(recs, b, "dl", drop_extra=True).outcomes:
    ...     print(o)
    line 1: doi:10.5072/FK2 skipped (not an ARK (doi): pidkit imports ARKs only)
    line 3: ark:/99999/fk4x imported; dropped: dc title
    """
    outcomes: list[Outcome] = []
    records = list(records)
    for n, rec in enumerate(records, 1):
        outcomes.append(_record(builder, rec, drop_extra=drop_extra))
        progress_every(progress, n, last=n == len(records))
    skipped = [o for o in outcomes if o.action == "skipped"]
    notes = note_dropped(outcomes)
    if skipped:
        notes = (f"{plural(len(skipped), 'identifier')} skipped: not ARKs", *notes)
    return ImportReport("ezid", source, tuple(outcomes), notes=notes)


def import_ezid(
    path: str | os.PathLike[str],
    store: Store,
    *,
    drop_extra: bool = False,
    progress: Progress | None = None,
    principal: Principal | None = None,
    dry_run: bool = False,
) -> ImportReport:
    """Import an EZID batch download file into ``store`` (all or nothing; see the module text for
    what goes where).  Raises :class:`~pidkit.importers.common.ImportRefusedError` (nothing written)
    if a record is refused, :class:`~pidkit.importers.common.SourceError` for an unreadable file.
    ``principal`` and ``dry_run``: as :func:`~pidkit.importers.common.apply` takes them."""
    records = read_download(path)
    builder = DumpBuilder("ezid")
    report = records_report(
        records, builder, source_name(path), drop_extra=drop_extra, progress=progress
    )
    return apply(builder, store, report, principal=principal, dry_run=dry_run)


def upload_bindings(
    raw: bytes, name: str, *, drop_extra: bool = False, limit: int | None = None
) -> tuple[list[tuple[str, Binding]], list[Outcome]]:
    """A download's bytes (``name``: the file's name) as the bindings an import writes, each with
    where it is in the download (``line 3``, ``row 2``, ``record 5``), and the outcome of every record
    (skipped and refused ones included) — mapped as :func:`import_ezid` maps them, for an import that
    goes through :meth:`~pidkit.store.Store.import_jsonl` (the back office's, recorded as its user).

    >>> found, outcomes = upload_bindings(b":: ark:/99999/fk4x\\n_target: https://e.org/\\n", "dl.txt")
    >>> [(where, b.key, b.target) for where, b in found]
    [('line 1', 'ark:99999/fk4x', 'https://e.org/')]
    """
    builder = DumpBuilder("ezid")
    report = records_report(read_download_bytes(raw, name, limit=limit), builder, name, drop_extra=drop_extra)
    found = [(o.where, binding_from_row(builder.binding(str(ark_id(o.id)))))
             for o in report.outcomes if o.action == "imported"]  # fmt: skip
    return found, list(report.outcomes)
