"""Every text entry point of the library, as ``name → function(bytes)`` for the fuzzers.

Each target turns fuzz bytes into the input its parser takes and calls it; the only exceptions allowed
out of a target are :mod:`pidkit.errors` types (``ALLOWED``).  Used by ``test_fuzz.py`` (hypothesis),
``atheris_fuzz.py`` (coverage-guided, in a subprocess) and ``test_scaling.py`` (hostile sizes).

>>> sorted(TEXT_TARGETS)[:3]
['Ark details', 'Ark.normalize', 'Ark.parse']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pidkit import Ark, GedcomUid, KeyType, RecordKey, RevisionId, Tid, XarkId, inspect, noid
from pidkit.ark import syntax
from pidkit.errors import PidkitError
from pidkit.gedcom.reader import parse_line, read_bytes
from pidkit.llid import parse_versa

#: What a library entry point may raise on bad input.
ALLOWED: Final = (PidkitError,)


def _ark_normalize(text: str) -> object:
    return Ark.parse(text).normalize()


def _ark_details(text: str) -> object:
    a = Ark.parse(text)
    return (a.shoulder, a.blade, a.check_ok, a.ancestors, a.component_path, a.variant_path, a.inflection)


def _gedcom_file(data: bytes) -> object:
    """Read a whole GEDCOM file: every record, every line, every value with its CONC/CONT chain."""
    reader = read_bytes(data)
    out = 0
    for rec in reader:
        for i, line in enumerate(rec.lines):
            line.value(reader.dialect)
            if line.level is not None:
                out += len(rec.text(i) or "")
    return out


#: Parsers of ``str`` input.
TEXT_TARGETS: Final[dict[str, Callable[[str], object]]] = {
    "XarkId.parse": XarkId.parse,
    "RevisionId.parse": RevisionId.parse,
    "Tid.parse": Tid.parse,
    "RecordKey.parse": RecordKey.parse,
    "KeyType.parse": KeyType.parse,
    "GedcomUid.parse": GedcomUid.parse,
    "Ark.parse": Ark.parse,
    "Ark.normalize": _ark_normalize,
    "Ark details": _ark_details,
    "ark.normalize (text)": syntax.normalize,
    "ark.clean_pasted": syntax.clean_pasted,
    "noid.Template.parse": noid.Template.parse,
    "noid.check_char": noid.check_char,
    "noid.verify": noid.verify,
    "llid.parse_versa": parse_versa,
    "inspect": inspect,
}

#: Parsers of ``bytes`` input.
BYTES_TARGETS: Final[dict[str, Callable[[bytes], object]]] = {
    "gedcom.parse_line": parse_line,
    "gedcom.read_bytes": _gedcom_file,
}


def call(name: str, data: bytes) -> None:
    """Run target ``name`` on fuzz ``data`` (decoded as UTF-8 with replacement for text targets);
    :mod:`pidkit.errors` exceptions are expected and swallowed, anything else propagates.

    >>> call("Tid.parse", b"not a tid")
    """
    try:
        if name in BYTES_TARGETS:
            BYTES_TARGETS[name](data)
        else:
            TEXT_TARGETS[name](data.decode("utf-8", "replace"))
    except ALLOWED:
        pass
