"""Entry point of the ``pidkit`` command.

Each command group lives in its own module with a ``register(subparsers)`` function; a command's
handler takes the parsed arguments and returns the exit code.  Exit codes (DESIGN.md): 0 ok, 1 some
input invalid, 2 usage error.  Errors go to stderr as one line naming the input, never a traceback.

>>> main(["--version"])  # doctest: +ELLIPSIS
pidkit ...
0
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sqlite3
import sys
from collections.abc import Sequence

from ..errors import PidkitError
from ..store.urls import default_url, redact_url
from ._common import EXIT_INVALID, EXIT_USAGE, CliError, error_line
from .version import VersionAction

#: Command-group modules, in the order their commands are listed in ``--help``.
COMMAND_MODULES: tuple[str, ...] = (
    "pidkit.cli.ids",
    "pidkit.cli.ark",
    "pidkit.cli.registry",
    "pidkit.cli.store",
    "pidkit.cli.users",
    "pidkit.cli.gedcom",
    "pidkit.cli.serve",
    "pidkit.cli.edge",
    "pidkit.cli.completion",
    "pidkit.cli.version",
)


def build_parser() -> argparse.ArgumentParser:
    """The full ``pidkit`` argument parser (also used to generate the CLI reference).

    >>> "inspect" in build_parser().format_help()
    True
    """
    parser = argparse.ArgumentParser(
        prog="pidkit",
        description=(
            "Persistent record identifiers: XarkId, atproto TIDs and record keys, GEDCOM UIDs, "
            "Library.Link resource ids, and ARKs with NOID minting, bindings and a resolver."
        ),
        epilog="Exit status: 0 ok, 1 some input invalid or an operation refused, 2 usage error.",
    )
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pidkit`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage or --help/--version
        code = exc.code
        return code if isinstance(code, int) else EXIT_USAGE
    try:
        result: int = args.func(args)
    except CliError as exc:
        error_line(str(exc))
        return exc.code
    except PidkitError as exc:
        error_line(str(exc))
        return EXIT_INVALID
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `pidkit new xarkid -n 1000000 | head`): not an error.
        _silence_stdout()
        return 0
    except OSError as exc:
        name = f" {exc.filename!r}" if exc.filename else ""
        error_line(f"cannot access{name}: {exc.strerror or exc}")
        return EXIT_INVALID
    except Exception as exc:
        if not _is_database_error(exc):
            raise
        # the database failed under a command (a damaged file, a server gone): the store names it
        url = redact_url(getattr(args, "db", None) or default_url())
        error_line(f"the store failed: {exc} (store {url})")
        return EXIT_INVALID
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    return result


def _is_database_error(exc: Exception) -> bool:
    """Whether ``exc`` comes from the database driver (SQLite, or psycopg when it is loaded).

    >>> import sqlite3
    >>> _is_database_error(sqlite3.DatabaseError("database disk image is malformed"))
    True
    >>> _is_database_error(KeyError("x"))
    False
    """
    drivers: list[type[Exception]] = [sqlite3.Error]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        drivers.append(psycopg.Error)
    return isinstance(exc, tuple(drivers))


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):  # stdout may not be a real file
        os.dup2(devnull, sys.stdout.fileno())


def entry() -> None:
    """Console-script entry point: ``sys.exit(main())``."""
    sys.exit(main())
