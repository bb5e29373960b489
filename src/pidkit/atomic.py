"""Atomic file writing: a temp file in the target's directory, flushed to disk, renamed over the target.

An interrupted run (an exception, or ``kill -9``) leaves the old file intact.  A process killed between
creating its temp file and renaming it cannot remove the temp file itself; the next writer of the same
target removes such leftovers, recognized by their name ``.TARGET.pidkit-PID-XXXX.tmp`` and a PID that
no longer runs.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "a.txt")
...     with AtomicWriter(p, text=True) as fh:
...         _ = fh.write("x\\n")
...     open(p).read(), os.listdir(d)
('x\\n', ['a.txt'])
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from types import TracebackType
from typing import IO, Any

__all__ = ["AtomicWriter", "backup_path", "temp_prefix"]


def backup_path(path: str | os.PathLike[str]) -> str:
    """The backup kept by ``--in-place``: ``FILE.bak``.

    >>> backup_path("tree.ged")
    'tree.ged.bak'
    """
    return os.fspath(path) + ".bak"


def temp_prefix(path: str | os.PathLike[str]) -> str:
    """The name prefix of the temp files written for ``path`` (without the PID part).

    >>> temp_prefix("/data/tree.ged")
    '.tree.ged.pidkit-'
    """
    return f".{os.path.basename(os.fspath(path))}.pidkit-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, someone else's
        return True
    return True


def _remove_stale(directory: str, prefix: str) -> None:
    """Remove temp files of ``prefix`` left by processes that no longer run."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


class AtomicWriter:
    """``with AtomicWriter(path) as fh: fh.write(...)`` — all or nothing.

    On success the temp file replaces ``path`` (keeping the old file's permission bits); on an exception
    it is removed and ``path`` is untouched.  With ``backup=True`` the old file is first copied to
    ``FILE.bak`` (itself atomically).  ``text=True`` gives a text stream (UTF-8, ``\\n`` line endings
    unless ``encoding``/``newline`` say otherwise); the default is binary.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "a.bin")
    ...     with AtomicWriter(p) as fh:
    ...         _ = fh.write(b"x")
    ...     open(p, "rb").read()
    b'x'
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        backup: bool = False,
        text: bool = False,
        encoding: str = "utf-8",
        newline: str = "\n",
    ) -> None:
        self.path = os.fspath(path)
        self.backup = backup
        self.text = text
        self.encoding = encoding
        self.newline = newline
        self._tmp: str | None = None
        self._fh: IO[Any] | None = None

    def __enter__(self) -> IO[Any]:
        directory = os.path.dirname(os.path.abspath(self.path))
        prefix = temp_prefix(self.path)
        _remove_stale(directory, prefix)
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=".tmp", dir=directory)
        self._tmp = tmp
        if self.text:
            self._fh = os.fdopen(fd, "w", encoding=self.encoding, newline=self.newline)
        else:
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
