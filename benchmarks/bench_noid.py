"""NOID check characters and minting against pynoid, and ARK parsing against an absolute goal, same run.

Goals (issue 3): NCDA ``check_char`` at least 5x faster than pynoid's check-digit function (pynoid 0.1,
``pynoid.__checkdigit``, a module-private function reached with ``getattr``).  pynoid's ``mint`` with a
counter does not work on Python 3 (``n / div`` makes a float index: ``TypeError``), so minting is
measured against an absolute goal instead (100,000 ids/s with a check character), and ARK parsing
against the standard library's URL splitter (at most 4x its time while validating and normalizing).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

import pynoid

from benchmarks._harness import Result, once, per_call
from pidkit.ark import Ark
from pidkit.noid import Minter, Template, check_char, verify

ZONE = "13030/xf93gt2"
FULL = "13030/xf93gt2q"
LONG_ZONE = "13030/" + "x6np1wh8k" * 10


def _pynoid_checkdigit() -> Callable[[str], str]:
    fn: Callable[[str], str] = getattr(pynoid, "__checkdigit")  # module-private name
    assert fn(ZONE) == check_char(ZONE) == "q"
    assert fn(LONG_ZONE) == check_char(LONG_ZONE)
    return fn


def run(quick: bool) -> list[Result]:
    number = 20_000 if quick else 200_000
    repeat = 3 if quick else 7
    bulk_n = 20_000 if quick else 200_000
    results: list[Result] = []
    peer = _pynoid_checkdigit()

    ours = per_call(lambda: check_char(ZONE), number=number, repeat=repeat)
    theirs = per_call(lambda: peer(ZONE), number=number, repeat=repeat)
    results.append(
        Result("NCDA check char, 13-char zone", "noid.check_char", ours, "pynoid.__checkdigit", theirs, 0.2)
    )

    ours = per_call(lambda: check_char(LONG_ZONE), number=number // 4, repeat=repeat)
    theirs = per_call(lambda: peer(LONG_ZONE), number=number // 4, repeat=repeat)
    results.append(
        Result("NCDA check char, 96-char zone", "noid.check_char", ours, "pynoid.__checkdigit", theirs, 0.2)
    )

    ours = per_call(lambda: verify(FULL), number=number, repeat=repeat)
    theirs = per_call(lambda: pynoid.validate(FULL), number=number, repeat=repeat)
    results.append(Result("NCDA verify", "noid.verify", ours, "pynoid.validate", theirs, 0.2))

    minter = Minter(Template.parse("fk4.reedeedk"), "99999", seed=12345)
    mint_s = once(lambda: minter.mint_batch(0, bulk_n), repeat=repeat) / bulk_n
    results.append(
        Result(
            f"random mint with check char, {bulk_n:,} ids",
            "Minter.mint_batch (fk4.reedeedk)",
            mint_s,
            "(goal)",
            10e-6,
            1.0,
            unit="id",
            note="goal: 100,000 ids/s; pynoid.mint(n=…) raises TypeError on Python 3",
        )
    )

    # No Python ARK library parses and normalizes per draft-kunze-ark-40; the yardstick is the standard
    # library's URL splitter (uncached), which validates nothing and normalizes nothing.
    text = "https://example.org/ark:/12345/x6np1wh8k/c3/s5.v7.xsl?info"
    urlsplit = getattr(urllib.parse.urlsplit, "__wrapped__", urllib.parse.urlsplit)
    parse_s = per_call(lambda: Ark.parse(text), number=number // 4, repeat=repeat)
    split_s = per_call(lambda: urlsplit(text), number=number // 4, repeat=repeat)
    results.append(
        Result(
            "ARK parse + validate + normalize (Mapping ARK)",
            "Ark.parse",
            parse_s,
            "urllib.parse.urlsplit (uncached)",
            split_s,
            4.0,
            note="yardstick, not a peer: urlsplit only splits; Ark.parse validates every part and normalizes",
        )
    )
    return results
