"""The fast paths of ``pidkit import`` (issue 18) decide exactly what the full checks decide.

* :func:`pidkit.ark.syntax.plain_normalized` (a text already normalized) against :meth:`Ark.parse`;
* the plain-target pattern of :func:`pidkit.store.redirects.validate_target` against its full checks;
* :func:`pidkit.store.jsonl.parse_import_line`, which builds the row directly, against the row of the
  binding it holds (:func:`binding_values`) and the same errors for the same bad strings;
* :func:`pidkit.store.rows.created_history_json` against the history's own rule (``changed_fields``);
* an import through the store records that same history, skips the holds lookup only when the NAAN has
  no holds, and still refuses a held ARK in a late chunk, on both backends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from pidkit.ark import Ark
from pidkit.ark.chars import NAME_CHARS
from pidkit.ark.syntax import plain_normalized
from pidkit.codecs import BETANUMERIC
from pidkit.errors import PidkitError
from pidkit.store import Store, open_store
from pidkit.store.changes import changed_fields
from pidkit.store.jsonl import ImportRow, _time, parse_import_line
from pidkit.store.keys import ark_key
from pidkit.store.records import Binding, Erc, ImportRejectedError
from pidkit.store.redirects import _checked_target, validate_target
from pidkit.store.rows import binding_from_row, binding_values, created_history_json, history_json
from pidkit.store.sql import _IMPORT_CHUNK

NAAN = "99999"

# ARK-ish texts: the canonical alphabet, and everything the parser treats specially.
_ARK_CHARS = "".join(sorted(NAME_CHARS)) + "-/.%?:#~ \u2010Aé" + BETANUMERIC
_ark_texts = st.one_of(
    st.builds(
        lambda label, naan, name: f"{label}{naan}/{name}",
        st.sampled_from(["ark:", "ark:/", "ARK:", "https://n2t.net/ark:", "ark"]),
        st.text(alphabet=BETANUMERIC + "BX-l", min_size=0, max_size=6),
        st.text(alphabet=_ARK_CHARS, min_size=0, max_size=14),
    ),
    st.text(alphabet=_ARK_CHARS, max_size=20),
)


@settings(max_examples=1500, deadline=None)
@given(_ark_texts)
@example("ark:99999/fk4x8d9m2q")
@example("ark:99999/x6")
@example("ark:99999/bcd")
@example("ark:99999/6x")
@example("ark:99999/fk4x.v1")
@example("ark:9999l/fk4x")
@example("ark:99999/" + "x" * 5000)
def test_plain_normalized_agrees_with_the_parser(text: str) -> None:
    fast = plain_normalized(text)
    try:
        ark = Ark.parse(text).normalize()
    except PidkitError:
        assert fast is None  # the fast path never accepts what the parser refuses
    else:
        if fast is not None:
            assert (str(ark), str(ark.naan), ark.shoulder, ark.ancestors()) == (text, *fast, ())
        # ark_key (fast path inside) gives what the parser gives either way
        got = ark_key(text)
        assert (got.key, got.naan, got.shoulder, got.ancestors) == (
            str(ark), str(ark.naan), ark.shoulder or None, tuple(str(a) for a in ark.ancestors())
        )


def test_the_fast_path_is_taken_for_canonical_texts() -> None:
    assert plain_normalized("ark:99999/fk4x8d9m2q") == ("99999", "fk4")
    assert plain_normalized("ark:b2345/Zz9~_") == ("b2345", "")
    for text in ("ark:/99999/fk4x", "ARK:99999/fk4x", "ark:99999/fk4-x", "ark:99999/fk4x/c",
                 "ark:99999/x?info", "ark:B9999/x", "https://n2t.net/ark:99999/x"):  # fmt: skip
        assert plain_normalized(text) is None, text


_URL_CHARS = "abcAZ09.-/:?#@[]%\\ \t\x7f\u00e9\u0085_~!$&'()*+,;="
_targets = st.one_of(
    st.builds(
        lambda scheme, host, rest: f"{scheme}{host}{rest}",
        st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "https:", "https:///", ""]),
        st.text(alphabet=_URL_CHARS, max_size=12),
        st.text(alphabet=_URL_CHARS, max_size=12),
    ),
    st.text(alphabet=_URL_CHARS, max_size=20),
)


def _outcome(fn: Callable[[str], str], url: str) -> str:
    try:
        return fn(url)
    except PidkitError as exc:
        return f"error: {exc}"


@settings(max_examples=1500, deadline=None)
@given(_targets)
@example("https://example.org/items/1")
@example("http://e")
@example("https://-x/")
@example("https://e.org:99999/")
@example("https://[::1/")
@example("https://e.org/" + "a" * 4090)
def test_validate_target_decides_as_its_full_checks(url: str) -> None:
    assert _outcome(validate_target, url) == _outcome(_checked_target, url)


_strings = st.text(alphabet="aZ é\x00\ud800\n\"\\\u2028", max_size=6)
_valid_strings = st.text(alphabet="aZ é\n\"\\\u2028", max_size=6)  # no NUL, no unpaired surrogate


@st.composite
def _objects(draw: st.DrawFn, *, valid: bool = False) -> dict[str, Any]:
    """Import lines' objects, mostly valid, with awkward strings where strings go (``valid``: only the
    valid choices, so every line parses)."""
    def pick(choices: list[str], bad: list[str]) -> str:
        return draw(st.sampled_from(choices if valid else choices + bad))

    strings = _valid_strings if valid else _strings
    status = draw(st.sampled_from(["public", "reserved", "unavailable", "tombstoned"]))
    obj: dict[str, Any] = {"text": pick(
        ["ark:99999/fk4x1", "ark:/99999/fk4-x2", "ark:99999/b2q/c.v", "ark:99999/zz"], ["ark:99999/fk4x1\x00"]
    )}  # fmt: skip
    if draw(st.booleans()):
        obj["kind"] = "ark"
    obj["status"] = status
    if status == "public" or draw(st.booleans()):
        obj["target"] = draw(st.sampled_from(["https://e.org/a", "http://E.org:8080/x?y#z", "https://e.org/\u00e9"]))
    obj["erc"] = {k: draw(strings) for k in draw(st.sets(st.sampled_from(["who", "what", "when", "where"])))}
    if draw(st.booleans()):
        obj["support"] = {"who": draw(strings)}
    if status == "unavailable":
        obj["reason"] = "x" + draw(strings)
    if status == "tombstoned":
        obj["tombstone_reason"] = "gone" + draw(strings)
        obj["tombstoned_at"] = "2024-05-01T12:00:00+02:00"
    if draw(st.booleans()):
        obj["extra"] = {pick(["dc.title", "a:b"], ["x\x00"]): draw(strings)}
    if draw(st.booleans()):
        obj["created"] = pick(
            ["2020-01-02T03:04:05.123456Z", "2020-01-02T03:04:05Z", "2020-01-02T05:04:05.5+02:00",
             "9999-12-31T23:59:59.999999Z"],
            ["2020-02-30T03:04:05.123456Z", "2020-01-02T03:04:05.123456"],
        )  # fmt: skip
    obj["passthrough"] = draw(st.booleans())
    return obj


def _binding_of(obj: dict[str, Any], now: Any) -> Binding:
    """The binding an import line describes, built the plain way (as the parser did before issue 18)."""
    import datetime as dt

    k = ark_key(obj["text"])
    erc, support = obj.get("erc") or {}, obj.get("support") or {}
    created = _time(obj.get("created"), "created") or now  # the parser's rule for a time, then stored_time
    return Binding(
        kind="ark", key=k.key, text=obj["text"], target=obj.get("target"),
        erc=Erc(*(erc.get(e, "") for e in ("who", "what", "when", "where"))),
        support=Erc(*(support.get(e, "") for e in ("who", "what", "when", "where"))),
        passthrough=obj["passthrough"], status=obj["status"], naan=k.naan, shoulder=k.shoulder,
        tombstone_reason=obj.get("tombstone_reason"),
        tombstoned_at=dt.datetime.fromisoformat(obj["tombstoned_at"]).astimezone(dt.UTC)
        if "tombstoned_at" in obj else None,
        created=created, updated=now, reason=obj.get("reason"),
        extra=tuple(sorted((obj.get("extra") or {}).items())),
    )  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(_objects())
def test_an_import_line_is_the_row_of_its_binding(obj: dict[str, Any]) -> None:
    import datetime as dt

    now = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)
    line = json.dumps(obj)
    try:
        expected: Any = ImportRow.of(_binding_of(obj, now)).values  # the check every write path makes
    except PidkitError as exc:
        expected = f"error: {exc}"
    try:
        row = parse_import_line(line, now=now)
    except PidkitError as exc:
        # the element-name rule (not the reference's) refused it: nothing to compare the error with
        assume(not ("x\x00" in (obj.get("extra") or {}) and "extra element name" in str(exc)))
        outcome: Any = f"error: {exc}"
    else:
        outcome = row.values
    assert outcome == expected
    if not isinstance(outcome, str):  # (an error: the same one, and nothing more to compare)
        assert row.binding == _binding_of(obj, now) and binding_values(row.binding) == row.values
        assert created_history_json(row.values) == history_json(changed_fields(None, row.binding)[1])


@settings(max_examples=500, deadline=None)
@given(_objects(valid=True))
def test_created_history_json_is_the_history_rule(obj: dict[str, Any]) -> None:
    row = parse_import_line(json.dumps(obj))  # a valid line (the strategy makes only those)
    expected = history_json(changed_fields(None, binding_from_row(row.values))[1])
    assert created_history_json(row.values) == expected


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        new_url: Callable[[], str] = request.getfixturevalue("new_postgres_url")
        url = new_url()
    else:
        url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as s:
        s.add_naan(NAAN)
        s.add_naan("12345")
        yield s


def test_an_import_records_the_history_rule(store: Store) -> None:
    """Created rows' history (written straight from the row) reads back as ``changed_fields`` says;
    an updated row's too."""
    first = {"text": f"ark:{NAAN}/fk4h1", "target": "https://e.org/\"q\"", "erc": {"who": "W\u2028é"},
             "extra": {"dc.title": "T"}, "created": "2020-01-02T03:04:05Z"}  # fmt: skip
    store.import_jsonl([json.dumps(first)])
    b = store.get_binding(f"ark:{NAAN}/fk4h1")
    assert b is not None
    entry = store.history("ark", f"ark:{NAAN}/fk4h1")[-1]
    assert (entry.before, entry.after) == changed_fields(None, b)
    store.import_jsonl([json.dumps({**first, "target": "https://e.org/2"})])
    entry = store.history("ark", f"ark:{NAAN}/fk4h1")[-1]
    assert (entry.before, entry.after) == ({"target": "https://e.org/\"q\""}, {"target": "https://e.org/2"})


def test_a_held_ark_in_a_late_chunk_is_refused_and_nothing_stays(store: Store) -> None:
    """One NAAN with a hold, one without: the held id in the third chunk is refused, every chunk undone."""
    store.add_hold(NAAN, "fk4held")
    n = 2 * _IMPORT_CHUNK + 50
    lines = [json.dumps({"text": f"ark:{'12345' if i % 2 else NAAN}/fk4s{i}", "target": f"https://e.org/{i}"})
             for i in range(n)]  # fmt: skip
    lines[n - 3] = json.dumps({"text": f"ark:{NAAN}/fk4held", "target": "https://e.org/h"})
    with pytest.raises(ImportRejectedError) as info:
        store.import_jsonl(lines)
    [(number, why)] = info.value.problems
    assert number == n - 2
    assert why.startswith(f"ark:{NAAN}/fk4held is held: it is never bound public ("), why
    assert store.get_binding(f"ark:{NAAN}/fk4s0") is None and store.get_binding("ark:12345/fk4s1") is None
    lines[n - 3] = json.dumps({"text": f"ark:{NAAN}/fk4held", "status": "reserved"})  # reserving is allowed
    assert store.import_jsonl(lines).created == n


@pytest.mark.parametrize(("line", "said"), [
    ({"text": f"ark:{NAAN}/fk4u", "target": "https://e.org/", "extras": {"dc.title": "T"}},
     "unknown field (one of created, erc, extra, key, kind, passthrough, reason, status, support, target, "
     "text, tombstone_reason, tombstoned_at, updated) in 'extras'"),
    ({"text": f"ark:{NAAN}/fk4u", "target": "https://e.org/", "erc": {"who": "Ann", "title": "My Title"}},
     "field 'erc': not an ERC element (who, what, when, where) in 'title'"),
    ({"text": f"ark:{NAAN}/fk4u", "target": "https://e.org/", "support": {"how": "x"}},
     "field 'support': not an ERC element (who, what, when, where) in 'how'"),
])  # fmt: skip
def test_an_import_line_with_a_field_it_does_not_know_is_refused(
    store: Store, line: dict[str, Any], said: str
) -> None:
    """Every field of a line is read or refused, never dropped unread: ``extras`` for ``extra`` and an
    ERC ``title`` were imported without them (a red-team finding); an export line's fields are all read
    (the round trip tests export every field)."""
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl([json.dumps(line)])
    assert list(caught.value.problems) == [(1, said)]
    assert store.get_binding(f"ark:{NAAN}/fk4u") is None


def test_an_import_asked_to_list_a_few_problems_lists_the_first_and_counts_them_all(store: Store) -> None:
    """``max_problems``: the first bad lines by number across chunks, and the count of every bad one —
    what the import keeps stays bounded however bad the input (the web API lists 1,000)."""
    n = 2 * _IMPORT_CHUNK + 10
    lines = [json.dumps({"text": f"ark:{NAAN}/fk4m{i}", "target": "https://e.org/"}) for i in range(n)]
    bad = [7, _IMPORT_CHUNK + 3, n - 1, 3]  # 1-based line numbers, one in each chunk and two in the first
    for number in bad:
        lines[number - 1] = "not json"
    with pytest.raises(ImportRejectedError) as caught:
        store.import_jsonl(lines, max_problems=2)
    assert [number for number, _ in caught.value.problems] == [3, 7]
    assert caught.value.count == 4
    assert str(caught.value).startswith("4 bad lines, nothing imported; first: not JSON")
    with pytest.raises(ImportRejectedError) as every:
        store.import_jsonl(lines)
    assert [number for number, _ in every.value.problems] == sorted(bad) and every.value.count == 4
    assert store.get_binding(f"ark:{NAAN}/fk4m0") is None
