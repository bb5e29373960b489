"""The WAL-index header of a SQLite database, read where this process's SQLite keeps it.

In WAL mode every commit rewrites the header at the start of the database's ``-shm`` file (the
*WAL-index*, https://sqlite.org/walformat.html §2.1: a 48-byte ``WalIndexHdr`` whose change counter,
``mxFrame``, salts and checksums change with each transaction; SQLite writes its second copy first and
this first copy last).  ``PRAGMA data_version`` is SQLite's own answer to "did anyone commit since I
last asked": it compares that same header with the one its connection saw last (``walIndexTryHdr``), at
the price of a statement (about 3 µs).  Reading the 48 bytes costs about 50 ns, so the resolver's
per-request changes token (:meth:`pidkit.store.sqlite.SqliteStore.changes_token`) reads them here.

The bytes are read from **SQLite's own shared mapping of the file in this process**, found in
``/proc/self/maps`` by the file's device, inode and offset 0: the file is never opened here.  Opening
and closing any descriptor of the ``-shm`` file would drop every POSIX lock this process holds on it
(SQLite's read marks and its "dead man switch"), which SQLite documents as a way to corrupt a database
(https://sqlite.org/howtocorrupt.html §2.2).  A mapping that is there at all is SQLite's (nothing else
in pidkit maps the file), and it stays while any connection of this process has the database open: the
caller reads under the lock that closing its connections takes.

Where the header cannot be found this way (not Linux, no ``/proc``, not in WAL mode, the ``-shm`` file
kept elsewhere), :func:`find_wal_header` answers ``None`` and the caller asks ``PRAGMA data_version``.

>>> find_wal_header("/nonexistent/x.db") is None
True
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

__all__ = ["WAL_HEADER_BYTES", "WalHeader", "find_wal_header", "shared_mapping"]

#: ``sizeof(WalIndexHdr)``: the first copy of the header, at offset 0 of the ``-shm`` file.
WAL_HEADER_BYTES: Final = 48


class WalHeader:
    """The first :data:`WAL_HEADER_BYTES` bytes of a mapping at ``address`` (found by
    :func:`shared_mapping`: the caller keeps the mapping alive while it reads).

    >>> buffer = ctypes.create_string_buffer(b"x" * WAL_HEADER_BYTES)
    >>> WalHeader(ctypes.addressof(buffer)).read() == b"x" * WAL_HEADER_BYTES
    True
    """

    __slots__ = ("_bytes",)

    def __init__(self, address: int) -> None:
        self._bytes = (ctypes.c_char * WAL_HEADER_BYTES).from_address(address)

    def read(self) -> bytes:
        """The header's bytes now (one copy: a write half done reads as neither the old nor the new
        header, so a caller comparing it with an earlier read sees a change, never misses one)."""
        return self._bytes.raw


def shared_mapping(path: str, *, maps: str = "/proc/self/maps") -> int | None:
    """The address where this process has the start of the file ``path`` mapped shared and at least
    :data:`WAL_HEADER_BYTES` long, or ``None`` when it has no such mapping or more than one (``maps``:
    the process's map listing, ``/proc/self/maps`` on Linux; the file is only ``stat``-ed).

    >>> shared_mapping("/nonexistent/x.db-shm") is None
    True
    """
    try:
        st = os.stat(path)
        with open(maps, encoding="utf-8", errors="replace") as listing:
            lines = listing.readlines()
    except OSError:
        return None
    device = (os.major(st.st_dev), os.minor(st.st_dev))
    found: list[int] = []
    for line in lines:
        # "start-end perms offset major:minor inode path" (proc(5)); a line not so is passed over
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or not fields[1].endswith("s"):
            continue
        major, _, minor = fields[3].partition(":")
        start, _, end = fields[0].partition("-")
        try:
            place = (int(fields[2], 16), int(fields[4]), (int(major, 16), int(minor, 16)))
            if place != (0, st.st_ino, device):  # offset, inode, device
                continue
            if int(end, 16) - int(start, 16) >= WAL_HEADER_BYTES:
                found.append(int(start, 16))
        except ValueError:
            continue
    return found[0] if len(found) == 1 else None


def find_wal_header(database: str) -> WalHeader | None:
    """The WAL-index header of the database file ``database`` as this process's SQLite maps it, or
    ``None`` (see the module docstring).  Call it once a connection of this process has read the
    database in WAL mode (SQLite maps the file then), and read it only while one is open.

    >>> import sqlite3, tempfile
    >>> path = f"{tempfile.mkdtemp()}/t.db"
    >>> conn = sqlite3.connect(path, isolation_level=None)
    >>> conn.execute("PRAGMA journal_mode = WAL").fetchone()
    ('wal',)
    >>> _ = conn.execute("CREATE TABLE t (x)")
    >>> header = find_wal_header(path)
    >>> before = header.read()
    >>> _ = conn.execute("INSERT INTO t VALUES (1)")
    >>> header.read() != before
    True
    >>> conn.close()
    """
    address = shared_mapping(database + "-shm")
    return None if address is None else WalHeader(address)
