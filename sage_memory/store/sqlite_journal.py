"""The SQLite store's journal (every change, in order) and its list of partitions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sage_memory.store.rows import JOURNAL_COLUMNS, journal_entry
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Change, Scope


class SQLiteJournal(SQLiteConnection):
    """``journal``, ``purge_journal`` and ``partitions``."""

    def journal(
        self,
        *,
        scope: Scope | None = None,
        entity_id: str | None = None,
        batch_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[tuple[int, Change]]:
        sql = f"SELECT {JOURNAL_COLUMNS} FROM journal WHERE seq > ?"
        params: list[Any] = [after_seq]
        if scope is not None:
            sql += " AND scope_key = ?"
            params.append(scope.key)
        if entity_id is not None:
            sql += " AND entity_id = ?"
            params.append(entity_id)
        if batch_id is not None:
            sql += " AND batch_id = ?"
            params.append(batch_id)
        sql += " ORDER BY seq LIMIT ?"
        params.append(-1 if limit is None else limit)
        return [journal_entry(r) for r in self._rows(sql, params)]

    def purge_journal(self, entity_ids: Sequence[str]) -> int:
        total = 0
        with self._tx() as db:
            for chunk in chunks(entity_ids):
                marks = ",".join("?" * len(chunk))
                total += db.execute(
                    f"DELETE FROM journal WHERE entity_id IN ({marks})", chunk
                ).rowcount
            if not self._fts_secure:
                # Without FTS5's secure-delete, a deleted row's words stay in the full-text
                # index segments until they are merged; merging now (cost: one rewrite of the
                # index, ~0.15 s at 100k memories) lets secure_delete zero the old segments.
                for table in ("memories_fts", "nodes_fts"):
                    db.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
        return total

    def partitions(self) -> list[Scope]:
        rows = self._rows(
            "SELECT data FROM (SELECT scope_key, min(data) AS data FROM memories GROUP BY scope_key"
            " UNION ALL SELECT scope_key, min(data) FROM nodes GROUP BY scope_key)"
        )
        seen: dict[str, Scope] = {}
        for (data,) in rows:
            scope = _scope_of(json.loads(data)).partition
            seen.setdefault(scope.key, scope)
        return list(seen.values())
