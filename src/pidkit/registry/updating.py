"""Replacing the registry in use: ``pidkit registry update FILE|URL``.

Kept apart from :mod:`pidkit.registry.loading` so that reading the registry (what ``inspect`` and the
resolver do) never imports the file-writing machinery (:mod:`pidkit.atomic`).

>>> import os, tempfile
>>> from pidkit.registry import SNAPSHOT
>>> with tempfile.TemporaryDirectory() as d:
...     len(update(SNAPSHOT, os.path.join(d, "naan_records.json")))
1800
"""

from __future__ import annotations

import os
from pathlib import Path

from ..atomic import AtomicWriter
from .loading import active_path, parse, read_source
from .records import RegistryError
from .registry import Registry

__all__ = ["update"]


def update(source: str | os.PathLike[str], target: str | os.PathLike[str] | None = None) -> Registry:
    """Replace the registry in use (or the file ``target``) with the one read from ``source`` (a file or
    an http(s) URL), after validating it whole; atomically.  Returns the new registry.

    Nothing is written when reading or validating fails, or the new registry has no record at all
    (:class:`~pidkit.registry.RegistryError`).
    """
    name = os.fspath(source)
    data = read_source(name)
    registry = parse(data, name)
    if not len(registry):  # a registry without a record would leave every NAAN unknown
        raise RegistryError("no NAAN record in it: the registry in use is kept", text=name)
    path = Path(target) if target is not None else active_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with AtomicWriter(path) as fh:
            fh.write(data)
    except OSError as exc:
        raise RegistryError(f"cannot write the registry: {exc.strerror or exc}", text=str(path)) from None
    return registry
