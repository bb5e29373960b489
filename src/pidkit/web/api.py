"""The REST API (JSON, OpenAPI at ``/openapi.json``): mint, bind, fetch, tombstone, list, import, export.

Every write needs an API key (``pidkit apikey create``) sent as ``Authorization: Bearer <key>``; the
store checks it (hashed, constant-time) and the key's scope — a NAAN, optionally one shoulder — must
cover every id written.  Reading a public binding needs no key.

=====================================================  ===============================================
``POST /api/v1/mint``                                  mint ``count`` ARKs on a NAAN's shoulder
``PUT /api/v1/bindings``                               create or update a binding (201 when created)
``PATCH /api/v1/bindings?ark=…``                       change only the fields named (JSON merge patch)
``GET /api/v1/bindings?ark=…``                         fetch a binding
``GET /api/v1/history?ark=…``                          every change of an ARK, oldest first
``POST /api/v1/tombstones``                            withdraw an ARK for good (never reissued)
``GET /api/v1/naans/{naan}/bindings``                  list a NAAN's (or a shoulder's) bindings, paged
``POST /api/v1/import``                                JSON Lines in (all or nothing)
``GET /api/v1/export``                                 JSON Lines out (the key's NAAN / shoulder)
=====================================================  ===============================================

Every change is written to the store's append-only history naming its principal, ``apikey:<key id>``.

Free text is refused (422, naming the field) when it contains NUL or unpaired surrogates — neither
survives a database round trip.

Ownership of non-ARK ids (XarkId, TID, UUID, GEDCOM UID, Library.Link id): they carry no NAAN, so a
binding created through the API records the NAAN of the key that created it as its owner.  Only a
whole-NAAN key of the owning NAAN may change it afterwards (403 otherwise); a binding created by an
administrator (``pidkit bind`` / ``pidkit import``) has no owner and cannot be changed through the API.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any, Final, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..ark import Ark
from ..ark.chars import NAAN_ANY_CASE_PATTERN, check_naan
from ..ark.syntax import JSON_PATTERN
from ..errors import PidkitError
from ..store import (
    AlreadyBoundError,
    ApiKey,
    Binding,
    BindingChange,
    MinterInfo,
    Principal,
    Store,
    change_from_patch,
    check_text,
    parse_import_line,
    published,
    split_lines,
    validate_target,
)
from ..store.keys import minter_on, template_shoulder
from .errors import ApiError
from .stores import store_of

router = APIRouter(prefix="/api/v1", tags=["api"])

#: Most ids minted in one request (bulk minting beyond that: the CLI, ``pidkit mint``).
MAX_MINT: Final = 10_000
MAX_TEXT: Final = 10_000
MAX_PAGE: Final = 1000

_bearer = HTTPBearer(auto_error=False, description="An API key from `pidkit apikey create`.")


def _clean_text(value: str) -> str:
    """Refuse NUL and unpaired surrogates (they cannot be stored): the store's one check."""
    return check_text(value, "text")


def _read_naan(value: str) -> str:
    """A NAAN as the API takes it, in any case: its normalized form (draft-kunze-ark-40 §3.2 step 4
    lowercases it; the one NAAN rule, :func:`~pidkit.ark.chars.check_naan`, decides).

    >>> _read_naan("B6071")
    'b6071'
    """
    return check_naan(_clean_text(value).lower())


#: What an ARK looks like (the OpenAPI ``pattern`` of every ``ark`` parameter and field): the one ARK
#: pattern (:data:`pidkit.ark.syntax.JSON_PATTERN`: an optional ``https://NMA/``, the label ``ark:`` or
#: ``ark:/`` in any case, a NAAN as the parser reads it, '/' and a Name; draft-kunze-ark-40 §2.2, §2.3).
#: Documented, not checked on its own: the ARK parser decides, and answers 400 naming the rule and the
#: position (a text outside the pattern never parses).
ARK_PATTERN: Final = JSON_PATTERN
#: A NAAN (§2.3): betanumeric, any case (§3.2 step 4 folds it) — the one rule's pattern (``ark.chars``).
NAAN_PATTERN: Final = f"^{NAAN_ANY_CASE_PATTERN}$"

Text = Annotated[str, Field(max_length=MAX_TEXT), AfterValidator(_clean_text)]
IdText = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_clean_text)]
ArkText = Annotated[str, Field(min_length=1, max_length=4096, json_schema_extra={"pattern": ARK_PATTERN}),
                    AfterValidator(_clean_text)]
NaanText = Annotated[str, Field(min_length=1, max_length=4096, json_schema_extra={"pattern": NAAN_PATTERN}),
                     AfterValidator(_read_naan)]


class ErcIn(BaseModel):
    """An ERC segment: who / what / when / where (draft-kunze-ark-40 §5.3).  A write changes only the
    elements it sends; ``null`` or ``""`` clears one."""

    model_config = ConfigDict(extra="forbid")
    who: Text | None = None
    what: Text | None = None
    when: Text | None = None
    where: Text | None = None

    def change(self) -> dict[str, str]:
        """The elements sent, as the store's partial ERC change (``null`` → ``""``, cleared).

        >>> ErcIn.model_validate({"who": "W", "what": None}).change()
        {'who': 'W', 'what': ''}
        """
        return {name: value or "" for name, value in self.model_dump(exclude_unset=True).items()}


class ErcOut(BaseModel):
    """An ERC segment as stored."""

    who: str
    what: str
    when: str
    where: str


class MintIn(BaseModel):
    """Mint ``count`` ids on ``shoulder`` of ``naan`` (with the minter whose template has that prefix)."""

    model_config = ConfigDict(extra="forbid")
    naan: NaanText
    shoulder: Text = ""
    count: int = Field(1, ge=1, le=MAX_MINT)


class MintOut(BaseModel):
    """The minted ARKs, in minting order."""

    arks: list[str]


class BindingIn(BaseModel):
    """Create or update the binding of an ARK."""

    model_config = ConfigDict(extra="forbid")
    ark: ArkText
    target: IdText | None = None
    erc: ErcIn | None = None
    support: ErcIn | None = None
    passthrough: bool = False
    status: Literal["public", "reserved", "unavailable"] = "public"
    reason: Text | None = Field(None, description="why the binding is unavailable (with status unavailable)")
    extra: dict[str, Text] | None = Field(
        None, description="extra metadata elements beside the ERC (e.g. dc.title), set or replaced by name"
    )


class BindingPatch(BaseModel):
    """A JSON merge patch (RFC 7396) of a binding: a member changes its field, ``null`` clears it, a member
    not sent is kept.  ``extra`` maps element names to a value, or ``null`` to remove the element."""

    model_config = ConfigDict(extra="forbid")
    target: IdText | None = None
    erc: dict[str, Text | None] | None = None
    support: dict[str, Text | None] | None = None
    passthrough: bool | None = None
    status: Literal["public", "reserved", "unavailable"] | None = None
    reason: Text | None = None
    extra: dict[str, Text | None] | None = None


class HistoryEntryOut(BaseModel):
    """One change: when, who (``apikey:<id>``, ``cli:<user>@<host>``, ``user:<name>``), the operation,
    and the fields it changed before and after (``null``: did not exist / no longer exists)."""

    id: str
    at: str | None
    principal: str
    operation: str
    kind: str
    key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class HistoryOut(BaseModel):
    """The history of one id, oldest first."""

    history: list[HistoryEntryOut]


class BindingOut(BaseModel):
    """A binding as stored (``key``: the normalized ARK; ``text``: as first given)."""

    kind: str
    key: str
    text: str
    target: str | None
    erc: ErcOut
    support: ErcOut
    passthrough: bool
    status: str
    tombstone_reason: str | None = None
    tombstoned_at: str | None = None
    created: str | None = None
    updated: str | None = None
    reason: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)


class TombstoneIn(BaseModel):
    """Withdraw ``ark`` for good, saying why."""

    model_config = ConfigDict(extra="forbid")
    ark: ArkText
    reason: Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(_clean_text)]


class BindingList(BaseModel):
    """One page of bindings; pass ``next`` as ``after`` for the following page (``null`` at the end)."""

    bindings: list[BindingOut]
    next: str | None


class ImportOut(BaseModel):
    """Result of an import: lines read, bindings created and updated."""

    lines: int
    created: int
    updated: int


class ErrorDetail(BaseModel):
    """What went wrong, and which request field it concerns."""

    status: int
    message: str
    field: str | None = None


class ErrorOut(BaseModel):
    """Every API error."""

    error: ErrorDetail


def _errors(conflict: str | None = None) -> dict[int | str, dict[str, Any]]:
    """The error answers of an endpoint (its OpenAPI ``responses``), with 409 and what it means there
    for an endpoint that answers it.

    >>> sorted(_errors()), _errors("the minter is exhausted")[409]["description"]
    ([400, 401, 403, 404, 413, 422, 503], 'conflict: the minter is exhausted')
    """
    answers: list[tuple[int, str]] = [
        (400, "bad input (the message names the input and position)"),
        (401, "missing or unknown API key"),
        (403, "the API key does not cover this NAAN / shoulder"),
        (404, "not found"),
        (413, "request body too large"),
        (422, "invalid request (the error names the field)"),
        (503, "store unavailable; retry"),
    ]
    if conflict is not None:
        answers.append((409, f"conflict: {conflict}"))
    return {code: {"model": ErrorOut, "description": text} for code, text in sorted(answers)}


_ERRORS: Final = _errors()
#: A write of a binding: what answers 409.
_BINDING_CONFLICT: Final = "the ARK is tombstoned, or the write would make a published binding reserved again"


def _binding_out(b: Binding) -> dict[str, Any]:
    d = b.to_dict()
    return {k: d[k] for k in BindingOut.model_fields}


def _parse_ark(text: str, field: str) -> Ark:
    try:
        return Ark.parse(text).normalize()
    except PidkitError as exc:
        raise ApiError(400, str(exc), field=field) from None


def _key(request: Request, credentials: HTTPAuthorizationCredentials | None) -> ApiKey:
    if credentials is None:
        raise ApiError(401, "an API key is required (Authorization: Bearer <key>)", field="Authorization",
                       headers={"WWW-Authenticate": "Bearer"})
    key = store_of(request).verify_api_key(credentials.credentials)
    if key is None:
        raise ApiError(401, "unknown or revoked API key", field="Authorization",
                       headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return key


def api_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey:
    """The verified API key of the request (401 without one)."""
    return _key(request, credentials)


def optional_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> ApiKey | None:
    """The verified API key if one was sent."""
    return None if credentials is None else _key(request, credentials)


def _require(key: ApiKey, naan: str, shoulder: str | None, field: str) -> None:
    if not key.allows(naan, shoulder or None):
        scope = key.naan + (f"/{key.shoulder}" if key.shoulder else "")
        where = naan + (f"/{shoulder}" if shoulder else "")
        raise ApiError(403, f"this API key is scoped to {scope}, not {where}", field=field)


def _minter_for(store: Store, naan: str, shoulder: str) -> MinterInfo:
    found = minter_on(store.list_minters(), naan, shoulder)
    if found is not None:
        return found
    raise ApiError(404, f"no minter for shoulder {shoulder!r} of NAAN {naan}", field="shoulder")


@router.post("/mint", status_code=201, response_model=MintOut, responses=_errors("the minter is exhausted"))
def mint(request: Request, body: MintIn, key: Annotated[ApiKey, Depends(api_key)]) -> dict[str, Any]:
    """Mint one or many ARKs on a shoulder (ids never minted twice, tombstones never reissued).  The
    key must cover the ARK shoulder of the ids minted — the one a bind of them is checked against; a
    minter whose template prefix fixes no shoulder needs a key for the whole NAAN."""
    _require(key, body.naan, key.shoulder, "naan")
    store = store_of(request)
    minter = _minter_for(store, body.naan, body.shoulder)
    _require(key, body.naan, template_shoulder(minter.template, minter.naan), "shoulder")
    return {"arks": store.mint(minter.name, body.count, principal=Principal.api_key(key.key_id))}


@router.put("/bindings", response_model=BindingOut,
            responses={**_errors(_BINDING_CONFLICT), 201: {"model": BindingOut}})
def put_binding(request: Request, body: BindingIn, key: Annotated[ApiKey, Depends(api_key)]) -> Response:
    """Create (201) or update (200) the binding of an ARK; its target must be an http(s) URL.  409 if it
    is tombstoned, or if the update would make a published binding (public or unavailable) reserved
    again."""
    ark = _parse_ark(body.ark, "ark")
    _require(key, ark.naan, ark.shoulder, "ark")
    if body.target is not None:
        try:
            validate_target(body.target)
        except PidkitError as exc:
            raise ApiError(400, str(exc), field="target") from None
    elif body.status == "public":
        raise ApiError(422, "a public binding needs a target URL", field="target")
    store = store_of(request)
    change = BindingChange(
        target=body.target, erc=body.erc.change() if body.erc else None,
        support=body.support.change() if body.support else None, passthrough=body.passthrough,
        status=body.status, reason=body.reason, extra=dict(body.extra) if body.extra else None,
    )  # fmt: skip
    principal = Principal.api_key(key.key_id)
    try:  # 201 only for the request that made it, as the store decides it under the id's lock
        b, created = store.change("ark", body.ark, change, principal=principal, only_new=True), True
    except AlreadyBoundError:
        b, created = store.change("ark", body.ark, change, principal=principal), False
    return JSONResponse(_binding_out(b), status_code=201 if created else 200)


@router.patch(
    "/bindings",
    response_model=BindingOut,
    responses=_errors(_BINDING_CONFLICT),
    openapi_extra={"requestBody": {"content": {"application/merge-patch+json": {
        "schema": {"$ref": "#/components/schemas/BindingPatch"}}}}},
)
def patch_binding(
    request: Request,
    ark: Annotated[str, Query(min_length=1, max_length=4096, json_schema_extra={"pattern": ARK_PATTERN})],
    body: BindingPatch,
    key: Annotated[ApiKey, Depends(api_key)],
) -> dict[str, Any]:
    """Change only the fields the body names (JSON merge patch, RFC 7396: ``null`` clears a field, a
    field not sent is kept) of an existing binding: e.g. ``{"status": "unavailable", "reason": "…"}``
    withdraws it (410 with the reason; ``{"status": "public"}`` brings it back), ``{"extra": {"dc.title":
    null}}`` removes one extra element.  404 if the ARK is not bound (or reserved outside the key's
    scope), 409 if it is tombstoned, or if the change would make a published binding (public or
    unavailable) reserved again."""
    parsed = _parse_ark(ark, "ark")
    _require(key, parsed.naan, parsed.shoulder, "ark")
    store = store_of(request)
    if store.get_binding(str(parsed)) is None:
        raise ApiError(404, f"{parsed} is not bound", field="ark")
    change = change_from_patch(body.model_dump(exclude_unset=True))
    return _binding_out(store.change("ark", str(parsed), change, principal=Principal.api_key(key.key_id)))


#: OpenAPI: a key is optional here (``{}``: no security requirement) — reading a public binding needs
#: none; a reserved one is shown only to a key that covers it.
_KEY_OPTIONAL: Final[dict[str, Any]] = {"security": [{}]}


@router.get("/bindings", response_model=BindingOut, responses=_ERRORS, openapi_extra=_KEY_OPTIONAL)
def get_binding(
    request: Request,
    ark: Annotated[str, Query(min_length=1, max_length=4096, json_schema_extra={"pattern": ARK_PATTERN})],
    key: Annotated[ApiKey | None, Depends(optional_key)],
) -> dict[str, Any]:
    """Fetch the binding of an ARK (any spelling); a reserved one only with a key that covers it."""
    parsed = _parse_ark(ark, "ark")
    b = store_of(request).get_binding(str(parsed))
    hidden = b is not None and b.status == "reserved" and (
        key is None or not key.allows(parsed.naan, parsed.shoulder or None))
    if b is None or hidden:
        raise ApiError(404, f"{parsed} is not bound", field="ark")
    return _binding_out(b)


@router.get("/history", response_model=HistoryOut, responses=_ERRORS, openapi_extra=_KEY_OPTIONAL)
def get_history(
    request: Request,
    ark: Annotated[str, Query(min_length=1, max_length=4096, json_schema_extra={"pattern": ARK_PATTERN})],
    key: Annotated[ApiKey | None, Depends(optional_key)],
) -> dict[str, Any]:
    """Every change of an ARK, oldest first (the store's append-only history): scoped like the binding —
    the history of a published binding (public, unavailable, tombstoned) needs no key, that of one not
    published (reserved, deleted, only held) a key that covers it."""
    parsed = _parse_ark(ark, "ark")
    store = store_of(request)
    b = store.get_binding(str(parsed))
    shown = b is not None and published(b.status)
    entries = store.history("ark", str(parsed))
    allowed = shown or (key is not None and key.allows(parsed.naan, parsed.shoulder or None))
    if not entries or not allowed:
        raise ApiError(404, f"no history for {parsed}", field="ark")
    return {"history": [e.to_dict() for e in entries]}


@router.post("/tombstones", response_model=BindingOut, responses=_ERRORS)
def tombstone(
    request: Request, body: TombstoneIn, key: Annotated[ApiKey, Depends(api_key)]
) -> dict[str, Any]:
    """Withdraw an ARK for good: it then answers 410 and is never bound or minted again (idempotent)."""
    ark = _parse_ark(body.ark, "ark")
    _require(key, ark.naan, ark.shoulder, "ark")
    b = store_of(request).tombstone(body.ark, body.reason, principal=Principal.api_key(key.key_id))
    return _binding_out(b)


@router.get("/naans/{naan}/bindings", response_model=BindingList, responses=_ERRORS)
def list_bindings(
    request: Request,
    naan: Annotated[str, Path(json_schema_extra={"pattern": NAAN_PATTERN})],
    key: Annotated[ApiKey, Depends(api_key)],
    shoulder: Annotated[str | None, Query(max_length=64)] = None,
    after: Annotated[str | None, Query(max_length=4096)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
) -> dict[str, Any]:
    """List the ARKs bound under a NAAN (or one shoulder of it), in key order (code point order, on
    every backend), ``limit`` at a time."""
    try:
        naan = _read_naan(naan)
    except ValueError as exc:
        raise ApiError(422, str(exc), field="naan") from None
    _require(key, naan, shoulder if shoulder is not None else key.shoulder, "naan")
    for name, value in (("shoulder", shoulder), ("after", after)):
        if value is not None:
            try:
                _clean_text(value)
            except ValueError as exc:
                raise ApiError(422, str(exc), field=name) from None
    page = store_of(request).list_bindings(naan, shoulder=shoulder or key.shoulder, after=after, limit=limit)
    return {"bindings": [_binding_out(b) for b in page], "next": page[-1].key if len(page) == limit else None}


_JSONL_BODY: Final = {
    "requestBody": {
        "required": True,
        "content": {"application/x-ndjson": {"schema": {"type": "string", "minLength": 1}}},
        "description": "JSON Lines as written by the export: one binding per line.",
    }
}


#: The bad lines a refused import lists (the first ones; ``count`` says how many there were): the answer
#: to a body of bad lines stays small however large the body (every line listed, 1 MiB of them was 35 MB).
MAX_LISTED_PROBLEMS: Final = 1000


@router.post("/import", response_model=ImportOut, responses=_ERRORS, openapi_extra=_JSONL_BODY)
async def import_jsonl(request: Request, key: Annotated[ApiKey, Depends(api_key)]) -> dict[str, Any]:
    """Import bindings from JSON Lines in one transaction: any bad line rejects the whole import (422,
    the first 1,000 bad lines listed, and how many there were); an empty body is refused (400).  Lines
    are split at LF only, so values may hold U+2028, U+2029 and U+0085 as the export writes them.  Every
    ARK must be under the key's scope; other id kinds need a key for a whole NAAN, and may only change
    bindings that NAAN owns (see the API description)."""
    raw = await request.body()
    if not raw:
        raise ApiError(400, "the body is empty: send JSON Lines, one binding per line (as the export writes)",
                       field="body")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"body is not UTF-8 (byte {exc.start + 1})", field="body") from None
    lines = list(split_lines(text))  # at "\n" only: JSON strings may hold U+2028, U+0085 … unescaped
    store = store_of(request)
    await run_in_threadpool(_check_import_scope, key, lines)
    report = await run_in_threadpool(
        store.import_jsonl, lines, owner=key.naan, principal=Principal.api_key(key.key_id),
        max_problems=MAX_LISTED_PROBLEMS,
    )
    return {"lines": report.lines, "created": report.created, "updated": report.updated}


def _check_import_scope(key: ApiKey, lines: list[str]) -> None:
    """403 naming the first line whose id the key does not cover, judged on the row the store will
    write (:func:`pidkit.store.parse_import_line`, the store's own parser); malformed lines are left
    to the store, which rejects them all (422)."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = parse_import_line(line)
        except PidkitError:
            continue
        if row.kind == "ark":
            if row.naan is None or not key.allows(row.naan, row.shoulder):
                raise ApiError(403, f"line {number}: {row.key} is outside this API key's scope", field="body")
        elif key.shoulder is not None:
            raise ApiError(403, f"line {number}: only a key for a whole NAAN may import other id kinds",
                           field="body")


@router.get(
    "/export",
    responses={**_ERRORS, 200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                                "description": "JSON Lines, one binding per line"}},
    response_class=StreamingResponse,
)
def export_jsonl(request: Request, key: Annotated[ApiKey, Depends(api_key)]) -> StreamingResponse:
    """Export the ARK bindings under the key's NAAN (and shoulder) as JSON Lines, streamed."""
    store = store_of(request)

    def lines() -> Iterator[str]:
        after: str | None = None
        while True:
            page = store.list_bindings(key.naan, shoulder=key.shoulder, after=after, limit=MAX_PAGE)
            for b in page:
                yield json.dumps(b.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
            if len(page) < MAX_PAGE:
                return
            after = page[-1].key

    return StreamingResponse(lines(), media_type="application/x-ndjson")
