"""The SQLite store's journal (every change, in order) and its list of partitions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sage_memory.codec import dumps
from sage_memory.store.rows import JOURNAL_COLUMNS, journal_entry, utf8_only
from sage_memory.store.rows import scope_of as _scope_of
from sage_memory.store.sqlite_connection import SQLiteConnection, chunks
from sage_memory.types import Change, Scope


class SQLiteJournal(SQLiteConnection):
    """``journal``, ``purge_journal``, ``rewrite_journal``, ``erase_index_copies`` and
    ``partitions``."""

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
        return total

    def rewrite_journal(self, entries: Sequence[tuple[int, Change]]) -> None:
        rows = [
            (
                None if ch.before is None else dumps(ch.before),
                None if ch.after is None else dumps(ch.after),
                seq,
            )
            for seq, ch in entries
        ]
        with utf8_only(), self._tx() as db:
            db.executemany("UPDATE journal SET before = ?, after = ? WHERE seq = ?", rows)

    def erase_index_copies(self, *, scopes: bool) -> None:
        """Rebuild the indexes whose pages may still hold copies of deleted keys.

        ``secure_delete`` zeroes a deleted row, but a b-tree's interior pages keep copies of
        some keys as dividers until the tree is rebalanced: a deleted node's name (in
        ``node_names``) or, after a whole partition went, its scope key (the user id) could stay
        in the file. Rebuilding an index frees (and so zeroes) its old pages. ``scopes`` also
        rebuilds the indexes keyed by scope (after ``delete_all``); the name index is always
        rebuilt. Cost: proportional to the rebuilt indexes.
        """
        names = ["node_names_by_key"]
        if scopes:
            names += [
                "memories_by_scope",
                "nodes_by_scope",
                "edges_by_scope",
                "journal_by_scope",
                "access_by_scope",
                "suggestions",  # its UNIQUE (scope_key, key) index and suggestions_by_status
            ]
        with self._lock:
            self._check_open()
            for name in names:
                self._db.execute(f"REINDEX {name}")

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
