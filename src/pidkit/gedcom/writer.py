"""Atomic, lossless GEDCOM writing.

Lines read from a file are written back as their exact bytes (:attr:`GedcomLine.raw`); only lines an
operation made are encoded anew (in the file's encoding, with the line ending of their neighbours, see
:meth:`GedcomReader.make_line`).  Files are replaced atomically: the output goes to a temporary file in
the same directory, is flushed to disk, and then renamed over the target with :func:`os.replace`.

>>> import io, os, tempfile
>>> from pidkit.gedcom.reader import read_bytes
>>> src = b"\\xef\\xbb\\xbf0 HEAD\\r\\n0 TRLR"
>>> reader = read_bytes(src)
>>> with tempfile.TemporaryDirectory() as d:
...     out = os.path.join(d, "out.ged")
...     write_records(out, reader.bom, reader)
...     with open(out, "rb") as written:
...         written.read() == src
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from operator import attrgetter
from typing import IO

from ..atomic import AtomicWriter, backup_path
from .reader import Record

__all__ = ["AtomicWriter", "backup_path", "write_records", "write_stream"]

_RAW = attrgetter("raw")


def write_stream(fh: IO[bytes], bom: bytes, records: Iterable[Record]) -> None:
    """Write ``bom`` and every line of ``records`` (their raw bytes) to the binary stream ``fh``.

    >>> import io
    >>> from pidkit.gedcom.reader import read_bytes
    >>> out = io.BytesIO()
    >>> write_stream(out, b"", read_bytes(b"0 HEAD\\r\\n0 TRLR"))
    >>> out.getvalue()
    b'0 HEAD\\r\\n0 TRLR'
    """
    fh.write(bom)
    fh.writelines(map(_RAW, records))


def write_records(
    path: str | os.PathLike[str], bom: bytes, records: Iterable[Record], *, backup: bool = False
) -> str | None:
    """Write ``bom`` and every line of ``records`` (their raw bytes) to ``path`` atomically; with ``backup``
    the old file is first copied to the first free name of ``FILE.bak``, ``FILE.bak.1`` …, which is
    returned (``None``: no backup kept).

    >>> import os, tempfile
    >>> from pidkit.gedcom.reader import read_bytes
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = os.path.join(d, "tree.ged")
    ...     kept = [write_records(out, b"", read_bytes(b"0 HEAD\\n0 TRLR\\n"), backup=True) for _ in "abc"]
    ...     [k and os.path.basename(k) for k in kept]
    [None, 'tree.ged.bak', 'tree.ged.bak.1']
    """
    writer = AtomicWriter(path, backup=backup)
    with writer as fh:
        write_stream(fh, bom, records)
    return writer.backup_name
