"""Writing output files: atomically where the target is a regular file, directly where it is not.

:func:`open_output` is what every command that writes a file uses: ``-`` is standard output,
``/dev/stdout``, ``/dev/fd/N`` and other devices or FIFOs are written directly (never replaced by a
regular file), and a regular file (or a new path) is written with :class:`AtomicWriter`: a temp file in
the target's directory, flushed to disk, renamed over the target.  A new file gets the permission bits
the umask gives (as ``open()`` would); a replaced file keeps its own.

With ``backup`` the old file is first copied to the first free name of ``FILE.bak``, ``FILE.bak.1``,
``FILE.bak.2`` … (:func:`keep_backup`): an earlier backup is never overwritten.

An interrupted run (an exception, or ``kill -9``) leaves the old file intact.  A process killed between
creating its temp file and renaming it cannot remove the temp file itself; the next writer of the same
target removes such leftovers, recognized by their name ``.TARGET.pidkit-PID-XXXX.tmp`` and a PID that
no longer runs.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "a.txt")
...     with AtomicWriter(p, text=True) as fh:
...         _ = fh.write("x\\n")
...     with open(p) as back:
...         back.read(), os.listdir(d)
('x\\n', ['a.txt'])
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import IO, Any

from .errors import OutputError

__all__ = [
    "STDIO",
    "AtomicWriter",
    "backup_path",
    "keep_backup",
    "open_output",
    "require_regular_file",
    "temp_prefix",
]

#: The file name that stands for standard output (or standard input) on the command line.
STDIO = "-"

#: Paths that name one of this process's own file descriptors (``/dev/stdout`` → 1, ``/dev/fd/3`` → 3).
_FD_PATH = re.compile(
    r"/dev/(?:fd/(?P<fd>[0-9]+)|(?P<name>stdin|stdout|stderr))|/proc/self/fd/(?P<pfd>[0-9]+)"
)
_STD_FDS = {"stdin": 0, "stdout": 1, "stderr": 2}
_umask_lock = threading.Lock()
#: ``os.link`` errors that mean "this file system has no hard links" (FAT, some network file systems).
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS})


def backup_path(path: str | os.PathLike[str], number: int = 0) -> str:
    """The name of backup ``number`` of ``path``: ``FILE.bak``, then ``FILE.bak.1``, ``FILE.bak.2`` …
    (``--in-place`` keeps the first of them that is free, :func:`keep_backup`).

    >>> backup_path("tree.ged"), backup_path("tree.ged", 1), backup_path("tree.ged", 12)
    ('tree.ged.bak', 'tree.ged.bak.1', 'tree.ged.bak.12')
    """
    name = os.fspath(path) + ".bak"
    return f"{name}.{number}" if number else name


def keep_backup(path: str | os.PathLike[str]) -> str:
    """Copy ``path`` to the first free :func:`backup_path` name and return that name; an existing file
    (an earlier backup) is never overwritten.

    The copy is written to a temp file in the same directory, flushed to disk and given ``path``'s
    permission bits; then it gets the name by a hard link, which fails if the name exists, so the name
    never holds a partial copy and two runs cannot take the same one.  On a file system without hard links
    the name is created exclusively (``O_EXCL``) and the finished copy renamed over it.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "tree.ged")
    ...     with open(p, "w") as fh:
    ...         _ = fh.write("0 HEAD")
    ...     [os.path.basename(keep_backup(p)) for _ in range(3)]
    ['tree.ged.bak', 'tree.ged.bak.1', 'tree.ged.bak.2']
    """
    name = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(name))
    fd, tmp = tempfile.mkstemp(prefix=f"{temp_prefix(name)}{os.getpid()}-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out, open(name, "rb") as inp:
            shutil.copyfileobj(inp, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, stat.S_IMODE(os.stat(name).st_mode))
        number = 0
        while True:
            backup = backup_path(name, number)
            if _take_name(tmp, backup):
                return backup
            number += 1
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # linked: the temp name goes; renamed: already gone


def _take_name(tmp: str, name: str) -> bool:
    """Give the finished file ``tmp`` the new name ``name``, or return False if ``name`` exists."""
    try:
        os.link(tmp, name)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    try:  # no hard links: hold the name, then put the copy in its place
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return False
    os.replace(tmp, name)
    return True


def temp_prefix(path: str | os.PathLike[str]) -> str:
    """The name prefix of the temp files written for ``path`` (without the PID part).

    >>> temp_prefix("/data/tree.ged")
    '.tree.ged.pidkit-'
    """
    return f".{os.path.basename(os.fspath(path))}.pidkit-"


def _umask() -> int:
    """The process umask (read without changing it where /proc tells, else set and restored)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _fd_of(path: str) -> int | None:
    """The file descriptor ``path`` names (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``), else None.

    >>> _fd_of("/dev/stdout"), _fd_of("/dev/fd/7"), _fd_of("out.txt")
    (1, 7, None)
    """
    m = _FD_PATH.fullmatch(os.path.abspath(path))
    if m is None:
        return None
    if m["name"]:
        return _STD_FDS[m["name"]]
    return int(m["fd"] or m["pfd"])


def _kind(mode: int) -> str:
    """A file type in words, for error messages.

    >>> _kind(stat.S_IFIFO)
    'a FIFO'
    """
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a regular file"


def require_regular_file(path: str | os.PathLike[str], purpose: str = "edited in place") -> None:
    """Refuse (``OutputError``) anything but an existing regular file (symlinks followed): a FIFO would
    block, a device never ends, and neither can be replaced atomically.

    >>> require_regular_file("/dev/null")
    Traceback (most recent call last):
    ...
    pidkit.errors.OutputError: a character device cannot be edited in place in '/dev/null'
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except OSError as exc:
        raise OutputError(f"cannot open: {exc.strerror}", text=name) from None
    if not stat.S_ISREG(mode) or _fd_of(name) is not None:
        kind = _kind(mode) if not stat.S_ISREG(mode) else "a file descriptor"
        raise OutputError(f"{kind} cannot be {purpose}", text=name)


@contextlib.contextmanager
def open_output(
    path: str | os.PathLike[str],
    *,
    backup: bool = False,
    text: bool = False,
    encoding: str = "utf-8",
    newline: str = "\n",
    on_backup: Callable[[str], None] | None = None,
) -> Iterator[IO[Any]]:
    """The stream a command writes its output to (see the module docstring for what goes where).

    ``-`` and the paths of this process's file descriptors (``/dev/stdout``, ``/dev/fd/N``) write to that
    descriptor, which stays open; an existing FIFO or device is opened and written directly (``backup``
    is refused there); anything else goes through :class:`AtomicWriter`, with a backup if ``backup``
    (:func:`keep_backup`), whose name ``on_backup`` is given once the output is in place.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open_output(os.path.join(d, "x"), text=True) as fh:
    ...         _ = fh.write("x")
    ...     os.listdir(d)
    ['x']
    """
    name = os.fspath(path)
    if not name:
        raise OutputError("an empty path is no file to write", text=name)
    fd = 1 if name == STDIO else _fd_of(name)
    if fd is None:
        try:
            mode: int | None = os.stat(name).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise OutputError(f"cannot write: {exc.strerror}", text=name) from None
        if mode is not None and stat.S_ISDIR(mode):
            raise OutputError("is a directory, not a file to write", text=name)
        if mode is not None and not stat.S_ISREG(mode):
            if backup:
                raise OutputError(f"{_kind(mode)} cannot be backed up and replaced", text=name)
            with _direct(open(name, "wb"), text, encoding, newline) as fh:
                yield fh
            return
        writer = AtomicWriter(name, backup=backup, text=text, encoding=encoding, newline=newline)
        with writer as fh:
            yield fh
        if writer.backup_name is not None and on_backup is not None:
            on_backup(writer.backup_name)
        return
    if backup:
        raise OutputError("standard streams cannot be backed up and replaced", text=name)
    if fd == 1:
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdout.flush()
    raw = os.fdopen(os.dup(fd), "wb")
    with _direct(raw, text, encoding, newline) as fh:
        yield fh


@contextlib.contextmanager
def _direct(raw: IO[bytes], text: bool, encoding: str, newline: str) -> Iterator[IO[Any]]:
    """``raw`` (binary, owned), or a text layer over it; flushed and closed at the end."""
    with raw:
        if not text:
            yield raw
            raw.flush()
            return
        wrapper = io.TextIOWrapper(raw, encoding=encoding, newline=newline)
        try:
            yield wrapper
            wrapper.flush()
        finally:
            wrapper.detach()


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
    it is removed and ``path`` is untouched.  With ``backup=True`` the old file is first copied to the first
    free name of ``FILE.bak``, ``FILE.bak.1`` … (:func:`keep_backup`, itself atomically), which
    :attr:`backup_name` then holds.  ``text=True`` gives a text stream (UTF-8, ``\\n`` line endings
    unless ``encoding``/``newline`` say otherwise); the default is binary.  ``mode`` sets the permission
    bits; by default a replaced file keeps its own and a new file gets what the umask allows.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "a.bin")
    ...     with AtomicWriter(p) as fh:
    ...         _ = fh.write(b"x")
    ...     with open(p, "rb") as back:
    ...         back.read()
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
        mode: int | None = None,
    ) -> None:
        self.mode = mode
        # A symlink stays a symlink: the file it points to is the one replaced.
        self.path = os.path.realpath(os.fspath(path))
        self.backup = backup
        self.text = text
        self.encoding = encoding
        self.newline = newline
        self._tmp: str | None = None
        self._fh: IO[Any] | None = None
        #: The backup kept (``backup=True``, the file existed, the output is in place), else ``None``.
        self.backup_name: str | None = None

    def __enter__(self) -> IO[Any]:
        directory = os.path.dirname(os.path.abspath(self.path))
        prefix = temp_prefix(self.path)
        _remove_stale(directory, prefix)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=".tmp", dir=directory)
        except OSError as exc:  # named by the output's path, not by the temp file's
            raise OutputError(f"cannot write: {exc.strerror}", text=self.path) from None
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
            if self.mode is not None:
                os.chmod(tmp, self.mode)
            elif os.path.exists(self.path):
                shutil.copymode(self.path, tmp)
                if self.backup:
                    self.backup_name = keep_backup(self.path)
            else:  # a new file: the bits open() would give it (mkstemp made it 0600)
                os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, self.path)
            tmp = None
        except OSError as error:  # a full disk at the flush, say: the output named, its old file kept
            raise OutputError(f"cannot write: {error.strerror or error}", text=self.path) from None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
