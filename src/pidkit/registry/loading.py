"""Reading, validating and replacing the registry; where the registry in use lives.

The registry in use is, in this order:

1. the file named by ``PIDKIT_REGISTRY``, when that variable is set and the file exists;
2. otherwise ``$XDG_DATA_HOME/pidkit/naan_records.json`` (``~/.local/share/pidkit/…`` without
   ``XDG_DATA_HOME``), when it exists: the per-user registry ``pidkit registry update`` writes;
3. otherwise the snapshot shipped inside the package (``pidkit/registry/data/naan_records.json.gz``:
   the CDL public NAAN registry of 2024-11-07, MIT licence, ``data/LICENSE-naan_reg_public``).

``pidkit registry update`` (:mod:`pidkit.registry.updating`) writes to the first of (1) and (2) that
applies — never inside the installed package — and only after the new registry has been read and
validated whole; the file is replaced atomically (written beside it, flushed, renamed over it), so a
refused or interrupted update leaves the registry in use as it was.

>>> reg = load(SNAPSHOT)
>>> len(reg), reg.date
(1800, '2024-11-07')
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Final

from .records import RegistryError, parse_record
from .registry import Registry, naan_line

__all__ = [
    "ENV_VAR",
    "MAX_BYTES",
    "SNAPSHOT",
    "active_path",
    "default",
    "describe_naan",
    "load",
    "parse",
    "read_source",
]

#: The environment variable naming the registry file to use (and to replace with ``update``).
ENV_VAR: Final = "PIDKIT_REGISTRY"
#: The snapshot shipped in the package (gzip-compressed JSON).
SNAPSHOT: Final = Path(__file__).with_name("data") / "naan_records.json.gz"
#: The largest registry read (the 2024 registry is 1.1 MB).
MAX_BYTES: Final = 64 * 1024 * 1024
#: Seconds to wait for a registry URL.
FETCH_TIMEOUT: Final = 30.0
_GZIP_MAGIC: Final = b"\x1f\x8b"


def parse(data: bytes, source: str = "<registry>") -> Registry:
    """Validate a registry given as the bytes of its JSON (plain or gzip-compressed) and index it.

    A registry with one malformed record is refused whole: :class:`~pidkit.registry.RegistryError`
    naming ``source``, the record (``data[i]`` and its ``what``) and the field.

    >>> parse(b'{"metadata": {}, "data": [{"rtype": "PublicNAAN"}]}', "new.json")
    Traceback (most recent call last):
    ...
    pidkit.registry.records.RegistryError: data[0]: what: missing in 'new.json'
    >>> parse(b'{"data": [', "new.json")
    Traceback (most recent call last):
    ...
    pidkit.registry.records.RegistryError: not JSON: Expecting value (column 11) in 'new.json' on line 1
    """
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise RegistryError(f"not a valid gzip file: {exc}", text=source) from None
    try:
        doc = json.loads(data)
    except UnicodeDecodeError as exc:
        raise RegistryError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", text=source) from None
    except json.JSONDecodeError as exc:
        message = f"not JSON: {exc.msg} (column {exc.colno})"
        raise RegistryError(message, text=source, line=exc.lineno) from None
    except (RecursionError, ValueError) as exc:  # nested too deeply; an integer of > 4,300 digits
        raise RegistryError(f"not JSON we read ({type(exc).__name__})", text=source) from None
    return _build(doc, source)


def _build(doc: Any, source: str) -> Registry:
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise RegistryError('expected an object with a "data" array of records', text=source)
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise RegistryError('"metadata" must be an object', text=source)
    records = []
    for i, obj in enumerate(doc["data"]):
        try:
            records.append(parse_record(obj, i))
        except RegistryError as exc:
            raise RegistryError(exc.message, text=source) from None
    return Registry(records, metadata, source)


def read_source(source: str | os.PathLike[str]) -> bytes:
    """The bytes of a registry file, or of an ``http://`` / ``https://`` URL (at most :data:`MAX_BYTES`).

    Errors are :class:`~pidkit.registry.RegistryError` naming the file or URL: missing or unreadable
    file, unreachable URL, an HTTP error status, too large.

    >>> read_source("/nonexistent/naan_records.json")
    Traceback (most recent call last):
    ...
    pidkit.registry.records.RegistryError: cannot read the registry: No such file or directory in '/nonexistent/naan_records.json'
    """  # noqa: E501
    name = os.fspath(source)
    if name.startswith(("http://", "https://")):
        return _fetch(name)
    try:
        with open(name, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise RegistryError(f"cannot read the registry: {exc.strerror or exc}", text=name) from None
    if len(data) > MAX_BYTES:
        raise RegistryError(f"larger than {MAX_BYTES} bytes", text=name)
    return data


def _fetch(url: str) -> bytes:
    # Only http:// and https:// reach here (read_source), never file: or custom schemes.
    request = urllib.request.Request(url, headers={"User-Agent": "pidkit-registry-update"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:  # noqa: S310
            data: bytes = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise RegistryError(f"cannot fetch the registry: HTTP {exc.code} {exc.reason}", text=url) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        raise RegistryError(f"cannot fetch the registry: {reason}", text=url) from None
    if len(data) > MAX_BYTES:
        raise RegistryError(f"larger than {MAX_BYTES} bytes", text=url)
    return data


def load(source: str | os.PathLike[str]) -> Registry:
    """Read and validate the registry in a file (JSON, plain or gzip) or at an http(s) URL."""
    return parse(read_source(source), os.fspath(source))


def active_path(environ: dict[str, str] | None = None) -> Path:
    """Where the registry in use is read from if it exists, and where ``update`` writes: ``$PIDKIT_REGISTRY``,
    else ``$XDG_DATA_HOME/pidkit/naan_records.json`` (``~/.local/share/pidkit/…``).

    >>> str(active_path({"PIDKIT_REGISTRY": "/srv/naan.json"}))
    '/srv/naan.json'
    >>> str(active_path({"XDG_DATA_HOME": "/home/u/.data"}))
    '/home/u/.data/pidkit/naan_records.json'
    """
    env = os.environ if environ is None else environ
    named = env.get(ENV_VAR)
    if named:
        return Path(named)
    data_home = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / "pidkit" / "naan_records.json"


def _in_use() -> Path:
    path = active_path()
    return path if path.exists() else SNAPSHOT


#: A few versions, not every version a long-running server ever saw (each is a few MB).
@functools.lru_cache(maxsize=4)
def _load_cached(path: Path, mtime_ns: int, size: int) -> Registry:
    return load(path)


def default() -> Registry:
    """The registry in use (see the module docstring), loaded once per version of its file.

    >>> default().naan("13030").who.acronym
    'CDLIB'
    """
    path = _in_use()
    st = path.stat()
    return _load_cached(path, st.st_mtime_ns, st.st_size)


def describe_naan(naan: str) -> str:
    """``inspect``'s note on a NAAN, from the registry in use (:func:`~pidkit.registry.naan_line`); if that
    registry cannot be read, the note says so instead of failing.

    >>> describe_naan("12148")
    'NAAN 12148: Bibliothèque nationale de France (BNF)'
    """
    try:
        reg = default()
    except RegistryError as exc:
        return f"NAAN {naan}: the NAAN registry cannot be read ({exc})"
    return naan_line(naan, reg)
