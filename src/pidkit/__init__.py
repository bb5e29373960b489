"""pidkit — persistent record identifiers.

XarkId, atproto TIDs and record keys, GEDCOM ``_UID``/``UID`` values, Library.Link resource ids and ARKs
(with NOID check characters, templates and minters), one :func:`inspect` that recognizes them all, a
lossless GEDCOM reader/writer, a store (SQLite or PostgreSQL) and a resolver.

>>> import pidkit
>>> pidkit.XarkId.parse("AYvP5WgA-_-_ASNFZ4mr").timestamp.isoformat()
'2023-11-14T22:13:20+00:00'
>>> pidkit.inspect("ark:/12345/x5-4-xz-321").normalized
'ark:12345/x54xz321'
>>> pidkit.noid.check_char("13030/xf93gt2")
'q'

Note: the name ``pidkit.inspect`` is the function; its module is importable as ``from pidkit.inspect
import Report``.
"""

from __future__ import annotations

from . import errors, noid
from .ark import Ark
from .gedcom_uid import GedcomUid, UidForm
from .inspect import Reading, Report, inspect
from .llid import resource_id, resource_ids
from .record_key import KeyType, RecordKey
from .tid import Tid, TidClock
from .xarkid import RevisionId, XarkId

__version__ = "0.1.0"

__all__ = [
    "Ark",
    "GedcomUid",
    "KeyType",
    "Reading",
    "RecordKey",
    "Report",
    "RevisionId",
    "Tid",
    "TidClock",
    "UidForm",
    "XarkId",
    "__version__",
    "errors",
    "inspect",
    "noid",
    "resource_id",
    "resource_ids",
]
