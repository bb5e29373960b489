"""GEDCOM: a streaming, lossless reader/writer and UID audit / add / migrate / match.

>>> from pidkit.gedcom import read_bytes, audit
>>> audit(read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n")).forms
Counter({'other': 1})
"""

from __future__ import annotations

from .reader import Dialect, GedcomLine, GedcomReader, GedcomWarning, Record, parse_line, read_bytes
from .uids import AddReport, AuditReport, MatchReport, MigrateReport, add_uids, audit, match, migrate
from .writer import AtomicWriter, write_records

__all__ = [
    "AddReport",
    "AtomicWriter",
    "AuditReport",
    "Dialect",
    "GedcomLine",
    "GedcomReader",
    "GedcomWarning",
    "MatchReport",
    "MigrateReport",
    "Record",
    "add_uids",
    "audit",
    "match",
    "migrate",
    "parse_line",
    "read_bytes",
    "write_records",
]
