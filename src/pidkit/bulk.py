"""Bulk helpers for columns of ids: generate, validate, convert, and Library.Link ids over many rows.

A **column** is any sequence of values: a ``list``/``tuple``, a NumPy array (``numpy`` is optional:
``pip install pidkit[numpy]``), a pandas ``Series`` (``.tolist()``), a pyarrow ``Array``/``ChunkedArray``
(``.to_pylist()``) or any other iterable.  Results mirror the input: a NumPy array in gives a NumPy array
out (fixed-width strings, ``bool`` masks, or ``object`` where ``None`` can appear); anything else gives a
``list``.  Generation functions return a ``list`` unless ``array=True``.

Why NumPy and not pyarrow: NumPy is a small, ubiquitous wheel and the array type most tabular code can
hand over; pyarrow is a large dependency, and its arrays (like polars' and pandas') convert to and from
Python lists cheaply (``pa.array(result)``), which is where the work happens anyway — every helper here
works on Python strings with C-speed bulk steps (one ``base64`` / ``bytes.fromhex`` / ``json`` escape
pass over the whole column), not per-row objects.

>>> ids = new_xarkids(3)
>>> validate_xarkids(ids + ["nope"])
[True, True, True, False]
>>> xarkids_to_guids(["AYvP5WgA-_-_ASNFZ4mr"])
['018bcfe5-6800-4fbf-8fbf-0123456789ab']
>>> resource_ids_from_columns({"http://schema.org/name": ["Augusta Ada King"]},
...                           type="http://schema.org/Person")
['xjgOrUFiw_o']
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, overload

from .errors import LlidError, PidkitError, XarkIdError
from .llid import VERSA_TYPE, Pairs, _encode_many, _speedups
from .llid import resource_ids as _resource_ids
from .record_key import is_valid_record_key
from .tid import TidClock, is_valid_tid
from .xarkid import _GUID_FAST, COMPACT_LEN, XarkId

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "guids_to_xarkids",
    "new_tids",
    "new_xarkids",
    "resource_ids",
    "resource_ids_from_columns",
    "validate_record_keys",
    "validate_tids",
    "validate_xarkids",
    "xarkids_to_guids",
]

Errors: TypeAlias = Literal["raise", "null"]

_B64URL: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_GUID_LENGTHS: Final = frozenset({32, 34, 36, 38})
_GUID_DASHED_LEN: Final = 36
_tid_clock: Final = TidClock()  # one clock per process: ids from successive calls never repeat


# --- columns in and out ----------------------------------------------------------------------------------


def _is_ndarray(column: object) -> bool:
    return type(column).__module__ == "numpy" and type(column).__name__ == "ndarray"


def _as_list(column: Iterable[Any]) -> list[Any]:
    """A column as a Python list (NumPy/pandas ``tolist``, pyarrow ``to_pylist``, or ``list(…)``)."""
    if isinstance(column, list):
        return column
    if isinstance(column, str):
        raise TypeError("expected a column of values, got one str")
    to_list = getattr(column, "tolist", None) or getattr(column, "to_pylist", None)
    if to_list is not None:
        values = to_list()
        if isinstance(values, list):
            return values
    return list(column)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:  # pragma: no cover - numpy is in the dev extra
        raise ImportError("array output needs numpy: pip install pidkit[numpy]") from exc
    return numpy


def _strings_out(values: list[Any], as_array: bool, width: int) -> Any:
    if not as_array:
        return values
    np = _numpy()
    if any(v is None for v in values):
        return np.array(values, dtype=object)
    return np.array(values, dtype=f"<U{width}")


def _mask_out(values: list[bool], as_array: bool) -> Any:
    if not as_array:
        return values
    return _numpy().array(values, dtype=bool)


def _at(index: int, exc: PidkitError, error: type[PidkitError]) -> PidkitError:
    return error(f"index {index}: {exc.message}", text=exc.text, position=exc.position)


# --- generation ------------------------------------------------------------------------------------------


@overload
def new_xarkids(
    n: int, *, form: Literal["compact", "guid"] = ..., array: Literal[False] = ...
) -> list[str]: ...
@overload
def new_xarkids(
    n: int, *, form: Literal["compact", "guid"] = ..., array: Literal[True]
) -> NDArray[np.str_]: ...
def new_xarkids(n: int, *, form: Literal["compact", "guid"] = "compact", array: bool = False) -> Any:
    """``n`` new XarkIds as strings: compact (20 characters) or GUID form (36, lowercase).

    See :meth:`XarkId.new_compact_strings` (one ``os.urandom`` call for the batch).

    >>> [len(s) for s in new_xarkids(2, form="guid")]
    [36, 36]
    >>> new_xarkids(2, array=True).dtype
    dtype('<U20')
    """
    compact = XarkId.new_compact_strings(n)
    if form == "guid":
        return _strings_out(xarkids_to_guids(compact), array, _GUID_DASHED_LEN)
    if form != "compact":
        raise ValueError(f"form must be 'compact' or 'guid', got {form!r}")
    return _strings_out(compact, array, COMPACT_LEN)


@overload
def new_tids(n: int, *, clock: TidClock | None = ..., array: Literal[False] = ...) -> list[str]: ...
@overload
def new_tids(n: int, *, clock: TidClock | None = ..., array: Literal[True]) -> NDArray[np.str_]: ...
def new_tids(n: int, *, clock: TidClock | None = None, array: bool = False) -> Any:
    """``n`` new TIDs as strings, strictly increasing (also across calls with the same ``clock``).

    The default clock is one per process (random clock id), so successive calls never repeat an id.

    >>> a, b = new_tids(1), new_tids(2)
    >>> a[0] < b[0] < b[1]
    True
    """
    return _strings_out((clock or _tid_clock).next_many(n), array, 13)


# --- validation ------------------------------------------------------------------------------------------


# Each column function has an ndarray overload first and an Iterable one second; an ndarray is an Iterable
# too, so mypy reports the overlap (``type: ignore[overload-overlap]``) — the first match wins, as intended.


def _is_xarkid(value: object) -> bool:
    if type(value) is not str:
        return isinstance(value, str) and _is_xarkid(str(value))
    n = len(value)
    if n == COMPACT_LEN:
        return not value.strip(_B64URL)
    return n in _GUID_LENGTHS and _GUID_FAST.fullmatch(value) is not None


def _is_compact(value: object) -> bool:
    return isinstance(value, str) and len(value) == COMPACT_LEN and not value.strip(_B64URL)


@overload
def validate_xarkids(column: NDArray[Any], *, compact_only: bool = ...) -> NDArray[np.bool_]: ...  # type: ignore[overload-overlap]
@overload
def validate_xarkids(column: Iterable[object], *, compact_only: bool = ...) -> list[bool]: ...
def validate_xarkids(column: Iterable[object], *, compact_only: bool = False) -> Any:
    """A mask: ``True`` where the value is a XarkId that :meth:`XarkId.parse` accepts (compact or GUID form;
    only compact with ``compact_only``).  Non-strings (``None``, ``NaN``) are ``False``.

    >>> validate_xarkids(["AYvP5WgA-_-_ASNFZ4mr", "{018BCFE5-6800-4FBF-8FBF-0123456789AB}", None, "x"])
    [True, True, False, False]
    >>> validate_xarkids(["018bcfe5-6800-4fbf-8fbf-0123456789ab"], compact_only=True)
    [False]
    """
    values = _as_list(column)
    check = _is_compact if compact_only else _is_xarkid
    return _mask_out(list(map(check, values)), _is_ndarray(column))


@overload
def validate_tids(column: NDArray[Any], *, strict: bool = ...) -> NDArray[np.bool_]: ...  # type: ignore[overload-overlap]
@overload
def validate_tids(column: Iterable[object], *, strict: bool = ...) -> list[bool]: ...
def validate_tids(column: Iterable[object], *, strict: bool = False) -> Any:
    """A mask: ``True`` where the value is a TID (:func:`pidkit.tid.is_valid_tid`; ``strict``: top bit 0).

    >>> validate_tids(["3jzfcijpj2z2a", "3jzfcijpj2z2a\\n", "czzzzzzzzzzzz", 7])
    [True, False, True, False]
    >>> validate_tids(["czzzzzzzzzzzz"], strict=True)
    [False]
    """
    values = _as_list(column)
    mask = [isinstance(v, str) and is_valid_tid(v, strict=strict) for v in values]
    return _mask_out(mask, _is_ndarray(column))


@overload
def validate_record_keys(column: NDArray[Any]) -> NDArray[np.bool_]: ...  # type: ignore[overload-overlap]
@overload
def validate_record_keys(column: Iterable[object]) -> list[bool]: ...
def validate_record_keys(column: Iterable[object]) -> Any:
    """A mask: ``True`` where the value is an atproto record key (:func:`is_valid_record_key`).

    >>> validate_record_keys(["self", "..", "a/b", None])
    [True, False, False, False]
    """
    values = _as_list(column)
    mask = [isinstance(v, str) and is_valid_record_key(v) for v in values]
    return _mask_out(mask, _is_ndarray(column))


# --- conversion ------------------------------------------------------------------------------------------


def _native_hex_to_guid(h: str) -> str:
    """30 hex digits of the native 15 bytes -> the dashed GUID ``tttttttt-tttt-4RRR-8RRR-…`` (xarkid.py)."""
    return f"{h[0:8]}-{h[8:12]}-4{h[12:15]}-8{h[15:18]}-{h[18:30]}"


@overload
def xarkids_to_guids(column: NDArray[Any], *, dashes: bool = ..., errors: Errors = ...) -> NDArray[Any]: ...  # type: ignore[overload-overlap]
@overload
def xarkids_to_guids(column: Iterable[object], *, dashes: bool = ..., errors: Errors = ...) -> list[str]: ...
def xarkids_to_guids(column: Iterable[object], *, dashes: bool = True, errors: Errors = "raise") -> Any:
    """The GUID form (lowercase; 36 characters, or 32 hex with ``dashes=False``) of each XarkId in any form.

    ``errors="raise"`` raises the :class:`~pidkit.errors.XarkIdError` of the first bad value, its message
    starting with the 0-based ``index``; ``errors="null"`` gives ``None`` there instead.  A column of only
    compact ids (the usual case) is decoded in one base64 call.

    >>> xarkids_to_guids(["AYvP5WgA-_-_ASNFZ4mr", "018BCFE568004FBF8FBF0123456789AB"], dashes=False)
    ['018bcfe568004fbf8fbf0123456789ab', '018bcfe568004fbf8fbf0123456789ab']
    >>> xarkids_to_guids(["AYvP5WgA-_-_ASNFZ4mr", "x"])
    Traceback (most recent call last):
    ...
    pidkit.errors.XarkIdError: index 1: expected a 20-character compact XarkId or a 32-hex-digit GUID, got 1 characters in 'x'
    >>> xarkids_to_guids(["x"], errors="null")
    [None]
    """  # noqa: E501
    values = _as_list(column)
    out: list[Any] | None = None
    try:
        joined = "".join(values)
    except TypeError:
        joined = None
    if (
        joined is not None
        and len(joined) == COMPACT_LEN * len(values)
        and not joined.strip(_B64URL)
        and all(len(v) == COMPACT_LEN for v in values)
    ):
        h = base64.urlsafe_b64decode(joined).hex()
        out = [_native_hex_to_guid(h[i : i + 30]) for i in range(0, len(h), 30)]
        if not dashes:
            out = [g.replace("-", "") for g in out]
    if out is None:
        out = []
        for i, value in enumerate(values):
            try:
                guid = XarkId.parse(value).guid
            except XarkIdError as exc:
                if errors == "raise":
                    raise _at(i, exc, XarkIdError) from exc
                out.append(None)
                continue
            except TypeError as exc:
                if errors == "raise":
                    raise XarkIdError(f"index {i}: expected a str, got {type(value).__name__}") from exc
                out.append(None)
                continue
            out.append(str(guid) if dashes else guid.hex)
    return _strings_out(out, _is_ndarray(column), _GUID_DASHED_LEN if dashes else 32)


@overload
def guids_to_xarkids(column: NDArray[Any], *, errors: Errors = ...) -> NDArray[Any]: ...  # type: ignore[overload-overlap]
@overload
def guids_to_xarkids(column: Iterable[object], *, errors: Errors = ...) -> list[str]: ...
def guids_to_xarkids(column: Iterable[object], *, errors: Errors = "raise") -> Any:
    """The compact form of each XarkId in any form (GUID text as :meth:`XarkId.parse` accepts it, or
    already compact); errors as in :func:`xarkids_to_guids`.  Well-formed GUIDs are re-encoded in one
    ``bytes.fromhex`` and one base64 call for the whole column.

    >>> guids_to_xarkids(["018bcfe5-6800-4fbf-8fbf-0123456789ab", "{018BCFE568004FBF8FBF0123456789AB}"])
    ['AYvP5WgA-_-_ASNFZ4mr', 'AYvP5WgA-_-_ASNFZ4mr']
    >>> guids_to_xarkids(["550e8400-e29b-41d4-a716-446655440000"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pidkit.errors.XarkIdError: index 0: not a XarkId GUID: variant nibble is 'a', expected '8' ... position 20
    """
    values = _as_list(column)
    fullmatch = _GUID_FAST.fullmatch
    out: list[Any]
    if all(type(v) is str and fullmatch(v) is not None for v in values):
        digits = [v.strip("{}").replace("-", "") for v in values]
        native = "".join([d[0:12] + d[13:16] + d[17:32] for d in digits])
        text = base64.urlsafe_b64encode(bytes.fromhex(native)).decode("ascii")
        out = [text[i : i + COMPACT_LEN] for i in range(0, len(text), COMPACT_LEN)]
    else:
        out = []
        for i, value in enumerate(values):
            try:
                out.append(XarkId.parse(value).compact)
            except XarkIdError as exc:
                if errors == "raise":
                    raise _at(i, exc, XarkIdError) from exc
                out.append(None)
            except TypeError as exc:
                if errors == "raise":
                    raise XarkIdError(f"index {i}: expected a str, got {type(value).__name__}") from exc
                out.append(None)
    return _strings_out(out, _is_ndarray(column), COMPACT_LEN)


# --- Library.Link resource ids ---------------------------------------------------------------------------


def resource_ids(column: Iterable[Pairs]) -> list[str]:
    """:func:`pidkit.resource_ids` on a column whose every value is a list of ``[key, value]`` pairs.

    >>> resource_ids([[["a", "b"]], []])
    ['yFF3yU8UYM0', 'zyUv3NDFd5E']
    """
    return _resource_ids(_as_list(column))


def resource_ids_from_columns(
    columns: Mapping[str, Iterable[object]],
    *,
    type: str | None = None,
    missing: Literal["error", "skip"] = "error",
) -> list[str]:
    """Library.Link ids of a table: row ``i`` hashes ``[[VERSA_TYPE, type], [key, columns[key][i]], …]``.

    The keys are taken in the mapping's order (the order of the pairs), after the type pair if ``type``
    is given — exactly the ids :func:`pidkit.resource_id` gives for the pairs built per row, but for the
    whole table at once: one call of the C helper (:data:`pidkit.llid.SPEEDUPS`), or in pure Python the
    JSON written by one format string per table with the values escaped by ``json``'s own C escaper.
    Values must be ``str``; a ``None`` is an error, or with ``missing="skip"`` leaves that pair out (a
    record without that property).  Errors are :class:`~pidkit.errors.LlidError` naming the row and key.

    >>> resource_ids_from_columns(
    ...     {"http://schema.org/name": ["Jonathan Bruce Postel"],
    ...      "http://schema.org/birthDate": ["1943-08-06"],
    ...      "http://schema.org/deathDate": ["1998-10-16"]},
    ...     type="http://schema.org/Person")
    ['65IMbTlnlOQ']
    >>> resource_ids_from_columns({"name": ["Ada", None]}, missing="skip") == [
    ...     resource_ids([[["name", "Ada"]], []])[0], resource_ids([[]])[0]]
    True
    """
    if not isinstance(columns, Mapping):
        raise LlidError("columns must be a mapping of key -> column of values")
    keys = list(columns)
    for key in keys:
        if not isinstance(key, str):
            raise LlidError(f"keys must be str, got {key!r}")
    if type is not None and not isinstance(type, str):
        raise LlidError(f"type must be a str, got {type!r}")
    lists = [_as_list(columns[key]) for key in keys]
    if not lists:
        raise LlidError("no columns given")
    n = len(lists[0])
    for key, values in zip(keys, lists, strict=True):
        if len(values) != n:
            raise LlidError(f"column {key!r} has {len(values)} values, the first column {n}")
    esc = encode_basestring_ascii
    head = f"[{esc(VERSA_TYPE)},{esc(type)}]," if type is not None else ""
    if _speedups is not None:
        # the C helper: row i is fragments[0] + json(lists[0][i]) + fragments[1] + … + fragments[-1]
        fragments = [f"[{head}[{esc(keys[0])},"]
        fragments += [f"],[{esc(k)}," for k in keys[1:]]
        fragments.append("]]")
        try:
            ids: list[str] = _speedups.ids_from_template(tuple(f.encode() for f in fragments), tuple(lists))
        except TypeError:
            pass  # a value that is not a str (or a column that is not a plain list): the paths below
        else:
            return ids
    # one %-template per table: [ [type] , [k0,%s] , [k1,%s] … ]  ('%' in keys doubled)
    template = (
        "[" + head.replace("%", "%%") + ",".join(f"[{esc(k).replace('%', '%%')},%s]" for k in keys) + "]"
    )
    try:
        escaped = [list(map(esc, values)) for values in lists]
    except TypeError:
        escaped = None
    if escaped is not None:
        if len(escaped) == 1:
            texts = [template % (v,) for v in escaped[0]]
        else:
            texts = [template % row for row in zip(*escaped, strict=True)]
        return _encode_many(texts)
    # some value is not a str: name the first one, or build the rows without the missing pairs
    rows: list[str] = []
    for i in range(n):
        parts = [head[:-1]] if head else []
        for key, values in zip(keys, lists, strict=True):
            value = values[i]
            if value is None and missing == "skip":
                continue
            if not isinstance(value, str):
                raise LlidError(f"row {i}, key {key!r}: value must be a str, got {value!r:.40}")
            parts.append(f"[{esc(key)},{esc(value)}]")
        rows.append("[" + ",".join(parts) + "]")
    return _encode_many(rows)
