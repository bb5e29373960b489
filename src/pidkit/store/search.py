"""The back office's Find: what a search is (:class:`Search`, read from a form's text fields by
:meth:`Search.from_fields`), what it finds (:class:`FoundPage`) and the one SQL search
(:meth:`SqlSearch.find_bindings`) over the full-text index of migration 6.

Semantics, on both backends alike:

* **ARK** — in any spelling (``ark:/99999/fk4x``, ``ark:99999/fk4-x``, ``https://n2t.net/ark:/…``, a
  NAAN alone), normalized by the ARK parser (:func:`ark_prefix`) and matched as a prefix of the key (the
  exact ARK is one of them).
* **target** — a substring, case-insensitive (SQLite: the trigram index for three or more characters;
  PostgreSQL: ``ILIKE`` over a ``pg_trgm`` index).
* **text** — words (runs of letters and digits, :func:`words`) that must all be in the binding's
  metadata (key, target, ERC and support elements, extra metadata values), the last one as a prefix;
  case-insensitive, accents kept.
* **status**, and a **date range** on ``created`` or ``updated`` (``since`` / ``until``: whole UTC days,
  both included).
* **Scope** — the NAAN (and shoulder) of :meth:`~pidkit.store.records.Scope.narrowest` is a condition of
  the SQL, so counts and pages hold only what the scope allows; :meth:`Scope.allows` judges each row
  again (the one rule).
* **Sort** by key, ``updated`` or ``created``, ascending or descending, the key breaking ties; pages by
  keyset: ``after`` / ``before`` name the last / first key of the page next to the one wanted, so a late
  page costs what the first does.
* **Count** — exact up to :data:`COUNT_CAP`, beyond that "more than" (a count of a million rows would
  cost more than the page).

>>> from pidkit.store import Erc, Scope, open_store
>>> with open_store("sqlite:///:memory:") as s:
...     _ = s.add_naan("99999", shoulders=["fk4"])
...     _ = s.bind("ark:99999/fk4x1", "https://example.org/maps/1", erc=Erc(what="Harbour of Bergen"))
...     _ = s.bind("ark:99999/fk4x2", "https://example.org/maps/2", erc=Erc(what="Harbour of Riga"))
...     page = s.find_bindings(Scope("99999"), Search(text="harbour berg"))
...     [b.key for b in page.bindings], page.total
(['ark:99999/fk4x1'], 1)
"""

from __future__ import annotations

import datetime as _dt
import itertools
import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from ..errors import PidkitError, StoreError
from .keys import ark_key
from .records import STATUSES, Binding, Scope, Status, check_text
from .rows import BINDING_COLUMNS, binding_from_row, stored_time

__all__ = ["COUNT_CAP", "PAGE", "FoundPage", "Search", "SqlSearch", "ark_prefix", "parse_day", "words"]

#: Counts above this are given as "more than" (:attr:`FoundPage.capped`).
COUNT_CAP: Final = 10_000
#: Results per page unless a search says otherwise; the most a page may hold.
PAGE: Final = 50
MAX_PAGE: Final = 500
#: The longest search term, and the most words of a text search.
MAX_TERM: Final = 1000
MAX_WORDS: Final = 16

Sort = Literal["key", "updated", "created"]
SORTS: Final[tuple[Sort, ...]] = ("key", "updated", "created")
DateField = Literal["updated", "created"]

_WORD: Final = re.compile(r"[^\W_]+")
_DAY: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NAAN_ONLY: Final = re.compile(r"(?:(?:https?://[^/]+/)?ark:/?)?([0-9a-z]+)(/?)", re.IGNORECASE)
#: The highest code point: a key prefix ``p`` holds the keys in ``[p, p + _TOP)`` (binary order).
_TOP: Final = "\U0010ffff"
_COLS: Final = ", ".join(f"b.{c}" for c in BINDING_COLUMNS)
#: SQLite: a full-text condition holding at most this many rows drives the page (its rows read first,
#: then their bindings, then sorted); more, and the bindings are read in the order asked, each checked
#: against the condition's rows (read once) until the page is full.  A count is always driven by the
#: rarer condition.
_DRIVE: Final = 2_000


def _term(value: str, name: str) -> str:
    if len(value) > MAX_TERM:
        raise StoreError(f"{name}: a search term is at most {MAX_TERM} characters")
    return check_text(value, name)


def words(text: str) -> list[str]:
    """The words of a text search: runs of letters and digits (what both full-text indexes take as a
    word), lower-cased; at most :data:`MAX_WORDS`.

    >>> words("Fifty% off_sale, Gdańsk!")
    ['fifty', 'off', 'sale', 'gdańsk']
    """
    found = [w.lower() for w in _WORD.findall(_term(text, "text"))]
    if len(found) > MAX_WORDS:
        raise StoreError(f"text: at most {MAX_WORDS} words, not {len(found)}")
    return found


def ark_prefix(text: str) -> str:
    """An ARK or the start of one, in any spelling, as the store keys ARKs: normalized by the ARK parser
    when it reads as an ARK, ``ark:NAAN/`` for a NAAN alone, else the text itself (a key prefix).

    >>> ark_prefix(" ark:/99999/fk4-x "), ark_prefix("https://n2t.net/ark:/99999/fk4x1")
    ('ark:99999/fk4x', 'ark:99999/fk4x1')
    >>> ark_prefix("ARK:/99999/"), ark_prefix("ark:/99999"), ark_prefix("99999/"), ark_prefix("99999/b5")
    ('ark:99999/', 'ark:99999', 'ark:99999/', 'ark:99999/b5')
    >>> ark_prefix("ark:"), ark_prefix("#?")
    ('ark:', '#?')
    """
    text = _term(text.strip(), "ark")
    if not text:
        return ""
    for candidate in (text, "ark:" + text):
        try:
            return ark_key(candidate).key
        except PidkitError:
            pass
    if match := _NAAN_ONLY.fullmatch(text):
        try:  # the NAAN as the parser normalizes it (a Name added, then taken off again)
            naan = ark_key(f"ark:{match[1]}/x").naan
        except PidkitError:
            return text
        return f"ark:{naan}{match[2]}"
    return text


def parse_day(text: str, name: str) -> _dt.date | None:
    """A calendar day ``YYYY-MM-DD`` (``None`` for blank), or :class:`~pidkit.errors.StoreError` naming
    the field and the text.

    >>> parse_day("2024-02-29", "from"), parse_day("", "from")
    (datetime.date(2024, 2, 29), None)
    >>> parse_day("2023-02-29", "until")
    Traceback (most recent call last):
    ...
    pidkit.errors.StoreError: until: '2023-02-29' is not a date (YYYY-MM-DD: day is out of range for month)
    """
    text = text.strip()
    if not text:
        return None
    if not _DAY.fullmatch(text):
        raise StoreError(f"{name}: {text[:40]!r} is not a date (YYYY-MM-DD)")
    try:
        return _dt.date.fromisoformat(text)
    except ValueError as exc:
        raise StoreError(f"{name}: {text!r} is not a date (YYYY-MM-DD: {exc})") from None


@dataclass(frozen=True, slots=True)
class Search:
    """One search of the ARK bindings (every field optional; see the module's semantics).

    >>> Search(ark="ark:/99999/fk4-").prefix, Search(sort="updated", descending=True).sort
    ('ark:99999/fk4', 'updated')
    """

    ark: str = ""
    target: str = ""
    text: str = ""
    status: Status | None = None
    on: DateField = "updated"
    since: _dt.date | None = None
    until: _dt.date | None = None
    sort: Sort = "key"
    descending: bool = False
    after: str | None = None
    before: str | None = None
    limit: int = PAGE

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise StoreError(f"status: {self.status!r} is not one of {', '.join(STATUSES)}")
        if self.on not in ("updated", "created"):
            raise StoreError(f"on: {self.on!r} is not 'updated' or 'created'")
        if self.sort not in SORTS:
            raise StoreError(f"sort: {self.sort!r} is not one of {', '.join(SORTS)}")
        if self.since and self.until and self.since > self.until:
            raise StoreError(f"from {self.since.isoformat()} is after until {self.until.isoformat()}")
        if self.after is not None and self.before is not None:
            raise StoreError("a page is after one key or before one, not both")
        if not 1 <= self.limit <= MAX_PAGE:
            raise StoreError(f"a page holds 1 to {MAX_PAGE} results, not {self.limit}")
        for name in ("target", "after", "before"):
            value = getattr(self, name)
            if value is not None:
                _term(value, name)
        words(self.text)

    @property
    def prefix(self) -> str:
        """The ARK key prefix searched for (:func:`ark_prefix`)."""
        return ark_prefix(self.ark)

    @property
    def filters(self) -> bool:
        """True if anything narrows the search (else it lists every ARK of the scope)."""
        return any((self.prefix, self.target, words(self.text), self.status, self.since, self.until))

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> Search:
        """A search from a form's text fields (a query string): ``ark``, ``target``, ``text``,
        ``status``, ``on``, ``from``, ``until``, ``sort``, ``order`` (``asc`` / ``desc``), ``after``,
        ``before``; blank means "any".  A wrong field is a :class:`~pidkit.errors.StoreError` naming it.

        >>> Search.from_fields({"from": "2024-01-01", "sort": "created", "order": "desc"}).descending
        True
        >>> Search.from_fields({"order": "up"})
        Traceback (most recent call last):
        ...
        pidkit.errors.StoreError: order: 'up' is not 'asc' or 'desc'
        """

        def get(name: str) -> str:
            return fields.get(name, "").strip()

        order = get("order") or "asc"
        if order not in ("asc", "desc"):
            raise StoreError(f"order: {order[:40]!r} is not 'asc' or 'desc'")
        status, on, sort = get("status") or None, get("on") or "updated", get("sort") or "key"
        return cls(
            ark=fields.get("ark", ""), target=get("target"), text=fields.get("text", ""),
            status=status,  # type: ignore[arg-type]  # checked by __post_init__
            on=on, since=parse_day(get("from"), "from"),  # type: ignore[arg-type]
            until=parse_day(get("until"), "until"), sort=sort,  # type: ignore[arg-type]
            descending=order == "desc", after=get("after") or None, before=get("before") or None,
        )  # fmt: skip

    def fields(self) -> dict[str, str]:
        """The query string of this search (no page): what :meth:`from_fields` reads back.

        >>> Search(text="maps", status="public").fields()
        {'text': 'maps', 'status': 'public'}
        """
        out = {"ark": self.ark.strip(), "target": self.target, "text": self.text, "status": self.status or "",
               "on": "" if self.on == "updated" else self.on,
               "from": self.since.isoformat() if self.since else "",
               "until": self.until.isoformat() if self.until else "",
               "sort": "" if self.sort == "key" else self.sort, "order": "desc" if self.descending else ""}
        return {k: v for k, v in out.items() if v}  # fmt: skip

    def page(self, *, after: str | None = None, before: str | None = None) -> Search:
        """The same search, another page."""
        return replace(self, after=after, before=before)


@dataclass(frozen=True, slots=True)
class FoundPage:
    """One page of a search: its bindings, the number of matches (``capped``: more than
    :data:`COUNT_CAP`, ``total`` is then the cap), and whether pages come before and after it."""

    bindings: tuple[Binding, ...]
    total: int
    capped: bool
    earlier: bool
    later: bool


@dataclass(slots=True)
class _Query:
    """A query being built: its FROM and its WHERE conditions, each with its parameters."""

    source: str
    conditions: list[tuple[str, list[Any]]]

    def where(self) -> tuple[str, list[Any]]:
        """The WHERE clause and its parameters, in order."""
        return " AND ".join(c for c, _ in self.conditions), [p for _, ps in self.conditions for p in ps]


class SqlSearch:
    """:meth:`find_bindings` for :class:`~pidkit.store.sql.SqlStore` (a mixin)."""

    backend: str
    _code_point_order: str

    if TYPE_CHECKING:

        def _transaction(self, *, write: bool) -> AbstractContextManager[Any]: ...

        def _exec(self, cur: Any, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def _key(self) -> str:
        """The key as a Find orders it: code point order on both backends (PostgreSQL's ``COLLATE "C"``,
        whatever the database's collation; SQLite's BINARY)."""
        return f"b.key{self._code_point_order}"

    def _filters(
        self, cur: Any, scope: Scope, search: Search, *, after: str | None, before: str | None
    ) -> tuple[_Query, _Query]:
        """The page's query and the count's (FROM, WHERE conditions over ``bindings b``, parameters) of
        ``search`` in ``scope``: the same rows, each read the way that suits it; the page's keys after
        ``after`` and before ``before`` too (a page by key)."""
        postgres, key = self.backend == "postgresql", self._key()
        common: list[tuple[str, list[Any]]] = [("b.kind = 'ark'", [])]
        naan, shoulder = scope.narrowest()
        for column, value in (("naan", naan), ("shoulder", shoulder), ("status", search.status)):
            if value is not None:
                common.append((f"b.{column} = ?", [value]))
        if search.since is not None:
            common.append((f"b.{search.on} >= ?", [_day_start(search.since)]))
        if search.until is not None and search.until < _dt.date.max:  # until 9999-12-31: no upper bound
            common.append((f"b.{search.on} < ?", [_day_start(search.until + _dt.timedelta(days=1))]))
        # keys as ranges in code point order (the index's): the ARK asked for, and for the page the
        # scope's keys, which all begin ark:NAAN/SHOULDER (redundant with the conditions above, but it
        # tells the planner where in key order the scope's rows are; SQLite counts them faster by the
        # NAAN's index, without it)
        scoped = f"ark:{naan}/{shoulder or ''}" if naan is not None else ""
        ranged = _narrowest(search.prefix, scoped)
        page = _Query("bindings b", common + _key_range(key, ranged, after, before))
        counted = ranged if postgres else _narrowest(search.prefix)
        count = _Query("bindings b", common + _key_range(key, counted))
        target, found = search.target, words(search.text)
        if postgres:
            for query in (page, count):
                if target:
                    query.conditions.append(("b.target ILIKE ? ESCAPE '\\'", ["%" + _like(target) + "%"]))
                if found:
                    tsquery = " & ".join(found) + ":*"
                    query.conditions.append(("b.search @@ to_tsquery('simple', ?)", [tsquery]))
            return page, count
        fts = []  # (rows it holds, up to a cap; FTS5 table; its MATCH query)
        if found:
            match = " ".join(f'"{w}"' for w in found) + "*"
            fts.append((self._fts_rows(cur, "bindings_words", match, _DRIVE), "bindings_words", match))
        if len(target) >= 3:  # the trigram index narrows, LIKE (ASCII case folded) decides
            fts.append(self._grams_query(cur, target))
        fts.sort()
        for i, (rows, table, match) in enumerate(fts):
            for query, drives in ((page, i == 0 and rows <= _DRIVE), (count, i == 0)):
                if drives:  # read the index's rows first, then their bindings
                    query.source = f"{table} CROSS JOIN bindings b"
                    query.conditions += [(f"{table} MATCH ?", [match]), (f"b.rowid = {table}.rowid", [])]
                elif table == "bindings_words":  # read the bindings in the order asked, each checked
                    query.conditions.append((f"b.rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)",
                                             [match]))  # fmt: skip
                # (a target's trigrams only narrow: when they do not drive, its LIKE alone decides)
        if target:
            for query in (page, count):
                query.conditions.append(("b.target LIKE ? ESCAPE '\\'", ["%" + _like(target) + "%"]))
        return page, count

    def _fts_rows(self, cur: Any, table: str, match: str, cap: int) -> int:
        """How many rows of the FTS5 ``table`` ``match`` finds, counted up to ``cap`` + 1 (a bounded
        read: FTS5 reads its lists as far as asked)."""
        self._exec(cur, f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?) t",
                   (match, cap + 1))  # fmt: skip
        return int(cur.fetchone()[0])

    def _grams_query(self, cur: Any, target: str) -> tuple[int, str, str]:
        """``(rows, table, MATCH query)`` for a target substring of 3 or more characters: four of its
        trigrams, all required — those most likely to be rare in URLs (:func:`_rare_grams`), since a
        phrase of every trigram reads every trigram's rows, the most common ones too ("htt", "com")."""
        match = " AND ".join(_quoted(g) for g in _rare_grams(target))
        return self._fts_rows(cur, "bindings_grams", match, _DRIVE), "bindings_grams", match

    def find_bindings(self, scope: Scope, search: Search) -> FoundPage:
        """One page of the ARK bindings ``scope`` allows that ``search`` finds (module docstring),
        with the count of all of them."""
        cursor = search.after if search.after is not None else search.before
        backwards = search.before is not None
        descending = search.descending != backwards  # a page before: read backwards, then turn round
        direction, key = ("DESC" if descending else "ASC"), self._key()
        order = f"{key} {direction}"
        if search.sort != "key":
            order = f"b.{search.sort} {direction}, {order}"
        by_key = cursor if search.sort == "key" else None
        with self._transaction(write=False) as cur:
            page, count = self._filters(cur, scope, search, after=None if descending else by_key,
                                        before=by_key if descending else None)  # fmt: skip
            if cursor is not None:
                sign = "<" if descending else ">"
                if search.sort != "key":
                    value = self._cursor_value(cur, scope, search.sort, cursor)
                    column = f"b.{search.sort}"
                    page.conditions.append((f"({column} {sign} ? OR ({column} = ? AND {key} {sign} ?))",
                                            [value, value, cursor]))  # fmt: skip
            where, params = page.where()
            self._exec(cur, f"SELECT {_COLS} FROM {page.source} WHERE {where} ORDER BY {order} LIMIT ?",
                       [*params, search.limit + 1])  # fmt: skip
            rows = cur.fetchall()
            if cursor is None and len(rows) <= search.limit:
                total = len(rows)  # the first page holds every match: nothing more to count
            else:
                where, params = count.where()
                self._exec(cur, f"SELECT COUNT(*) FROM (SELECT 1 FROM {count.source} WHERE {where} "
                                "LIMIT ?) t", [*params, COUNT_CAP + 1])  # fmt: skip
                total = int(cur.fetchone()[0])
        more = len(rows) > search.limit
        found = [binding_from_row(row) for row in rows[: search.limit]]
        if backwards:
            found.reverse()
        found = [b for b in found if scope.allows(b.naan, b.shoulder)]
        earlier, later = (more, True) if backwards else (cursor is not None, more)
        return FoundPage(tuple(found), min(total, COUNT_CAP), total > COUNT_CAP, earlier, later)

    def _cursor_value(self, cur: Any, scope: Scope, column: str, key: str) -> str:
        """The ``column`` (a time) of the ARK ``key`` a page starts next to, which ``scope`` must allow."""
        self._exec(cur, f"SELECT naan, shoulder, {column} FROM bindings WHERE kind = 'ark' AND key = ?",
                   (key,))  # fmt: skip
        row = cur.fetchone()
        if row is None or not scope.allows(row[0], row[1]):
            raise StoreError(f"the ARK a page starts next to, {key[:80]!r}, is not there any more: "
                             "start again from the first page")  # fmt: skip
        return str(row[2])


def _key_range(
    key: str, prefixes: list[str], after: str | None = None, before: str | None = None
) -> list[tuple[str, list[Any]]]:
    """The conditions on ``key`` (an SQL expression) for keys beginning with each of ``prefixes``, after
    ``after`` and before ``before``: one range, so that the planner has a single lower and a single
    upper bound to seek to.

    >>> _key_range("k", ["ark:9/"], after="ark:9/x")
    [('k > ?', ['ark:9/x']), ('k < ?', ['ark:9/\U0010ffff'])]
    >>> _key_range("k", ["a", "b"]), _key_range("k", [], before="z")
    ([('1 = 0', [])], [('k < ?', ['z'])])
    """
    if len(prefixes) > 1:
        return [("1 = 0", [])]  # keys cannot begin with two prefixes neither of which begins the other
    low: tuple[str, str] | None = (">=", prefixes[0]) if prefixes else None
    high = prefixes[0] + _TOP if prefixes else None
    if after is not None and (low is None or after >= low[1]):
        low = (">", after)
    if before is not None and (high is None or before < high):
        high = before
    out: list[tuple[str, list[Any]]] = [] if low is None else [(f"{key} {low[0]} ?", [low[1]])]
    return out + ([] if high is None else [(f"{key} < ?", [high])])


def _narrowest(*prefixes: str) -> list[str]:
    """The key prefixes that say as much as ``prefixes`` do: the longest when each begins the next,
    else all of them (which no key has at once).

    >>> _narrowest("ark:99999/fk4x", "ark:99999/"), _narrowest("", "ark:99999/"), _narrowest("a", "b")
    (['ark:99999/fk4x'], ['ark:99999/'], ['a', 'b'])
    """
    given = sorted({p for p in prefixes if p}, key=lambda p: (len(p), p))  # one order, whatever the hash seed
    if all(longer.startswith(shorter) for shorter, longer in itertools.pairwise(given)):
        return given[-1:]
    return given


def _rare_grams(text: str, n: int = 4) -> list[str]:
    """The ``n`` trigrams of ``text`` most likely to be rare in URLs: those with the most digits and
    other characters than lower-case letters and ``/.:-``, then the later ones (names and numbers end
    a URL, hosts begin it).

    >>> _rare_grams("https://example.org/maps/00012")
    ['012', '001', '000', '/00']
    """
    grams = {text[i : i + 3]: i for i in range(len(text) - 2)}

    def rarity(gram: str) -> tuple[int, int]:
        return sum(2 if c.isdigit() else 0 if c.islower() or c in "/.:-" else 1 for c in gram), grams[gram]

    return sorted(grams, key=rarity, reverse=True)[:n]


def _quoted(text: str) -> str:
    """``text`` as an FTS5 string (double quotes doubled).

    >>> _quoted('a"b')
    '"a""b"'
    """
    return '"' + text.replace('"', '""') + '"'


def _like(value: str) -> str:
    """``value`` as a LIKE pattern that matches it literally (``\\`` escapes ``%``, ``_`` and itself).

    >>> _like("50%_off")
    '50\\\\%\\\\_off'
    """
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _day_start(day: _dt.date) -> str:
    """The stored time of midnight UTC starting ``day``.

    >>> _day_start(_dt.date(2024, 5, 1))
    '2024-05-01T00:00:00.000000Z'
    """
    return str(stored_time(_dt.datetime(day.year, day.month, day.day, tzinfo=_dt.UTC)))
