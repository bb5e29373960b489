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
...     open(out, "rb").read() == src
True
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from types import TracebackType
from typing import BinaryIO

from .reader import Record

__all__ = ["AtomicWriter", "backup_path", "write_records"]


def backup_path(path: str | os.PathLike[str]) -> str:
    """The backup kept by ``--in-place``: ``FILE.bak``.

    >>> backup_path("tree.ged")
    'tree.ged.bak'
    """
    return os.fspath(path) + ".bak"


class AtomicWriter:
    """Write a file atomically: ``with AtomicWriter(path) as fh: fh.write(...)``.

    On success the temporary file replaces ``path`` (keeping the old file's permission bits); on an
    exception it is removed and ``path`` is untouched.  With ``backup=True`` the old file is first
    copied to ``FILE.bak`` (itself atomically).

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "a.txt")
    ...     with AtomicWriter(p) as fh:
    ...         _ = fh.write(b"x")
    ...     open(p, "rb").read()
    b'x'
    """

    def __init__(self, path: str | os.PathLike[str], *, backup: bool = False) -> None:
        self.path = os.fspath(path)
        self.backup = backup
        self._tmp: str | None = None
        self._fh: BinaryIO | None = None

    def __enter__(self) -> BinaryIO:
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=".pidkit-", suffix=".tmp", dir=directory)
        self._tmp = tmp
        self._fh = os.fdopen(fd, "wb")
        return self._fh

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        fh, tmp = self._fh, self._tmp
        if fh is None or tmp is None:  # pragma: no cover - __enter__ not called
            return
        try:
            if exc_type is None:
                fh.flush()
                os.fsync(fh.fileno())
            fh.close()
            if exc_type is not None:
                return
            if os.path.exists(self.path):
                shutil.copymode(self.path, tmp)
                if self.backup:
                    _copy_atomic(self.path, backup_path(self.path))
            os.replace(tmp, self.path)
            tmp = None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _copy_atomic(src: str, dst: str) -> None:
    with AtomicWriter(dst) as out, open(src, "rb") as inp:
        shutil.copyfileobj(inp, out, 1 << 20)


def write_records(
    path: str | os.PathLike[str], bom: bytes, records: Iterable[Record], *, backup: bool = False
) -> None:
    """Write ``bom`` and every line of ``records`` (their raw bytes) to ``path`` atomically."""
    with AtomicWriter(path, backup=backup) as fh:
        fh.write(bom)
        for rec in records:
            fh.write(rec.raw)
