"""TID generation and TID / record key validation against the standard library and the atproto package.

Goals (issue 2): ``str(TidClock.next())`` in at most 0.6x the time of ``uuid.uuid4()``; validating a TID and
a record key no slower than the ``atproto`` package's regex checks (its ``validate_tid`` /
``validate_record_key``, called as the package calls them when ``strict_string_format=True``: the
undecorated function).  The peer's checks use ``re.match(...$)`` and accept a trailing newline; ours do not.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from atproto_client.models import string_formats

from benchmarks._harness import Result, once, per_call
from pidkit.record_key import RecordKey, is_valid_record_key
from pidkit.tid import Tid, TidClock, is_valid_tid

# What the package runs under strict_string_format=True (its _NamedValidator unwraps the opt-in gate).
peer_validate_tid = string_formats.validate_tid.__wrapped__
peer_validate_rkey = string_formats.validate_record_key.__wrapped__

TID = "3jzfcijpj2z2a"
RKEY = "app.bsky.feed.post~self"


def _peer_accepts(fn: object, text: str) -> bool:
    try:
        fn(text, None)  # type: ignore[operator]
    except ValueError:
        return False
    return True


def _pair(
    ours: Callable[[], object], peer: Callable[[], object], number: int, repeat: int
) -> tuple[float, float]:
    """Best times of ``ours`` and ``peer``, measured alternately (a busy machine hits both alike)."""
    best_ours = best_peer = float("inf")
    for _ in range(3):
        best_peer = min(best_peer, per_call(peer, number=number, repeat=repeat))
        best_ours = min(best_ours, per_call(ours, number=number, repeat=repeat))
    return best_ours, best_peer


def run(quick: bool) -> list[Result]:
    number = 20_000 if quick else 200_000
    repeat = 3 if quick else 7
    bulk_n = 100_000 if quick else 1_000_000
    results: list[Result] = []

    clock = TidClock()
    tid_s = per_call(lambda: str(clock.next()), number=number, repeat=repeat)
    uuid4_s = per_call(uuid.uuid4, number=number, repeat=repeat)
    results.append(Result("new TID as a string", "str(TidClock.next())", tid_s, "uuid.uuid4()", uuid4_s, 0.6))

    bulk_s = once(lambda: clock.next_many(bulk_n), repeat=repeat) / bulk_n
    results.append(
        Result(
            f"{bulk_n:,} TID strings in bulk",
            f"TidClock.next_many({bulk_n:,})",
            bulk_s,
            "[str(uuid.uuid4()) ...]",
            once(lambda: [str(uuid.uuid4()) for _ in range(bulk_n)], repeat=repeat) / bulk_n,
            0.6,
            unit="id",
        )
    )

    newline_note = (
        f"peer accepts {TID + chr(10)!r}: {_peer_accepts(peer_validate_tid, TID + chr(10))}; "
        f"pidkit: {is_valid_tid(TID + chr(10))}"
    )
    ours_tid_s, peer_tid_s = _pair(
        lambda: is_valid_tid(TID), lambda: peer_validate_tid(TID, None), number, repeat
    )
    results.append(
        Result(
            "validate a TID",
            "is_valid_tid(s)",
            ours_tid_s,
            "atproto validate_tid",
            peer_tid_s,
            1.0,
            note=newline_note,
        )
    )
    parse_tid_s = per_call(lambda: Tid.parse(TID), number=number, repeat=repeat)
    results.append(
        Result(
            "parse a TID (value object)",
            "Tid.parse(s)",
            parse_tid_s,
            "atproto validate_tid",
            peer_tid_s,
            2.0,
            note="builds an immutable Tid; the peer only checks",
        )
    )

    rkey_note = (
        f"peer accepts {'self' + chr(10)!r}: {_peer_accepts(peer_validate_rkey, 'self' + chr(10))}; "
        f"pidkit: {is_valid_record_key('self' + chr(10))}"
    )
    ours_rkey_s, peer_rkey_s = _pair(
        lambda: is_valid_record_key(RKEY), lambda: peer_validate_rkey(RKEY, None), number, repeat
    )
    results.append(
        Result(
            "validate a record key",
            "is_valid_record_key(s)",
            ours_rkey_s,
            "atproto validate_record_key",
            peer_rkey_s,
            1.0,
            note=rkey_note,
        )
    )
    parse_rkey_s = per_call(lambda: RecordKey.parse(RKEY), number=number, repeat=repeat)
    results.append(
        Result(
            "parse a record key (value object)",
            "RecordKey.parse(s)",
            parse_rkey_s,
            "atproto validate_record_key",
            peer_rkey_s,
            2.0,
            note="builds an immutable RecordKey; the peer only checks",
        )
    )
    return results
