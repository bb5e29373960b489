"""Helpers shared by the command modules: reading ids from arguments or stdin, error lines, exit codes.

>>> list(iter_inputs(["a", "b"]))
['a', 'b']
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from ..atomic import STDIO
from ..errors import OutputError, PidkitError

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2

if TYPE_CHECKING:
    from ..store import Store

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    Subparsers = Any


class CliError(Exception):
    """An error the CLI reports as one line with the given exit code."""

    def __init__(self, message: str, code: int = EXIT_INVALID) -> None:
        super().__init__(message)
        self.code = code


#: What a message must not write to a terminal raw: C0 and C1 controls (an escape sequence clears the
#: screen, moves the cursor, retitles the window …) but the tab; line breaks are joined before.
_CONTROLS: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def one_line(message: str) -> str:
    r"""``message`` as one line a terminal shows as it is: its lines joined by a space, every control
    character written as an escape (``\x1b``) — messages echo input, stored text and file names.

    >>> one_line("no store at /tmp/\x1b[2J.db\nsecond line")
    'no store at /tmp/\\x1b[2J.db second line'
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", " ".join(message.splitlines()))


def error_line(message: str) -> None:
    """Write ``pidkit: error: MESSAGE`` to stderr as one line (:func:`one_line`)."""
    sys.stderr.write(f"pidkit: error: {one_line(message)}\n")
    sys.stderr.flush()


def iter_inputs(values: Iterable[str], stdin: Iterable[str] | None = None) -> Iterator[str]:
    """Yield the command-line values, where ``-`` stands for the lines of stdin (streamed, newline stripped).

    >>> import io
    >>> list(iter_inputs(["x", "-"], io.StringIO("a\\nb\\r\\n")))
    ['x', 'a', 'b']
    """
    for value in values:
        if value == "-":
            for line in stdin if stdin is not None else sys.stdin:
                yield line.rstrip("\r\n")
        else:
            yield value


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db URL`` (default ``$PIDKIT_DATABASE_URL``, else the embedded SQLite file)."""
    parser.add_argument(
        "--db",
        metavar="URL",
        default=os.environ.get("PIDKIT_DATABASE_URL"),
        help="store URL: sqlite:///path/to/file.db or postgresql://… "
        "(default: $PIDKIT_DATABASE_URL, else sqlite:///pidkit.db)",
    )


@contextmanager
def utf8_lines(path: str) -> Iterator[Iterator[str]]:
    r"""The lines of the file at ``path`` (``-``: stdin), each ending at ``"\n"`` only (kept), decoded
    as UTF-8 one at a time: a line that is not raises :class:`~pidkit.errors.PidkitError` naming its
    number and the byte (a decoding error of a whole stream names neither).  The file is opened at
    once, so a missing one is an error before anything else is done.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
    ...     _ = f.write(b'{"a": 1}\r\n{"b": "\xff"}\n')
    ...     f.flush()
    ...     with utf8_lines(f.name) as lines:
    ...         first = next(lines)
    ...         try:
    ...             next(lines)
    ...         except PidkitError as exc:
    ...             print(repr(first), exc)  # doctest: +ELLIPSIS
    '{"a": 1}\r\n' not UTF-8: byte 0xff, the line's byte 8, in '...' on line 2
    """
    fp = sys.stdin.buffer if path == STDIO else open(path, "rb")  # noqa: SIM115 (closed below)

    def lines() -> Iterator[str]:
        for number, raw in enumerate(fp, 1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = raw[exc.start]
                raise PidkitError(f"not UTF-8: byte 0x{byte:02x}, the line's byte {exc.start + 1},",
                                  text=path, line=number) from None  # fmt: skip

    try:
        yield lines()
    finally:
        if fp is not sys.stdin.buffer:
            fp.close()


def refuse_store_files(output: str | None, store: Store) -> None:
    """Refuse (:class:`~pidkit.errors.OutputError`) an output path that names one of ``store``'s own
    files (:meth:`~pidkit.store.Store.files`: its SQLite file, ``-wal``, ``-shm``), through a symbolic
    or a hard link too: an export or a dump written there would replace the store it was read from.
    ``None`` or ``-``: standard output, refused when the shell opened one of those files for it
    (``pidkit dump >> pidkit.db``: the dump would be written into the store).

    >>> from pidkit.store import open_store
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d, open_store(f"sqlite:///{d}/p.db") as s:
    ...     refuse_store_files(os.path.join(d, "p.db"), s)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.OutputError: is the store's own file: writing there would replace the store in '...p.db'
    """
    if output is None or output == STDIO:
        try:
            out = os.fstat(sys.stdout.fileno())
        except (OSError, ValueError):  # no descriptor (a test's capture): not a file of the store
            return
        for own in store.files():
            with contextlib.suppress(OSError):
                if os.path.samestat(out, os.stat(own)):
                    raise OutputError("standard output is the store's own file: writing there would "
                                      "damage the store", text=own)  # fmt: skip
        return
    target = os.path.realpath(output)
    for own in store.files():
        if target == os.path.realpath(own) or _same_file(output, own):
            raise OutputError("is the store's own file: writing there would replace the store", text=output)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # either is not there (or cannot be read): not the same file
        return False


@contextmanager
def cli_store(args: argparse.Namespace, *, create: bool = False) -> Iterator[Store]:
    """The store at ``--db``, closed after use; only the commands that set one up (``init``, ``naan
    add``, ``import --from``) pass ``create``, every other one says there is no store (a mistyped
    ``--db`` must not leave an empty store behind)."""
    from ..store import open_store  # (not at import: `pidkit inspect` and friends never load the store)

    store = open_store(args.db, create=create)
    try:
        yield store
    finally:
        store.close()
