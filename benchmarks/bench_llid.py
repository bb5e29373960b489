"""Library.Link resource ids against the reference recipe (json.dumps + mmh3.hash64 + struct + base64).

Goal (issue 2): at least 10x faster than the reference recipe per call, identical ids on every vector.
That takes the optional C helper ``pidkit._speedups`` (built at install time when a C compiler is there):
in pure Python, hashing the ready JSON bytes and encoding the 8 bytes alone already cost about a tenth of
the recipe (``mmh3.hash_bytes`` + ``binascii.b2a_base64``: ratio 0.10 before any JSON is written).
Measured: the C path on the algorithm page's 4-pair example and on a non-ASCII one, the pure-Python
fallback (what an install without a C compiler gets), and the bulk helper.  Every row first checks its
function against the reference recipe and the published vectors and stops the run (SystemExit) on any
difference.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mmh3

from benchmarks._harness import Result, once, per_call
from pidkit.llid import (
    SPEEDUPS,
    VERSA_TYPE,
    _resource_id_python,
    _resource_ids_python,
    resource_id,
    resource_ids,
)

VECTORS = Path(__file__).resolve().parent.parent / "tests" / "data" / "vectors" / "librarylink_published.json"

#: Escapes of every kind: Latin-1, BMP (em dash, guillemets), astral (a surrogate pair), quotes, a tab.
NON_ASCII = [
    [VERSA_TYPE, "http://schema.org/Person"],
    ["http://schema.org/name", "Zoë Ünal — «Ada» \U0001d504"],
    ["http://schema.org/alternateName", 'Ada "the Enchantress"\tof Numbers'],
    ["http://schema.org/birthPlace", "Zürich, Schweiz"],
]

PATH = "C helper (pidkit._speedups)" if SPEEDUPS else "pure Python: the C helper was NOT built"


def reference(pairs: Any) -> str:
    """The Library.Link algorithm (``docs/library-link.md``) as everyone writes it."""
    text = json.dumps(pairs, separators=(",", ":"))
    return base64.urlsafe_b64encode(struct.pack(">q", mmh3.hash64(text)[0])).rstrip(b"=").decode()


def _check(name: str, fn: Callable[[Any], str], cases: list[tuple[Any, str]]) -> None:
    for pairs, expected in cases:
        got = fn(pairs)
        if not got == reference(pairs) == expected:
            raise SystemExit(f"{name}: id {got!r} differs from the reference {expected!r} for {pairs!r:.200}")


def run(quick: bool) -> list[Result]:
    number = 20_000 if quick else 200_000
    repeat = 3 if quick else 7
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    cases = [(v["pairs"], v["expected"]) for v in vectors] + [(NON_ASCII, reference(NON_ASCII))]
    all_pairs = [pairs for pairs, _ in cases]
    _check("resource_id", resource_id, cases)
    _check("pure-Python resource_id", _resource_id_python, cases)
    expected = [rid for _, rid in cases]
    if resource_ids(all_pairs) != expected or _resource_ids_python(all_pairs) != expected:
        raise SystemExit("resource_ids differs from the reference")
    pairs = all_pairs[0]  # the algorithm page's 4-pair Jon Postel example
    recipe = "json.dumps+mmh3.hash64+struct+b64"

    def one_id(label: str, code: str, ours: Callable[[], str], ref: float, goal: float, note: str) -> Result:
        timed = per_call(ours, number=number, repeat=repeat)
        return Result(label, code, timed, recipe, ref, goal, note=note)

    ref = per_call(lambda: reference(pairs), number=number, repeat=repeat)
    ref_non_ascii = per_call(lambda: reference(NON_ASCII), number=number, repeat=repeat)
    results = [
        one_id("one id (4 pairs)", "resource_id(pairs)", lambda: resource_id(pairs), ref, 0.1,
               f"{PATH}; identical ids on all published vectors"),
        one_id("one id (4 pairs, non-ASCII)", "resource_id(pairs)", lambda: resource_id(NON_ASCII),
               ref_non_ascii, 0.1, f"{PATH}; Latin-1, BMP and astral characters, quotes, a tab"),
        one_id("one id (4 pairs), pure Python", "_resource_id_python(pairs)",
               lambda: _resource_id_python(pairs), ref, 0.6,
               "pure-Python fallback (no C compiler at install, or PIDKIT_PURE_PYTHON=1)"),
    ]

    n_bulk = 2_000 if quick else 20_000
    batch = [all_pairs[i % len(all_pairs)] for i in range(n_bulk)]
    bulk = once(lambda: resource_ids(batch), repeat=repeat) / n_bulk
    bulk_ref = once(lambda: [reference(p) for p in batch], repeat=repeat) / n_bulk
    results.append(
        Result(
            f"{n_bulk:,} ids in bulk",
            "resource_ids(batch)",
            bulk,
            "[reference(p) ...]",
            bulk_ref,
            0.1,
            unit="id",
            note=PATH,
        )
    )
    return results
