"""pidkit — persistent record identifiers.

XarkId, atproto TIDs and record keys, GEDCOM ``_UID``/``UID`` values, Library.Link resource ids and ARKs
(with NOID check characters, templates and minters), one :func:`inspect` that recognizes them all, a
lossless GEDCOM reader/writer, a store (SQLite or PostgreSQL) and a resolver.

>>> import pidkit
>>> pidkit.__version__
'0.1.0'
"""

from __future__ import annotations

__version__ = "0.1.0"
