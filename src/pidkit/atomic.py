"""Writing output files: atomically where the target is a regular file, directly where it is not.

:func:`open_output` is what every command that writes a file uses: ``-`` is standard output,
``/dev/stdout``, ``/dev/fd/N`` and other devices or FIFOs are written directly (never replaced by a
regular file), and a regular file (or a new path) is written with :class:`AtomicWriter`: a temp file in
the target's directory, flushed to disk, renamed over the target.  A new file gets the permission bits
the umask gives (as ``open()`` would); a replaced file keeps its own.

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
import io
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import IO, Any

from .errors import OutputError

__all__ = [
    "STDIO",
    "AtomicWriter",
    "backup_path",
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
) -> Iterator[IO[Any]]:
    """The stream a command writes its output to (see the module docstring for what goes where).

    ``-`` and the paths of this process's file descriptors (``/dev/stdout``, ``/dev/fd/N``) write to that
    descriptor, which stays open; an existing FIFO or device is opened and written directly (``backup``
    is refused there); anything else goes through :class:`AtomicWriter`, with ``FILE.bak`` if ``backup``.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with open_output(os.path.join(d, "x"), text=True) as fh:
    ...         _ = fh.write("x")
    ...     os.listdir(d)
    ['x']
    """
    name = os.fspath(path)
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
        with AtomicWriter(name, backup=backup, text=text, encoding=encoding, newline=newline) as fh:
            yield fh
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
    it is removed and ``path`` is untouched.  With ``backup=True`` the old file is first copied to
    ``FILE.bak`` (itself atomically).  ``text=True`` gives a text stream (UTF-8, ``\\n`` line endings
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
            if self.mode is not None:
                os.chmod(tmp, self.mode)
            elif os.path.exists(self.path):
                shutil.copymode(self.path, tmp)
                if self.backup:
                    _copy_atomic(self.path, backup_path(self.path))
            else:  # a new file: the bits open() would give it (mkstemp made it 0600)
                os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, self.path)
            tmp = None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _copy_atomic(src: str, dst: str) -> None:
    """Copy ``src`` to ``dst`` atomically; ``dst`` gets ``src``'s permission bits."""
    with AtomicWriter(dst, mode=stat.S_IMODE(os.stat(src).st_mode)) as out, open(src, "rb") as inp:
        shutil.copyfileobj(inp, out, 1 << 20)
