"""``pidkit gedcom`` commands: audit, add-uids, migrate, match.

Files are streamed (memory bounded by the largest record; ``migrate`` reads its input twice, keeping an
index of the cross-reference identifiers, and spools standard input to a temporary file for it);
outputs are written atomically (``-o OUT``,
or ``--in-place`` keeping the file as it was in the first free name of ``FILE.bak``, ``FILE.bak.1`` …:
an earlier backup is never overwritten); a progress bar is shown on stderr for large files when stderr
is a terminal; ``--json`` prints one JSON object for machines.  Exit status: 0 ok, 1 problems found
(audit: duplicate UIDs, bad checksums, version rules; match: conflicts) or unreadable input, 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Final, TextIO, TypeAlias

from ..atomic import STDIO, open_output, require_regular_file
from ..errors import GedcomError, OutputError
from ..gedcom.add import AddReport, add_uids
from ..gedcom.audit import AuditReport, audit
from ..gedcom.match import MatchReport, match
from ..gedcom.migrate import MigrateReport, index_file, migrate
from ..gedcom.reader import MAX_LINE_BYTES, GedcomReader
from ..gedcom.tags import DEFAULT_RECORD_TYPES
from ..gedcom.writer import write_stream
from ._common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, CliError, Subparsers, one_line

#: Show a progress bar for files at least this large (bytes), when stderr is a terminal.
PROGRESS_MIN_BYTES = 8 << 20


def register(sub: Subparsers) -> None:
    """Add ``pidkit gedcom …`` to ``sub``."""
    parser = sub.add_parser(
        "gedcom",
        help="audit, add and match GEDCOM _UID/UID values (lossless), migrate a file to GEDCOM 7 (streaming)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    gsub = parser.add_subparsers(dest="gedcom_command", metavar="COMMAND", required=True)

    p = gsub.add_parser("audit", help="report the UIDs of a file: missing, forms, duplicates, version rules")
    p.add_argument("file", metavar="FILE", help="the GEDCOM file; - reads standard input")
    p.add_argument("--types", default=None, help="record types whose missing UIDs are listed (a,b,…)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_max_line(p)
    p.set_defaults(func=_audit)

    p = gsub.add_parser("add-uids", help="give records (and optionally events) without a UID a new one")
    p.add_argument("file", metavar="FILE", help="the GEDCOM file; - reads standard input")
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
    _add_max_line(p)
    p.set_defaults(func=_add_uids)

    p = gsub.add_parser(
        "migrate",
        help="convert a GEDCOM 5.x file to GEDCOM 7.0 (_UID → UID, values verbatim); report every loss",
    )
    p.add_argument("file", metavar="FILE", help="the GEDCOM file; - reads standard input")
    _add_output(p)
    p.add_argument(
        "--strict", action="store_true", help="a loss (data 7.0 cannot hold) is an error: nothing is written"
    )
    p.add_argument(
        "--add-uids", action="store_true", help="records without a UID get a new UUID in the same pass"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_max_line(p)
    p.set_defaults(func=_migrate)

    p = gsub.add_parser("match", help="records of two files that share a UID, and conflicts")
    p.add_argument("a", metavar="A.ged", help="the first file; - reads standard input")
    p.add_argument("b", metavar="B.ged", help="the second file; - reads standard input (not both)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_max_line(p)
    p.set_defaults(func=_match)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a positive number of bytes: {text!r}")
    return value


def _add_max_line(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-line-bytes",
        type=_positive,
        default=MAX_LINE_BYTES,
        metavar="N",
        help=f"a longer line is an error: the file is not read further (default {MAX_LINE_BYTES})",
    )


def _add_output(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "-o", "--output", metavar="OUT", help="write the result to OUT (atomically; - is standard output)"
    )
    group.add_argument(
        "--in-place",
        action="store_true",
        help="replace FILE, keeping a backup in the first free name of FILE.bak, FILE.bak.1, … (named on "
        "stderr; never over an earlier backup)",
    )


def _types(value: str | None) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_RECORD_TYPES
    types = tuple(t.strip().upper() for t in value.split(",") if t.strip())
    if not types:
        raise CliError("--types: no record type given", EXIT_USAGE)
    return types


#: How standard input is named in reports and messages.
STDIN_NAME = "<stdin>"


@contextlib.contextmanager
def _open(path: str, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[GedcomReader]:
    """Open a GEDCOM file (``-``: standard input), with a progress bar on a terminal for large files."""
    if path == STDIO:
        stdin = sys.stdin.buffer
        limit = max_line_bytes
        with _reader(STDIN_NAME, lambda: GedcomReader(stdin, name=STDIN_NAME, max_line_bytes=limit)) as rd:
            yield rd
        return
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0  # GedcomReader.open names the problem

    def opener(progress: Callable[[int], None] | None = None) -> Callable[[], GedcomReader]:
        return lambda: GedcomReader.open(path, progress=progress, max_line_bytes=max_line_bytes)

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
            redirect_stdout=False,  # stdout may be the GEDCOM itself (-o -): never through the bar's console
            redirect_stderr=False,
        ) as progress:
            task = progress.add_task(os.path.basename(path), total=size)
            advance: Callable[[int], None] = lambda n: progress.advance(task, n)  # noqa: E731
            with _reader(path, opener(advance), close=True) as reader:
                yield reader
    else:
        with _reader(path, opener(), close=True) as reader:
            yield reader


@contextlib.contextmanager
def _reader(name: str, opener: Callable[[], GedcomReader], *, close: bool = False) -> Iterator[GedcomReader]:
    """The reader ``opener`` makes, checked to be a GEDCOM file; its errors name ``name``."""
    try:
        reader = opener()
    except GedcomError as exc:
        raise CliError(f"{name}: {exc}") from exc
    try:
        reader.require_gedcom()
        yield reader
    except GedcomError as exc:
        raise CliError(f"{name}: {exc}") from exc
    finally:
        if close:
            reader.close()


_Report: TypeAlias = AuditReport | AddReport | MigrateReport | MatchReport


def _print(report: _Report, as_json: bool, out: TextIO | None = None, *, backup: str | None = None) -> None:
    """Print ``report`` to ``out`` (default stdout); a ``backup`` that ``--in-place`` kept is named in the
    JSON object (``"backup"``), or else on stderr."""
    out = out or sys.stdout
    if as_json:
        obj = report.to_json()
        if backup is not None:
            obj["backup"] = backup
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        return
    if backup is not None:
        sys.stderr.write(f"pidkit: backup (the file before this run) kept as {one_line(backup)}\n")
    if isinstance(report, AuditReport):
        text = audit_text(report)
    elif isinstance(report, AddReport):
        text = add_text(report)
    elif isinstance(report, MigrateReport):
        text = migrate_text(report)
    else:
        text = match_text(report)
    out.write(text + "\n")


def _warn_lines(path: str, warnings: list[str], counts: dict[str, int]) -> None:
    """Read-warnings of a changing command go to stderr (the first 10, then a count)."""
    for w in warnings[:10]:
        sys.stderr.write(f"pidkit: warning: {path}: {w}\n")
    total = sum(counts.values())
    if total > 10:
        sys.stderr.write(f"pidkit: warning: {path}: … {total - 10} more lines read with warnings\n")


def _is_stdout(path: str) -> bool:
    """Whether writing ``path`` writes standard output (``-``, ``/dev/stdout``, the file it goes to …)."""
    if path == STDIO:
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except OSError:
        return False


def _check_input(args: argparse.Namespace) -> None:
    """Refuse ``--in-place`` on what cannot be replaced, before reading it (a FIFO would block)."""
    if not args.in_place:
        return
    if args.file == STDIO:
        raise CliError("--in-place: standard input cannot be edited in place", EXIT_USAGE)
    try:
        require_regular_file(args.file)
    except OutputError as exc:
        raise CliError(str(exc)) from exc


def _as_given(path: str, backups: list[str]) -> str | None:
    """The backup ``--in-place`` kept of ``path`` (``backups``: none or its name, next to the file ``path``
    resolves to) as the user would name it: next to ``path`` as given where that is the same file (no
    symbolic link in between), else as it is.

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     kept = os.path.join(d, "t.ged.bak")
    ...     open(kept, "w").close()
    ...     _as_given(os.path.join(d, "t.ged"), [kept]) == kept
    True
    >>> _as_given("t.ged", []) is None
    True
    """
    if not backups:
        return None
    backup = backups[0]
    near = os.path.join(os.path.dirname(path), os.path.basename(backup))
    with contextlib.suppress(OSError):
        if os.path.samefile(near, backup):
            return near
    return backup


@contextlib.contextmanager
def _output(args: argparse.Namespace, on_backup: Callable[[str], None]) -> Iterator[tuple[IO[bytes], TextIO]]:
    """The stream the GEDCOM goes to (``-o OUT`` or ``--in-place``, whose backup's name ``on_backup`` is
    given) and the one the report goes to (standard output, or standard error when the GEDCOM goes to
    standard output)."""
    target = args.file if args.in_place else args.output
    report_to = sys.stderr if _is_stdout(target) else sys.stdout
    try:
        with open_output(target, backup=args.in_place, on_backup=on_backup) as fh:
            yield fh, report_to
    except OutputError as exc:
        raise CliError(str(exc)) from exc


def _audit(args: argparse.Namespace) -> int:
    with _open(args.file, args.max_line_bytes) as reader:
        report = audit(reader, types=_types(args.types))
    _print(report, args.json)
    return EXIT_OK if report.ok else EXIT_INVALID


def _add_uids(args: argparse.Namespace) -> int:
    _check_input(args)
    types = _types(args.types)
    backups: list[str] = []
    with _open(args.file, args.max_line_bytes) as reader:
        report, records = add_uids(reader, types=types, events=args.events, xarkid=args.xarkid)
        with _output(args, backups.append) as (fh, report_to):
            write_stream(fh, reader.bom, records)
    if not args.json:
        _warn_lines(reader.name, report.warnings, report.warning_counts)
    _print(report, args.json, report_to, backup=_as_given(args.file, backups))
    return EXIT_OK


def _migrate(args: argparse.Namespace) -> int:
    _check_input(args)
    path = args.file
    backups: list[str] = []
    with contextlib.ExitStack() as stack:
        if path == STDIO or not os.path.isfile(path):  # read twice: keep a copy of what cannot be re-read
            spool = stack.enter_context(tempfile.TemporaryFile())
            source = sys.stdin.buffer if path == STDIO else stack.enter_context(_open_binary(path))
            shutil.copyfileobj(source, spool)
            name = STDIN_NAME if path == STDIO else path

            def reopen() -> GedcomReader:
                spool.seek(0)
                return GedcomReader(spool, name=name, max_line_bytes=args.max_line_bytes)

            first = stack.enter_context(_reader(name, reopen))
            index = index_file(first)
            second = stack.enter_context(_reader(name, reopen))
        else:
            with _open(path, args.max_line_bytes) as first:
                index = index_file(first)
            second = stack.enter_context(_open(path, args.max_line_bytes))
        reader = second
        report, records = migrate(reader, index, strict=args.strict, add_uids=args.add_uids)
        with _output(args, backups.append) as (fh, report_to):
            write_stream(fh, report.bom, records)
    if not args.json:
        _warn_lines(reader.name, report.warnings, report.warning_counts)
    _print(report, args.json, report_to, backup=_as_given(args.file, backups))
    return EXIT_OK


@contextlib.contextmanager
def _open_binary(path: str) -> Iterator[IO[bytes]]:
    """``path`` opened for reading (a FIFO, a device …), its error one line naming it."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from exc
    with fh:
        yield fh


def _match(args: argparse.Namespace) -> int:
    if args.a == STDIO and args.b == STDIO:
        raise CliError("match: only one of A and B can be - (standard input)", EXIT_USAGE)
    with _open(args.a, args.max_line_bytes) as a, _open(args.b, args.max_line_bytes) as b:
        report = match(a, b)
    _print(report, args.json)
    return EXIT_OK if report.ok else EXIT_INVALID


# -- text rendering of the reports ---------------------------------------------------------------------

_PROBLEM_TEXT: Final = {
    "bad-checksum": "PAF-form UIDs whose checksum does not match",
    "empty": "UID lines without a value",
    "_UID-in-7": "_UID in a GEDCOM 7 file (7.0 uses UID; run migrate)",
    "not-uuid-7": "GEDCOM 7 UIDs not in the RFC 9562 UUID form (kept verbatim; new ones should be UUIDs)",
    "no-home-7": "GEDCOM 7 UIDs where 7.0 defines none",
    "UID-in-5": "UID tags in a GEDCOM 5.x file (5.x programs read _UID)",
    "repeated-in-record": "the same UID twice on one structure",
}

_CONFLICT_TEXT: Final = {
    "type": "one UID on records of different types in A and B",
    "same-file-a": "one UID on two records of A",
    "same-file-b": "one UID on two records of B",
    "one-to-many": "one record matched to two different records of the other file",
}


def audit_text(report: AuditReport) -> str:
    """An audit report as text (what ``pidkit gedcom audit`` prints without ``--json``).

    >>> from pidkit.gedcom import read_bytes
    >>> print(audit_text(audit(read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n"))))
    <stream>: GEDCOM (no version), utf-8
    records        total  with UID  without
      INDI              1         1        0
    UIDs at level 1: 1 (other 1)
    tags: _UID 1
    ok
    """
    out = [f"{report.file}: GEDCOM {report.version or '(no version)'}, {report.codec}"]
    out.append("records        total  with UID  without")
    for t in sorted(report.records):
        out.append(f"  {t:<12} {report.records[t]:>6} {report.with_uid[t]:>9} {report.without_uid[t]:>8}")
    forms = ", ".join(f"{k} {v}" for k, v in sorted(report.forms.items())) or "none"
    out.append(f"UIDs at level 1: {report.uids - report.level2} ({forms})")
    if report.level2:
        forms2 = ", ".join(f"{k} {v}" for k, v in sorted(report.level2_forms.items()))
        out.append(f"UIDs at level 2: {report.level2} ({forms2})")
    if report.tags:
        out.append("tags: " + ", ".join(f"{k} {v}" for k, v in sorted(report.tags.items())))
    if report.duplicate_count:
        out.append(f"same UID on two structures: {report.duplicate_count}")
        for a, b in report.duplicates[:20]:
            out.append(
                f"  line {b.line} ({b.record} {b.xref or ''}) repeats {b.value!r} of line {a.line}"
            )
    if report.probable_count:
        out.append(f"probably the same UID (same 32 data digits, a bad checksum): {report.probable_count}")
        for a, b in report.probable[:20]:
            out.append(f"  line {b.line} ({b.record} {b.xref or ''}) {b.value!r} ~ line {a.line}")
    for kind, count in sorted(report.problem_counts.items()):
        out.append(f"{_PROBLEM_TEXT.get(kind, kind)}: {count}")
        for _, s in [p for p in report.problems if p[0] == kind][:10]:
            out.append(f"  line {s.line}: {s.level} {s.tag} {s.value}")
    if report.warning_counts:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(report.warning_counts.items()))
        out.append(f"lines read with warnings: {shown}")
        out.extend(f"  {w}" for w in report.warnings[:10])
    out.append("ok" if report.ok else "problems found")
    return "\n".join(out)


def add_text(report: AddReport) -> str:
    """An add-uids report as text (what ``pidkit gedcom add-uids`` prints without ``--json``).

    >>> from pidkit.gedcom import read_bytes
    >>> report, records = add_uids(read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n0 TRLR\\n"), new_uid=lambda: "X1")
    >>> _ = list(records)
    >>> print(add_text(report))
    <stream>: added 1 _UID line(s): records INDI 1
    """
    rec = ", ".join(f"{k} {v}" for k, v in sorted(report.added_records.items())) or "none"
    out = [f"{report.file}: added {report.total} {report.tag} line(s): records {rec}"]
    if report.added_events:
        out.append("  events " + ", ".join(f"{k} {v}" for k, v in sorted(report.added_events.items())))
    if report.kept:
        out.append("  kept existing: " + ", ".join(f"{k} {v}" for k, v in sorted(report.kept.items())))
    return "\n".join(out)


def migrate_text(report: MigrateReport) -> str:
    """A migrate report as text (what ``pidkit gedcom migrate`` prints without ``--json``).

    >>> from pidkit.gedcom.migrate import migrate_bytes
    >>> data = b"0 HEAD\\n1 GEDC\\n2 VERS 5.5.1\\n1 FILE x.ged\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n"
    >>> report, _ = migrate_bytes(data)
    >>> print(migrate_text(report))
    <stream>: GEDCOM 5.5.1 → 7.0; renamed 1 _UID line(s) to UID
      1 value(s) kept verbatim that are not RFC 9562 UUIDs (GEDCOM 7 recommends UUIDs for new UIDs only):
        line 6: X1
      1 loss(es) (data GEDCOM 7 cannot hold where it stood; --strict makes them an error):
        line 4: HEAD.FILE x.ged (not in GEDCOM 7), dropped
    """
    version = report.version or "(no version)"
    target = "7.0" if not version.startswith("7") else f"{version} (already GEDCOM 7: only UID tags migrated)"
    out = [f"{report.file}: GEDCOM {version} → {target}; renamed {report.renamed} _UID line(s) to UID"]
    if report.added_uids:
        out.append(f"  added {report.added_uids} UID line(s) to records without one")
    if report.new_records:
        made = ", ".join(f"{k} {v}" for k, v in sorted(report.new_records.items()))
        out.append(f"  new records from inline structures: {made}")
    if report.xrefs_renamed:
        out.append(f"  {report.xrefs_renamed} cross-reference identifier(s) renamed (not GEDCOM 7's)")
    if report.schema:
        out.append("  HEAD.SCHMA: " + ", ".join(f"{t} {u}" for t, u in report.schema.items()))
    if report.not_uuid_count:
        out.append(
            f"  {report.not_uuid_count} value(s) kept verbatim that are not RFC 9562 UUIDs "
            "(GEDCOM 7 recommends UUIDs for new UIDs only):"
        )
        out.extend(f"    line {s.line}: {s.value}" for s in report.not_uuid[:20])
    if report.no_home_count:
        out.append(f"  {report.no_home_count} _UID line(s) with no GEDCOM 7 home, left as _UID:")
        out.extend(f"    line {s.line}: under {s.parent}" for s in report.no_home[:20])
    if report.empty:
        out.append(f"  {len(report.empty)} empty _UID line(s) left as they are")
    losses = sum(report.loss_counts.values())
    if losses:
        out.append(
            f"  {losses} loss(es) (data GEDCOM 7 cannot hold where it stood; --strict makes them an error):"
        )
        out.extend(f"    {line}" for line in report.losses[:20])
        if losses > 20:
            out.append(f"    … {losses - 20} more (--json lists {len(report.losses)})")
    return "\n".join(out)


def match_text(report: MatchReport) -> str:
    """A match report as text (what ``pidkit gedcom match`` prints without ``--json``).

    >>> from pidkit.gedcom import read_bytes
    >>> a = read_bytes(b"0 HEAD\\n0 @I1@ INDI\\n1 _UID X1\\n0 TRLR\\n")
    >>> print(match_text(match(a, read_bytes(b"0 HEAD\\n0 @P1@ INDI\\n1 UID X1\\n"))))
    1 record(s) matched by UID; 0 UID(s) only in A, 0 only in B
      INDI @I1@ (A line 3) = INDI @P1@ (B line 3)
    """
    out = [
        f"{report.match_count} record(s) matched by UID; "
        f"{report.only_a} UID(s) only in A, {report.only_b} only in B"
    ]
    for a, b in report.matches[:50]:
        out.append(
            f"  {a.record} {a.xref or ''} (A line {a.line}) = {b.record} {b.xref or ''} (B line {b.line})"
        )
    if report.match_count > 50:
        out.append(f"  … {report.match_count - 50} more (use --json)")
    if report.probable_count:
        out.append(
            f"{report.probable_count} probable match(es), not merged (same 32 data digits, a bad checksum)"
        )
        for a, b in report.probable[:20]:
            out.append(f"  {a.value!r} (A line {a.line}) ~ {b.value!r} (B line {b.line})")
    for kind, count in sorted(report.conflict_counts.items()):
        out.append(f"conflicts, {_CONFLICT_TEXT[kind]}: {count}")
        for _, a, b in [c for c in report.conflicts if c[0] == kind][:20]:
            out.append(
                f"  {a.value!r}: {a.record} {a.xref or ''} line {a.line} / "
                f"{b.record} {b.xref or ''} line {b.line}"
            )
    return "\n".join(out)
