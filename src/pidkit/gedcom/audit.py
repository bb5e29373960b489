"""``audit``: the UIDs of a file — per record type with and without UID, forms, tags, level-2 UIDs,
duplicates and the version rules.

* **7.0 rules audited**: ``_UID`` where ``UID`` belongs; a ``UID`` that is not RFC 9562 UUID text (the
  spec *recommends* it for new values and requires existing ones be kept verbatim, so this is reported,
  not an error); a ``UID`` where 7.0 has no home.  In 5.x: a ``UID`` tag (5.x programs read ``_UID``).
* **Duplicates**: one identity (:func:`~pidkit.gedcom.sites.identity_key`) on two structures; the same
  identity twice on one structure is a problem of its own.

>>> from pidkit.gedcom.reader import read_bytes
>>> data = (b"0 HEAD\\n1 GEDC\\n2 VERS 5.5.1\\n0 @I1@ INDI\\n1 _UID 161C15D03ECE47968211BBB2E9EE7F4FA5A6\\n"
...         b"0 @I2@ INDI\\n1 NAME x\\n0 TRLR\\n")
>>> report = audit(read_bytes(data))
>>> report.records["INDI"], report.with_uid["INDI"], dict(report.forms)
(2, 1, {'valid': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..gedcom_uid import GedcomUid, UidForm
from .reader import GedcomReader, ReadWarnings
from .sites import MAX_EXAMPLES, UID_BYTES, UidSite, identity_key, is_rfc9562_text, parse_uid, uid_sites
from .tags import DEFAULT_RECORD_TYPES, has_uid_home_7

__all__ = ["AuditReport", "audit"]


@dataclass
class AuditReport(ReadWarnings):
    """What :func:`audit` found (counts are complete; example lists stop at :data:`MAX_EXAMPLES`)."""

    file: str
    version: str | None
    codec: str
    gedcom7: bool
    records: Counter[str] = field(default_factory=Counter)
    with_uid: Counter[str] = field(default_factory=Counter)
    without_uid: Counter[str] = field(default_factory=Counter)
    forms: Counter[str] = field(default_factory=Counter)
    level2_forms: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    uids: int = 0
    level2: int = 0
    missing: list[tuple[str, str | None, int]] = field(default_factory=list)
    duplicates: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    duplicate_count: int = 0
    probable: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    probable_count: int = 0
    problems: list[tuple[str, UidSite]] = field(default_factory=list)
    problem_counts: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        """No duplicates and no problems (records without UIDs alone are not a problem)."""
        return not self.duplicate_count and not self.problem_counts

    def add_problem(self, kind: str, site: UidSite) -> None:
        """Count a problem and keep it as an example."""
        self.problem_counts[kind] += 1
        if len(self.problems) < MAX_EXAMPLES:
            self.problems.append((kind, site))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        types = sorted(self.records)
        return {
            "file": self.file,
            "version": self.version,
            "encoding": self.codec,
            "gedcom7": self.gedcom7,
            "ok": self.ok,
            "records": {
                t: {
                    "total": self.records[t],
                    "with_uid": self.with_uid[t],
                    "without_uid": self.without_uid[t],
                }
                for t in types
            },
            "uids": self.uids,
            "forms": dict(self.forms),
            "tags": dict(self.tags),
            "level2": {"count": self.level2, "forms": dict(self.level2_forms)},
            "missing": [{"record": t, "xref": x, "line": n} for t, x, n in self.missing],
            "duplicate_count": self.duplicate_count,
            "duplicates": [{"first": a.to_json(), "again": b.to_json()} for a, b in self.duplicates],
            "probable_count": self.probable_count,
            "probable": [{"first": a.to_json(), "again": b.to_json()} for a, b in self.probable],
            "problem_counts": dict(self.problem_counts),
            "problems": [{"kind": k, **s.to_json()} for k, s in self.problems],
            **self.warnings_json(),
        }


def audit(reader: GedcomReader, *, types: Collection[str] = DEFAULT_RECORD_TYPES) -> AuditReport:
    """Audit the UIDs of a file: per record type with and without UID, forms, tags, level-2 UIDs,
    duplicates (one identity on two structures) and version rules.  ``types`` are the record types
    whose missing UIDs are listed (all record types are counted)."""
    report = AuditReport(reader.name, reader.version, reader.codec, reader.gedcom7)
    gedcom7 = reader.gedcom7
    # identity → (structure line << 32) | UID line: small, as it holds every UID of the file
    seen: dict[bytes | str, int] = {}
    # the 16 data bytes of bad-checksum values → where first seen (rare: the probable-duplicate check)
    bad_data: dict[bytes, tuple[bytes | str, int]] = {}
    wanted = frozenset(types)
    not_counted = frozenset(("HEAD", "TRLR"))
    records, missing = report.records, report.missing
    plain: list[str] = []  # the record types of records without the bytes UID, counted at the end
    for rec in reader:
        tag = rec.tag
        if rec.data.find(UID_BYTES) < 0:  # no UID line in it (uid_sites would find none)
            if tag is not None and tag not in not_counted:
                plain.append(tag)
                if len(missing) < MAX_EXAMPLES and tag in wanted:
                    missing.append((tag, rec.xref, rec.number))
            continue
        if tag is not None and tag not in not_counted:
            records[tag] += 1
        has_uid = False
        local: set[tuple[int, bytes | str]] = set()
        for site, structure, _ in uid_sites(rec):
            report.uids += 1
            report.tags[site.tag] += 1
            uid = parse_uid(site.value)
            form = uid.form.value if uid is not None else "empty"
            if site.level == 1:
                has_uid = True
                report.forms[form] += 1
            else:
                report.level2 += 1
                report.level2_forms[form] += 1
            if uid is None:
                report.add_problem("empty", site)
                continue
            if uid.form is UidForm.BAD_CHECKSUM:
                report.add_problem("bad-checksum", site)
            if gedcom7:
                if site.tag == "_UID":
                    report.add_problem("_UID-in-7", site)
                elif not has_uid_home_7(site.level, site.record, site.parent):
                    report.add_problem("no-home-7", site)
                elif not is_rfc9562_text(site.value):
                    report.add_problem("not-uuid-7", site)
            elif site.tag == "UID":
                report.add_problem("UID-in-5", site)
            key = identity_key(uid)
            where = (structure, key)
            if where in local:
                report.add_problem("repeated-in-record", site)
                continue
            local.add(where)
            first = seen.get(key)
            if uid.bytes16 is not None:
                _check_probable(report, uid, structure, site, seen, bad_data)
            if first is None:
                seen[key] = (structure << 32) | site.line
            elif first >> 32 != structure:
                report.duplicate_count += 1
                if len(report.duplicates) < MAX_EXAMPLES:
                    report.duplicates.append((_first_site(first, site.value), site))
        if tag is not None and tag not in ("HEAD", "TRLR"):
            if has_uid:
                report.with_uid[tag] += 1
            else:
                report.without_uid[tag] += 1
                if tag in wanted and len(report.missing) < MAX_EXAMPLES:
                    report.missing.append((tag, rec.xref, rec.number))
    records.update(plain)
    report.without_uid.update(plain)
    report.take_warnings(reader)
    return report


def _check_probable(
    report: AuditReport,
    uid: GedcomUid,
    structure: int,
    site: UidSite,
    seen: dict[bytes | str, int],
    bad_data: dict[bytes, tuple[bytes | str, int]],
) -> None:
    """Count a probable duplicate: a bad-checksum value and another value with the same 16 data bytes
    but another identity, on another structure (U4 rejected: not the same identity, worth a look)."""
    data = uid.bytes16
    if data is None:
        return
    key = identity_key(uid)
    earlier: list[tuple[bytes | str, int | None]] = []
    if data in bad_data:
        earlier.append(bad_data[data])
    if uid.form is UidForm.BAD_CHECKSUM:
        earlier.append((data, seen.get(data)))
        bad_data.setdefault(data, (key, (structure << 32) | site.line))
    for other_key, packed in earlier:
        if packed is not None and other_key != key and packed >> 32 != structure:
            report.probable_count += 1
            if len(report.probable) < MAX_EXAMPLES:
                report.probable.append((_first_site(packed, site.value), site))
            return


def _first_site(packed: int, value: str) -> UidSite:
    """The earlier occurrence of a duplicate, as far as the compact index knows it (its line numbers).

    >>> _first_site((4 << 32) | 5, "X").line
    5
    """
    structure, line = packed >> 32, packed & 0xFFFFFFFF
    return UidSite(None, None, structure, line, 0, "", None, value)
