"""The back office's import and export.

**Import** (``/office/import``): the user uploads a file (``multipart/form-data``, bounded by the
service's request body limit, ``PIDKIT_MAX_BODY``) in one of three formats — JSON Lines
(:mod:`pidkit.store.jsonl`), CSV with the same fields (:mod:`pidkit.store.csvformat`), or an EZID batch
download (ANVL, CSV or XML; plain, gzip or ZIP: :func:`pidkit.importers.ezid.upload_bindings`).  Every
record becomes the JSON Lines record the store's one parser checks.  The **preview** names every bad
line (line number, or the download's row / record, and the reason): unreadable, outside the user's
scope (the one scope rule, :meth:`pidkit.store.Scope.allows`), or refused by the store — the store's own
import runs as a dry run (:meth:`~pidkit.store.Store.import_jsonl` with ``dry_run``: checked in its
transaction, then rolled back), so nothing is written at preview.  Only a file with no bad line can be
applied.

An **administrator** may also upload a whole minter database, as ``pidkit import --from noid|arklet``
reads it (:mod:`pidkit.importers`): a NOID ``noid.bdb`` or an arklet SQLite file.  Such an import adds
NAANs, shoulders, minters, the minted log and holds — beyond one NAAN's bindings — so no other user is
offered these formats, and a form that names one anyway is refused (403).  Its preview is the
importer's own report run as a dry run (``dry_run=True``: every record imported, skipped, refused or
kept, with the reason; nothing written); a database with a refused record cannot be applied.  The
uploaded file is what is staged (below); the confirmation runs the importer on it again, all or
nothing (one restore in merge mode), recording the change in the history as the user (``principal``).

Between preview and apply the checked records are **staged on the server**: a file named by a random
256-bit token in a private directory (mode 0700), holding the SHA-256 of the session token it belongs
to, the user's name and the time; the confirmation form carries only the token.  Applying checks that
the staged copy belongs to this session and user and is less than :data:`STAGED_FOR` old, checks every
line's scope again, and imports it all or nothing as the user (each binding gets an ``import`` history
row naming ``user:NAME``); the staged copy is then deleted.  Copies older than :data:`STAGED_FOR` are
removed whenever a file is staged.  (Several servers behind one address need sticky sessions or a
shared ``TMPDIR``; without them a confirmation that reaches another server is asked to upload again.)

**Export** (``/office/export``): a NAAN's or a shoulder's bindings, or the results of a search (the same
query as the Find page), as JSON Lines or CSV, streamed as a download (``Content-Disposition:
attachment``); only what the user's scope allows.  CSV cells are safe from formula injection
(:func:`pidkit.store.csvformat.quote`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from .. import importers
from ..ark.chars import check_naan, check_shoulder
from ..codecs import iso_z
from ..errors import PidkitError
from ..importers.common import ImportReport, plural
from ..importers.ezid import upload_bindings
from ..store import (
    Binding,
    ImportRejectedError,
    NotOwnerError,
    Principal,
    Search,
    Store,
    User,
    binding_line,
    parse_import_line,
    split_lines,
)
from ..store.csvformat import binding_row, csv_lines, header_row, read_csv_records
from .auth import csrf_refused, form_post
from .office import FIND_FIELDS
from .officeviews import OFFICE_CSS, csrf_field, field, message, office_page, select
from .sessions import FormError, Signed, csrf_ok, signed_in, to_signin, with_headers
from .stores import settings_of, store_of
from .templates import esc

__all__ = ["DATABASES", "FORMATS", "STAGED_FOR", "Checked", "Upload", "check", "formats", "read_upload",
           "router", "scope_problem", "stage", "stage_database", "staged", "staged_database", "to_lines"]

router = APIRouter(include_in_schema=False)
_log = logging.getLogger(__name__)

#: The upload formats, by the form's value.
FORMATS: Final = {
    "jsonl": "JSON Lines (one binding per line, as pidkit exports)",
    "csv": "CSV with pidkit's columns (as pidkit exports)",
    "ezid": "EZID batch download (ANVL, CSV or XML; plain, gzip or ZIP)",
}
#: The formats only an administrator imports: a minter database, read by :func:`pidkit.importers.run`.
DATABASES: Final = {
    "noid": "NOID minter database (noid.bdb; administrators only)",
    "arklet": "arklet database (its SQLite file; administrators only)",
}
#: The most a compressed EZID download (gzip, ZIP) may unpack to: 64 MiB.
UNPACKED_LIMIT: Final = 64 * 2**20
#: How long a previewed import waits for its confirmation.
STAGED_FOR: Final = _dt.timedelta(hours=1)
#: Most bad lines listed on the preview (all are counted).
MAX_LISTED: Final = 1000
#: Bindings per store read of an export.
_PAGE: Final = 500
#: The statuses a search may ask for, in words.
_STATUSES: Final = {"": "Any status", "public": "Public", "reserved": "Reserved", "unavailable": "Withdrawn",
                    "tombstoned": "Tombstoned"}  # fmt: skip
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")


# -- reading the upload ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Upload:
    """A posted upload form: its fields and the file's name and bytes."""

    fields: dict[str, str]
    filename: str
    data: bytes


#: Most parts a posted upload may have (the import form has a few fields and one file).
MAX_PARTS: Final = 16
#: A part's headers (unfolded) that make it a multipart of its own.
_NESTED: Final = re.compile(rb"(?im)^content-type:[ \t]*multipart/")


def _is_multipart(part: bytes) -> bool:
    """Whether the headers of ``part`` (a multipart body's text between two boundaries) make it a
    multipart of its own.

    >>> _is_multipart(b'\\r\\nContent-Type:\\r\\n  Multipart/Mixed; boundary=z\\r\\n\\r\\n--z')
    True
    >>> _is_multipart(b'\\r\\nContent-Disposition: form-data; name="multipart/x"\\r\\n\\r\\nmultipart/')
    False
    """
    headers = re.split(rb"\r?\n\r?\n", part, maxsplit=1)[0]
    return _NESTED.search(re.sub(rb"\r?\n[ \t]+", b" ", headers)) is not None


def read_upload(content_type: str, body: bytes) -> Upload:
    """A ``multipart/form-data`` body (the standard library's MIME parser; the body is already bounded by
    the service's limit): its text fields (first of each) and its one file.

    >>> body = (b'--b\\r\\nContent-Disposition: form-data; name="csrf"\\r\\n\\r\\nt\\r\\n--b\\r\\n'
    ...         b'Content-Disposition: form-data; name="file"; filename="x.jsonl"\\r\\n\\r\\n'
    ...         b'{}\\r\\n--b--\\r\\n')
    >>> u = read_upload("multipart/form-data; boundary=b", body)
    >>> u.fields, u.filename, u.data
    ({'csrf': 't'}, 'x.jsonl', b'{}')
    """
    if content_type.split(";")[0].strip().lower() != "multipart/form-data":
        raise FormError(415, "an upload is posted as multipart/form-data")
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    boundary = BytesParser(policy=HTTP).parsebytes(head, headersonly=True).get_boundary()
    if not boundary:  # none, or empty: the parser would take every line that begins with "--" for one
        raise FormError(400, "the upload is not a multipart form (no boundary)")
    # The parser's time grows faster than the number of parts (20,000 empty ones took 10 s): the parts
    # are counted first, and one that is itself multipart (parts the count does not see) is refused.
    pieces = body.split(b"--" + boundary.encode("latin-1", "replace"))
    if len(pieces) > MAX_PARTS + 2:
        raise FormError(400, f"the upload has more than {MAX_PARTS} parts (the form has a few fields and "
                             "one file)")  # fmt: skip
    if any(_is_multipart(piece) for piece in pieces[1:]):
        raise FormError(400, "a part of the upload is itself multipart (the form sends one file)")
    message_ = BytesParser(policy=HTTP).parsebytes(head + body)
    if not message_.is_multipart():
        raise FormError(400, "the upload is not a multipart form (no boundary)")
    fields: dict[str, str] = {}
    filename, data = "", b""
    for part in message_.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(payload, bytes):
            continue
        if part.get_filename() is not None:
            if name == "file" and not filename:
                filename, data = str(part.get_filename() or "upload"), payload
            continue
        try:
            fields.setdefault(name, payload.decode("utf-8"))
        except UnicodeDecodeError:
            raise FormError(400, f"the form field {name!r} is not UTF-8") from None
    return Upload(fields, filename, data)


# -- checking ----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Checked:
    """An upload turned into JSON Lines: the good lines (each with where it came from), the bad ones
    (where, why), and notes (records skipped)."""

    lines: list[str]
    wheres: list[str]
    bad: list[tuple[str, str]]
    notes: list[str]
    created: int = 0
    updated: int = 0
    #: Bad lines past the first :data:`MAX_LISTED` the store's check listed (counted, not kept).
    unlisted: int = 0


def formats(user: User) -> dict[str, str]:
    """The upload formats offered to ``user``: the minter databases to an administrator only.

    >>> sorted(formats(User("ann", "99999"))), "noid" in formats(User("root", "99999", admin=True))
    (['csv', 'ezid', 'jsonl'], True)
    """
    return {**FORMATS, **DATABASES} if user.admin else dict(FORMATS)


def scope_problem(user: User, line: str) -> str | None:
    """Why the user may not import ``line`` (a JSON Lines record), or ``None``: an ARK outside the user's
    scope (the one rule), or another id kind for a user limited to one shoulder (as for API keys).
    Unreadable lines are left to the store's parser.

    >>> scope_problem(User("ann", "99999"), '{"text": "ark:12345/x", "target": "https://e.org/"}')
    'ark:12345/x is outside your scope (NAAN 99999)'
    """
    try:
        row = parse_import_line(line)
    except PidkitError:
        return None
    if row.kind == "ark":
        if not user.scope.allows(row.naan, row.shoulder):
            return f"{row.key} is outside your scope ({_scope_text(user)})"
    elif not user.admin and user.shoulder is not None:
        return f"{row.kind} {row.key}: only a user of a whole NAAN imports other id kinds"
    return None


def _scope_text(user: User) -> str:
    if user.admin:
        return "every NAAN"
    return f"NAAN {user.naan}" + (f", shoulder {user.shoulder}" if user.shoulder else "")


def _owner(user: User) -> str | None:
    """The NAAN an import by ``user`` owns its non-ARK bindings for (none for an administrator)."""
    return None if user.admin else user.naan


def to_lines(kind: str, filename: str, data: bytes) -> Checked:
    """The upload as JSON Lines records with where each came from; unreadable records are bad lines."""
    lines: list[str] = []
    wheres: list[str] = []
    bad: list[tuple[str, str]] = []
    notes: list[str] = []
    if kind == "ezid":
        found, outcomes = upload_bindings(data, filename or "upload", limit=UNPACKED_LIMIT)
        for where, b in found:
            lines.append(binding_line(b).rstrip("\n"))
            wheres.append(where)
        bad += [(o.where, f"{o.id}: {o.reason}") for o in outcomes if o.action == "refused"]
        notes += [f"{o.where}: {o.id} skipped ({o.reason})" for o in outcomes if o.action == "skipped"]
        return Checked(lines, wheres, bad, notes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Checked([], [], [("file", f"not UTF-8 text (byte {exc.start + 1})")], [])
    if kind == "csv":
        for number, got in read_csv_records(text):
            if isinstance(got, PidkitError):
                bad.append((f"line {number}", str(got)))
            else:
                lines.append(got)
                wheres.append(f"line {number}")
    else:
        for number, line in enumerate(split_lines(text), 1):
            if line.strip():
                lines.append(line)
                wheres.append(f"line {number}")
    return Checked(lines, wheres, bad, notes)


def check(store: Store, user: User, got: Checked) -> Checked:
    """Every bad line of ``got``: unreadable (the store's parser), outside the user's scope, or refused
    by the store's own import run as a dry run (nothing written); the counts it would write."""
    bad = list(got.bad)
    for where, line in zip(got.wheres, got.lines, strict=True):
        try:
            parse_import_line(line)
        except PidkitError as exc:
            bad.append((where, str(exc)))
            continue
        problem = scope_problem(user, line)
        if problem:
            bad.append((where, problem))
    created = updated = unlisted = 0
    if not bad and got.lines:
        try:
            report = store.import_jsonl(got.lines, owner=_owner(user), principal=Principal.user(user.name),
                                        dry_run=True, max_problems=MAX_LISTED)  # fmt: skip
            created, updated = report.created, report.updated
        except ImportRejectedError as exc:
            bad += [(_where(got, n), text) for n, text in exc.problems]
            unlisted = exc.count - len(exc.problems)
        except NotOwnerError as exc:
            bad.append((_where(got, exc.line), str(exc)))
    return Checked(got.lines, got.wheres, bad, got.notes, created, updated, unlisted)


def _where(got: Checked, number: int | None) -> str:
    """Where line ``number`` (1-based) of the JSON Lines made from an upload came from."""
    if number is not None and 1 <= number <= len(got.wheres):
        return got.wheres[number - 1]
    return "file"


# -- staging between preview and apply -------------------------------------------------------------
class StagingError(PidkitError):
    """The staging directory is not this process's own private directory (refused, never used)."""


def _staging() -> Path:
    """The private directory of staged imports: made with mode 0700, and refused if it is a symbolic
    link, another user's, or open to others (in a shared ``/tmp``, someone else could have made it)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = Path(tempfile.gettempdir()) / f"pidkit-import-{uid}"
    path.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != uid) or st.st_mode & 0o077:
        raise StagingError("the staging directory is not private to this service", text=str(path))
    return path


def _sweep(directory: Path) -> None:
    limit = time.time() - STAGED_FOR.total_seconds()
    for old in directory.iterdir():
        try:
            if old.stat().st_mtime < limit:
                old.unlink()
        except OSError:
            pass  # another worker removed it first


def _session_id(signed: Signed) -> str:
    return hashlib.sha256(signed.token.encode("utf-8")).hexdigest()


def stage(signed: Signed, got: Checked, source: str) -> str:
    """Keep the checked lines for the confirmation; return the token naming them."""
    directory = _staging()
    _sweep(directory)
    token = secrets.token_urlsafe(32)
    head = {"session": _session_id(signed), "user": signed.user.name,
            "at": iso_z(_dt.datetime.now(_dt.UTC)), "source": source, "wheres": got.wheres}  # fmt: skip
    path = directory / token
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(head, ensure_ascii=False) + "\n")
        for line in got.lines:
            f.write(line + "\n")
    return token


def _data_path(path: Path) -> Path:
    """Where the uploaded database of the staged import ``path`` is kept."""
    return path.with_name(path.name + ".db")


def stage_database(data: bytes) -> Path:
    """Keep an uploaded database (a NOID or arklet file) in the staging directory, readable by this
    process only; the path of the copy, named by a new token (:func:`stage_database_head` makes it
    confirmable once its preview is good)."""
    directory = _staging()
    _sweep(directory)
    path = _data_path(directory / secrets.token_urlsafe(32))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def stage_database_head(signed: Signed, data_path: Path, kind: str, source: str, drop_extra: bool) -> str:
    """Bind the database staged at ``data_path`` to this session (and user) for its confirmation, with
    the choices its preview was made with; return the token naming it."""
    token = data_path.name.removesuffix(".db")
    head = {"session": _session_id(signed), "user": signed.user.name, "at": iso_z(_dt.datetime.now(_dt.UTC)),
            "source": source, "database": kind, "drop_extra": drop_extra}  # fmt: skip
    fd = os.open(data_path.with_name(token), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(head, ensure_ascii=False) + "\n")
    return token


def _staged_head(signed: Signed, token: str) -> tuple[dict[str, Any], str, Path] | None:
    """The head (and the rest) of the staged import ``token`` if it is this session's and user's and not
    expired, else ``None``."""
    if not _TOKEN.fullmatch(token):
        return None
    try:
        path = _staging() / token
        if path.stat().st_mtime < time.time() - STAGED_FOR.total_seconds():
            return None
        text = path.read_text(encoding="utf-8")
    except (StagingError, OSError):
        return None
    first, _, rest = text.partition("\n")
    try:
        head = json.loads(first)
    except ValueError:
        return None  # not a staged copy this module wrote
    if not isinstance(head, dict):
        return None
    if head.get("session") != _session_id(signed) or head.get("user") != signed.user.name:
        return None
    return head, rest, path


def staged_database(signed: Signed, token: str) -> tuple[str, str, bool, Path] | None:
    """The staged database of ``token`` — ``(kind, source, drop_extra, head path)`` — if it is this
    session's and not expired, else ``None``."""
    found = _staged_head(signed, token)
    if found is None:
        return None
    head, _, path = found
    kind = head.get("database")
    if kind not in DATABASES or not _data_path(path).is_file():
        return None
    return str(kind), str(head.get("source", "")), head.get("drop_extra") is True, path


def staged(signed: Signed, token: str) -> tuple[Checked, str, Path] | None:
    """The staged lines of ``token`` if they are this session's and not expired, else ``None``."""
    found = _staged_head(signed, token)
    if found is None:
        return None
    head, rest, path = found
    if "database" in head:
        return None  # a staged database (:func:`staged_database`)
    try:
        wheres = [str(w) for w in head["wheres"]]
    except (KeyError, TypeError):
        return None  # not a staged copy this module wrote
    lines = list(split_lines(rest))
    if len(lines) != len(wheres):
        return None
    return Checked(lines, wheres, [], []), str(head.get("source", "")), path


# -- pages -----------------------------------------------------------------------------------------
def _import_form(signed: Signed, chosen: str = "jsonl", limit: int | None = None) -> str:
    most = f" At most {_size(limit)}." if limit is not None else ""
    consent = ("" if not signed.user.admin else
               '<p class="field check"><input type="checkbox" id="i-drop" name="drop_extra" value="yes"'
               ' aria-describedby="i-drop-hint"> <label for="i-drop">Leave out what has no place in the '
               'store</label> <span class="hint" id="i-drop-hint">NOID only: its rule-based bindings and '
               'element names the store refuses are left out (each one named) instead of refused.</span></p>')
    return ('<section class="card"><h2>Upload a file</h2>'
            '<form method="post" action="/office/import" enctype="multipart/form-data">' + csrf_field(signed)
            + select("format", "Format", list(formats(signed.user).items()), chosen, form="i")
            + '<p class="field"><label for="i-file">File</label>'
            '<input type="file" id="i-file" name="file" required aria-describedby="i-file-hint">'
            f'<span class="hint" id="i-file-hint">Checked first: nothing is written until you confirm.{most}'
            '</span></p>' + consent
            + '<button type="submit">Check the file</button></form></section>')  # fmt: skip


def _size(n: int) -> str:
    """A byte count in words.

    >>> _size(8 * 2**20), _size(65536), _size(1000)
    ('8 MiB', '64 KiB', '1,000 bytes')
    """
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale:,} {unit}"
    return f"{n:,} bytes"


@router.get("/office/import")
def import_form(request: Request) -> Response:
    """The upload form."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    intro = f"Your scope: {_scope_text(signed.user)}. Every line must be within it."
    if signed.user.admin:
        intro += (" As an administrator you may also import a NOID minter database or an arklet database: "
                  "its NAANs, shoulders, minters, issued ids and bindings.")
    limit = settings_of(request).max_body
    return office_page("Import", message(intro) + _import_form(signed, limit=limit), signed)


@router.post("/office/import")
async def import_preview(request: Request) -> Response:
    """Check an upload and show the preview: every bad line named, the count of good ones; nothing is
    written.  A file with no bad line is staged for the confirmation."""
    signed = await run_in_threadpool(signed_in, request)
    if signed is None:
        return to_signin(request)
    try:
        body = await request.body()  # parsed in a thread: an 8 MiB upload never holds the event loop
        upload = await run_in_threadpool(read_upload, request.headers.get("content-type", ""), body)
    except FormError as exc:
        return office_page("Not an upload", message(str(exc), bad=True), signed, status=exc.status)
    if not csrf_ok(signed.session.csrf, upload.fields):
        return csrf_refused(signed)
    kind = upload.fields.get("format", "")
    if kind in DATABASES and not signed.user.admin:
        refusal = ("Only an administrator imports a NOID or arklet database (it adds NAANs, minters and "
                   "issued ids, beyond one NAAN's bindings): nothing was read.")
        return office_page("Refused", message(refusal, bad=True) + _import_form(signed), signed, status=403)
    if kind not in formats(signed.user):
        return _preview_problem(signed, "Choose one of the formats.", kind)
    if not upload.data:
        return _preview_problem(signed, "The file is empty (or none was chosen).", kind)
    if kind in DATABASES:
        return await run_in_threadpool(_preview_database, request, signed, upload, kind)
    return await run_in_threadpool(_preview, request, signed, upload, kind)


def _preview_problem(signed: Signed, problem: str, kind: str) -> Response:
    chosen = kind if kind in formats(signed.user) else "jsonl"
    return office_page("Import", message(problem, bad=True) + _import_form(signed, chosen), signed,
                       status=400)


def _named(text: str, path: Path, source: str) -> str:
    """An importer's message about the staged copy ``path``, naming the uploaded file instead."""
    return text.replace(os.fspath(path), source)


def _report_html(report: ImportReport) -> str:
    """The records of an import's report that were not simply imported (skipped, refused, kept, or
    imported without some elements), each named with where it is in the source and why; its notes."""
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    out = f'<section class="card"><h2>Notes</h2><ul>{notes}</ul></section>' if notes else ""
    listed = [o for o in report.outcomes if o.action != "imported" or o.dropped]
    if listed:
        rows = "".join(
            f'<tr><th scope="row">{esc(o.where)}</th><td>{esc(o.id)}</td><td>{esc(o.action)}</td>'
            f"<td>{esc(o.reason)}{esc('; dropped: ' + ', '.join(o.dropped)) if o.dropped else ''}</td></tr>"
            for o in listed[:MAX_LISTED]
        )
        more = (f'<p class="muted">The first {MAX_LISTED} of {len(listed)} are listed.</p>'
                if len(listed) > MAX_LISTED else "")  # fmt: skip
        out += ('<section class="card"><h2>Records</h2><table class="grid"><thead><tr>'
                '<th scope="col">Where</th><th scope="col">Id</th><th scope="col">Outcome</th>'
                f'<th scope="col">Why</th></tr></thead><tbody>{rows}</tbody></table>{more}'
                "</section>")  # fmt: skip
    return out


def _preview_database(request: Request, signed: Signed, upload: Upload, kind: str) -> Response:
    """The preview of a minter database (administrators): the importer's report from a dry run of the
    staged copy; staged for the confirmation if no record is refused."""
    store = store_of(request)
    source = upload.filename or "upload"
    drop_extra = kind == "noid" and upload.fields.get("drop_extra") == "yes"
    try:
        path = stage_database(upload.data)
    except (PidkitError, OSError) as exc:
        problem = f"The file could not be kept for its preview (nothing was written): {exc}"
        return office_page("Import", message(problem, bad=True), signed, status=503)
    keep = False
    try:
        try:
            report = importers.run(kind, path, store, drop_extra=drop_extra, dry_run=True)
        except PidkitError as exc:  # not a database of this kind, or one that cannot be read
            return _preview_problem(signed, f"{source}: {_named(str(exc), path, source)}", kind)
        except Exception:  # a file from elsewhere the reader trips on: said so, and logged
            _log.exception("reading the uploaded %s database %r", kind, source)
            what = DATABASES[kind].split(" (")[0]
            problem = f"{source}: could not be read as a {what} (see the server's log); nothing was written"
            return _preview_problem(signed, problem, kind)
        report = dataclasses.replace(report, source=source)
        refused = report.count("refused")
        if refused:
            said = (f"{report.summary()}. Nothing was written: {plural(refused, 'record')} refused"
                    + (" (the box below leaves out what has no place in the store)" if kind == "noid"
                       and not drop_extra else "") + ".")  # fmt: skip
            body = message(said, bad=True) + _report_html(report) + _import_form(signed, kind)
            return office_page("Import: problems found", body, signed, status=422)
        try:
            token = stage_database_head(signed, path, kind, source, drop_extra)
        except (PidkitError, OSError) as exc:
            problem = f"The checked file could not be kept for the confirmation (nothing was written): {exc}"
            return office_page("Import", message(problem, bad=True), signed, status=503)
        keep = True
    finally:
        if not keep:
            path.unlink(missing_ok=True)
    summary = (f"{report.summary()}. Applied all or nothing, merged into the store (a row already there "
               f"is kept as it is), as {signed.user.name}.")
    body = (message(summary) + '<section class="card"><h2>Ready</h2>'
            '<form method="post" action="/office/import/apply">' + csrf_field(signed)
            + f'<input type="hidden" name="token" value="{esc(token)}">'
            '<button type="submit" data-busy="Importing…">Import this database</button></form>'
            f'<p class="hint">The checked file waits {int(STAGED_FOR.total_seconds() // 60)} minutes for '
            "this confirmation.</p></section>" + _report_html(report))  # fmt: skip
    return office_page("Import: preview", body, signed)


def _apply_database(request: Request, signed: Signed, found: tuple[str, str, bool, Path]) -> Response:
    """Import a staged database as the signed-in administrator, once, all or nothing."""
    kind, source, drop_extra, path = found
    gone = "This import is no longer waiting (expired, done, or from another session): upload it again."
    if not signed.user.admin:  # no longer an administrator since the preview
        refusal = "Only an administrator imports a NOID or arklet database: nothing was imported."
        return office_page("Refused", message(refusal, bad=True), signed, status=403)
    status_path = _status_path(path)
    mine = {"session": _session_id(signed), "user": signed.user.name, "source": source, "total": 0}
    if not _claim(status_path, {**mine, "state": "running", "done": 0}):
        return office_page("Import", message(gone, bad=True) + _import_form(signed), signed, status=410)
    data = _data_path(path)
    store, user = store_of(request), signed.user
    try:
        report = importers.run(kind, data, store, drop_extra=drop_extra, principal=Principal.user(user.name))
    except importers.ImportRefusedError as exc:  # the store changed since the preview
        report = dataclasses.replace(exc.report, source=source)
        said = f"{report.summary()}: nothing was imported."
        body = message(said, bad=True) + _report_html(report) + _import_form(signed, kind)
        outcome = office_page("Import refused", body, signed, status=409)
    except PidkitError as exc:
        said = f"{source}: nothing was imported: {_named(str(exc), data, source)}"
        outcome = office_page("Import refused", message(said, bad=True) + _import_form(signed, kind), signed,
                              status=409)
    except BaseException:
        status_path.unlink(missing_ok=True)  # not applied: may be confirmed again
        raise
    else:
        report = dataclasses.replace(report, source=source)
        written = ", ".join(f"{table} {n}" for table, n in report.restored.items() if n)
        done = (f"{report.summary()}; recorded in the history as user:{user.name}. Rows written: "
                f"{written or 'none'}.")
        back = '<p><a href="/office">Back to the dashboard</a></p>'
        outcome = office_page("Imported", message(done) + _report_html(report) + back, signed)
    for gone_path in (data, path, status_path):
        gone_path.unlink(missing_ok=True)
    return outcome


def _preview(request: Request, signed: Signed, upload: Upload, kind: str) -> Response:
    store = store_of(request)
    try:
        got = check(store, signed.user, to_lines(kind, upload.filename, upload.data))
    except PidkitError as exc:  # a download that cannot be read at all
        return _preview_problem(signed, str(exc), kind)
    source = upload.filename or "upload"
    read = set(got.wheres)
    unreadable = sum(1 for w, _ in got.bad if w not in read)  # never became a record
    good = len(got.lines) - len({w for w, _ in got.bad} & read) - got.unlisted
    bad = len(got.bad) + got.unlisted
    problems = f"{bad} problem" + ("s" if bad != 1 else "")
    counts = f"{source}: {len(got.lines) + unreadable} records read, {good} good, {problems}."
    notes = "".join(f"<li>{esc(n)}</li>" for n in got.notes[:MAX_LISTED])
    notes_html = f'<section class="card"><h2>Skipped</h2><ul>{notes}</ul></section>' if notes else ""
    if got.bad:
        rows = "".join(f'<tr><th scope="row">{esc(w)}</th><td>{esc(r)}</td></tr>'
                       for w, r in got.bad[:MAX_LISTED])  # fmt: skip
        more = (f'<p class="muted">The first {MAX_LISTED} of {bad} are listed.</p>'
                if bad > MAX_LISTED else "")  # fmt: skip
        body = (message(counts + " Nothing was written: correct these lines and upload the file again.",
                        bad=True)
                + '<section class="card"><h2>Bad lines</h2><table class="grid"><thead><tr>'
                '<th scope="col">Where</th><th scope="col">Problem</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>{more}</section>" + notes_html + _import_form(signed, kind))
        return office_page("Import: problems found", body, signed, status=422)
    if not got.lines:
        return _preview_problem(signed, f"{source}: no record to import.", kind)
    try:
        token = stage(signed, got, source)
    except (PidkitError, OSError) as exc:
        problem = f"The checked file could not be kept for the confirmation (nothing was written): {exc}"
        return office_page("Import", message(problem, bad=True), signed, status=503)
    summary = (f"{plural(len(got.lines), 'binding')} to write: {got.created} new, {got.updated} updated "
               f"(all or nothing, as {signed.user.name}).")
    body = (message(counts) + f'<section class="card"><h2>Ready</h2><p>{esc(summary)}</p>'
            '<form method="post" action="/office/import/apply">' + csrf_field(signed)
            + f'<input type="hidden" name="token" value="{esc(token)}">'
            '<button type="submit" data-busy="Importing…">Import these bindings</button></form>'
            f'<p class="hint">The checked file waits {int(STAGED_FOR.total_seconds() // 60)} minutes for '
            'this confirmation.</p></section>' + notes_html)  # fmt: skip
    return office_page("Import: preview", body, signed)


#: Imports of up to this many lines are applied while the confirmation waits; longer ones run in the
#: background and the confirmation leads to a page that follows their progress.
INLINE_LINES: Final = 2000
#: A running import's status file not written for this long belongs to a process that is gone.
_SILENT: Final = 120.0


def _status_path(path: Path) -> Path:
    return path.with_name(path.name + ".status")


def _write_status(path: Path, status: dict[str, Any]) -> None:
    """Replace the status file atomically (a reader sees the old one or the new one, never half)."""
    tmp = path.with_name(path.name + f".{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(status, ensure_ascii=False))
    os.replace(tmp, path)


def _apply(store: Store, user: User, got: Checked, lines: Iterable[str] | None = None) -> dict[str, Any]:
    """Import the staged lines (read through ``lines`` if given, e.g. counting them), all or nothing,
    as ``user``: the outcome as the status file holds it."""
    bad = [(w, p) for w, line in zip(got.wheres, got.lines, strict=True)
           if (p := scope_problem(user, line))]  # fmt: skip  (scope again: it may have changed)
    try:
        if bad:
            raise ImportRejectedError([(got.wheres.index(w) + 1, p) for w, p in bad])
        report = store.import_jsonl(got.lines if lines is None else lines, owner=_owner(user),
                                    principal=Principal.user(user.name), max_problems=MAX_LISTED)  # fmt: skip
    except (ImportRejectedError, NotOwnerError) as exc:
        problems = exc.problems if isinstance(exc, ImportRejectedError) else ((exc.line or 0, str(exc)),)
        listed = [[_where(got, n), t] for n, t in problems[:MAX_LISTED]]
        return {"state": "refused", "problems": listed}
    except PidkitError as exc:
        return {"state": "failed", "problem": str(exc)}
    return {"state": "done", "written": report.written, "created": report.created, "updated": report.updated}


def _outcome(signed: Signed, source: str, status: Mapping[str, Any]) -> Response:
    """The page of a finished import: imported, or refused with its bad lines."""
    if status["state"] == "done":
        done = (f"{source}: {plural(status['written'], 'binding')} imported ({status['created']} new, "
                f"{status['updated']} updated), recorded in the history as user:{signed.user.name}.")
        back = '<p><a href="/office">Back to the dashboard</a></p>'
        return office_page("Imported", message(done) + back, signed)
    if status["state"] == "refused":
        rows = "".join(f'<tr><th scope="row">{esc(w)}</th><td>{esc(t)}</td></tr>'
                       for w, t in status["problems"])  # fmt: skip
        body = (message(f"{source}: nothing was imported.", bad=True)
                + f'<section class="card"><h2>Bad lines</h2><table class="grid"><tbody>{rows}</tbody></table>'
                "</section>" + _import_form(signed))  # fmt: skip
        return office_page("Import refused", body, signed, status=409)
    body = message(f"{source}: nothing was imported: {status['problem']}", bad=True) + _import_form(signed)
    return office_page("Import refused", body, signed, status=409)


def _claim(status_path: Path, status: Mapping[str, Any]) -> bool:
    """Create the status file of an import being applied; ``False`` if it exists (applied already, or
    being applied by another request): a staged import is applied once."""
    try:
        fd = os.open(status_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(status, ensure_ascii=False))
    return True


@form_post(router, "/office/import/apply")
def import_apply(request: Request, signed: Signed, form: dict[str, str]) -> Response:
    """Import the staged lines of a preview, all or nothing, as the signed-in user: at once for a short
    file, else in the background, the answer leading to the page that follows it."""
    token = form.get("token", "")
    database = staged_database(signed, token)
    if database is not None:
        return _apply_database(request, signed, database)
    found = staged(signed, token)
    gone = ("This import is no longer waiting (expired, done, or from another session): upload it again.")
    if found is None:
        return office_page("Import", message(gone, bad=True) + _import_form(signed), signed, status=410)
    got, source, path = found
    status_path = _status_path(path)
    total = len(got.lines)
    mine = {"session": _session_id(signed), "user": signed.user.name, "source": source, "total": total}
    if not _claim(status_path, {**mine, "state": "running", "done": 0}):
        return office_page("Import", message(gone, bad=True) + _import_form(signed), signed, status=410)
    store, user = store_of(request), signed.user
    if total <= INLINE_LINES:
        try:
            outcome = _apply(store, user, got)
        except BaseException:
            status_path.unlink(missing_ok=True)  # not applied: may be confirmed again
            raise
        path.unlink(missing_ok=True)
        status_path.unlink(missing_ok=True)
        return _outcome(signed, source, outcome)

    def run() -> None:
        done, last = 0, time.monotonic()

        def counted() -> Iterator[str]:
            nonlocal done, last
            for line in got.lines:
                done += 1
                if time.monotonic() - last >= 0.5:  # the status file, twice a second at most
                    last = time.monotonic()
                    _write_status(status_path, {**mine, "state": "running", "done": done})
                yield line

        try:
            outcome = _apply(store, user, got, counted())
        except Exception:  # not the user's doing: said so, and logged (the transaction rolled back)
            _log.exception("import %s by user:%s failed", token[:8], user.name)
            outcome = {"state": "failed", "problem": "an unexpected error (see the server's log)"}
        _write_status(status_path, {**mine, **outcome, "done": total})
        path.unlink(missing_ok=True)

    threading.Thread(target=run, name=f"pidkit-import-{token[:8]}").start()
    progress = RedirectResponse(f"/office/import/progress?token={token}", status_code=303)
    return with_headers(progress, OFFICE_CSS)


@router.get("/office/import/progress")
def import_progress(request: Request, token: str = "") -> Response:
    """Where a background import stands: lines read of the total, then its outcome.  The page does not
    reload itself (a timed reload restarts a screen reader at the top: WCAG 2.2.1): a "Check again" link
    follows the import without script, and ``/static/office.js`` updates the count and the bar in place
    (the element marked ``data-follow``) and shows the outcome when the import ends.  Only the session
    that confirmed it sees it."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    status = _read_status(signed, token)
    if status is None:
        problem = "This session has no import with this number (or its page expired)."
        return office_page("Import", message(problem, bad=True), signed, status=404)
    source = str(status.get("source", ""))
    if status["state"] != "running":
        return _outcome(signed, source, status)
    if status["age"] > _SILENT:
        problem = (f"{source}: this import stopped reporting (the server may have restarted). An import is "
                   "all or nothing: either every line is in the store or none is; open one of its ARKs "
                   "to see which.")
        return office_page("Import", message(problem, bad=True), signed)
    done, total = int(status["done"]), int(status["total"])
    here = f"/office/import/progress?token={quote(token)}"
    body = (message(f"{source}: importing; nothing is visible until every line is in (all or nothing).")
            + '<section class="card" data-follow>'
            + f'<p data-count>{done:,} of {total:,} lines read.</p>'
            + f'<p><progress max="{total}" value="{done}" aria-label="Lines imported">{done} of {total}'
            "</progress></p>"
            + f'<p><a href="{esc(here)}">Check again</a></p></section>')  # fmt: skip
    return office_page("Importing", body, signed)


def _read_status(signed: Signed, token: str) -> dict[str, Any] | None:
    """The status of this session's import ``token`` (with its ``age`` in seconds), or ``None``."""
    if not _TOKEN.fullmatch(token):
        return None
    try:
        status_path = _status_path(_staging() / token)
        age = time.time() - status_path.stat().st_mtime
        status = json.loads(status_path.read_text(encoding="utf-8"))
    except (StagingError, OSError, ValueError):
        return None
    if not isinstance(status, dict) or status.get("session") != _session_id(signed):
        return None
    if status.get("user") != signed.user.name or age > STAGED_FOR.total_seconds():
        return None
    return {**status, "age": age}


# -- export ----------------------------------------------------------------------------------------
def _export_form(request: Request, signed: Signed, problem: str = "", status: int = 200) -> Response:
    user, store = signed.user, store_of(request)
    places: list[tuple[str, str]] = []
    for n in store.list_naans():
        if user.scope.allows(n.naan, None):
            places.append((n.naan, f"NAAN {n.naan} (every shoulder)"))
        places += [(f"{n.naan}/{s}", f"NAAN {n.naan}, shoulder {s}") for s in n.shoulders
                   if user.scope.allows(n.naan, s)]  # fmt: skip
    formats = [("jsonl", "JSON Lines"), ("csv", "CSV (spreadsheet-safe)")]
    where = (message("Nothing within your scope to export.") if not places else
             '<section class="card"><h2>A NAAN or a shoulder</h2>'
             '<form method="get" action="/office/export/download">'
             + select("place", "What to export", places, form="e")
             + select("format", "Format", formats, form="e")
             + '<button type="submit">Download</button></form></section>')  # fmt: skip
    search = ('<section class="card"><h2>The results of a search</h2>'
              '<form method="get" action="/office/export/search">'
              + field("ark", "ARK begins with", form="s") + field("target", "Target contains", form="s")
              + field("text", "Metadata contains", form="s")
              + select("status", "Status", list(_STATUSES.items()), form="s")
              + select("format", "Format", formats, form="s2")
              + '<button type="submit">Download the results</button></form></section>')  # fmt: skip
    body = (message(problem, bad=True) if problem else "") + where + search
    return office_page("Export", body, signed, status=status)


@router.get("/office/export")
def export_form(request: Request) -> Response:
    """Choose a NAAN or shoulder (or a search) and a format."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    return _export_form(request, signed)


def _download(rows: Iterator[Binding], fmt: str, name: str) -> Response:
    """A streamed download of ``rows`` as JSON Lines or CSV."""
    if fmt == "csv":
        body: Iterator[str] = csv_lines(_csv_rows(rows))
        media, ext = "text/csv; charset=utf-8", "csv"
    else:
        body = (binding_line(b) for b in rows)
        media, ext = "application/x-ndjson", "jsonl"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "export"
    response = StreamingResponse(body, media_type=media)
    response.headers["Content-Disposition"] = f'attachment; filename="{safe}.{ext}"'
    return with_headers(response, OFFICE_CSS)


def _csv_rows(rows: Iterator[Binding]) -> Iterator[list[str]]:
    yield header_row()
    for b in rows:
        yield binding_row(b)


@router.get("/office/export/download")
def export_place(request: Request, place: str = "", format: str = "jsonl") -> Response:
    """The bindings of a NAAN (``12345``) or a shoulder (``12345/fk4``) within the user's scope."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    naan, _, shoulder = place.partition("/")
    if format not in ("jsonl", "csv"):
        return _export_form(request, signed, "Choose JSON Lines or CSV.", 400)
    try:  # checked before the download starts (a NUL, say, would end it half-way on PostgreSQL)
        check_naan(naan)
        if shoulder:
            check_shoulder(shoulder)
    except PidkitError as exc:
        return _export_form(request, signed, str(exc), 400)
    if not naan or not signed.user.scope.allows(naan, shoulder or None):
        return _export_form(request, signed, f"{place or 'Nothing'} is not within your scope "
                            f"({_scope_text(signed.user)}).", 403)  # fmt: skip
    store = store_of(request)

    def rows() -> Iterator[Binding]:
        after: str | None = None
        while True:
            page = store.list_bindings(naan, shoulder=shoulder or None, after=after, limit=_PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].key

    return _download(rows(), format, f"ark-{naan}-{shoulder}" if shoulder else f"ark-{naan}")


@router.get("/office/export/search")
def export_search(request: Request, format: str = "jsonl") -> Response:
    """Every result of a search (the Find page's query parameters, every page of them), within the
    user's scope."""
    signed = signed_in(request)
    if signed is None:
        return to_signin(request)
    if format not in ("jsonl", "csv"):
        return _export_form(request, signed, "Choose JSON Lines or CSV.", 400)
    paging = ("after", "before")
    fields = {k: v for k, v in request.query_params.items() if k in FIND_FIELDS and k not in paging}
    store, scope = store_of(request), signed.user.scope
    try:
        search = dataclasses.replace(Search.from_fields(fields), limit=_PAGE)
        store.find_bindings(scope, dataclasses.replace(search, limit=1))  # a bad query: refused before
    except PidkitError as exc:  # the download starts
        return _export_form(request, signed, str(exc), 400)

    def rows() -> Iterator[Binding]:
        page = search
        while True:
            found = store.find_bindings(scope, page)  # the scope is part of the query
            yield from found.bindings
            if not found.later or not found.bindings:
                return
            page = dataclasses.replace(search, after=found.bindings[-1].key)

    return _download(rows(), format, "ark-search")

