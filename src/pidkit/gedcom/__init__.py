"""GEDCOM: a streaming, lossless reader/writer and UID audit / add / migrate / match."""

from __future__ import annotations

from .reader import Dialect, GedcomLine, GedcomReader, GedcomWarning, Record, parse_line, read_bytes
from .writer import AtomicWriter, write_records

__all__ = [
    "AtomicWriter",
    "Dialect",
    "GedcomLine",
    "GedcomReader",
    "GedcomWarning",
    "Record",
    "parse_line",
    "read_bytes",
    "write_records",
]
