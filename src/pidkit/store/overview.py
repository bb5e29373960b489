"""What the back office's dashboard asks of the SQL store: bindings counted by shoulder and status, and
the latest changes under a NAAN (or one of its shoulders), newest first.

>>> from pidkit.store import open_store
>>> with open_store("sqlite:///:memory:") as s:
...     _ = s.add_naan("99999", shoulders=["fk4"])
...     _ = s.bind("ark:99999/fk4x", "https://example.org/")
...     s.status_counts("99999"), [h.operation for h in s.recent_changes("99999")]
({('fk4', 'public'): 1}, ['create'])
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .keys import check_naan, check_shoulder
from .records import Binding, HistoryEntry, Scope, check_text
from .rows import BINDING_COLS, HISTORY_COLS, binding_from_row, history_from_row


def _like(value: str) -> str:
    """``value`` as a LIKE pattern that matches it literally (``\\`` escapes ``%``, ``_`` and itself).

    >>> _like("50%_off")
    '50\\\\%\\\\_off'
    """
    if len(value) > 1000:
        raise StoreError("a search term is at most 1000 characters")
    check_text(value, "search")
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

__all__ = ["SqlOverview"]


class SqlOverview:
    """Dashboard reads for :class:`~pidkit.store.sql.SqlStore` (a mixin)."""

    if TYPE_CHECKING:

        def _transaction(self, *, write: bool) -> AbstractContextManager[Any]: ...

        def _exec(self, cur: Any, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def status_counts(self, naan: str) -> dict[tuple[str | None, str], int]:
        """ARK bindings under ``naan`` counted by ``(shoulder, status)`` (``None``: no shoulder)."""
        with self._transaction(write=False) as cur:
            self._exec(cur, "SELECT shoulder, status, COUNT(*) FROM bindings WHERE kind = 'ark' AND naan = ? "
                            "GROUP BY shoulder, status", (check_naan(naan),))  # fmt: skip
            return {(shoulder, status): int(n) for shoulder, status, n in cur.fetchall()}

    def find_bindings(
        self, scope: Scope, *, prefix: str = "", target: str = "", text: str = "", status: str | None = None,
        after: str | None = None, limit: int = 50,
    ) -> list[Binding]:
        """One page of the ARK bindings ``scope`` allows, in key order after ``after``: keys starting with
        ``prefix``, targets containing ``target``, any ERC or extra metadata containing ``text`` (case
        as given), of ``status``.  Narrowed in SQL by :meth:`Scope.narrowest`, and every row judged by
        :meth:`Scope.allows` (the one rule)."""
        naan, shoulder = scope.narrowest()
        clauses, params = ["kind = 'ark'"], []
        for column, value in (("naan", naan), ("shoulder", shoulder), ("status", status)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if prefix:
            clauses.append("key LIKE ? ESCAPE '\\'")
            params.append(_like(prefix) + "%")
        if target:
            clauses.append("target LIKE ? ESCAPE '\\'")
            params.append("%" + _like(target) + "%")
        if text:
            columns = ("erc_who", "erc_what", "erc_when", "erc_where", "support_who", "support_what",
                       "support_when", "support_where", "extra")  # fmt: skip
            clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
            params += ["%" + _like(text) + "%"] * len(columns)
        if after is not None:
            clauses.append("key > ?")
            params.append(after)
        with self._transaction(write=False) as cur:
            self._exec(cur, f"SELECT {BINDING_COLS} FROM bindings WHERE {' AND '.join(clauses)} ORDER BY key "
                            "LIMIT ?", [*params, limit])  # fmt: skip
            found = [binding_from_row(row) for row in cur.fetchall()]
        return [b for b in found if scope.allows(b.naan, b.shoulder)]

    def recent_changes(
        self, naan: str, shoulder: str | None = None, *, limit: int = 20
    ) -> list[HistoryEntry]:
        """The ``limit`` latest history rows of ARKs under ``naan`` (and ``shoulder``), newest first."""
        prefix = f"ark:{check_naan(naan)}/" + (check_shoulder(shoulder) if shoulder else "")
        with self._transaction(write=False) as cur:
            # NAANs and shoulders are betanumeric: no LIKE wildcard can be in the prefix
            self._exec(cur, f"SELECT {HISTORY_COLS} FROM history WHERE kind = 'ark' AND key LIKE ? "
                            "ORDER BY at DESC, id DESC LIMIT ?", (prefix + "%", limit))  # fmt: skip
            return [history_from_row(row) for row in cur.fetchall()]
