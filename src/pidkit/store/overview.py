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

from .keys import check_naan, check_shoulder
from .records import HistoryEntry
from .rows import HISTORY_COLS, history_from_row

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
