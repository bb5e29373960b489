"""``pidkit gedcom`` commands: audit, add-uids, migrate, match.

Files are streamed (memory bounded by the largest record); outputs are written atomically (``-o OUT``,
or ``--in-place`` keeping ``FILE.bak``); a progress bar is shown on stderr for large files when stderr
is a terminal; ``--json`` prints one JSON object for machines.  Exit status: 0 ok, 1 problems found
(audit: duplicate UIDs, bad checksums, version rules; match: conflicts) or unreadable input, 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import GedcomError
from ..gedcom.reader import GedcomReader
from ..gedcom.uids import DEFAULT_RECORD_TYPES, add_uids, audit, match, migrate
from ..gedcom.writer import write_records
from ._common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, CliError, Subparsers

#: Show a progress bar for files at least this large (bytes), when stderr is a terminal.
PROGRESS_MIN_BYTES = 8 << 20


def register(sub: Subparsers) -> None:
    """Add ``pidkit gedcom …`` to ``sub``."""
    parser = sub.add_parser(
        "gedcom",
        help="audit, add, migrate and match GEDCOM _UID/UID values (lossless, streaming)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    gsub = parser.add_subparsers(dest="gedcom_command", metavar="COMMAND", required=True)

    p = gsub.add_parser("audit", help="report the UIDs of a file: missing, forms, duplicates, version rules")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--types", default=None, help="record types whose missing UIDs are listed (a,b,…)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_audit)

    p = gsub.add_parser("add-uids", help="give records (and optionally events) without a UID a new one")
    p.add_argument("file", metavar="FILE")
    _add_output(p)
    p.add_argument(
        "--types",
        default=None,
        help=f"record types to give UIDs (comma-separated; default {','.join(DEFAULT_RECORD_TYPES)})",
    )
    p.add_argument("--events", action="store_true", help="also give events (level 2) a UID")
    p.add_argument(
        "--xarkid", action="store_true", help="new values are XarkIds (compact in 5.x, GUID form in 7.0)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_add_uids)

    p = gsub.add_parser("migrate", help="rename _UID to UID for GEDCOM 7 (values verbatim); report the rest")
    p.add_argument("file", metavar="FILE")
    _add_output(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_migrate)

    p = gsub.add_parser("match", help="records of two files that share a UID, and conflicts")
    p.add_argument("a", metavar="A.ged")
    p.add_argument("b", metavar="B.ged")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_match)


def _add_output(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT (atomically)")
    group.add_argument("--in-place", action="store_true", help="replace FILE, keeping a backup FILE.bak")


def _types(value: str | None) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_RECORD_TYPES
    types = tuple(t.strip().upper() for t in value.split(",") if t.strip())
    if not types:
        raise CliError("--types: no record type given", EXIT_USAGE)
    return types


@contextlib.contextmanager
def _open(path: str) -> Iterator[GedcomReader]:
    """Open a GEDCOM file, with a progress bar on a terminal for large files."""
    size = os.path.getsize(path)
    if size >= PROGRESS_MIN_BYTES and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as progress:
            task = progress.add_task(os.path.basename(path), total=size)
            advance: Callable[[int], None] = lambda n: progress.advance(task, n)  # noqa: E731
            with _reader(path, advance) as reader:
                yield reader
    else:
        with _reader(path, None) as reader:
            yield reader


@contextlib.contextmanager
def _reader(path: str, progress: Callable[[int], None] | None) -> Iterator[GedcomReader]:
    try:
        reader = GedcomReader.open(path, progress=progress)
    except GedcomError as exc:
        raise CliError(f"{path}: {exc}") from exc
    with reader:
        try:
            yield reader
        except GedcomError as exc:
            raise CliError(f"{path}: {exc}") from exc


def _print(report: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report.to_text() + "\n")


def _warn_lines(path: str, warnings: list[str], counts: dict[str, int]) -> None:
    """Read-warnings of a changing command go to stderr (the first 10, then a count)."""
    for w in warnings[:10]:
        sys.stderr.write(f"pidkit: warning: {path}: {w}\n")
    total = sum(counts.values())
    if total > 10:
        sys.stderr.write(f"pidkit: warning: {path}: … {total - 10} more lines read with warnings\n")


def _target(args: argparse.Namespace) -> tuple[str, bool]:
    return (args.file, True) if args.in_place else (args.output, False)


def _audit(args: argparse.Namespace) -> int:
    with _open(args.file) as reader:
        report = audit(reader, types=_types(args.types))
    _print(report, args.json)
    return EXIT_OK if report.ok else EXIT_INVALID


def _add_uids(args: argparse.Namespace) -> int:
    target, backup = _target(args)
    with _open(args.file) as reader:
        report, records = add_uids(reader, types=_types(args.types), events=args.events, xarkid=args.xarkid)
        write_records(target, reader.bom, records, backup=backup)
    if not args.json:
        _warn_lines(args.file, report.warnings, report.warning_counts)
    _print(report, args.json)
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    target, backup = _target(args)
    with _open(args.file) as reader:
        report, records = migrate(reader)
        write_records(target, reader.bom, records, backup=backup)
    if not args.json:
        _warn_lines(args.file, report.warnings, report.warning_counts)
    _print(report, args.json)
    return EXIT_OK


def _match(args: argparse.Namespace) -> int:
    with _open(args.a) as a, _open(args.b) as b:
        report = match(a, b)
    _print(report, args.json)
    return EXIT_OK if report.ok else EXIT_INVALID
