"""``match``: the records of two files that share a UID identity (level-1 UIDs), and the conflicts.

Identity is :func:`~pidkit.gedcom.sites.identity_key`.  Conflicts: one UID on records of different types
in the two files, one UID on two records of one file, one record matched to two of the other file.  Pairs
whose 16 data bytes agree but whose identities differ because a checksum is bad are *probable* matches,
never merged (Gedcom-L U4 was rejected).

>>> from pidkit.gedcom.reader import read_bytes
>>> a = read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n")
>>> b = read_bytes(b"0 HEAD\\n0 @P7@ INDI\\n1 UID X1\\n0 TRLR\\n")
>>> report = match(a, b)
>>> report.match_count, [(x.xref, y.xref) for x, y in report.matches], report.ok
(1, [('@I1@', '@P7@')], True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .reader import GedcomReader
from .sites import MAX_EXAMPLES, UidSite, identity_key, parse_uid, uid_sites

__all__ = ["MatchReport", "match"]


@dataclass
class MatchReport:
    """Records of two files that share a UID, and the conflicts."""

    file_a: str
    file_b: str
    matches: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    match_count: int = 0
    conflicts: list[tuple[str, UidSite, UidSite]] = field(default_factory=list)
    conflict_counts: Counter[str] = field(default_factory=Counter)
    probable: list[tuple[UidSite, UidSite]] = field(default_factory=list)
    probable_count: int = 0
    only_a: int = 0
    only_b: int = 0

    @property
    def ok(self) -> bool:
        """No conflicts."""
        return not self.conflict_counts

    def add_conflict(self, kind: str, a: UidSite, b: UidSite) -> None:
        """Count a conflict and keep it as an example."""
        self.conflict_counts[kind] += 1
        if len(self.conflicts) < MAX_EXAMPLES:
            self.conflicts.append((kind, a, b))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` output)."""
        return {
            "a": self.file_a,
            "b": self.file_b,
            "ok": self.ok,
            "match_count": self.match_count,
            "matches": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.matches],
            "conflict_counts": dict(self.conflict_counts),
            "conflicts": [
                {"kind": k, "first": a.to_json(), "second": b.to_json()} for k, a, b in self.conflicts
            ],
            "probable_count": self.probable_count,
            "probable": [{"a": a.to_json(), "b": b.to_json()} for a, b in self.probable],
            "only_a": self.only_a,
            "only_b": self.only_b,
        }


def _record_sites(reader: GedcomReader) -> Iterator[UidSite]:
    for rec in reader:
        for site, _, _ in uid_sites(rec):
            if site.level == 1:
                yield site


def _index(sites: Iterable[UidSite], report: MatchReport, kind: str) -> dict[bytes | str, UidSite]:
    index: dict[bytes | str, UidSite] = {}
    for site in sites:
        uid = parse_uid(site.value)
        if uid is None:
            continue
        key = identity_key(uid)
        first = index.get(key)
        if first is None:
            index[key] = site
        elif first.record_line != site.record_line:
            report.add_conflict(kind, first, site)
    return index


def match(a: GedcomReader, b: GedcomReader) -> MatchReport:
    """Records of ``a`` and ``b`` that share a UID identity (level-1 UIDs), and the conflicts: one UID on
    records of different types, one UID on two records of the same file, one record matched to two."""
    report = MatchReport(a.name, b.name)
    index_a = _index(_record_sites(a), report, "same-file-a")
    index_b = _index(_record_sites(b), report, "same-file-b")
    pairs: dict[tuple[int, int], tuple[UidSite, UidSite]] = {}
    matched_keys = 0
    for key, site_b in index_b.items():
        site_a = index_a.get(key)
        if site_a is None:
            continue
        matched_keys += 1
        if site_a.record != site_b.record:
            report.add_conflict("type", site_a, site_b)
        else:
            pairs.setdefault((site_a.record_line, site_b.record_line), (site_a, site_b))
    partners_a: dict[int, tuple[UidSite, UidSite]] = {}
    partners_b: dict[int, tuple[UidSite, UidSite]] = {}
    for (line_a, line_b), (site_a, site_b) in pairs.items():
        other = partners_a.setdefault(line_a, (site_a, site_b))
        if other[1].record_line != line_b:
            report.add_conflict("one-to-many", other[1], site_b)
        other = partners_b.setdefault(line_b, (site_a, site_b))
        if other[0].record_line != line_a:
            report.add_conflict("one-to-many", other[0], site_a)
        report.match_count += 1
        if len(report.matches) < MAX_EXAMPLES:
            report.matches.append((site_a, site_b))
    report.only_a = len(index_a) - matched_keys
    report.only_b = len(index_b) - matched_keys
    _probable_matches(report, index_a, index_b)
    return report


def _probable_matches(
    report: MatchReport, index_a: dict[bytes | str, UidSite], index_b: dict[bytes | str, UidSite]
) -> None:
    """Pairs whose 16 data bytes agree but whose identities differ because a checksum is bad (18-byte
    keys, see :func:`identity_key`): reported as probable, not matched (U4 was rejected)."""
    bad_a: dict[bytes, list[bytes]] = {}
    for key in index_a:
        if isinstance(key, bytes) and len(key) == 18:
            bad_a.setdefault(key[:16], []).append(key)
    for key_b, site_b in index_b.items():
        if not isinstance(key_b, bytes):
            continue
        data = key_b[:16]
        keys_a = [k for k in bad_a.get(data, ()) if k != key_b]
        if len(key_b) == 18 and data in index_a:
            keys_a.insert(0, data)
        for key_a in keys_a:
            report.probable_count += 1
            if len(report.probable) < MAX_EXAMPLES:
                report.probable.append((index_a[key_a], site_b))
