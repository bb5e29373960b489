"""GEDCOM: a streaming, lossless reader/writer and UID audit / add / migrate / match.

Modules: :mod:`~pidkit.gedcom.grammar` (the line grammar), :mod:`~pidkit.gedcom.encoding` (character
sets), :mod:`~pidkit.gedcom.reader` and :mod:`~pidkit.gedcom.writer` (lossless streaming),
:mod:`~pidkit.gedcom.tags` (GEDCOM 7 tag tables), :mod:`~pidkit.gedcom.g7tables` (GEDCOM 7 structure
tables, generated from the specification), :mod:`~pidkit.gedcom.values7` (5.x payloads as 7.0
payloads), :mod:`~pidkit.gedcom.sites` (where UIDs stand, UID
identity), and one module per operation: :mod:`~pidkit.gedcom.audit`, :mod:`~pidkit.gedcom.add`,
:mod:`~pidkit.gedcom.migrate`, :mod:`~pidkit.gedcom.match`.  The operations return data (reports with
``to_json()``); ``pidkit gedcom`` renders them as text.

>>> from pidkit.gedcom import read_bytes, audit
>>> audit(read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n")).forms
Counter({'other': 1})
"""

from __future__ import annotations

from .add import AddReport, add_uids
from .audit import AuditReport, audit
from .match import MatchReport, match
from .migrate import MigrateIndex, MigrateReport, index_file, migrate, migrate_bytes
from .reader import Dialect, GedcomLine, GedcomReader, GedcomWarning, Record, parse_line, read_bytes
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
    "MigrateIndex",
    "MigrateReport",
    "Record",
    "add_uids",
    "audit",
    "index_file",
    "match",
    "migrate",
    "migrate_bytes",
    "parse_line",
    "read_bytes",
    "write_records",
]
