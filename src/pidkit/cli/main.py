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
from ._common import EXIT_INVALID, EXIT_USAGE, CliError, error_line
from .version import VersionAction

#: Each command and the command-group module that registers it, the modules in the order their commands
#: are listed in ``--help`` (``tests/test_cli_commands.py`` holds this table to what each module
#: registers).  ``pidkit COMMAND`` imports only COMMAND's module: the others' imports (the GEDCOM tools,
#: the registry, the store) would double the start of every command.
MODULE_OF: dict[str, str] = {
    **dict.fromkeys(("convert", "inspect", "llid", "new", "rkey"), "pidkit.cli.ids"),
    **dict.fromkeys(("ark", "noid"), "pidkit.cli.ark"),
    "registry": "pidkit.cli.registry",
    **dict.fromkeys(
        ("apikey", "bind", "check", "delete", "dump", "export", "fetch", "history", "hold", "import", "init",
         "migrate-store", "mint", "minter", "naan", "restore", "tombstone"),
        "pidkit.cli.store",
    ),
    "user": "pidkit.cli.users",
    "gedcom": "pidkit.cli.gedcom",
    "serve": "pidkit.cli.serve",
    "edge": "pidkit.cli.edge",
    "completion": "pidkit.cli.completion",
    "version": "pidkit.cli.version",
}

#: Command-group modules, in the order their commands are listed in ``--help``.
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(MODULE_OF.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``pidkit`` argument parser (also used to generate the CLI reference): every command, or, when
    ``command`` names one, only the commands of its module (what parsing ``pidkit COMMAND ...`` needs).

    >>> "inspect" in build_parser().format_help()
    True
    >>> help_text = build_parser("ark").format_help()
    >>> "noid" in help_text, "gedcom" in help_text
    (True, False)
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
    only = MODULE_OF.get(command) if command is not None else None
    for name in (only,) if only is not None else COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pidkit`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code.  A first
    argument that names a command builds the parser of that command's module alone (:data:`MODULE_OF`);
    anything else (``--help``, an unknown command) builds the whole one."""
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(given[0] if given else None)
    try:
        args = parser.parse_args(given)
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
    except UnicodeDecodeError as exc:  # standard input read as text, strictly (the locale says how)
        error_line(f"input is not {exc.encoding} text: byte 0x{exc.object[exc.start]:02x}")
        return EXIT_INVALID
    except Exception as exc:
        if not _is_database_error(exc):
            raise
        # the database failed under a command (a damaged file, a server gone): the store names it
        from ..store.urls import default_url, redact_url  # here: most commands never open a store

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
