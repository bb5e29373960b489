"""Library.Link resource ids against the reference recipe (json.dumps + mmh3.hash64 + struct + base64).

Goal (issue 2): at least 10x faster than the reference recipe per call, identical ids on every vector.
Also measured: the bulk helper, and where the time of one call goes (hash + encoding alone), to show how
much of the recipe's cost is left once the JSON step is cheap.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from pathlib import Path
from typing import Any

import mmh3

from benchmarks._harness import Result, once, per_call
from pidkit.llid import resource_id, resource_ids

VECTORS = Path(__file__).resolve().parent.parent / "tests" / "data" / "vectors" / "librarylink_published.json"


def reference(pairs: Any) -> str:
    """seeds/002 as everyone writes it."""
    text = json.dumps(pairs, separators=(",", ":"))
    return base64.urlsafe_b64encode(struct.pack(">q", mmh3.hash64(text)[0])).rstrip(b"=").decode()


def run(quick: bool) -> list[Result]:
    number = 20_000 if quick else 200_000
    repeat = 3 if quick else 7
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    all_pairs = [v["pairs"] for v in vectors]
    for pairs, v in zip(all_pairs, vectors, strict=True):
        if not resource_id(pairs) == reference(pairs) == v["expected"]:
            raise SystemExit(f"ids differ on vector {v['expected']}")
    pairs = all_pairs[0]  # the seed's 4-pair Jon Postel example
    results: list[Result] = []

    ours = per_call(lambda: resource_id(pairs), number=number, repeat=repeat)
    ref = per_call(lambda: reference(pairs), number=number, repeat=repeat)
    results.append(
        Result(
            "one id (4 pairs)",
            "resource_id(pairs)",
            ours,
            "json.dumps+mmh3.hash64+struct+b64",
            ref,
            0.1,
            note="identical ids on all published vectors",
        )
    )

    # where the time goes: the unavoidable part (hash the ready JSON bytes, encode 8 bytes)
    raw = json.dumps(pairs, separators=(",", ":")).encode()
    to_url = bytes.maketrans(b"+/", b"-_")
    floor = per_call(
        lambda: (
            binascii.b2a_base64(mmh3.hash_bytes(raw)[7::-1], newline=False)[:11].translate(to_url).decode()
        ),
        number=number,
        repeat=repeat,
    )
    results.append(
        Result(
            "hash + encode only (no JSON)",
            "mmh3.hash_bytes+b2a_base64",
            floor,
            "json.dumps+mmh3.hash64+struct+b64",
            ref,
            0.1,
            note="lower bound for any pure-Python caller: the JSON step removed entirely",
        )
    )

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
        )
    )
    return results
