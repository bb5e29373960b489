"""Helpers shared by the command modules: reading ids from arguments or stdin, error lines, exit codes.

>>> list(iter_inputs(["a", "b"]))
['a', 'b']
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

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


def error_line(message: str) -> None:
    """Write ``pidkit: error: MESSAGE`` to stderr as one line."""
    one_line = " ".join(message.splitlines())
    sys.stderr.write(f"pidkit: error: {one_line}\n")
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
